"""Lab 3, a correct alternative: numpy arithmetic and tables.

Saved storages are recorded as two lists (storage address, bytes) and
deduplicated afterwards with ``np.unique``; the byte rules are rows of a
numpy table and coefficient pairs; the number formats are computed from
their IEEE layout (exponent and mantissa widths) instead of read from
``torch.finfo``; the FP16 casts happen in numpy (``astype(np.float16)``),
BF16 rounding is done on the bits (round to nearest even on the upper 16 bits
of an FP32); the best checkpoint count compares ⌊√N⌋ and ⌈√N⌉ in exact
integers; segments are ``nn.Sequential`` views of the blocks.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from lab3_models import build_model, build_optimizer, forward_loss, make_batch

GB = 1e9  # bytes; the chapter's GB is decimal
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _numel_bytes(t: torch.Tensor) -> int:
    return int(np.prod(t.shape, dtype=np.int64)) * t.element_size()


class _Recorder:
    """pack hook that records (storage address, storage bytes) of every save."""

    def __init__(self, model, skip=()):
        self.params = np.array(sorted({p.untyped_storage().data_ptr() for p in model.parameters()}), dtype=np.uint64)
        self.skip = np.array(sorted(skip), dtype=np.uint64)  # storages counted elsewhere: no bytes here
        self.ptrs: list[int] = []
        self.sizes: list[int] = []

    def pack(self, t):
        st = t.untyped_storage()
        self.ptrs.append(st.data_ptr())
        self.sizes.append(st.nbytes())
        return t

    def counts(self) -> tuple[int, int, int]:
        """(distinct non-parameter bytes, pack calls, parameter pack calls)."""
        if not self.ptrs:
            return 0, 0, 0
        ptrs = np.array(self.ptrs, dtype=np.uint64)
        sizes = np.array(self.sizes, dtype=np.int64)
        is_param = np.isin(ptrs, self.params)
        counted = ~is_param & ~np.isin(ptrs, self.skip)
        _, first = np.unique(ptrs[counted], return_index=True)
        return int(sizes[counted][first].sum()), len(self.ptrs), int(is_param.sum())


def _recorded(model, run, skip=()):
    rec = _Recorder(model, skip)
    with torch.autograd.graph.saved_tensors_hooks(rec.pack, lambda t: t):
        result = run()
    return rec.counts(), result


# -- 1. The four terms, measured -------------------------------------------------------
def activation_hook_counts(*, config: dict, batch_size: int) -> dict:
    model = build_model(config)
    batch = make_batch(config, batch_size, seed=0)
    sizes: list[int] = []

    def hook(module, inputs, output):
        outs = list(output) if isinstance(output, (tuple, list)) else [output]
        sizes.extend(_numel_bytes(o) for o in outs if isinstance(o, torch.Tensor))

    leaves = {id(m): m for _name, m in model.named_modules() if len(m._modules) == 0}
    handles = [m.register_forward_hook(hook) for m in leaves.values()]
    try:
        (saved, calls, param_calls), _loss = _recorded(model, lambda: forward_loss(model, batch))
    finally:
        for h in handles:
            h.remove()
    return {"saved_bytes": saved, "saved_tensors": calls, "parameter_saves": param_calls,
            "module_output_bytes": int(np.sum(sizes, dtype=np.int64))}


def measure_four_terms(*, config: dict, batch_size: int, optimizer: dict) -> dict:
    model = build_model(config)
    opt = build_optimizer(model, optimizer)
    batch = make_batch(config, batch_size, seed=0)
    params = list(model.parameters())  # each tensor once, a tied weight too
    weights = int(np.sum([_numel_bytes(p) for p in params], dtype=np.int64))
    (activations, _calls, _param_calls), loss = _recorded(model, lambda: forward_loss(model, batch))
    loss.backward()
    gradients = int(np.sum([_numel_bytes(p.grad) for p in params if p.grad is not None], dtype=np.int64))
    opt.step()
    state_sizes = [_numel_bytes(v) for group in opt.param_groups for p in group["params"]
                   for k, v in opt.state.get(p, {}).items() if k != "step" and isinstance(v, torch.Tensor)]
    state = int(np.sum(state_sizes, dtype=np.int64))
    parts = np.array([weights, gradients, state, activations], dtype=np.int64)
    return {"weights": weights, "gradients": gradients, "optimizer_state": state, "activations": activations,
            "total": int(parts.sum())}


# -- 2. Bytes per parameter --------------------------------------------------------------
PARTS = ("weights", "gradients", "master", "adam_m", "adam_v")
SCHEME_TABLE = {  # bytes per parameter, one column per part
    "mixed_adam": np.array([2, 2, 4, 4, 4]),
    "fp32_adam": np.array([4, 4, 0, 4, 4]),
    "mixed_adam_fp32_grads": np.array([2, 4, 4, 4, 4]),
}


def bytes_per_parameter(*, scheme: str) -> dict:
    row = SCHEME_TABLE[scheme]
    return {**{part: int(v) for part, v in zip(PARTS, row)}, "total": int(row.sum())}


def model_state_bytes(*, n_params: int, scheme: str) -> int:
    return int(n_params) * int(SCHEME_TABLE[scheme].sum())


RECIPE_PARTS = ("weights", "gradients", "master", "optimizer")


def _format_bytes(name) -> int:
    """Bytes of one value: sign + exponent + fraction bits of the IEEE / brain-float layout, over 8."""
    if name is None:
        return 0
    exponent, fraction = LAYOUT[name]
    return (1 + exponent + fraction) // 8


def recipe_bytes(*, recipe: dict, n_params: int) -> dict:
    # one row of copies (how many tensors of one element per parameter) against one row of element sizes
    copies = np.array([recipe["weights"] is not None, recipe["gradients"] is not None,
                       recipe["master"] is not None, recipe["optimizer_states"]], dtype=np.int64)
    sizes = np.array([_format_bytes(recipe["weights"]), _format_bytes(recipe["gradients"]),
                      _format_bytes(recipe["master"]),
                      _format_bytes(recipe["optimizer_dtype"] if recipe["optimizer_states"] else None)],
                     dtype=np.int64)
    row = copies * sizes
    per_param = int(row.sum())
    total = int(n_params) * per_param  # a Python int: exact beyond int64
    return {**{k: int(v) for k, v in zip(RECIPE_PARTS, row)}, "per_param": per_param, "total_bytes": total,
            "total_gb": total / 1e9}


# -- 3. Activations per transformer layer (Korthikanti et al.) ----------------------------
SCORE_BYTES = {"scores": 2, "softmax": 2, "dropout_mask": 1}
RECOMPUTE = {"none": (34, 5), "selective": (34, 0), "full": (2, 0)}  # (× s·b·h, × a·s²·b)


def attention_score_bytes(*, s: int, b: int, a: int) -> dict:
    return {k: v * b * a * s * s for k, v in SCORE_BYTES.items()}


def activation_bytes(*, s: int, b: int, h: int, a: int, n_layers: int = 1,
                     recompute: str = "none") -> int:
    linear, attention = RECOMPUTE[recompute]
    return n_layers * (linear * s * b * h + attention * a * s * s * b)


# -- 4. Number formats -----------------------------------------------------------------------
LAYOUT = {"float32": (8, 23), "float16": (5, 10), "bfloat16": (8, 7)}  # (exponent bits, stored fraction bits)


def format_ranges() -> dict:
    out = {}
    for name, (e, m) in LAYOUT.items():
        bias = 2 ** (e - 1) - 1
        eps = math.ldexp(1.0, -m)
        min_normal = math.ldexp(1.0, 1 - bias)
        out[name] = {"max": (2.0 - eps) * math.ldexp(1.0, bias), "min_normal": min_normal,
                     "min_subnormal": min_normal * eps, "eps": eps, "mantissa_bits": m, "exponent_bits": e}
    return out


def fp16_gradient_underflow(*, config: dict, batch_size: int, loss_scale: float = 1.0) -> dict:
    model = build_model(config)
    loss = forward_loss(model, make_batch(config, batch_size, seed=0))
    (loss * loss_scale).backward()
    rows, names = [], []
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        g = p.grad.detach().numpy().ravel()
        with np.errstate(over="ignore"):
            g16 = g.astype(np.float16)
        nz = g != 0
        rows.append((np.count_nonzero(nz), np.count_nonzero(nz & (g16 == 0)), np.count_nonzero(np.isinf(g16))))
        names.append(name)
    table = np.array(rows, dtype=np.int64).reshape(-1, 3)
    nonzero, under, over = (int(x) for x in table.sum(axis=0))
    fractions = np.divide(table[:, 1], table[:, 0], out=np.zeros(len(table)), where=table[:, 0] > 0)
    return {"n_nonzero": nonzero, "n_underflow": under, "n_overflow": over,
            "underflow_fraction": under / nonzero if nonzero else 0.0,
            "underflow_by_parameter": {n: float(f) for n, f in zip(names, fractions)}}


def _round_bf16(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def lost_updates(*,
                 weights: np.ndarray,  # (...) float32, any shape
                 updates: np.ndarray,  # same shape as weights, float32
                 ) -> dict:
    w = np.asarray(weights, dtype=np.float32)
    u = np.asarray(updates, dtype=np.float32)
    moving = u != 0
    n = np.count_nonzero(moving)
    with np.errstate(over="ignore"):
        w16, u16 = w.astype(np.float16), u.astype(np.float16)
        wb, ub = _round_bf16(w), _round_bf16(u)
        same = {"float32": (w + u) == w,
                "float16": (w16 + u16) == w16,                 # numpy adds halves in float32, rounds once
                "bfloat16": _round_bf16(wb + ub) == wb}        # as torch does for bfloat16 on the CPU
    return {k: float(np.count_nonzero(moving & v)) / n if n else 0.0 for k, v in same.items()}


def _fp16_setup(config, batch_size):
    model = build_model(config)
    x, y = make_batch(config, batch_size, seed=0)
    params = [p for p in model.parameters() if p.requires_grad]
    return model, params, (x.half() if x.is_floating_point() else x, y)


def train_fp16_toggle(*, config: dict, batch_size: int, lr: float, steps: int) -> list:
    """Mixed precision as a toggle; the losses kept in a numpy array."""
    model, params, batch = _fp16_setup(config, batch_size)
    model.half()
    losses = np.empty(steps)
    for i in range(steps):
        loss = forward_loss(model, batch)
        losses[i] = loss.item()
        loss.backward()
        for p in params:
            if p.grad is not None:
                p.data.add_(p.grad, alpha=-lr)  # in FP16
                p.grad = None
    return losses.tolist()


def train_fp16_master(*, config: dict, batch_size: int, lr: float, steps: int, loss_scale: float) -> list:
    """The master copy as one flat FP32 vector (parameters_to_vector), copied back with vector_to_parameters."""
    model, params, batch = _fp16_setup(config, batch_size)
    master = nn.utils.parameters_to_vector(params).detach().clone()  # FP32, flat
    model.half()
    losses = np.empty(steps)
    for i in range(steps):
        loss = forward_loss(model, batch)
        losses[i] = loss.item()
        (loss * loss_scale).backward()
        grads = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).float().reshape(-1)
                           for p in params])
        master -= lr * (grads / loss_scale)
        with torch.no_grad():
            nn.utils.vector_to_parameters(master.to(torch.float16), params)
        for p in params:
            p.grad = None
    return losses.tolist()


# -- 5. Checkpointing ----------------------------------------------------------------------
def checkpoint_units(*, n_layers: int, n_checkpoints: int) -> dict:
    units = np.float64(n_checkpoints) + np.float64(n_layers) / n_checkpoints
    return {"units": float(units), "saving": float(1 - units / n_layers)}


def best_checkpoint_count(*, n_layers: int) -> int:
    # k + N/k is convex: the best integer is ⌊√N⌋ or ⌈√N⌉; compare (k² + N)/k exactly
    N = n_layers
    lo = max(1, math.isqrt(N))
    hi = min(N, lo + 1)
    return lo if (lo * lo + N) * hi <= (hi * hi + N) * lo else hi


def measure_checkpointing(*, config: dict, batch_size: int, segment_size: int) -> dict:
    model = build_model(config)
    x, y = make_batch(config, batch_size, seed=0)
    n = len(model.blocks)
    starts = np.zeros(n, dtype=np.int64)
    handles = [model.blocks[i].register_forward_pre_hook(lambda mod, inp, i=i: starts.__setitem__(i, starts[i] + 1))
               for i in range(n)]

    kept = []  # (nn.Sequential segment, its input)

    def forward():
        h = model.embed(x)
        if segment_size == 0:
            h = nn.Sequential(*model.blocks)(h)
        else:
            for lo in range(0, n, segment_size):
                kept.append((nn.Sequential(*model.blocks[lo:lo + segment_size]), h))
                h = checkpoint(kept[-1][0], h, use_reentrant=False)
        return model.head_loss(h, y)

    try:
        (saved, _calls, _param_calls), loss = _recorded(model, forward)
        loss.backward()
    finally:
        for hd in handles:
            hd.remove()
    rebuilt = np.zeros(len(kept) + 1, dtype=np.int64)  # one entry per segment, and a 0 without any
    for j, (seq, h) in enumerate(kept):
        h_in = h.detach().requires_grad_()
        (rebuilt[j], _c, _p), _out = _recorded(model, lambda: seq(h_in), skip={h_in.untyped_storage().data_ptr()})
    grads = [p.grad.detach().double().numpy().ravel() for p in model.parameters() if p.grad is not None]
    segment = int(rebuilt.max())
    return {"saved_bytes": saved, "segment_bytes": segment, "peak_bytes": saved + segment,
            "forward_calls": starts.tolist(),
            "recompute_fraction": float((starts.sum() - n) / np.float64(3 * n)),
            "loss": float(loss.detach()), "grad_norm": float(np.linalg.norm(np.concatenate(grads)))}


# -- 6. GPT-2 XL on a V100 ----------------------------------------------------------------
def v100_walkthrough(*, n_params: int, n_layers: int, s: int, b: int, h: int, a: int,
                     checkpoint_every: int, capacity_bytes: float) -> dict:
    acts = np.float64(activation_bytes(s=s, b=b, h=h, a=a, n_layers=n_layers))
    state = {k: np.float64(model_state_bytes(n_params=n_params, scheme=k)) for k in ("fp32_adam", "mixed_adam")}
    totals = np.array([state["fp32_adam"] + 2 * acts, state["mixed_adam"] + acts,
                       state["mixed_adam"] + acts / checkpoint_every])
    steps = ("fp32_baseline", "mixed_precision", "checkpointed")
    fits = np.less_equal(totals, capacity_bytes)
    return {**{k: float(v) for k, v in zip(steps, totals)}, "fits": {k: bool(f) for k, f in zip(steps, fits)}}
