"""Lab 1, part 1, a correct alternative: numpy arrays of shapes and of times.

The products of a layer are the rows of an integer array (m, k, n, count),
multiplied out with numpy and turned back into Python ints; the sweep makes
a fresh X for every product (before the clock is read, so its making is not
timed), keeps its times in a (repeats, batch sizes) array and takes
statistics.median of each column; the peak is 2 n^3 over the minimum of a
numpy array.
"""

from __future__ import annotations

import statistics

import numpy as np

import lab1_device

SOFTMAX_FLOPS_PER_SCORE = 6
LAYERNORM_FLOPS_PER_ELEMENT = 7
GELU_FLOPS_PER_ELEMENT = 9
RESIDUAL_FLOPS_PER_ELEMENT = 1
BIAS_FLOPS_PER_ELEMENT = 1


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of one matrix product (m, k) @ (k, n)."""
    return int(np.prod(np.array([2, m, k, n], dtype=np.int64)))


NAMES = ("qkv", "scores", "attn_v", "out_proj", "mlp")  # the rows of _table, mlp's two products summed


def _table(B: int, S: int, d: int, h: int) -> np.ndarray:
    """One row per product kind, in NAMES order (mlp twice): count, m, k, n."""
    dh, T = d // h, B * S
    return np.array([[1, T, d, 3 * d], [B * h, S, dh, S], [B * h, S, S, dh], [1, T, d, d],
                     [1, T, d, 4 * d], [1, T, 4 * d, d]], dtype=np.int64)


def layer_matmul_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the matmuls of one GPT-2 layer, matmul by matmul."""
    per_row = 2 * np.prod(_table(B, S, d, h), axis=1)  # int64: GPT-2 XL sizes are far below 2^63
    values = [int(v) for v in per_row[:4]] + [int(per_row[4] + per_row[5])]
    counts = dict(zip(NAMES, values))
    counts["total"] = int(per_row.sum())
    return counts


def elementwise_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the non-matmul work of one GPT-2 layer."""
    T = B * S
    costs = np.array([SOFTMAX_FLOPS_PER_SCORE, LAYERNORM_FLOPS_PER_ELEMENT, GELU_FLOPS_PER_ELEMENT,
                      RESIDUAL_FLOPS_PER_ELEMENT, BIAS_FLOPS_PER_ELEMENT], dtype=np.int64)
    elements = np.array([B * h * S * S, 2 * T * d, 4 * T * d, 2 * T * d, 9 * T * d], dtype=np.int64)
    values = (costs * elements).tolist()  # Python ints
    counts = dict(zip(("softmax", "layernorm", "gelu", "residual", "bias"), values))
    counts["total"] = sum(values)
    return counts


def matmul_fraction(B: int, S: int, d: int, h: int) -> float:
    """Fraction of one layer's forward FLOPs that are matmuls."""
    parts = np.array([layer_matmul_flops(B, S, d, h)["total"], elementwise_flops(B, S, d, h)["total"]],
                     dtype=np.float64)
    return float(parts[0] / parts.sum())


def layer_backward_flops(B: int, S: int, d: int, h: int) -> dict:
    """Backward FLOPs of the matmuls of one GPT-2 layer, matmul by matmul."""
    return {k: v * 2 for k, v in layer_matmul_flops(B, S, d, h).items()}


def step_flops(B: int, S: int, d: int, h: int, n_layers: int) -> dict:
    """Matmul FLOPs of one training step (forward + backward) of n_layers layers."""
    fwd = layer_matmul_flops(B, S, d, h)
    per_layer = np.array([fwd["total"], 2 * fwd["total"], 3 * fwd["total"], 3 * (fwd["scores"] + fwd["attn_v"])],
                         dtype=np.int64)
    values = (per_layer * n_layers).tolist()
    return dict(zip(("forward", "backward", "total", "attention_quadratic"), values))


def measure_peak_flop_per_s(n: int = 512, repeats: int = 10, device: dict | None = None) -> float:
    """The best FLOP rate of a large square matmul on a device."""
    dev = lab1_device.open_device(device)
    A, Bm = dev.randn(n, n), dev.randn(n, n)
    dev.matmul(A, Bm)
    t = np.zeros(repeats)
    for i in range(repeats):
        t0 = dev.clock()
        dev.matmul(A, Bm)
        t[i] = dev.clock() - t0
    return float(2 * n**3 / t.min())


def measure_matmul_throughput(batch_sizes: list[int], d_in: int, d_out: int, repeats: int = 5,
                              peak_flop_per_s: float | None = None, device: dict | None = None) -> dict:
    """Time one linear layer X @ W over batch sizes on a device; report FLOP/s and utilization."""
    peak = None if peak_flop_per_s is None else float(peak_flop_per_s)
    probe = measure_peak_flop_per_s(device=device) if peak is None else 0.0
    dev = lab1_device.open_device(device)
    W = dev.randn(d_in, d_out)
    _warm = [dev.matmul(dev.randn(b, d_in), W) for b in batch_sizes]
    t = np.zeros((repeats, len(batch_sizes)))
    for r in range(repeats):
        for j, b in enumerate(batch_sizes):
            X = dev.randn(b, d_in)  # a fresh operand for every product, made before the clock is read
            t0 = dev.clock()
            dev.matmul(X, W)
            t[r, j] = dev.clock() - t0
    seconds = [statistics.median(t[:, j].tolist()) for j in range(len(batch_sizes))]
    flops = [2 * b * d_in * d_out for b in batch_sizes]
    rates = np.array(flops, dtype=np.float64) / np.array(seconds)
    if peak is None:
        peak = float(max(probe, rates.max()))
    return {"batch_sizes": list(batch_sizes), "flops": flops, "seconds": seconds, "flop_per_s": rates.tolist(),
            "peak_flop_per_s": peak, "utilization": (rates / peak).tolist()}


# -- arithmetic intensity: element counts in int64 arrays, roofs with np.minimum ------------------
def _intensity(flops: int, elements_moved: np.ndarray, bytes_per_element: int) -> dict:
    moved = int(elements_moved.sum()) * bytes_per_element
    return {"flops": int(flops), "bytes": moved, "intensity": float(np.float64(flops) / np.float64(moved))}


def matmul_intensity(m: int, k: int, n: int, bytes_per_element: int) -> dict:
    """(m, k) @ (k, n): the elements of A, B and C, moved once each."""
    shapes = np.array([[m, k], [k, n], [m, n]], dtype=np.int64)
    return _intensity(matmul_flops(m, k, n), shapes.prod(axis=1), bytes_per_element)


def elementwise_intensity(n_elements: int, flops_per_element: int, n_inputs: int, bytes_per_element: int) -> dict:
    """n_inputs tensors read and one written, n_elements each."""
    tensors = np.full(n_inputs + 1, n_elements, dtype=np.int64)
    return _intensity(flops_per_element * n_elements, tensors, bytes_per_element)


def attention_scores_intensity(S: int, d_head: int, bytes_per_element: int) -> dict:
    """Q K^T over the S x S scores written and read back."""
    scores = np.array([S * S, S * S], dtype=np.int64)  # the write, the read for the softmax
    return _intensity(matmul_flops(S, d_head, S), scores, bytes_per_element)


def ridge_point(peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> float:
    """Peak over bandwidth, decimal units."""
    return float(np.float64(peak_tflop_per_s) * 1e12 / (np.float64(bandwidth_gb_per_s) * 1e9))


def roofline(intensity: float, peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> dict:
    """The two roofs as an array; the regime from the ridge."""
    ridge = ridge_point(peak_tflop_per_s, bandwidth_gb_per_s)
    roofs = np.array([peak_tflop_per_s * 1e12, intensity * bandwidth_gb_per_s * 1e9])
    regime = np.where(intensity < ridge, "memory-bound", "compute-bound")
    return {"ridge": ridge, "attainable_flop_per_s": float(roofs.min()), "regime": str(regime)}


# -- break it on purpose: the same loop into a numpy array, the warm-up a flag ---------------------
def time_without_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """Broken on purpose: no warm-up, so the first time pays the first-call cost."""
    dev = lab1_device.open_device(device)
    A, Bm = dev.randn(rows, d_in), dev.randn(d_in, d_out)
    t = np.zeros(repeats)
    for i in range(repeats):
        t0 = dev.clock()
        dev.matmul(A, Bm)
        t[i] = dev.clock() - t0
    return t.tolist()


def time_with_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """One untimed warm-up product, then `repeats` timed ones (on the same device as the timed ones)."""
    dev = lab1_device.open_device(device)
    A, Bm = dev.randn(rows, d_in), dev.randn(d_in, d_out)
    dev.matmul(A, Bm)
    t = np.zeros(repeats)
    for i in range(repeats):
        t0 = dev.clock()
        dev.matmul(A, Bm)
        t[i] = dev.clock() - t0
    return t.tolist()
