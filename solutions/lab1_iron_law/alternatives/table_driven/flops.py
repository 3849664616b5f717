"""Lab 1, part 1, a correct alternative: tables of products and of per-element costs.

A layer is a table of (stage, how many, m, k, n) products and a table of
(stage, FLOPs per element, elements per token); every count is read off a
table with plain integer arithmetic.  The backward pass is a table of
multipliers.  The measurements keep every time of a batch size in a dict
keyed by batch size and take the median by sorting (the middle time, or the
mean of the two middle ones).
"""

from __future__ import annotations

import lab1_device

SOFTMAX_FLOPS_PER_SCORE = 6
LAYERNORM_FLOPS_PER_ELEMENT = 7
GELU_FLOPS_PER_ELEMENT = 9
RESIDUAL_FLOPS_PER_ELEMENT = 1
BIAS_FLOPS_PER_ELEMENT = 1

MATMUL_KEYS = ("qkv", "scores", "attn_v", "out_proj", "mlp")
BACKWARD_PRODUCTS_PER_FORWARD = {key: 2 for key in MATMUL_KEYS}  # input gradient + weight (or operand) gradient


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of one matrix product (m, k) @ (k, n)."""
    multiply_accumulates = m * n * k
    return multiply_accumulates + multiply_accumulates  # one multiply and one add each


def _products(B: int, S: int, d: int, h: int) -> list[tuple[str, int, int, int, int]]:
    """(stage, how many, m, k, n): every matmul of one layer's forward pass."""
    dh, T = d // h, B * S
    return [("qkv", 1, T, d, 3 * d), ("scores", B * h, S, dh, S), ("attn_v", B * h, S, S, dh),
            ("out_proj", 1, T, d, d), ("mlp", 1, T, d, 4 * d), ("mlp", 1, T, 4 * d, d)]


def layer_matmul_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the matmuls of one GPT-2 layer, matmul by matmul."""
    counts = dict.fromkeys(MATMUL_KEYS, 0)
    for stage, times, m, k, n in _products(B, S, d, h):
        counts[stage] += times * matmul_flops(m, k, n)
    counts["total"] = sum(counts[k] for k in MATMUL_KEYS)
    return counts


def elementwise_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the non-matmul work of one GPT-2 layer."""
    T = B * S
    table = [  # (stage, FLOPs per element, elements)
        ("softmax", SOFTMAX_FLOPS_PER_SCORE, B * h * S * S),
        ("layernorm", LAYERNORM_FLOPS_PER_ELEMENT, 2 * T * d),
        ("gelu", GELU_FLOPS_PER_ELEMENT, T * 4 * d),
        ("residual", RESIDUAL_FLOPS_PER_ELEMENT, 2 * T * d),
        ("bias", BIAS_FLOPS_PER_ELEMENT, T * 3 * d),
        ("bias", BIAS_FLOPS_PER_ELEMENT, T * d),
        ("bias", BIAS_FLOPS_PER_ELEMENT, T * 4 * d),
        ("bias", BIAS_FLOPS_PER_ELEMENT, T * d),
    ]
    counts = {}
    for stage, cost, elements in table:
        counts[stage] = counts.get(stage, 0) + cost * elements
    counts["total"] = sum(counts.values())
    return counts


def matmul_fraction(B: int, S: int, d: int, h: int) -> float:
    """Fraction of one layer's forward FLOPs that are matmuls."""
    mm = layer_matmul_flops(B, S, d, h)["total"]
    everything = mm + elementwise_flops(B, S, d, h)["total"]
    return mm / everything


def layer_backward_flops(B: int, S: int, d: int, h: int) -> dict:
    """Backward FLOPs of the matmuls of one GPT-2 layer, matmul by matmul."""
    fwd = layer_matmul_flops(B, S, d, h)
    counts = {k: BACKWARD_PRODUCTS_PER_FORWARD[k] * fwd[k] for k in MATMUL_KEYS}
    counts["total"] = sum(counts.values())
    return counts


def step_flops(B: int, S: int, d: int, h: int, n_layers: int) -> dict:
    """Matmul FLOPs of one training step (forward + backward) of n_layers layers."""
    fwd, bwd = layer_matmul_flops(B, S, d, h), layer_backward_flops(B, S, d, h)
    out = {"forward": 0, "backward": 0, "total": 0, "attention_quadratic": 0}
    for _layer in range(n_layers):
        out["forward"] += fwd["total"]
        out["backward"] += bwd["total"]
        out["attention_quadratic"] += fwd["scores"] + fwd["attn_v"] + bwd["scores"] + bwd["attn_v"]
    out["total"] = out["forward"] + out["backward"]
    return out


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def measure_peak_flop_per_s(n: int = 512, repeats: int = 10, device: dict | None = None) -> float:
    """The best FLOP rate of a large square matmul on a device."""
    dev = lab1_device.open_device(device)
    X = dev.randn(n, n)
    W = dev.randn(n, n)
    dev.matmul(X, W)
    times = []
    while len(times) < repeats:
        before = dev.clock()
        dev.matmul(X, W)
        times.append(dev.clock() - before)
    return matmul_flops(n, n, n) / sorted(times)[0]


def measure_matmul_throughput(batch_sizes: list[int], d_in: int, d_out: int, repeats: int = 5,
                              peak_flop_per_s: float | None = None, device: dict | None = None) -> dict:
    """Time one linear layer X @ W over batch sizes on a device; report FLOP/s and utilization."""
    peak = peak_flop_per_s
    if peak is None:
        peak = measure_peak_flop_per_s(device=device)
        maxed = True
    else:
        maxed = False
    dev = lab1_device.open_device(device)
    W = dev.randn(d_in, d_out)
    X = {b: dev.randn(b, d_in) for b in batch_sizes}
    for b in sorted(batch_sizes):  # the warm-ups, smallest first (the docstring leaves their order open)
        dev.matmul(X[b], W)
    times = {b: [] for b in batch_sizes}
    for _round in range(repeats):
        for b in batch_sizes:
            before = dev.clock()
            dev.matmul(X[b], W)
            times[b].append(dev.clock() - before)
    rows = []
    for b in batch_sizes:
        f = matmul_flops(b, d_in, d_out)
        s = _median(times[b])
        rows.append((b, f, s, f / s))
    if maxed:
        for row in rows:
            if row[3] > peak:
                peak = row[3]
    peak = float(peak)
    return {"batch_sizes": [r[0] for r in rows], "flops": [r[1] for r in rows], "seconds": [r[2] for r in rows],
            "flop_per_s": [r[3] for r in rows], "peak_flop_per_s": peak,
            "utilization": [r[3] / peak for r in rows]}


# -- arithmetic intensity: a table of what each operation moves, a table of units -----------------
UNITS = {"TFLOP/s": 1e12, "GB/s": 1e9}  # datasheet units, decimal


def _per_byte(flops: int, traffic: dict, bytes_per_element: int) -> dict:
    moved = bytes_per_element * sum(traffic.values())
    return {"flops": flops, "bytes": moved, "intensity": flops / moved}


def matmul_intensity(m: int, k: int, n: int, bytes_per_element: int) -> dict:
    """(m, k) @ (k, n), its traffic in elements."""
    traffic = {"read A": m * k, "read B": k * n, "write C": m * n}
    return _per_byte(matmul_flops(m, k, n), traffic, bytes_per_element)


def elementwise_intensity(n_elements: int, flops_per_element: int, n_inputs: int, bytes_per_element: int) -> dict:
    """An element-wise operation, its traffic in elements."""
    traffic = {"read the inputs": n_inputs * n_elements, "write the output": n_elements}
    return _per_byte(flops_per_element * n_elements, traffic, bytes_per_element)


def attention_scores_intensity(S: int, d_head: int, bytes_per_element: int) -> dict:
    """Materialised scores of one head, as the chapter counts their traffic."""
    traffic = {"write the scores": S * S, "read them for the softmax": S * S}
    return _per_byte(matmul_flops(S, d_head, S), traffic, bytes_per_element)


def ridge_point(peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> float:
    """FLOP/s over bytes/s, from the table of units."""
    return peak_tflop_per_s * UNITS["TFLOP/s"] / (bandwidth_gb_per_s * UNITS["GB/s"])


def roofline(intensity: float, peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> dict:
    """A table of the two roofs; the lower one binds (the compute roof first, so it wins a tie)."""
    roofs = {"compute": peak_tflop_per_s * UNITS["TFLOP/s"], "memory": intensity * bandwidth_gb_per_s * UNITS["GB/s"]}
    binding = min(roofs, key=roofs.get)
    return {"ridge": ridge_point(peak_tflop_per_s, bandwidth_gb_per_s), "attainable_flop_per_s": roofs[binding],
            "regime": f"{binding}-bound"}


# -- break it on purpose: time repeats + 1 products, keep all or drop the first ---------------------
def _all_timed(rows: int, d_in: int, d_out: int, count: int, device) -> list[float]:
    dev = lab1_device.open_device(device)
    X = dev.randn(rows, d_in)
    W = dev.randn(d_in, d_out)
    times = []
    while len(times) < count:
        before = dev.clock()
        dev.matmul(X, W)
        times.append(dev.clock() - before)
    return times


def time_without_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """Broken on purpose: no warm-up, so the first time pays the first-call cost."""
    return _all_timed(rows, d_in, d_out, repeats, device)


def time_with_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """The first product is the warm-up: time repeats + 1 and leave the first one out."""
    return _all_timed(rows, d_in, d_out, repeats + 1, device)[1:]
