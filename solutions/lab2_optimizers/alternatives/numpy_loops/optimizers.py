"""Lab 2, part 1, a correct alternative: plain Python loops over the elements
(``math.sqrt``, ``math.cos``), the Rosenbrock gradient as the expanded
polynomial 400x³ − 400xy + 2x − 2, hand-written variance and least squares;
AdamW in one loop (the decay subtracted as its own term), the scaled schedule
written out again in a loop rather than reusing ``lr_schedule``.

Not the reference: it exists to prove that the hidden tests accept any
correct implementation, including one whose rounding differs at every step.
"""

from __future__ import annotations

import math

import numpy as np
import torch

import lab2_models

OPTIMIZERS = ("sgd", "momentum", "rmsprop", "adam")
SURFACES = ("quadratic", "rosenbrock")
NOISE_CONFIG = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float64"}
GPT2_XL = {"peak_lr": 2.5e-4, "warmup_steps": 500, "total_steps": 50_000, "betas": (0.9, 0.999),
           "weight_decay": 0.01, "max_grad_norm": 1.0}


def _flat(a) -> list[float]:
    return [float(v) for v in np.asarray(a, dtype=np.float64).reshape(-1)]


def _shaped(values: list[float], like) -> np.ndarray:
    return np.array(values, dtype=np.float64).reshape(np.shape(like))


def sgd_step(*, params, grads, state, lr, momentum=0.0, weight_decay=0.0):
    p, g = _flat(params), _flat(grads)
    assert len(p) == len(g), "params and grads differ in shape"
    d = [gi + weight_decay * pi for pi, gi in zip(p, g)]
    if momentum == 0:
        return _shaped([pi - lr * di for pi, di in zip(p, d)], params), {}
    if "momentum_buffer" in state:
        buf = [momentum * bi + di for bi, di in zip(_flat(state["momentum_buffer"]), d)]
    else:
        buf = list(d)
    return _shaped([pi - lr * bi for pi, bi in zip(p, buf)], params), {"momentum_buffer": _shaped(buf, params)}


def rmsprop_step(*, params, grads, state, lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0):
    p, g = _flat(params), _flat(grads)
    sq = _flat(state["square_avg"]) if "square_avg" in state else [0.0] * len(p)
    new_p, new_sq = [], []
    for pi, gi, si in zip(p, g, sq):
        gi = gi + weight_decay * pi
        si = alpha * si + (1 - alpha) * gi * gi
        new_sq.append(si)
        new_p.append(pi - lr * gi / (math.sqrt(si) + eps))
    return _shaped(new_p, params), {"step": state.get("step", 0) + 1, "square_avg": _shaped(new_sq, params)}


def adam_step(*, params, grads, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    beta1, beta2 = betas
    p, g = _flat(params), _flat(grads)
    t = state.get("step", 0) + 1
    m = _flat(state["exp_avg"]) if "exp_avg" in state else [0.0] * len(p)
    v = _flat(state["exp_avg_sq"]) if "exp_avg_sq" in state else [0.0] * len(p)
    bc1, bc2 = 1 - beta1**t, 1 - beta2**t
    new_p, new_m, new_v = [], [], []
    for pi, gi, mi, vi in zip(p, g, m, v):
        gi = gi + weight_decay * pi
        mi = beta1 * mi + (1 - beta1) * gi
        vi = beta2 * vi + (1 - beta2) * gi**2
        new_m.append(mi)
        new_v.append(vi)
        new_p.append(pi - (lr / bc1) * mi / (math.sqrt(vi) / math.sqrt(bc2) + eps))
    return _shaped(new_p, params), {"step": t, "exp_avg": _shaped(new_m, params), "exp_avg_sq": _shaped(new_v, params)}


def loss_surface(*, surface, xy):
    assert surface in SURFACES, f"surface must be one of {SURFACES}, got {surface!r}"
    xy = np.asarray(xy, dtype=np.float64)
    x, y = xy[..., 0], xy[..., 1]
    if surface == "quadratic":
        return 0.5 * x * x + 10 * y * y, np.stack([x, 20 * y], axis=-1)
    loss = 1 - 2 * x + x**2 + 100 * y**2 - 200 * x**2 * y + 100 * x**4  # expanded
    return loss, np.stack([400 * x**3 - 400 * x * y + 2 * x - 2, 200 * y - 200 * x**2], axis=-1)


def trajectory(*, surface, optimizer, start, steps, hparams):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    hp = dict(hparams)
    if optimizer == "momentum" and "momentum" not in hp:
        hp["momentum"] = 0.9
    fn = rmsprop_step if optimizer == "rmsprop" else adam_step if optimizer == "adam" else sgd_step
    points = [np.array(start, dtype=np.float64)]
    state = {}
    while len(points) <= steps:
        _loss, g = loss_surface(surface=surface, xy=points[-1])
        nxt, state = fn(params=points[-1], grads=g, state=state, **hp)
        points.append(nxt)
    return np.array(points)


def optimizer_memory(*, num_params, optimizer, bytes_per_value=4):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    extra = 0
    if optimizer in ("momentum", "rmsprop"):
        extra = 1
    elif optimizer == "adam":
        extra = 2
    param_bytes = num_params * bytes_per_value
    total = param_bytes + extra * param_bytes
    return {"param_bytes": param_bytes, "state_bytes": total - param_bytes, "total_bytes": total,
            "multiple": total // param_bytes if param_bytes else 1 + extra}


def optimizer_state_footprint(*, config, optimizer, hparams):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    kwargs = {}
    if optimizer == "momentum":
        kwargs["momentum"] = 0.9  # the default; hparams may set another
    for key, value in hparams.items():
        kwargs[key] = value
    model = lab2_models.build_model(config)
    if optimizer in ("sgd", "momentum"):
        opt = torch.optim.SGD(model.parameters(), **kwargs)
    elif optimizer == "rmsprop":
        opt = torch.optim.RMSprop(model.parameters(), **kwargs)
    else:
        opt = torch.optim.Adam(model.parameters(), **kwargs)
    loss = lab2_models.loss_fn(model, lab2_models.make_batch(config, n=8, seed=0))
    loss.backward()
    opt.step()
    param_elements = param_bytes = state_elements = state_bytes = 0
    keys = []
    for p in model.parameters():
        param_elements += p.numel()
        param_bytes += p.numel() * p.element_size()
        for key in opt.state[p]:
            if key not in keys:
                keys.append(key)
            value = opt.state[p][key]
            if torch.is_tensor(value) and tuple(value.shape) == tuple(p.shape):
                state_elements += value.numel()
                state_bytes += value.numel() * value.element_size()
    keys.sort()
    return {"param_elements": param_elements, "param_bytes": param_bytes, "state_elements": state_elements,
            "state_bytes": state_bytes, "state_keys": keys, "multiple": (param_bytes + state_bytes) / param_bytes}


def _gradient_std(model, pool, rng, *, B, trials, pool_size):
    """sqrt of the summed per-coordinate variance (ddof=1) of ``trials`` gradients on B drawn examples."""
    rows = []
    for _trial in range(trials):
        idx = torch.as_tensor(rng.integers(0, pool_size, size=B))
        batch = {"x": torch.index_select(pool["x"], 0, idx), "y": torch.index_select(pool["y"], 0, idx)}
        model.zero_grad()
        lab2_models.loss_fn(model, batch).backward()
        rows.append(np.concatenate([p.grad.double().numpy().ravel() for p in model.parameters()]))
    G = np.array(rows)
    mean = G.sum(axis=0) / trials
    var = ((G - mean) ** 2).sum(axis=0) / (trials - 1)
    return math.sqrt(float(var.sum()))


def gradient_noise(*, config, batch_sizes, trials, pool_size, seed):
    assert trials >= 2, "the variance over trials needs at least 2 trials"
    model = lab2_models.build_model(config)
    pool = lab2_models.make_batch(config, n=pool_size, seed=seed)
    rng = np.random.default_rng(seed)  # one generator for every batch size, drawn in order
    std = [_gradient_std(model, pool, rng, B=B, trials=trials, pool_size=pool_size) for B in batch_sizes]
    # least squares by hand: slope = cov(u, v) / var(u)
    u = [math.log(B) for B in batch_sizes]
    v = [math.log(s) for s in std]
    ub, vb = sum(u) / len(u), sum(v) / len(v)
    slope = sum((a - ub) * (b - vb) for a, b in zip(u, v)) / sum((a - ub) ** 2 for a in u)
    return {"std": np.array(std), "slope": slope, "intercept": vb - slope * ub}


def lr_schedule(*, steps, peak_lr=2.5e-4, warmup_steps=500, total_steps=50_000, min_lr=0.0):
    out = []
    for step in np.asarray(steps).reshape(-1).tolist():
        assert step >= 0, "steps must be >= 0"
        if step < warmup_steps:
            out.append(peak_lr * step / warmup_steps)
        elif step <= total_steps:
            progress = (step - warmup_steps) / (total_steps - warmup_steps)
            out.append(min_lr + 0.5 * (peak_lr - min_lr) * (1 + math.cos(math.pi * progress)))
        else:
            out.append(min_lr)
    return np.array(out, dtype=np.float64)


def clip_grad_norm(*, grads, max_norm):
    total = 0.0
    for g in grads:
        for value in _flat(g):
            total += value * value
    total_norm = math.sqrt(total)
    scale = max_norm / (total_norm + 1e-6)
    if scale > 1:
        scale = 1.0
    return {"grads": [np.asarray(g, dtype=np.float64) * scale for g in grads], "total_norm": total_norm}


def adamw_step(*, params, grads, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    beta1, beta2 = betas
    p, g = _flat(params), _flat(grads)
    t = state.get("step", 0) + 1
    m = _flat(state["exp_avg"]) if "exp_avg" in state else [0.0] * len(p)
    v = _flat(state["exp_avg_sq"]) if "exp_avg_sq" in state else [0.0] * len(p)
    new_p, new_m, new_v = [], [], []
    for pi, gi, mi, vi in zip(p, g, m, v):
        mi = beta1 * mi + (1 - beta1) * gi  # the gradient alone: the decay never enters the moments
        vi = beta2 * vi + (1 - beta2) * gi * gi
        m_hat, v_hat = mi / (1 - beta1**t), vi / (1 - beta2**t)
        new_m.append(mi)
        new_v.append(vi)
        new_p.append(pi - lr * weight_decay * pi - lr * m_hat / (math.sqrt(v_hat) + eps))
    return _shaped(new_p, params), {"step": t, "exp_avg": _shaped(new_m, params), "exp_avg_sq": _shaped(new_v, params)}


RESNET50_CRITICAL_BATCH = 8192


def linear_scaling_rule(*, base_lr, base_batch, new_batch, critical_batch=RESNET50_CRITICAL_BATCH):
    if base_batch > critical_batch:
        return None
    if new_batch > critical_batch:
        return None
    return new_batch * base_lr / base_batch


def scaled_lr_schedule(*, steps, base_lr, base_batch, new_batch, warmup_steps, total_steps, min_lr=0.0,
                       critical_batch=RESNET50_CRITICAL_BATCH):
    peak = linear_scaling_rule(base_lr=base_lr, base_batch=base_batch, new_batch=new_batch,
                               critical_batch=critical_batch)
    if peak is None:
        return None
    out = []
    for step in np.asarray(steps).reshape(-1).tolist():
        if step < warmup_steps:
            out.append(step / warmup_steps * peak)
        elif step <= total_steps:
            angle = math.pi * (step - warmup_steps) / (total_steps - warmup_steps)
            out.append(min_lr + (peak - min_lr) * (1 + math.cos(angle)) / 2)
        else:
            out.append(min_lr)
    return np.array(out, dtype=np.float64)
