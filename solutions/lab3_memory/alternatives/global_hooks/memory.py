"""Lab 3, a correct alternative with classes and global hooks.

The saved-tensor count is a ``saved_tensors_hooks`` subclass that keeps a
ledger (a set of seen storages and a running byte sum, no dict); module
outputs and block forwards are counted with the *global* module hooks of
``torch.nn.modules.module`` (filtered to the model's leaf modules, or to its
blocks) instead of one hook per module; sizes come from ``Tensor.nbytes``
and ``UntypedStorage.nbytes``; the optimizer state is read from
``opt.state_dict()``; the formats from ``torch.finfo``'s ``smallest_normal``,
with the mantissa width read off ``eps`` by ``math.frexp`` and the smallest
subnormal made with ``math.ldexp``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.modules.module as module_hooks
from torch.utils.checkpoint import checkpoint

from lab3_models import build_model, build_optimizer, forward_loss, make_batch

GB = 1e9  # bytes; the chapter's GB is decimal
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class SavedTensorLedger(torch.autograd.graph.saved_tensors_hooks):
    """Counts every pack call; bytes of each distinct non-parameter storage once."""

    def __init__(self, model: torch.nn.Module):
        self.parameter_storages = frozenset(p.untyped_storage().data_ptr() for p in model.parameters())
        self.seen: set[int] = set()
        self.bytes = 0
        self.calls = 0
        self.parameter_calls = 0
        super().__init__(self._pack, self._unpack)

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr in self.parameter_storages:
            self.parameter_calls += 1
        elif ptr not in self.seen:
            self.seen.add(ptr)
            self.bytes += storage.nbytes()
        return t

    def __enter__(self) -> "SavedTensorLedger":
        super().__enter__()  # returns None: hand back the ledger itself
        return self

    @staticmethod
    def _unpack(t: torch.Tensor) -> torch.Tensor:
        return t


def _tensors_in(output):
    if torch.is_tensor(output):
        yield output
    elif isinstance(output, (tuple, list)):
        for item in output:
            if torch.is_tensor(item):
                yield item


# -- 1. The four terms, measured -------------------------------------------------------
def activation_hook_counts(*, config: dict, batch_size: int) -> dict:
    model = build_model(config)
    batch = make_batch(config, batch_size, seed=0)
    leaf_ids = {id(m) for m in model.modules() if next(m.children(), None) is None}
    total = {"bytes": 0}

    def on_any_output(module, inputs, output):  # global: every module of every model
        if id(module) in leaf_ids:
            total["bytes"] += sum(t.nbytes for t in _tensors_in(output))

    handle = module_hooks.register_module_forward_hook(on_any_output)
    try:
        with SavedTensorLedger(model) as ledger:
            forward_loss(model, batch)
    finally:
        handle.remove()
    return {"saved_bytes": ledger.bytes, "saved_tensors": ledger.calls,
            "parameter_saves": ledger.parameter_calls, "module_output_bytes": total["bytes"]}


def measure_four_terms(*, config: dict, batch_size: int, optimizer: dict) -> dict:
    model = build_model(config)
    opt = build_optimizer(model, optimizer)
    batch = make_batch(config, batch_size, seed=0)
    weights = sum(p.nbytes for p in model.parameters())
    with SavedTensorLedger(model) as ledger:
        loss = forward_loss(model, batch)
    loss.backward()
    gradients = sum(p.grad.nbytes for p in model.parameters() if p.grad is not None)
    opt.step()
    state = 0
    for per_param in opt.state_dict()["state"].values():
        state += sum(v.nbytes for k, v in per_param.items() if k != "step" and torch.is_tensor(v))
    terms = {"weights": weights, "gradients": gradients, "optimizer_state": state, "activations": ledger.bytes}
    return {**terms, "total": sum(terms.values())}


# -- 2. Bytes per parameter --------------------------------------------------------------
class _Scheme:
    def __init__(self, weights, gradients, master, adam_m, adam_v):
        self.parts = {"weights": weights, "gradients": gradients, "master": master,
                      "adam_m": adam_m, "adam_v": adam_v}

    def breakdown(self) -> dict:
        return {**self.parts, "total": sum(self.parts.values())}


_SIZE = {dt: torch.empty((), dtype=dt).element_size() for dt in (torch.float16, torch.float32)}
_H, _F = _SIZE[torch.float16], _SIZE[torch.float32]
SCHEMES = {"mixed_adam": _Scheme(_H, _H, _F, _F, _F),
           "fp32_adam": _Scheme(_F, _F, 0, _F, _F),
           "mixed_adam_fp32_grads": _Scheme(_H, _F, _F, _F, _F)}


def bytes_per_parameter(*, scheme: str) -> dict:
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
    return SCHEMES[scheme].breakdown()


def model_state_bytes(*, n_params: int, scheme: str) -> int:
    return bytes_per_parameter(scheme=scheme)["total"] * int(n_params)


class _Copy:
    """``count`` per-parameter tensors of one dtype (absent: no dtype), sized as a 0-d tensor of it."""

    def __init__(self, dtype_name, count=1):
        self.itemsize = torch.empty((), dtype=DTYPES[dtype_name]).element_size() if dtype_name is not None else 0
        self.count = count

    @property
    def bytes(self) -> int:
        return self.count * self.itemsize if self.count else 0


def recipe_bytes(*, recipe: dict, n_params: int) -> dict:
    copies = {"weights": _Copy(recipe["weights"]), "gradients": _Copy(recipe["gradients"]),
              "master": _Copy(recipe["master"]),
              "optimizer": _Copy(recipe["optimizer_dtype"] if recipe["optimizer_states"] else None,
                                 recipe["optimizer_states"])}
    parts = {name: c.bytes for name, c in copies.items()}
    per_param = sum(parts.values())
    total = per_param * int(n_params)
    return {**parts, "per_param": per_param, "total_bytes": total, "total_gb": total / GB}


# -- 3. Activations per transformer layer (Korthikanti et al.) ----------------------------
def attention_score_bytes(*, s: int, b: int, a: int) -> dict:
    elements = s * s * a * b
    return {name: size * elements for name, size in (("scores", 2), ("softmax", 2), ("dropout_mask", 1))}


def activation_bytes(*, s: int, b: int, h: int, a: int, n_layers: int = 1,
                     recompute: str = "none") -> int:
    sbh = s * b * h
    if recompute == "none":
        layer = 34 * sbh + 5 * a * s * s * b
    elif recompute == "selective":
        layer = 34 * sbh
    elif recompute == "full":
        layer = 2 * sbh
    else:
        raise ValueError(f"recompute must be 'none', 'selective' or 'full', got {recompute!r}")
    return layer * n_layers


# -- 4. Number formats -----------------------------------------------------------------------
def format_ranges() -> dict:
    out = {}
    for name, dtype in DTYPES.items():
        info = torch.finfo(dtype)
        _frac, exp = math.frexp(info.eps)  # eps = 2**-m = 0.5 * 2**(1 - m)
        mantissa = 1 - exp
        out[name] = {"max": float(info.max), "min_normal": float(info.smallest_normal),
                     "min_subnormal": math.ldexp(float(info.smallest_normal), -mantissa),
                     "eps": float(info.eps), "mantissa_bits": mantissa,
                     "exponent_bits": info.bits - mantissa - 1}
    return out


def fp16_gradient_underflow(*, config: dict, batch_size: int, loss_scale: float = 1.0) -> dict:
    model = build_model(config)
    loss = forward_loss(model, make_batch(config, batch_size, seed=0))
    (loss * loss_scale).backward()
    n_nonzero = n_underflow = n_overflow = 0
    by_parameter = {}
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        half = p.grad.half()
        was_nonzero = p.grad.ne(0)
        nz = int(torch.count_nonzero(was_nonzero))
        lost = int(torch.count_nonzero(was_nonzero & half.eq(0)))
        n_nonzero += nz
        n_underflow += lost
        n_overflow += int(torch.count_nonzero(half.isinf()))
        by_parameter[name] = lost / nz if nz > 0 else 0.0
    return {"n_nonzero": n_nonzero, "n_underflow": n_underflow, "n_overflow": n_overflow,
            "underflow_fraction": n_underflow / n_nonzero if n_nonzero > 0 else 0.0,
            "underflow_by_parameter": by_parameter}


def lost_updates(*,
                 weights: np.ndarray,  # (...) float32, any shape
                 updates: np.ndarray,  # same shape as weights, float32
                 ) -> dict:
    w32 = torch.tensor(np.asarray(weights, dtype=np.float32))
    u32 = torch.tensor(np.asarray(updates, dtype=np.float32))
    nonzero = u32.ne(0)
    count = int(nonzero.sum())
    result = {}
    for name, dtype in DTYPES.items():
        w, u = w32.to(dtype), u32.to(dtype)
        unchanged = torch.eq(torch.add(w, u), w)
        result[name] = float(torch.logical_and(nonzero, unchanged).sum()) / count if count else 0.0
    return result


def _fp16_model(config, batch_size):
    model = build_model(config)
    x, y = make_batch(config, batch_size, seed=0)
    return model, (x.to(torch.float16) if x.dtype.is_floating_point else x, y)


def train_fp16_toggle(*, config: dict, batch_size: int, lr: float, steps: int) -> list:
    """Mixed precision as a toggle: torch.optim.SGD on the FP16 parameters themselves."""
    model, batch = _fp16_model(config, batch_size)
    model.to(torch.float16)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = forward_loss(model, batch)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return losses


def train_fp16_master(*, config: dict, batch_size: int, lr: float, steps: int, loss_scale: float) -> list:
    """torch.optim.SGD on FP32 master tensors, fed the unscaled FP32 gradients of the FP16 model."""
    model, batch = _fp16_model(config, batch_size)
    working = [p for p in model.parameters() if p.requires_grad]
    masters = [p.detach().clone().requires_grad_(True) for p in working]
    model.to(torch.float16)
    opt = torch.optim.SGD(masters, lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = forward_loss(model, batch)
        losses.append(loss.item())
        (loss * loss_scale).backward()
        for p, m in zip(working, masters):
            m.grad = None if p.grad is None else p.grad.float() / loss_scale
            p.grad = None
        opt.step()
        with torch.no_grad():
            for p, m in zip(working, masters):
                p.copy_(m)
    return losses


# -- 5. Checkpointing ----------------------------------------------------------------------
def checkpoint_units(*, n_layers: int, n_checkpoints: int) -> dict:
    units = n_checkpoints + n_layers / n_checkpoints
    return {"units": float(units), "saving": float(1.0 - units / n_layers)}


def best_checkpoint_count(*, n_layers: int) -> int:
    best_k, best_cost = 1, 1 + n_layers
    for k in range(2, n_layers + 1):
        cost = k + n_layers / k
        if cost < best_cost:  # strictly better: a tie keeps the smaller k
            best_k, best_cost = k, cost
    return best_k


class _Segment:
    def __init__(self, blocks):
        self.blocks = blocks

    def __call__(self, h):
        for block in self.blocks:
            h = block(h)
        return h


def measure_checkpointing(*, config: dict, batch_size: int, segment_size: int) -> dict:
    model = build_model(config)
    inputs, targets = make_batch(config, batch_size, seed=0)
    blocks = list(model.blocks)
    index = {id(b): i for i, b in enumerate(blocks)}
    starts = [0] * len(blocks)

    def on_any_start(module, inputs):  # global pre-hook, filtered to this model's blocks
        i = index.get(id(module))
        if i is not None:
            starts[i] += 1

    segments = []  # (_Segment, its input)
    handle = module_hooks.register_module_forward_pre_hook(on_any_start)
    try:
        with SavedTensorLedger(model) as ledger:
            h = model.embed(inputs)
            if segment_size == 0:
                h = _Segment(blocks)(h)
            else:
                for lo in range(0, len(blocks), segment_size):
                    segments.append((_Segment(blocks[lo:lo + segment_size]), h))
                    h = checkpoint(segments[-1][0], h, use_reentrant=False)
            loss = model.head_loss(h, targets)
        loss.backward()
    finally:
        handle.remove()
    rebuilt = 0
    for seg, h_seg in segments:  # the global pre-hook is gone: these runs start no counted forward
        h_in = h_seg.detach().requires_grad_()
        with SavedTensorLedger(model) as inner:
            inner.seen.add(h_in.untyped_storage().data_ptr())  # the checkpoint: already in ledger.bytes
            seg(h_in)
        rebuilt = max(rebuilt, inner.bytes)
    squares = [p.grad.double().square().sum() for p in model.parameters() if p.grad is not None]
    extra = sum(starts) - len(blocks)
    return {"saved_bytes": ledger.bytes, "segment_bytes": rebuilt, "peak_bytes": ledger.bytes + rebuilt,
            "forward_calls": starts, "recompute_fraction": extra / (3.0 * len(blocks)), "loss": loss.item(),
            "grad_norm": float(torch.stack(squares).sum().sqrt())}


# -- 6. GPT-2 XL on a V100 ----------------------------------------------------------------
def v100_walkthrough(*, n_params: int, n_layers: int, s: int, b: int, h: int, a: int,
                     checkpoint_every: int, capacity_bytes: float) -> dict:
    fp16_acts = float(activation_bytes(s=s, b=b, h=h, a=a, n_layers=n_layers))
    mixed = float(model_state_bytes(n_params=n_params, scheme="mixed_adam"))
    out = {"fp32_baseline": float(model_state_bytes(n_params=n_params, scheme="fp32_adam")) + 2.0 * fp16_acts,
           "mixed_precision": mixed + fp16_acts,
           "checkpointed": mixed + fp16_acts / checkpoint_every}
    out["fits"] = {step: not total > capacity_bytes for step, total in out.items()}
    return out
