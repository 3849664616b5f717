"""Lab 2, part 1, a correct alternative in a functional style: one generic
moment update shared by the rules, ``itertools.accumulate`` for the
trajectory, ``np.piecewise`` for the schedule, per-example gradients of the
whole pool from one backward of a summed loss (each example's gradient is a
row of a Jacobian built with ``torch.autograd.functional.jacobian``).  AdamW composes a
decay map with a decay-free Adam step; the scaled schedule reuses ``lr_schedule``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

import lab2_models

OPTIMIZERS = ("sgd", "momentum", "rmsprop", "adam")
SURFACES = ("quadratic", "rosenbrock")
NOISE_CONFIG = {"d_in": 8, "d_hidden": 16, "n_classes": 4, "seed": 0, "dtype": "float64"}
GPT2_XL = {"peak_lr": 2.5e-4, "warmup_steps": 500, "total_steps": 50_000, "betas": (0.9, 0.999),
           "weight_decay": 0.01, "max_grad_norm": 1.0}


def _ema(old, new, decay):
    """An exponential moving average that starts from zeros."""
    return new * (1 - decay) if old is None else decay * old + (1 - decay) * new


def sgd_step(*, params, grads, state, lr, momentum=0.0, weight_decay=0.0):
    g = np.add(grads, np.multiply(weight_decay, params))
    if momentum == 0:
        return np.subtract(params, np.multiply(lr, g)), {}
    buf = np.copy(g) if state.get("momentum_buffer") is None else np.add(np.multiply(momentum, state["momentum_buffer"]), g)
    return np.subtract(params, np.multiply(lr, buf)), {"momentum_buffer": buf}


def rmsprop_step(*, params, grads, state, lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.0):
    g = np.add(grads, np.multiply(weight_decay, params))
    sq = _ema(state.get("square_avg"), np.square(g), alpha)
    return params - lr * (g / np.add(np.sqrt(sq), eps)), {"step": 1 + state.get("step", 0), "square_avg": sq}


def adam_step(*, params, grads, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    (beta1, beta2), t = betas, 1 + state.get("step", 0)
    g = np.add(grads, np.multiply(weight_decay, params))
    m = _ema(state.get("exp_avg"), g, beta1)
    v = _ema(state.get("exp_avg_sq"), np.square(g), beta2)
    m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
    return params - lr * m_hat / (np.sqrt(v_hat) + eps), {"step": t, "exp_avg": m, "exp_avg_sq": v}


def loss_surface(*, surface, xy):
    assert surface in SURFACES, f"surface must be one of {SURFACES}, got {surface!r}"
    xy = np.asarray(xy, dtype=np.float64)
    x, y = np.moveaxis(xy, -1, 0)
    if surface == "quadratic":
        return 0.5 * np.square(x) + 10 * np.square(y), xy * np.array([1.0, 20.0])
    u, r = 1 - x, y - np.square(x)
    return np.square(u) + 100 * np.square(r), np.stack([-2 * u - 400 * x * r, 200 * r], axis=-1)


def trajectory(*, surface, optimizer, start, steps, hparams):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    hp = {"momentum": 0.9, **hparams} if optimizer == "momentum" else dict(hparams)
    fn = dict(sgd=sgd_step, momentum=sgd_step, rmsprop=rmsprop_step, adam=adam_step)[optimizer]

    def step(carry, _i):
        p, state = carry
        return fn(params=p, grads=loss_surface(surface=surface, xy=p)[1], state=state, **hp)

    first = (np.asarray(start, dtype=np.float64), {})
    return np.stack([p for p, _s in itertools.accumulate(range(steps), step, initial=first)])


def optimizer_memory(*, num_params, optimizer, bytes_per_value=4):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    copies = dict(sgd=1, momentum=2, rmsprop=2, adam=3)[optimizer]
    per = num_params * bytes_per_value
    return dict(param_bytes=per, state_bytes=per * (copies - 1), total_bytes=per * copies, multiple=copies)


def optimizer_state_footprint(*, config, optimizer, hparams):
    assert optimizer in OPTIMIZERS, f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    model = lab2_models.build_model(config)
    factory = dict(sgd=torch.optim.SGD, momentum=lambda ps, **kw: torch.optim.SGD(ps, **{"momentum": 0.9, **kw}),
                   rmsprop=torch.optim.RMSprop, adam=torch.optim.Adam)[optimizer]
    opt = factory(model.parameters(), **hparams)
    lab2_models.loss_fn(model, lab2_models.make_batch(config, n=8, seed=0)).backward()
    opt.step()
    params = list(model.parameters())
    per_element = [v for p in params for v in opt.state[p].values() if isinstance(v, torch.Tensor) and v.shape == p.shape]
    param_bytes = sum(p.nbytes for p in params)
    state_bytes = sum(v.nbytes for v in per_element)
    return dict(param_elements=sum(map(torch.Tensor.numel, params)), param_bytes=param_bytes,
                state_elements=sum(map(torch.Tensor.numel, per_element)), state_bytes=state_bytes,
                state_keys=sorted(set(itertools.chain.from_iterable(opt.state[p] for p in params))),
                multiple=1 + state_bytes / param_bytes)


def gradient_noise(*, config, batch_sizes, trials, pool_size, seed):
    assert trials >= 2, "the variance over trials needs at least 2 trials"
    model = lab2_models.build_model(config)
    pool = lab2_models.make_batch(config, n=pool_size, seed=seed)
    names = [n for n, _p in model.named_parameters()]
    shapes = [p.shape for p in model.parameters()]
    sizes = [p.numel() for p in model.parameters()]
    flat0 = torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    def per_example_losses(flat):
        # the model's parameters as views of one flat vector: each example's loss, not their mean
        chunks = dict(zip(names, (c.reshape(s) for c, s in zip(flat.split(sizes), shapes))))
        logits = torch.func.functional_call(model, chunks, (pool["x"],))
        return torch.nn.functional.cross_entropy(logits, pool["y"], reduction="none")

    J = torch.autograd.functional.jacobian(per_example_losses, flat0).double().numpy()  # (pool, P)
    rng = np.random.default_rng(seed)
    draws = [[J[rng.integers(0, pool_size, size=B)].mean(axis=0) for _t in range(trials)] for B in batch_sizes]
    std = np.array([math.sqrt(np.var(np.array(d), axis=0, ddof=1).sum()) for d in draws])
    slope, intercept = np.polyfit(np.log(batch_sizes), np.log(std), deg=1)
    return {"std": std, "slope": float(slope), "intercept": float(intercept)}


def lr_schedule(*, steps, peak_lr=2.5e-4, warmup_steps=500, total_steps=50_000, min_lr=0.0):
    s = np.asarray(steps, dtype=np.float64)
    assert np.all(s >= 0), "steps must be >= 0"
    span = total_steps - warmup_steps
    return np.piecewise(
        s,
        [s < warmup_steps, (s >= warmup_steps) & (s <= total_steps), s > total_steps],
        [lambda t: peak_lr * t / warmup_steps,
         lambda t: min_lr + (peak_lr - min_lr) * (1 + np.cos(np.pi * (t - warmup_steps) / span)) / 2,
         min_lr],
    )


def clip_grad_norm(*, grads, max_norm):
    arrays = [np.asarray(g, dtype=np.float64) for g in grads]
    total_norm = float(np.linalg.norm(np.concatenate([a.ravel() for a in arrays]))) if arrays else 0.0
    scale = np.clip(max_norm / (total_norm + 1e-6), None, 1.0)
    return {"grads": [a * scale for a in arrays], "total_norm": total_norm}


def adamw_step(*, params, grads, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    # the decay as a map of its own, composed with a decay-free Adam step
    shrink = lambda p: np.multiply(p, 1 - lr * weight_decay)  # noqa: E731
    return adam_step(params=shrink(params), grads=grads, state=state, lr=lr, betas=betas, eps=eps)


RESNET50_CRITICAL_BATCH = 8192


def linear_scaling_rule(*, base_lr, base_batch, new_batch, critical_batch=RESNET50_CRITICAL_BATCH):
    within = all(b <= critical_batch for b in (base_batch, new_batch))
    return base_lr * (new_batch / base_batch) if within else None


def scaled_lr_schedule(*, steps, base_lr, base_batch, new_batch, warmup_steps, total_steps, min_lr=0.0,
                       critical_batch=RESNET50_CRITICAL_BATCH):
    peak = linear_scaling_rule(base_lr=base_lr, base_batch=base_batch, new_batch=new_batch,
                               critical_batch=critical_batch)
    return None if peak is None else lr_schedule(steps=steps, peak_lr=peak, warmup_steps=warmup_steps,
                                                 total_steps=total_steps, min_lr=min_lr)
