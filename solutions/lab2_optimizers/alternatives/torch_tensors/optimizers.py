"""Lab 2, part 1, a correct alternative: the update rules computed with torch
tensors (float64), Adam in torch's own "efficient" form, gradients of the
surfaces by autograd, per-example gradients by ``torch.func.vmap`` and the
optimizer state read from ``optimizer.state_dict()``; AdamW decays a
tensor in place, as ``torch.optim.AdamW`` does, before its Adam step.

Not the reference: it exists to prove that the hidden tests accept any
correct implementation, not only the reference's evaluation order.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.func import functional_call, grad, vmap

import lab2_models

OPTIMIZERS = ("sgd", "momentum", "rmsprop", "adam")
SURFACES = ("quadratic", "rosenbrock")
NOISE_CONFIG = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float64"}
GPT2_XL = {"peak_lr": 2.5e-4, "warmup_steps": 500, "total_steps": 50_000, "betas": (0.9, 0.999),
           "weight_decay": 0.01, "max_grad_norm": 1.0}


def _t(a) -> torch.Tensor:
    return torch.as_tensor(np.array(a, dtype=np.float64))  # a copy: the caller's array is never touched


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy().copy()


def sgd_step(*, params, grads, state, lr, momentum=0.0, weight_decay=0.0):
    p, g = _t(params), _t(grads)
    if weight_decay:
        g = g.add(p, alpha=weight_decay)
    if not momentum:
        return _np(p.add(g, alpha=-lr)), {}
    if "momentum_buffer" in state:
        buf = _t(state["momentum_buffer"]).mul_(momentum).add_(g)
    else:
        buf = g.clone()
    return _np(p.add(buf, alpha=-lr)), {"momentum_buffer": _np(buf)}


def rmsprop_step(*, params, grads, state, lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0):
    p, g = _t(params), _t(grads)
    if weight_decay:
        g = g.add(p, alpha=weight_decay)
    sq = _t(state["square_avg"]) if "square_avg" in state else torch.zeros_like(p)
    sq.mul_(alpha).addcmul_(g, g, value=1 - alpha)
    avg = sq.sqrt().add_(eps)
    return _np(p.addcdiv(g, avg, value=-lr)), {"step": int(state.get("step", 0)) + 1, "square_avg": _np(sq)}


def adam_step(*, params, grads, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    beta1, beta2 = betas
    p, g = _t(params), _t(grads)
    if weight_decay:
        g = g.add(p, alpha=weight_decay)
    step = int(state.get("step", 0)) + 1
    m = _t(state["exp_avg"]) if "exp_avg" in state else torch.zeros_like(p)
    v = _t(state["exp_avg_sq"]) if "exp_avg_sq" in state else torch.zeros_like(p)
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    # the efficient form: the bias corrections folded into a step size and the denominator
    step_size = lr / (1 - beta1**step)
    denom = (v.sqrt() / math.sqrt(1 - beta2**step)).add_(eps)
    return _np(p.addcdiv(m, denom, value=-step_size)), {"step": step, "exp_avg": _np(m), "exp_avg_sq": _np(v)}


def _torch_loss(surface, p):
    x, y = p[..., 0], p[..., 1]
    if surface == "quadratic":
        return 0.5 * x**2 + 10 * y**2
    return (1 - x) ** 2 + 100 * (y - x**2) ** 2


def loss_surface(*, surface, xy):
    assert surface in SURFACES, f"surface must be one of {SURFACES}, got {surface!r}"
    p = _t(xy).requires_grad_(True)
    loss = _torch_loss(surface, p)
    (g,) = torch.autograd.grad(loss.sum(), p)
    return _np(loss), _np(g)


def trajectory(*, surface, optimizer, start, steps, hparams):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    hp = dict(hparams)
    if optimizer == "momentum":
        hp.setdefault("momentum", 0.9)
    fn = {"sgd": sgd_step, "momentum": sgd_step, "rmsprop": rmsprop_step, "adam": adam_step}[optimizer]
    out = np.empty((steps + 1, 2))
    out[0] = start
    state = {}
    for t in range(steps):
        _loss, g = loss_surface(surface=surface, xy=out[t])
        out[t + 1], state = fn(params=out[t], grads=g, state=state, **hp)
    return out


def optimizer_memory(*, num_params, optimizer, bytes_per_value=4):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    multiple = {"sgd": 1, "momentum": 2, "rmsprop": 2, "adam": 3}[optimizer]
    param_bytes = num_params * bytes_per_value
    return {"param_bytes": param_bytes, "state_bytes": (multiple - 1) * param_bytes,
            "total_bytes": multiple * param_bytes, "multiple": multiple}


def optimizer_state_footprint(*, config, optimizer, hparams):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    model = lab2_models.build_model(config)
    hp = dict(hparams)
    if optimizer == "momentum":
        hp.setdefault("momentum", 0.9)
    cls = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "rmsprop": torch.optim.RMSprop,
           "adam": torch.optim.Adam}[optimizer]
    opt = cls(model.parameters(), **hp)
    lab2_models.loss_fn(model, lab2_models.make_batch(config, n=8, seed=0)).backward()
    opt.step()
    params = list(model.parameters())
    sd = opt.state_dict()  # state by parameter index, in model.parameters() order
    out = {"param_elements": 0, "param_bytes": 0, "state_elements": 0, "state_bytes": 0}
    keys = set()
    for i, p in enumerate(params):
        out["param_elements"] += p.numel()
        out["param_bytes"] += p.nbytes
        for key, value in sd["state"].get(i, {}).items():
            keys.add(key)
            if isinstance(value, torch.Tensor) and value.shape == p.shape:
                out["state_elements"] += value.numel()
                out["state_bytes"] += value.nbytes
    out["state_keys"] = sorted(keys)
    out["multiple"] = (out["param_bytes"] + out["state_bytes"]) / out["param_bytes"]
    return out


def gradient_noise(*, config, batch_sizes, trials, pool_size, seed):
    assert trials >= 2, "the variance over trials needs at least 2 trials"
    model = lab2_models.build_model(config)
    pool = lab2_models.make_batch(config, n=pool_size, seed=seed)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def one_loss(p, x, y):
        return lab2_models.F.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    # every example's gradient once; a batch's mean-loss gradient is the mean of its rows
    per = vmap(grad(one_loss), in_dims=(None, 0, 0))(params, pool["x"], pool["y"])
    G = torch.cat([per[k].reshape(pool_size, -1) for k in params], dim=1).double()  # (pool, P)
    rng = np.random.default_rng(seed)
    std = []
    for B in batch_sizes:
        draws = torch.stack([G[torch.from_numpy(rng.integers(0, pool_size, size=B))].mean(0) for _t in range(trials)])
        std.append(draws.var(dim=0, unbiased=True).sum().sqrt().item())
    std = np.array(std)
    slope, intercept = np.polyfit(np.log(np.asarray(batch_sizes, dtype=np.float64)), np.log(std), 1)
    return {"std": std, "slope": float(slope), "intercept": float(intercept)}


def lr_schedule(*, steps, peak_lr=2.5e-4, warmup_steps=500, total_steps=50_000, min_lr=0.0):
    s = torch.as_tensor(np.asarray(steps), dtype=torch.float64)
    assert bool((s >= 0).all()), "steps must be >= 0"
    progress = ((s - warmup_steps) / (total_steps - warmup_steps)).clamp(0.0, 1.0)
    cosine = min_lr + 0.5 * (peak_lr - min_lr) * (1 + torch.cos(math.pi * progress))
    return torch.where(s < warmup_steps, peak_lr * s / warmup_steps, cosine).numpy()


def clip_grad_norm(*, grads, max_norm):
    ts = [torch.zeros(np.shape(g), dtype=torch.float64, requires_grad=True) for g in grads]
    for t, g in zip(ts, grads):
        t.grad = _t(g)
    total = float(torch.nn.utils.clip_grad_norm_(ts, max_norm))  # torch's own clipping
    return {"grads": [_np(t.grad) for t in ts], "total_norm": total}


def adamw_step(*, params, grads, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    # torch.optim.AdamW's order: the in-place decay first, then the Adam step on the unchanged gradient
    decayed = _t(params).mul_(1 - lr * weight_decay)
    return adam_step(params=_np(decayed), grads=grads, state=state, lr=lr, betas=betas, eps=eps, weight_decay=0.0)


RESNET50_CRITICAL_BATCH = 8192


def linear_scaling_rule(*, base_lr, base_batch, new_batch, critical_batch=RESNET50_CRITICAL_BATCH):
    batches = torch.tensor([base_batch, new_batch])
    if bool((batches > critical_batch).any()):
        return None
    return float(torch.tensor(base_lr, dtype=torch.float64) * batches[1] / batches[0])


def scaled_lr_schedule(*, steps, base_lr, base_batch, new_batch, warmup_steps, total_steps, min_lr=0.0,
                       critical_batch=RESNET50_CRITICAL_BATCH):
    peak = linear_scaling_rule(base_lr=base_lr, base_batch=base_batch, new_batch=new_batch,
                               critical_batch=critical_batch)
    if peak is None:
        return None
    return lr_schedule(steps=steps, peak_lr=peak, warmup_steps=warmup_steps, total_steps=total_steps, min_lr=min_lr)
