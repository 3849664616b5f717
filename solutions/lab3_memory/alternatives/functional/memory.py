"""Lab 3, a correct alternative in a functional style.

A ``contextlib.contextmanager`` installs the saved-tensor hooks and the
forward hooks (``with_kwargs=True``) together and removes them on exit; the
weights, gradients and optimizer state are measured as flat vectors
(``torch.cat``, one per dtype); the byte rules are built from
torch dtypes; the activation formula is evaluated exactly in the chapter's
form s·b·h·(34 + 5·a·s/h) with ``fractions.Fraction``; ties of k + N/k are
decided exactly with fractions; forward starts go into a
``collections.Counter``; segments are ``functools.partial`` closures.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import math
from fractions import Fraction

import numpy as np
import torch
from torch.utils.checkpoint import checkpoint

from lab3_models import build_model, build_optimizer, forward_loss, make_batch

GB = 1e9  # bytes; the chapter's GB is decimal
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _flat_bytes(tensors) -> int:
    """Bytes of the tensors, concatenated into one flat vector per dtype (torch.cat would promote)."""
    by_dtype = collections.defaultdict(list)
    for t in tensors:
        by_dtype[t.dtype].append(t.detach().reshape(-1))
    flats = [torch.cat(group) for group in by_dtype.values()]
    return sum(f.numel() * f.element_size() for f in flats)


@contextlib.contextmanager
def _watch(model, *, leaf_outputs: bool = False, skip=frozenset()):
    """Yields a dict that fills in while the block runs: saved bytes and calls, leaf output bytes
    (the storages in ``skip``, counted elsewhere, add no bytes)."""
    own = {p.untyped_storage().data_ptr() for p in model.parameters()}
    stats = {"storages": {}, "calls": 0, "param_calls": 0, "outputs": 0}

    def pack(t):
        stats["calls"] += 1
        storage = t.untyped_storage()
        if storage.data_ptr() in own:
            stats["param_calls"] += 1
        elif storage.data_ptr() not in skip:
            stats["storages"].setdefault(storage.data_ptr(), storage.nbytes())
        return t

    def on_output(module, args, kwargs, output):
        items = output if isinstance(output, (tuple, list)) else [output]
        stats["outputs"] += sum(o.numel() * o.element_size() for o in items if torch.is_tensor(o))

    with contextlib.ExitStack() as stack:
        if leaf_outputs:
            for _name, m in model.named_modules():  # each module once
                if not any(True for _child in m.children()):
                    stack.callback(m.register_forward_hook(on_output, with_kwargs=True).remove)
        stack.enter_context(torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t))
        yield stats
    stats["saved_bytes"] = sum(stats["storages"].values())


# -- 1. The four terms, measured -------------------------------------------------------
def activation_hook_counts(*, config: dict, batch_size: int) -> dict:
    model = build_model(config)
    batch = make_batch(config, batch_size, seed=0)
    with _watch(model, leaf_outputs=True) as stats:
        forward_loss(model, batch)
    return {"saved_bytes": stats["saved_bytes"], "saved_tensors": stats["calls"],
            "parameter_saves": stats["param_calls"], "module_output_bytes": stats["outputs"]}


def measure_four_terms(*, config: dict, batch_size: int, optimizer: dict) -> dict:
    model = build_model(config)
    opt = build_optimizer(model, optimizer)
    batch = make_batch(config, batch_size, seed=0)
    weights = _flat_bytes(model.parameters())  # parameters() yields each tensor once, a tied one too
    with _watch(model) as stats:
        loss = forward_loss(model, batch)
    loss.backward()
    gradients = _flat_bytes(p.grad for p in model.parameters() if p.grad is not None)
    opt.step()
    state = _flat_bytes(v for per_param in opt.state.values() for key, v in per_param.items()
                        if key != "step" and torch.is_tensor(v))
    terms = [weights, gradients, state, stats["saved_bytes"]]
    return dict(zip(["weights", "gradients", "optimizer_state", "activations", "total"],
                    terms + [functools.reduce(lambda x, y: x + y, terms)]))


# -- 2. Bytes per parameter --------------------------------------------------------------
_F16, _F32 = torch.float16, torch.float32
SCHEMES = {  # dtype of weights, gradients, master, adam_m, adam_v (None: not kept)
    "mixed_adam": (_F16, _F16, _F32, _F32, _F32),
    "fp32_adam": (_F32, _F32, None, _F32, _F32),
    "mixed_adam_fp32_grads": (_F16, _F32, _F32, _F32, _F32),
}


def _size(dtype) -> int:
    return 0 if dtype is None else torch.finfo(dtype).bits // 8


def bytes_per_parameter(*, scheme: str) -> dict:
    parts = dict(zip(("weights", "gradients", "master", "adam_m", "adam_v"), map(_size, SCHEMES[scheme])))
    parts["total"] = sum(parts.values())
    return parts


def model_state_bytes(*, n_params: int, scheme: str) -> int:
    return sum(_size(dt) for dt in SCHEMES[scheme]) * int(n_params)


def recipe_bytes(*, recipe: dict, n_params: int) -> dict:
    # every tensor of one element per parameter, by part: the optimizer's dtype once per state tensor
    tensors = {"weights": [recipe["weights"]], "gradients": [recipe["gradients"]], "master": [recipe["master"]],
               "optimizer": [recipe["optimizer_dtype"]] * recipe["optimizer_states"]}
    parts = {part: sum(_size(DTYPES[name]) for name in names if name is not None)
             for part, names in tensors.items()}
    per_param = sum(parts.values())
    total = per_param * int(n_params)
    return {**parts, "per_param": per_param, "total_bytes": total, "total_gb": float(Fraction(total, 10**9))}


# -- 3. Activations per transformer layer (Korthikanti et al.) ----------------------------
def attention_score_bytes(*, s: int, b: int, a: int) -> dict:
    n = math.prod((b, a, s, s))
    return {"scores": n * _size(_F16), "softmax": n * _size(_F16),
            "dropout_mask": n * torch.empty((), dtype=torch.uint8).element_size()}


def activation_bytes(*, s: int, b: int, h: int, a: int, n_layers: int = 1,
                     recompute: str = "none") -> int:
    factor = {"none": 34 + Fraction(5 * a * s, h), "selective": Fraction(34), "full": Fraction(2)}[recompute]
    per_layer = s * b * h * factor  # the chapter's form, exact
    assert per_layer.denominator == 1
    return int(per_layer) * n_layers


# -- 4. Number formats -----------------------------------------------------------------------
def format_ranges() -> dict:
    def describe(dtype):
        f = torch.finfo(dtype)
        _one, denominator = float(f.eps).as_integer_ratio()  # eps = 1 / 2**m
        m = denominator.bit_length() - 1
        return {"max": float(f.max), "min_normal": float(f.tiny), "min_subnormal": float(f.tiny) * float(f.eps),
                "eps": float(f.eps), "mantissa_bits": m, "exponent_bits": f.bits - 1 - m}

    return {name: describe(dt) for name, dt in DTYPES.items()}


def fp16_gradient_underflow(*, config: dict, batch_size: int, loss_scale: float = 1.0) -> dict:
    model = build_model(config)
    loss = forward_loss(model, make_batch(config, batch_size, seed=0))
    (loss * loss_scale).backward()
    named = [(n, p.grad.reshape(-1)) for n, p in model.named_parameters() if p.grad is not None]
    if not named:
        return {"n_nonzero": 0, "n_underflow": 0, "n_overflow": 0, "underflow_fraction": 0.0,
                "underflow_by_parameter": {}}
    g = torch.cat([t for _n, t in named])
    g16 = g.to(torch.float16)
    nonzero = g != 0
    flushed = nonzero & (g16 == 0)
    sizes = [t.numel() for _n, t in named]
    per_nonzero = [int(x.sum()) for x in nonzero.split(sizes)]
    per_flushed = [int(x.sum()) for x in flushed.split(sizes)]
    n_nonzero, n_underflow = sum(per_nonzero), sum(per_flushed)

    def fraction(lost, of):
        return lost / of if of else 0.0

    return {"n_nonzero": n_nonzero, "n_underflow": n_underflow, "n_overflow": int(torch.isinf(g16).sum()),
            "underflow_fraction": fraction(n_underflow, n_nonzero),
            "underflow_by_parameter": {n: fraction(f, z) for (n, _t), f, z in zip(named, per_flushed, per_nonzero)}}


def lost_updates(*,
                 weights: np.ndarray,  # (...) float32, any shape
                 updates: np.ndarray,  # same shape as weights, float32
                 ) -> dict:
    w, u = map(torch.from_numpy, (np.array(a, dtype=np.float32) for a in (weights, updates)))
    moving = torch.count_nonzero(u).item()

    def lost(dtype):
        wd, ud = w.to(dtype), u.to(dtype)
        return torch.where(u != 0, wd + ud == wd, False).sum().item()

    return {name: (lost(dt) / moving if moving else 0.0) for name, dt in DTYPES.items()}


def _fp16_losses(config, batch_size, steps, step):
    """``steps`` losses of an FP16 run; ``step(params, scale)`` backpropagates and updates."""
    model = build_model(config)
    x, y = make_batch(config, batch_size, seed=0)
    params = [p for p in model.parameters() if p.requires_grad]
    masters = [p.detach().clone() for p in params]  # FP32, for a step that wants them
    model.half()
    batch = (x.half() if torch.is_floating_point(x) else x, y)

    def one(_i):
        loss = forward_loss(model, batch)
        step(loss, params, masters)
        return loss.item()
    return list(map(one, range(steps)))


def train_fp16_toggle(*, config: dict, batch_size: int, lr: float, steps: int) -> list:
    """Mixed precision as a toggle: see the reference's docstring (the whole step in FP16)."""
    def step(loss, params, _masters):
        loss.backward()
        with torch.no_grad():
            for p in filter(lambda p: p.grad is not None, params):
                p.sub_(lr * p.grad)
                p.grad = None
    return _fp16_losses(config, batch_size, steps, step)


def train_fp16_master(*, config: dict, batch_size: int, lr: float, steps: int, loss_scale: float) -> list:
    """An FP32 master copy and loss scaling: see the reference's docstring."""
    def step(loss, params, masters):
        loss.mul(loss_scale).backward()
        with torch.no_grad():
            for p, m in filter(lambda pm: pm[0].grad is not None, zip(params, masters)):
                m.sub_(p.grad.to(torch.float32).div(loss_scale).mul(lr))
                p.copy_(m)
                p.grad = None
    return _fp16_losses(config, batch_size, steps, step)


# -- 5. Checkpointing ----------------------------------------------------------------------
def checkpoint_units(*, n_layers: int, n_checkpoints: int) -> dict:
    units = Fraction(n_checkpoints) + Fraction(n_layers, n_checkpoints)
    return {"units": float(units), "saving": float(1 - units / n_layers)}


def best_checkpoint_count(*, n_layers: int) -> int:
    # min keeps the first of equal keys, so a tie gives the smaller k; Fraction makes ties exact
    return min(range(1, n_layers + 1), key=lambda k: Fraction(k * k + n_layers, k))


def _through(blocks, h):
    return functools.reduce(lambda acc, block: block(acc), blocks, h)


def measure_checkpointing(*, config: dict, batch_size: int, segment_size: int) -> dict:
    model = build_model(config)
    inputs, targets = make_batch(config, batch_size, seed=0)
    blocks = list(model.blocks)
    started = collections.Counter()
    with contextlib.ExitStack() as stack:
        for i, block in enumerate(blocks):
            hook = functools.partial(lambda i, module, inputs: started.update([i]), i)
            stack.callback(block.register_forward_pre_hook(hook).remove)
        segments = []  # (partial over the segment's blocks, its input)
        with _watch(model) as stats:
            h = model.embed(inputs)
            if segment_size:
                for lo in range(0, len(blocks), segment_size):
                    segments.append((functools.partial(_through, blocks[lo:lo + segment_size]), h))
                    h = checkpoint(segments[-1][0], h, use_reentrant=False)
            else:
                h = _through(blocks, h)
            loss = model.head_loss(h, targets)
        loss.backward()
    # the pre-hooks are removed (the ExitStack closed): rebuilding a segment here starts no counted forward
    segment = max(map(functools.partial(_rebuilt_bytes, model), segments), default=0)
    grads = torch.cat([p.grad.reshape(-1).double() for p in model.parameters() if p.grad is not None])
    calls = [started[i] for i in range(len(blocks))]
    return {"saved_bytes": stats["saved_bytes"], "segment_bytes": segment,
            "peak_bytes": stats["saved_bytes"] + segment, "forward_calls": calls,
            "recompute_fraction": float(Fraction(sum(calls) - len(blocks), 3 * len(blocks))),
            "loss": float(loss.detach()), "grad_norm": float(torch.linalg.vector_norm(grads))}


def _rebuilt_bytes(model, segment_and_input) -> int:
    run, h = segment_and_input
    h_in = h.detach().requires_grad_()
    with _watch(model, skip=frozenset({h_in.untyped_storage().data_ptr()})) as stats:
        run(h_in)
    return stats["saved_bytes"]


# -- 6. GPT-2 XL on a V100 ----------------------------------------------------------------
def v100_walkthrough(*, n_params: int, n_layers: int, s: int, b: int, h: int, a: int,
                     checkpoint_every: int, capacity_bytes: float) -> dict:
    acts = activation_bytes(s=s, b=b, h=h, a=a, n_layers=n_layers)
    plan = {"fp32_baseline": ("fp32_adam", 2 * acts), "mixed_precision": ("mixed_adam", acts),
            "checkpointed": ("mixed_adam", acts / checkpoint_every)}
    totals = {step: float(model_state_bytes(n_params=n_params, scheme=scheme) + act)
              for step, (scheme, act) in plan.items()}
    return {**totals, "fits": {step: capacity_bytes - total >= 0 for step, total in totals.items()}}
