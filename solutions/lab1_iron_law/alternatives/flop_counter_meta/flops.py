"""Lab 1, part 1, a correct alternative: torch counts the matmuls.

Every matmul count comes from torch.utils.flop_counter.FlopCounterMode run
on meta tensors (shapes without values, so nothing is computed), the
backward pass is counted by running autograd on the same meta products, and
the measurements record raw clock readings and take numpy's median.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

import lab1_device

SOFTMAX_FLOPS_PER_SCORE = 6
LAYERNORM_FLOPS_PER_ELEMENT = 7
GELU_FLOPS_PER_ELEMENT = 9
RESIDUAL_FLOPS_PER_ELEMENT = 1
BIAS_FLOPS_PER_ELEMENT = 1


def _meta(*shape, grad: bool = False) -> torch.Tensor:
    return torch.empty(*shape, device="meta", requires_grad=grad)


def _counted(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of one matrix product (m, k) @ (k, n), as torch counts it."""
    return _counted(lambda: torch.mm(_meta(m, k), _meta(k, n)))


def _stages(B: int, S: int, d: int, h: int, grad: bool) -> dict:
    """name -> a function that runs that stage's products on meta tensors (returns what they give)."""
    dh = d // h
    T = B * S
    return {
        "qkv": lambda: _meta(T, d, grad=grad) @ _meta(d, 3 * d, grad=grad),
        "scores": lambda: _meta(B, h, S, dh, grad=grad) @ _meta(B, h, dh, S, grad=grad),
        "attn_v": lambda: _meta(B, h, S, S, grad=grad) @ _meta(B, h, S, dh, grad=grad),
        "out_proj": lambda: _meta(T, d, grad=grad) @ _meta(d, d, grad=grad),
        "mlp": lambda: (_meta(T, d, grad=grad) @ _meta(d, 4 * d, grad=grad)) @ _meta(4 * d, d, grad=grad),
    }


def layer_matmul_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the matmuls of one GPT-2 layer, counted by FlopCounterMode on meta tensors."""
    counts = {name: _counted(run) for name, run in _stages(B, S, d, h, grad=False).items()}
    counts["total"] = sum(counts.values())
    return counts


def elementwise_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the non-matmul work of one GPT-2 layer."""
    per_token = {"layernorm": 2 * LAYERNORM_FLOPS_PER_ELEMENT * d, "gelu": GELU_FLOPS_PER_ELEMENT * 4 * d,
                 "residual": 2 * RESIDUAL_FLOPS_PER_ELEMENT * d, "bias": BIAS_FLOPS_PER_ELEMENT * 9 * d}
    counts = {"softmax": SOFTMAX_FLOPS_PER_SCORE * h * S * S * B}
    counts.update({name: B * S * c for name, c in per_token.items()})
    counts = {k: counts[k] for k in ("softmax", "layernorm", "gelu", "residual", "bias")}
    counts["total"] = sum(counts.values())
    return counts


def matmul_fraction(B: int, S: int, d: int, h: int) -> float:
    """Fraction of one layer's forward FLOPs that are matmuls."""
    mm = layer_matmul_flops(B, S, d, h)["total"]
    return 1.0 / (1.0 + elementwise_flops(B, S, d, h)["total"] / mm)


def layer_backward_flops(B: int, S: int, d: int, h: int) -> dict:
    """Backward FLOPs of the matmuls of one GPT-2 layer: autograd on meta tensors, counted by torch."""
    counts = {}
    for name, run in _stages(B, S, d, h, grad=True).items():
        out = run()
        inputs = [t for t in _leaves(out)]
        counts[name] = _counted(lambda: torch.autograd.grad(out, inputs, torch.ones_like(out)))
    counts["total"] = sum(counts.values())
    return counts


def _leaves(out: torch.Tensor) -> list[torch.Tensor]:
    """The leaf tensors an output was computed from."""
    found, todo = [], [out.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None:
            continue
        if hasattr(fn, "variable"):
            found.append(fn.variable)
        todo += [f for f, _ in fn.next_functions]
    return found


def step_flops(B: int, S: int, d: int, h: int, n_layers: int) -> dict:
    """Matmul FLOPs of one training step (forward + backward) of n_layers layers."""
    fwd, bwd = layer_matmul_flops(B, S, d, h), layer_backward_flops(B, S, d, h)
    quad = sum(c[k] for c in (fwd, bwd) for k in ("scores", "attn_v"))
    return {"forward": fwd["total"] * n_layers, "backward": bwd["total"] * n_layers,
            "total": (fwd["total"] + bwd["total"]) * n_layers, "attention_quadratic": quad * n_layers}


def _clock_readings(dev, X, W) -> tuple[float, float]:
    """The device clock just before and just after one product X @ W."""
    start = dev.clock()
    dev.matmul(X, W)
    return start, dev.clock()


def measure_peak_flop_per_s(n: int = 512, repeats: int = 10, device: dict | None = None) -> float:
    """The best FLOP rate of a large square matmul on a device."""
    dev = lab1_device.open_device(device)
    X, W = dev.randn(n, n), dev.randn(n, n)
    dev.matmul(X, W)
    stamps = [_clock_readings(dev, X, W) for _ in range(repeats)]
    fastest = min(end - start for start, end in stamps)
    return float(matmul_flops(n, n, n) / fastest)


def measure_matmul_throughput(batch_sizes: list[int], d_in: int, d_out: int, repeats: int = 5,
                              peak_flop_per_s: float | None = None, device: dict | None = None) -> dict:
    """Time one linear layer X @ W over batch sizes on a device; report FLOP/s and utilization."""
    measured = None if peak_flop_per_s is not None else measure_peak_flop_per_s(device=device)
    dev = lab1_device.open_device(device)
    W = dev.randn(d_in, d_out)
    Xs = [dev.randn(b, d_in) for b in batch_sizes]
    for X in Xs:
        dev.matmul(X, W)
    # raw readings, (repeats, batch sizes, before/after): every batch size once per repeat, in order
    stamps = np.array([[_clock_readings(dev, X, W) for X in Xs] for _ in range(repeats)], dtype=np.float64)
    stamps = stamps.reshape(repeats, len(Xs), 2)
    seconds = np.median(stamps[..., 1] - stamps[..., 0], axis=0).tolist()
    flops = [matmul_flops(b, d_in, d_out) for b in batch_sizes]
    rates = [f / s for f, s in zip(flops, seconds)]
    peak = float(peak_flop_per_s) if measured is None else max([measured] + rates)
    return {"batch_sizes": list(batch_sizes), "flops": flops, "seconds": seconds, "flop_per_s": rates,
            "peak_flop_per_s": peak, "utilization": [r / peak for r in rates]}


# -- arithmetic intensity: torch counts the FLOPs, the meta tensors say their bytes --------------
_DTYPE_OF_SIZE = {1: torch.uint8, 2: torch.float16, 4: torch.float32, 8: torch.float64}


def _operand(size: int, *shape) -> torch.Tensor:
    return torch.empty(*shape, device="meta", dtype=_DTYPE_OF_SIZE[size])


def _nbytes(*tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _counted_with_result(fn) -> tuple[int, torch.Tensor]:
    with FlopCounterMode(display=False) as counter:
        out = fn()
    return int(counter.get_total_flops()), out


def matmul_intensity(m: int, k: int, n: int, bytes_per_element: int) -> dict:
    """FLOPs per byte of (m, k) @ (k, n): torch's count over A, B and C moved once each."""
    a, b = _operand(bytes_per_element, m, k), _operand(bytes_per_element, k, n)
    flops, c = _counted_with_result(lambda: a @ b)
    moved = _nbytes(a, b, c)
    return {"flops": flops, "bytes": moved, "intensity": flops / moved}


def elementwise_intensity(n_elements: int, flops_per_element: int, n_inputs: int, bytes_per_element: int) -> dict:
    """FLOPs per byte of an element-wise operation: its inputs read once, its output written once."""
    inputs = [_operand(bytes_per_element, n_elements) for _ in range(n_inputs)]
    out = _operand(bytes_per_element, n_elements)
    flops = flops_per_element * out.numel()
    moved = _nbytes(*inputs, out)
    return {"flops": flops, "bytes": moved, "intensity": flops / moved}


def attention_scores_intensity(S: int, d_head: int, bytes_per_element: int) -> dict:
    """FLOPs per byte of materialised scores, one head: torch's Q K^T count over the scores written and read."""
    q, k = _operand(bytes_per_element, S, d_head), _operand(bytes_per_element, S, d_head)
    flops, scores = _counted_with_result(lambda: q @ k.transpose(0, 1))
    moved = 2 * _nbytes(scores)  # written by Q K^T, read back by the softmax
    return {"flops": flops, "bytes": moved, "intensity": flops / moved}


def ridge_point(peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> float:
    """Peak FLOP/s over bytes/s, decimal units."""
    return peak_tflop_per_s * 1e12 / (bandwidth_gb_per_s * 1e9)


def roofline(intensity: float, peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> dict:
    """The lower roof, and which side of the ridge the intensity is on."""
    ridge = ridge_point(peak_tflop_per_s, bandwidth_gb_per_s)
    memory_roof = intensity * (bandwidth_gb_per_s * 1e9)
    return {"ridge": ridge, "attainable_flop_per_s": min(memory_roof, peak_tflop_per_s * 1e12),
            "regime": ("compute-bound", "memory-bound")[intensity < ridge]}


# -- break it on purpose: raw clock readings, with and without a warm-up product ------------------
def _timed_products(rows: int, d_in: int, d_out: int, repeats: int, device, warm: bool) -> list[float]:
    dev = lab1_device.open_device(device)
    X, W = dev.randn(rows, d_in), dev.randn(d_in, d_out)
    if warm:
        dev.matmul(X, W)
    stamps = np.array([_clock_readings(dev, X, W) for _ in range(repeats)], dtype=np.float64).reshape(repeats, 2)
    return (stamps[:, 1] - stamps[:, 0]).tolist()


def time_without_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """Broken on purpose: no warm-up, so the first time pays the first-call cost."""
    return _timed_products(rows, d_in, d_out, repeats, device, warm=False)


def time_with_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """One untimed warm-up product, then `repeats` timed ones."""
    return _timed_products(rows, d_in, d_out, repeats, device, warm=True)
