"""Lab 2, part 1: optimizers, their state, gradient noise and the schedule.

Your task: implement every function below that raises NotImplementedError.
The docstrings are the contract: the grader relies on exactly the conventions
they state, and calls every function with keyword arguments.

Chapter: §3.2 Optimization algorithms (each function names the subsection it uses) and §4.4.2 Batch size and parameter updates.

Conventions used everywhere in this file:

* Arrays are NumPy ``float64``.  A function returns new arrays; it never
  changes the arrays or dicts it was given.
* Optimizer state is passed in and returned explicitly, as a dict of the
  same names PyTorch uses.  Before the first step the state is ``{}``.
* The update rules follow ``torch.optim``'s default semantics exactly
  (``maximize=False``, ``nesterov=False``, ``dampening=0``,
  ``centered=False``, ``amsgrad=False``, coupled L2 weight decay), so the
  grader can replay the same gradients through ``torch.optim`` and compare.
* Optimizer names: ``"sgd"`` (no momentum), ``"momentum"`` (SGD with
  momentum), ``"rmsprop"``, ``"adam"``.

Tóm tắt (tiếng Việt): cài đặt mọi hàm đang raise NotImplementedError; docstring
là hợp đồng, mọi hàm được gọi bằng đối số từ khoá. Mảng NumPy ``float64``, trả
về mảng mới, không sửa đầu vào; trạng thái là dict tên khoá như PyTorch (``{}``
trước bước đầu), theo mặc định của ``torch.optim``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

import lab2_models

OPTIMIZERS = ("sgd", "momentum", "rmsprop", "adam")
SURFACES = ("quadratic", "rosenbrock")

# The gradient-noise experiment: a fixed small model, in float64.
NOISE_CONFIG = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float64"}

# GPT-2 XL's optimizer settings (§3.2.3 Optimization algorithm system implications, the GPT-2 callout).
GPT2_XL = {
    "peak_lr": 2.5e-4,
    "warmup_steps": 500,
    "total_steps": 50_000,  # from the callout's "converges in ~50K steps": the chapter states no horizon
    "betas": (0.9, 0.999),
    "weight_decay": 0.01,
    "max_grad_norm": 1.0,
}


# -- 1. update rules -------------------------------------------------------------
def sgd_step(
    *,
    params: np.ndarray,  # (...) any shape
    grads: np.ndarray,  # same shape as params
    state: dict,  # {} before the first step; {"momentum_buffer": (...)} after, when momentum != 0
    lr: float,
    momentum: float = 0.0,
    weight_decay: float = 0.0,
) -> tuple[np.ndarray, dict]:
    """One step of SGD, with optional momentum, as ``torch.optim.SGD`` does it.

    Chapter: §3.2.2.1 Momentum-based methods (the velocity buffer).

    Let g = grads + weight_decay * params (coupled L2 decay).  With
    ``momentum == 0`` the update is ``params - lr * g`` and the state stays
    ``{}``.  With ``momentum > 0`` (dampening 0, no Nesterov):

    * first step (no ``"momentum_buffer"`` in ``state``): buf = g, a copy of
      the gradient itself, *not* ``(1 - momentum) * g``;
    * later steps: buf = momentum * buf + g;
    * update: ``params - lr * buf``; the new state is ``{"momentum_buffer": buf}``.

    Returns ``(new_params, new_state)``; ``new_params`` has params' shape,
    dtype float64.

    Tóm tắt (tiếng Việt): g = grads + weight_decay * params; momentum == 0:
    ``params - lr * g``, trạng thái ``{}``; momentum > 0: bước đầu buf = g (không
    nhân 1 - momentum), rồi buf = momentum * buf + g, ``params - lr * buf``, trạng
    thái ``{"momentum_buffer": buf}``. Trả về ``(new_params, new_state)``, float64.
    """
    ### BEGIN SOLUTION
    assert params.shape == grads.shape, f"params {params.shape} and grads {grads.shape} differ in shape"
    g = grads + weight_decay * params
    if momentum == 0:
        return params - lr * g, {}
    # torch starts the buffer at the first gradient, which avoids a slow warm-up from zero
    buf = g.copy() if "momentum_buffer" not in state else momentum * state["momentum_buffer"] + g
    return params - lr * buf, {"momentum_buffer": buf}
    ### END SOLUTION


def rmsprop_step(
    *,
    params: np.ndarray,  # (...) any shape
    grads: np.ndarray,  # same shape as params
    state: dict,  # {} before the first step; then {"step": int, "square_avg": (...)}
    lr: float = 0.01,
    alpha: float = 0.99,
    eps: float = 1e-8,
    weight_decay: float = 0.0,
) -> tuple[np.ndarray, dict]:
    """One step of RMSprop as ``torch.optim.RMSprop`` does it (not centered, no momentum).

    Chapter: §3.2.2.2 Adaptive learning rate methods (RMSprop).

    g = grads + weight_decay * params; the square average starts at zeros:

    * square_avg = alpha * square_avg + (1 - alpha) * g**2
    * update: ``params - lr * g / (sqrt(square_avg) + eps)``: eps is added
      *outside* the square root.
    * ``step`` counts the steps taken, 1 after the first call.

    Returns ``(new_params, {"step": int, "square_avg": array})``.

    Tóm tắt (tiếng Việt): g = grads + weight_decay * params; square_avg bắt đầu
    từ 0, square_avg = alpha * square_avg + (1 - alpha) * g**2; cập nhật
    ``params - lr * g / (sqrt(square_avg) + eps)`` (eps ngoài căn); step = 1 sau
    lần gọi đầu. Trả về ``(new_params, {"step": int, "square_avg": array})``.
    """
    ### BEGIN SOLUTION
    assert params.shape == grads.shape, f"params {params.shape} and grads {grads.shape} differ in shape"
    g = grads + weight_decay * params
    step = state.get("step", 0) + 1
    square_avg = alpha * state.get("square_avg", np.zeros_like(params)) + (1 - alpha) * g * g
    return params - lr * g / (np.sqrt(square_avg) + eps), {"step": step, "square_avg": square_avg}
    ### END SOLUTION


def adam_step(
    *,
    params: np.ndarray,  # (...) any shape
    grads: np.ndarray,  # same shape as params
    state: dict,  # {} before the first step; then {"step": int, "exp_avg": (...), "exp_avg_sq": (...)}
    lr: float = 1e-3,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
) -> tuple[np.ndarray, dict]:
    """One step of Adam with bias correction, as ``torch.optim.Adam`` does it.

    Chapter: §3.2.2.3 Adam optimization (the equations below are the chapter's).

    g = grads + weight_decay * params (coupled L2, i.e. Adam, not AdamW);
    both moments start at zeros; t is the step number, 1 on the first call:

    * exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
    * exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g**2
    * m_hat = exp_avg / (1 - beta1**t),  v_hat = exp_avg_sq / (1 - beta2**t)
    * update: ``params - lr * m_hat / (sqrt(v_hat) + eps)``: eps is added
      after the bias correction, outside the square root.

    Returns ``(new_params, {"step": t, "exp_avg": array, "exp_avg_sq": array})``.

    Tóm tắt (tiếng Việt): g = grads + weight_decay * params (L2 ghép, không phải
    AdamW); hai moment bắt đầu từ 0, t = 1 ở lần gọi đầu; cập nhật
    ``params - lr * m_hat / (sqrt(v_hat) + eps)`` (eps ngoài căn). Trả về
    ``(new_params, {"step": t, "exp_avg": array, "exp_avg_sq": array})``.
    """
    ### BEGIN SOLUTION
    assert params.shape == grads.shape, f"params {params.shape} and grads {grads.shape} differ in shape"
    beta1, beta2 = betas
    g = grads + weight_decay * params
    t = state.get("step", 0) + 1
    m = beta1 * state.get("exp_avg", np.zeros_like(params)) + (1 - beta1) * g
    v = beta2 * state.get("exp_avg_sq", np.zeros_like(params)) + (1 - beta2) * g * g
    # both moments start at 0, so early averages are biased toward 0; dividing by 1 - beta**t undoes it
    m_hat = m / (1 - beta1**t)
    v_hat = v / (1 - beta2**t)
    return params - lr * m_hat / (np.sqrt(v_hat) + eps), {"step": t, "exp_avg": m, "exp_avg_sq": v}
    ### END SOLUTION


# -- 2. trajectories on a 2-D loss surface -----------------------------------------
def loss_surface(*, surface: str, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Loss and gradient of a named 2-D surface at points ``xy`` of shape (..., 2).

    Chapter: §3.2.2 Adaptive and momentum-based optimizers (ill-conditioned
    landscapes: steep in one direction, shallow in another).  The two
    surfaces are the lab's choice.

    * ``"quadratic"``: f(x, y) = 0.5 * x**2 + 10 * y**2, an ill-conditioned
      bowl (curvatures 1 and 20) with its minimum at (0, 0).
    * ``"rosenbrock"``: f(x, y) = (1 - x)**2 + 100 * (y - x**2)**2, a curved
      valley with its minimum at (1, 1).

    Returns ``(loss, grad)``: loss has shape (...), grad has shape (..., 2)
    with grad[..., 0] = df/dx and grad[..., 1] = df/dy; both float64.

    Tóm tắt (tiếng Việt): mất mát và gradient của mặt ``"quadratic"`` hoặc
    ``"rosenbrock"`` tại các điểm ``xy`` shape (..., 2). Trả về
    ``(loss, grad)``: loss shape (...), grad shape (..., 2) với grad[..., 0] =
    df/dx, grad[..., 1] = df/dy; cả hai float64.
    """
    ### BEGIN SOLUTION
    assert surface in SURFACES, f"surface must be one of {SURFACES}, got {surface!r}"
    xy = np.asarray(xy, dtype=np.float64)
    assert xy.shape[-1] == 2, f"xy must have shape (..., 2), got {xy.shape}"
    x, y = xy[..., 0], xy[..., 1]
    if surface == "quadratic":
        return 0.5 * x**2 + 10 * y**2, np.stack([x, 20 * y], axis=-1)
    r = y - x**2  # distance from the valley floor y = x^2
    loss = (1 - x) ** 2 + 100 * r**2
    return loss, np.stack([-2 * (1 - x) - 400 * x * r, 200 * r], axis=-1)
    ### END SOLUTION


def trajectory(*, surface: str, optimizer: str, start: tuple[float, float], steps: int, hparams: dict) -> np.ndarray:
    """Run ``steps`` steps of a named optimizer on a named surface.

    ``optimizer`` is one of ``"sgd"``, ``"momentum"``, ``"rmsprop"``,
    ``"adam"``; ``hparams`` holds the keyword arguments of its step function
    above (``lr`` always).  ``"sgd"`` and ``"momentum"`` both use
    ``sgd_step``; for ``"momentum"`` a missing ``hparams["momentum"]``
    means 0.9.  The parameters are the point (x, y), one array of shape
    (2,), starting at ``start``; each step uses the exact gradient of
    ``loss_surface`` at the current point.

    Returns the points visited, shape (steps + 1, 2), float64; row 0 is
    ``start``.

    What the grader checks: every point against ``torch.optim`` run on
    autograd's gradients (and, from random starts, against the reference),
    within rtol 1e-6 and atol 1e-9 plus the case's own sensitivity to
    rounding (100 times how far torch's trajectory moves when each gradient
    and each step is off by a few ulps).  Any correct way of writing the
    gradient or the update passes; the order of floating-point operations
    need not match torch's.  Each call has the lab's 30 s limit
    (``lab.toml`` ``timeout_s``); the grader's 100-step cases take
    milliseconds.

    Tóm tắt (tiếng Việt): chạy ``steps`` bước của bộ tối ưu trên mặt mất mát, từ
    ``start``, với gradient chính xác của ``loss_surface``; ``"sgd"`` và
    ``"momentum"`` dùng ``sgd_step`` (momentum mặc định 0.9). Trả về các điểm đã
    đi qua, shape (steps + 1, 2), float64; hàng 0 là ``start``. Bộ chấm so
    từng điểm với ``torch.optim`` (rtol 1e-6, atol 1e-9, cộng độ nhạy của chính
    trường hợp đó với sai số làm tròn), nên không cần khớp thứ tự phép tính của
    torch. Mỗi lần gọi có giới hạn 30 s.
    """
    ### BEGIN SOLUTION
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    hp = dict(hparams)
    if optimizer == "momentum":
        hp.setdefault("momentum", 0.9)
    step_fn = {"sgd": sgd_step, "momentum": sgd_step, "rmsprop": rmsprop_step, "adam": adam_step}[optimizer]
    p, state = np.asarray(start, dtype=np.float64), {}
    path = [p]
    for _ in range(steps):
        _, grad = loss_surface(surface=surface, xy=p)
        p, state = step_fn(params=p, grads=grad, state=state, **hp)
        path.append(p)
    return np.stack(path)  # (steps + 1, 2)
    ### END SOLUTION


# -- 3. optimizer state: the memory rule, then a real torch optimizer ----------------
def optimizer_memory(*, num_params: int, optimizer: str, bytes_per_value: int = 4) -> dict:
    """Memory of parameters plus optimizer state, by the chapter's rule.

    Chapter: §3.2.3 Optimization algorithm system implications (the table:
    1x, 2x, 2x, 3x) and §3.2.2.3 Adam optimization (800 MB of Adam state for
    100M FP32 parameters).

    Counts the parameters and the per-parameter state tensors the optimizer
    keeps (with default options: ``"momentum"`` keeps a momentum buffer,
    ``"rmsprop"`` a square average, ``"adam"`` two moments), each value
    ``bytes_per_value`` bytes.  Gradients and scalar bookkeeping (Adam's
    step counter) are not counted.

    Returns ``{"param_bytes": int, "state_bytes": int, "total_bytes": int,
    "multiple": int}`` where total = param + state and multiple =
    total / param (1 for SGD, and so on).

    Tóm tắt (tiếng Việt): bộ nhớ tham số cộng trạng thái theo quy tắc của
    chương, mỗi giá trị ``bytes_per_value`` byte; không tính gradient và bộ đếm
    step. Trả về các int ``"param_bytes"``, ``"state_bytes"``, ``"total_bytes"``
    = param + state và ``"multiple"`` = total / param (1 với SGD, ...).
    """
    ### BEGIN SOLUTION
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    state_tensors = {"sgd": 0, "momentum": 1, "rmsprop": 1, "adam": 2}[optimizer]
    param_bytes = num_params * bytes_per_value
    state_bytes = state_tensors * param_bytes
    return {
        "param_bytes": param_bytes,
        "state_bytes": state_bytes,
        "total_bytes": param_bytes + state_bytes,
        "multiple": 1 + state_tensors,
    }
    ### END SOLUTION


### BEGIN SOLUTION NO PROMPT
def _torch_optimizer(params, optimizer: str, hparams: dict) -> torch.optim.Optimizer:
    hp = dict(hparams)
    if optimizer == "momentum":
        hp.setdefault("momentum", 0.9)
    cls = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "rmsprop": torch.optim.RMSprop, "adam": torch.optim.Adam}
    return cls[optimizer](params, **hp)
### END SOLUTION


def optimizer_state_footprint(*, config: dict, optimizer: str, hparams: dict) -> dict:
    """Count the state a real ``torch.optim`` optimizer keeps after one step.

    Chapter: §3.2.4 Framework optimizer interface and scheduling (``step()``
    mutates persistent optimizer state); the rule it checks is
    ``optimizer_memory``'s.

    Build the model with ``lab2_models.build_model(config)`` and the
    optimizer by name: ``"sgd"`` -> ``torch.optim.SGD``, ``"momentum"`` ->
    ``torch.optim.SGD`` with ``momentum=0.9`` unless ``hparams`` sets it,
    ``"rmsprop"`` -> ``torch.optim.RMSprop``, ``"adam"`` ->
    ``torch.optim.Adam``; ``hparams`` are passed as keyword arguments (for
    example ``{"lr": 0.01}``, ``{"amsgrad": True}``, ``{"centered": True}``).
    Take one step on the gradient of
    ``lab2_models.loss_fn(model, lab2_models.make_batch(config, n=8, seed=0))``.

    Then, over every parameter p and every entry of ``optimizer.state[p]``:

    * a *per-element* state tensor is one with exactly p's shape; it counts
      ``numel`` elements and ``numel * element_size()`` bytes;
    * anything else (Adam's scalar ``step`` tensor, say) is bookkeeping: its
      key is listed but it is not counted.

    Returns a dict:

    * ``"param_elements"``, ``"param_bytes"``: of all parameters (int);
    * ``"state_elements"``, ``"state_bytes"``: of all per-element state (int);
    * ``"state_keys"``: the sorted list of distinct keys found in the state
      of any parameter, bookkeeping included (``[]`` if none);
    * ``"multiple"``: (param_bytes + state_bytes) / param_bytes (float).

    Tóm tắt (tiếng Việt): tạo bộ tối ưu ``torch.optim`` thật theo tên, bước một
    lần; chỉ đếm tensor trạng thái đúng shape của p (numel, numel *
    element_size() byte), vẫn liệt kê mọi khoá. Trả về số phần tử/byte (int) của
    tham số và trạng thái, ``"state_keys"`` đã sắp xếp, ``"multiple"`` (float).
    """
    ### BEGIN SOLUTION
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    model = lab2_models.build_model(config)
    opt = _torch_optimizer(model.parameters(), optimizer, hparams)
    lab2_models.loss_fn(model, lab2_models.make_batch(config, n=8, seed=0)).backward()
    opt.step()  # torch creates state lazily, on the first step

    params = list(model.parameters())
    param_elements = sum(p.numel() for p in params)
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    state_elements = state_bytes = 0
    keys: set[str] = set()
    for p in params:
        for key, value in opt.state.get(p, {}).items():
            keys.add(key)
            if torch.is_tensor(value) and value.shape == p.shape:
                state_elements += value.numel()
                state_bytes += value.numel() * value.element_size()
    return {
        "param_elements": param_elements,
        "param_bytes": param_bytes,
        "state_elements": state_elements,
        "state_bytes": state_bytes,
        "state_keys": sorted(keys),
        "multiple": (param_bytes + state_bytes) / param_bytes,
    }
    ### END SOLUTION


# -- 4. gradient noise: std of the mini-batch gradient ~ 1/sqrt(B) ---------------------
def gradient_noise(*, config: dict, batch_sizes: list[int], trials: int, pool_size: int, seed: int) -> dict:
    """Measure how the noise of the mini-batch gradient falls with batch size B.

    Chapter: §3.2.1.2 Mini-batch processing ("reducing the gradient noise
    (standard deviation of the mean gradient) by 1/sqrt(B)"); the chapter has
    no experiment for it, so this one is the lab's.

    The experiment (follow it exactly; the grader replays it):

    * model = ``lab2_models.build_model(config)``, kept fixed (no training);
      pool = ``lab2_models.make_batch(config, n=pool_size, seed=seed)``.
    * ``rng = np.random.default_rng(seed)``, created once.  For each B in
      ``batch_sizes``, in order, and each of ``trials`` trials: draw
      ``idx = rng.integers(0, pool_size, size=B)`` (with replacement), and
      take the gradient of ``lab2_models.loss_fn`` (the mean loss) on the
      examples ``idx`` of the pool with respect to all parameters,
      flattened into one float64 vector.
    * noise std(B) = sqrt(sum over coordinates of the variance over trials,
      with ddof=1), i.e. the root of the trace of the gradient covariance.
    * Fit a line to (ln B, ln std(B)) by least squares
      (``np.polyfit(np.log(B), np.log(std), 1)``).

    Returns ``{"std": np.ndarray (len(batch_sizes),) float64, "slope": float,
    "intercept": float}``.  Theory says the slope is -0.5.

    What the grader checks: a replay of this experiment (rtol 1e-6), and
    std(B) within 25% of sigma/sqrt(B), where sigma² is computed from every
    per-example gradient of the pool, with a slope of -0.5 ± 0.1.  Each call
    has the lab's 30 s limit (``lab.toml`` ``timeout_s``); its largest case,
    6 batch sizes × 100 trials with one backward each, takes about a second.

    Tóm tắt (tiếng Việt): làm đúng thí nghiệm trên (một rng tạo một lần, ``idx``
    rút có hoàn lại); std(B) = căn của tổng phương sai (ddof=1) theo toạ độ;
    khớp ``np.polyfit(np.log(B), np.log(std), 1)``. Trả về
    ``{"std": (len(batch_sizes),) float64, "slope": float, "intercept": float}``.
    Bộ chấm chạy lại thí nghiệm (rtol 1e-6) và so std(B) với sigma/sqrt(B)
    (sai lệch tối đa 25%), hệ số góc -0.5 ± 0.1. Mỗi lần gọi có giới hạn 30 s.
    """
    ### BEGIN SOLUTION
    assert trials >= 2, "the variance over trials needs at least 2 trials"
    model = lab2_models.build_model(config)
    pool = lab2_models.make_batch(config, n=pool_size, seed=seed)
    rng = np.random.default_rng(seed)
    std = []
    for B in batch_sizes:
        G = np.empty((trials, sum(p.numel() for p in model.parameters())))  # (trials, P)
        for t in range(trials):
            idx = torch.from_numpy(rng.integers(0, pool_size, size=B))
            model.zero_grad(set_to_none=True)
            lab2_models.loss_fn(model, {"x": pool["x"][idx], "y": pool["y"][idx]}).backward()
            G[t] = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).double().numpy()
        std.append(math.sqrt(G.var(axis=0, ddof=1).sum()))
    std = np.array(std)
    slope, intercept = np.polyfit(np.log(np.asarray(batch_sizes, dtype=np.float64)), np.log(std), 1)
    return {"std": std, "slope": float(slope), "intercept": float(intercept)}
    ### END SOLUTION


# -- 5. GPT-2 XL's schedule and gradient clipping ---------------------------------------
def lr_schedule(
    *,
    steps: np.ndarray,  # (N,) integer step numbers, >= 0
    peak_lr: float = 2.5e-4,
    warmup_steps: int = 500,
    total_steps: int = 50_000,
    min_lr: float = 0.0,
) -> np.ndarray:  # (N,) float64
    """Learning rate at each step: linear warmup, then cosine decay to a floor.

    Chapter: §3.2.3 Optimization algorithm system implications (GPT-2 XL:
    warmup from 0 to 2.5e-4 over 500 steps, then cosine decay) and §3.2.5
    Learning rate scheduling integration.  The chapter states neither the
    floor nor the step where the cosine ends: ``total_steps`` defaults to
    50,000 from its "converges in ~50K steps", ``min_lr`` to 0.

    * step < warmup_steps: ``peak_lr * step / warmup_steps`` (0 at step 0);
    * warmup_steps <= step <= total_steps, with
      progress = (step - warmup_steps) / (total_steps - warmup_steps):
      ``min_lr + 0.5 * (peak_lr - min_lr) * (1 + cos(pi * progress))``;
    * step > total_steps: ``min_lr``.

    With the defaults (GPT-2 XL): 0 at step 0, 1.25e-4 at step 250, 2.5e-4
    at step 500, 1.25e-4 at step 25,250, ``min_lr`` at 50,000 and after.

    Tóm tắt (tiếng Việt): warmup tuyến tính ``peak_lr * step / warmup_steps``
    khi step < warmup_steps, rồi giảm theo cosin từ ``peak_lr`` xuống ``min_lr``
    tại ``total_steps``, sau đó giữ ``min_lr``. Trả về mảng (N,) float64.
    """
    ### BEGIN SOLUTION
    s = np.asarray(steps, dtype=np.float64)
    assert (s >= 0).all(), "steps must be >= 0"
    warm = peak_lr * s / warmup_steps
    progress = np.clip((s - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    cosine = min_lr + 0.5 * (peak_lr - min_lr) * (1 + np.cos(np.pi * progress))
    return np.where(s < warmup_steps, warm, cosine)
    ### END SOLUTION


def clip_grad_norm(*, grads: list[np.ndarray], max_norm: float) -> dict:
    """Clip gradients by their global L2 norm, as ``torch.nn.utils.clip_grad_norm_``.

    Chapter: §3.2.3 Optimization algorithm system implications (GPT-2 XL
    clips at global norm 1.0).

    total_norm = sqrt(sum over all arrays of sum(g**2)); every array is
    multiplied by ``min(1, max_norm / (total_norm + 1e-6))``.

    Returns ``{"grads": list of arrays (same shapes, float64),
    "total_norm": float}``; total_norm is the norm *before* clipping.

    Tóm tắt (tiếng Việt): total_norm = chuẩn L2 toàn cục của mọi mảng; nhân mọi
    mảng với ``min(1, max_norm / (total_norm + 1e-6))``. Trả về
    ``{"grads": list mảng float64 cùng shape, "total_norm": float}``; total_norm
    là chuẩn *trước* khi cắt.
    """
    ### BEGIN SOLUTION
    total_norm = math.sqrt(sum(float(np.sum(np.square(g))) for g in grads))
    scale = min(1.0, max_norm / (total_norm + 1e-6))  # the 1e-6 keeps a zero gradient from dividing by 0
    return {"grads": [np.asarray(g, dtype=np.float64) * scale for g in grads], "total_norm": total_norm}
    ### END SOLUTION


# -- 6. AdamW: decoupled weight decay ----------------------------------------------------
def adamw_step(
    *,
    params: np.ndarray,  # (...) any shape
    grads: np.ndarray,  # same shape as params
    state: dict,  # {} before the first step; then {"step": int, "exp_avg": (...), "exp_avg_sq": (...)}
    lr: float = 1e-3,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 1e-2,
) -> tuple[np.ndarray, dict]:
    """One step of AdamW (decoupled weight decay), as ``torch.optim.AdamW`` does it.

    Chapter: §3.2.3 Optimization algorithm system implications names AdamW
    (decoupled weight decay, no extra memory, the default for large
    transformers) but gives no formula.  The rule is from Loshchilov and
    Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019), in PyTorch's
    form, which this function must follow:

    1. decay the parameters on their own:
       ``decayed = params * (1 - lr * weight_decay)``;
    2. then one plain Adam step from ``decayed`` with ``grads`` unchanged,
       exactly ``adam_step`` with ``weight_decay=0`` (same moments, bias
       correction by 1 - beta**t, eps after the correction, outside the
       square root).

    So each step removes the same fraction ``lr * weight_decay`` of every
    parameter, whatever its gradient history: the decay is never divided by
    sqrt(v_hat).  In Adam with L2 (``adam_step(weight_decay=...)``) the decay
    term goes into g and *is* divided by sqrt(v_hat), so parameters with
    large gradients are barely decayed.  The two differ whenever
    weight_decay > 0.

    Conventions: the decay is multiplied by ``lr`` (torch's; the paper's
    Algorithm 2 multiplies its lambda by the schedule multiplier only, so its
    lambda is ``lr * weight_decay`` here at a fixed lr), and it uses the
    parameters from *before* this step.  ``weight_decay`` defaults to 0.01,
    torch's AdamW default.  The state is Adam's, ``{"step": t, "exp_avg":
    array, "exp_avg_sq": array}``: two arrays per parameter, so AdamW keeps
    Adam's 3x (parameters plus state) and adds no memory.

    Returns ``(new_params, new_state)``; ``new_params`` has params' shape,
    float64.

    Tóm tắt (tiếng Việt): AdamW (suy giảm trọng số tách rời, Loshchilov và
    Hutter, ICLR 2019) theo đúng ``torch.optim.AdamW``: trước hết
    ``decayed = params * (1 - lr * weight_decay)``, rồi một bước Adam thường
    (``adam_step`` với ``weight_decay=0``) từ ``decayed`` với ``grads`` không
    đổi. Suy giảm không bị chia cho sqrt(v_hat), khác với L2 trong Adam.
    Trạng thái giống Adam (``step``, ``exp_avg``, ``exp_avg_sq``): vẫn 3x bộ
    nhớ. Trả về ``(new_params, new_state)``, float64.
    """
    ### BEGIN SOLUTION
    # decoupled: shrink the weights directly, so the moments and sqrt(v_hat) never see the decay
    decayed = params * (1 - lr * weight_decay)
    return adam_step(params=decayed, grads=grads, state=state, lr=lr, betas=betas, eps=eps, weight_decay=0.0)
    ### END SOLUTION


# -- 7. the linear scaling rule and warmup -----------------------------------------------
RESNET50_CRITICAL_BATCH = 8192  # §3.2.1.2 Mini-batch processing: ResNet-50 on ImageNet, "near B ≈ 8,192"


def linear_scaling_rule(
    *,
    base_lr: float,
    base_batch: int,
    new_batch: int,
    critical_batch: int = RESNET50_CRITICAL_BATCH,
) -> float | None:
    """The learning rate for ``new_batch`` by the linear scaling rule, or None where it does not hold.

    Chapter: §3.2.1.2 Mini-batch processing (eta proportional to B, "up to the
    critical batch size"; ResNet-50 on ImageNet: near 8,192), §4.4.2 Batch
    size and parameter updates (eta_new = k * eta_base: batch 32 -> 256 takes
    8x the learning rate) and §8 Fallacies and Pitfalls (batch 512 -> 4,096
    means 0.1 -> 0.8); the rule is Goyal et al., "Accurate, Large Minibatch
    SGD" (2017).

    * ``base_lr * new_batch / base_batch`` (a float) when both batches are
      at most ``critical_batch`` (inclusive: at 8,192 the chapter says
      accuracy is preserved);
    * ``None`` when either batch is larger than ``critical_batch``: beyond
      it the chapter says no learning rate recovers accuracy by this rule.

    The rule works both ways (a smaller batch gets a proportionally smaller
    rate).  ``critical_batch`` defaults to the chapter's ResNet-50 number; it
    is a property of the workload, not a constant of nature.

    Tóm tắt (tiếng Việt): quy tắc tỉ lệ tuyến tính: trả về
    ``base_lr * new_batch / base_batch`` (float) khi cả hai batch không vượt
    quá ``critical_batch`` (kể cả bằng), và ``None`` khi một trong hai batch
    lớn hơn: khi đó quy tắc không còn đúng. Mặc định 8.192 (ResNet-50 trong
    chương).
    """
    ### BEGIN SOLUTION
    if max(base_batch, new_batch) > critical_batch:
        return None  # past the critical batch the rule no longer holds
    return base_lr * new_batch / base_batch
    ### END SOLUTION


def scaled_lr_schedule(
    *,
    steps: np.ndarray,  # (N,) integer step numbers, >= 0
    base_lr: float,
    base_batch: int,
    new_batch: int,
    warmup_steps: int,
    total_steps: int,
    min_lr: float = 0.0,
    critical_batch: int = RESNET50_CRITICAL_BATCH,
) -> np.ndarray | None:  # (N,) float64, or None
    """The learning rate at each step for ``new_batch``: warmup to the linearly scaled rate, then cosine.

    Chapter: §8 Fallacies and Pitfalls (a large batch also "requires warmup
    schedules"), with the warmup of §3.2.3 Optimization algorithm system
    implications (GPT-2 XL warms up from 0).  The chapter gives no warmup
    length for a scaled batch, so it is a parameter; Goyal et al. (2017)
    instead warm up from ``base_lr`` over 5 epochs, beyond the chapter.

    * peak = ``linear_scaling_rule(base_lr=..., base_batch=...,
      new_batch=..., critical_batch=...)``; if that is None (beyond the
      critical batch), return None;
    * otherwise ``lr_schedule(steps=steps, peak_lr=peak,
      warmup_steps=warmup_steps, total_steps=total_steps, min_lr=min_lr)``:
      ``peak * step / warmup_steps`` below ``warmup_steps`` (0 at step 0,
      the peak first reached at step ``warmup_steps``), then the cosine.

    Tóm tắt (tiếng Việt): tốc độ học ở mỗi bước cho ``new_batch``: đỉnh =
    ``linear_scaling_rule(...)``; nếu là None (vượt batch tới hạn) thì trả về
    None; ngược lại là ``lr_schedule`` với ``peak_lr`` = đỉnh đó (warmup từ 0,
    ``peak * step / warmup_steps``, đạt đỉnh tại bước ``warmup_steps``, rồi
    cosin). Trả về mảng (N,) float64 hoặc None.
    """
    ### BEGIN SOLUTION
    peak = linear_scaling_rule(base_lr=base_lr, base_batch=base_batch, new_batch=new_batch,
                               critical_batch=critical_batch)
    if peak is None:
        return None
    # one copy of the schedule: GPT-2 XL's shape, with the peak the rule gives
    return lr_schedule(steps=steps, peak_lr=peak, warmup_steps=warmup_steps, total_steps=total_steps, min_lr=min_lr)
    ### END SOLUTION
