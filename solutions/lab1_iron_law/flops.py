"""Lab 1, part 1: count the operations of a GPT-2 layer, then measure them.

The iron law of training time is T = O / (R_peak * eta): operations divided by
the rate the hardware sustains.  This file is about O (count every FLOP of a
GPT-2 layer, forward and backward: §3.1 Neural network computation), about
the bytes each operation moves, which decide whether an accelerator can
reach its peak on it (§3.4 Arithmetic intensity), and about eta (time
matmuls on a device, this CPU or a simulated one from lab1_device.py, and
see how much of its peak rate they reach).

Conventions used by every function below (the tests rely on them):

* A FLOP is one floating-point add or multiply.  A multiply-accumulate is
  2 FLOPs, so (m, k) @ (k, n) costs 2*m*k*n FLOPs.
* Notation: B = batch, S = sequence length, d = d_model, h = heads,
  d_head = d // h.  A GPT-2 layer is pre-LayerNorm: x + attn(ln_1(x)), then
  x + mlp(ln_2(x)), with an MLP of width 4d and the tanh GELU.
* Attention counts the FULL S x S score matrix.  A causal mask zeroes half
  of it, but the hardware computes it anyway: there is no halving here
  (as the chapter's GPT-2 layer count in §3.1.2 Matrix operations does, and
  nanoGPT's estimate_mfu; Megatron-LM halves it).
* Counts are per layer unless a function says otherwise, and exclude the
  embeddings, the final LayerNorm and the language-model head.
* Counts are exact Python ints (type int, not float: integer arithmetic,
  d // h and never d / h).  The tests check the type.

Your task: replace every `raise NotImplementedError` below with code.  Each
docstring is the contract the tests check; they call every function with keyword
arguments.  `autograder check lab1` runs the public tests; hidden ones run at grading.

Tóm tắt (tiếng Việt): đếm FLOP của một lớp GPT-2 (lượt xuôi và lượt ngược),
tính cường độ số học (FLOP trên mỗi byte di chuyển) và vùng roofline của từng
phép toán, rồi đo tỉ lệ thông lượng đỉnh mà phép nhân ma trận đạt trên một thiết
bị (CPU này, hoặc thiết bị mô phỏng của lab1_device.py); mọi hàm được gọi bằng
đối số từ khoá.  Một FLOP là phép cộng hoặc nhân dấu phẩy động ((m, k) @ (k, n) tốn 2*m*k*n FLOP);
đếm cả ma trận điểm S x S (không chia đôi); số đếm là int, tính cho một lớp.
"""

from __future__ import annotations

import statistics

import lab1_device

# Per-element costs of the non-matmul work ("count to the end").  Each
# elementary operation (add, subtract, multiply, divide, compare, exp, tanh)
# is 1 FLOP; per-row work (one reciprocal square root per LayerNorm row, one
# reciprocal per softmax row) is ignored.
SOFTMAX_FLOPS_PER_SCORE = 6  # scale by 1/sqrt(d_head), row max, subtract max, exp, row sum, divide
LAYERNORM_FLOPS_PER_ELEMENT = 7  # mean sum, subtract mean, square, variance sum, normalize, *gamma, +beta
GELU_FLOPS_PER_ELEMENT = 9  # x*x*x (2), *0.044715, +x, *sqrt(2/pi), tanh, 1+, *x, *0.5
RESIDUAL_FLOPS_PER_ELEMENT = 1  # one add per element of (B, S, d), two residual adds per layer
BIAS_FLOPS_PER_ELEMENT = 1  # one add per output element of every nn.Linear


# ----------------------------------------------------------------------------
# Forward matmuls


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of one matrix product (m, k) @ (k, n).

    Each of the m*n outputs is a dot product of length k: k multiplies and
    k adds, so 2*m*k*n FLOPs in all (2 FLOPs per multiply-accumulate).
    A batched product (b, m, k) @ (b, k, n) is b times this.

    Returns:
        int: 2 * m * k * n.

    Tóm tắt (tiếng Việt): trả về số FLOP của tích (m, k) @ (k, n), tức int
    2 * m * k * n (một phép nhân-cộng là 2 FLOP).
    """
    ### BEGIN SOLUTION
    assert min(m, k, n) >= 0, "matrix dimensions must be non-negative"
    return 2 * m * k * n
    ### END SOLUTION


def layer_matmul_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the matmuls of one GPT-2 layer, matmul by matmul.

    Args:
        B: batch size.  S: sequence length.  d: d_model.  h: attention heads
        (d must be divisible by h; d_head = d // h).

    Returns:
        dict of int FLOPs with exactly these keys:
        "qkv":      the Q, K and V projections, (B*S, d) @ (d, 3d).
        "scores":   Q @ K^T, one (S, d_head) @ (d_head, S) per head and sequence (B*h of them).
        "attn_v":   attention weights @ V, one (S, S) @ (S, d_head) per head and sequence.
        "out_proj": the attention output projection, (B*S, d) @ (d, d).
        "mlp":      up (B*S, d) @ (d, 4d) plus down (B*S, 4d) @ (4d, d).
        "total":    the sum of the five above.
        The full S x S score matrix is counted (no halving for the causal
        mask).  Biases are not matmul work (see elementwise_flops).

    Example (GPT-2 XL, B=32, S=1024, d=1600, h=25: the chapter's callout
    "GPT-2 attention layer computation", §3.1.2 Matrix operations), in GFLOP:
        503.3, 107.4, 107.4, 167.8, 1342.2; total 2228.0.

    Tóm tắt (tiếng Việt): FLOP lượt xuôi của các phép nhân ma trận trong một lớp
    GPT-2, dạng dict các int với đúng các khoá "qkv", "scores", "attn_v",
    "out_proj", "mlp", "total"; đếm cả ma trận điểm S x S, không tính bias.
    """
    ### BEGIN SOLUTION
    assert d % h == 0, f"d_model={d} is not divisible by h={h} heads"
    d_head = d // h
    tokens = B * S  # projections treat every token of every sequence as a row
    counts = {
        "qkv": matmul_flops(tokens, d, 3 * d),
        # each head scores its S queries against its S keys: B*h products of (S, d_head) @ (d_head, S)
        "scores": B * h * matmul_flops(S, d_head, S),
        # and mixes its S values with the (S, S) weights: B*h products of (S, S) @ (S, d_head)
        "attn_v": B * h * matmul_flops(S, S, d_head),
        "out_proj": matmul_flops(tokens, d, d),
        "mlp": matmul_flops(tokens, d, 4 * d) + matmul_flops(tokens, 4 * d, d),
    }
    counts["total"] = sum(counts.values())
    return counts
    ### END SOLUTION


# ----------------------------------------------------------------------------
# Count to the end: everything that is not a matmul


def elementwise_flops(B: int, S: int, d: int, h: int) -> dict:
    """Forward FLOPs of the non-matmul work of one GPT-2 layer.

    Per-element costs are the module constants above (each elementary
    operation is 1 FLOP, per-row work is ignored):

        "softmax":   SOFTMAX_FLOPS_PER_SCORE (6) per score element; there are
                     B*h*S*S scores (the full matrix, mask not halved).  The
                     1/sqrt(d_head) scaling is part of this count.
        "layernorm": LAYERNORM_FLOPS_PER_ELEMENT (7) per element of the
                     (B, S, d) input, for each of the 2 LayerNorms.
        "gelu":      GELU_FLOPS_PER_ELEMENT (9) per element of the (B, S, 4d)
                     MLP hidden activation.
        "residual":  RESIDUAL_FLOPS_PER_ELEMENT (1) per element of (B, S, d),
                     for each of the 2 residual adds.
        "bias":      BIAS_FLOPS_PER_ELEMENT (1) per output element of each of
                     the 4 linear layers (QKV: 3d, out: d, MLP up: 4d,
                     MLP down: d, per token).
        "total":     the sum of the five above.

    Returns:
        dict of int FLOPs with exactly the keys above.

    Tóm tắt (tiếng Việt): FLOP lượt xuôi của phần không phải phép nhân ma trận
    trong một lớp, theo chi phí trên mỗi phần tử ở các hằng số phía trên; trả về
    dict các int với đúng các khoá "softmax", "layernorm", "gelu", "residual",
    "bias", "total".
    """
    ### BEGIN SOLUTION
    assert d % h == 0, f"d_model={d} is not divisible by h={h} heads"
    tokens = B * S
    counts = {
        "softmax": SOFTMAX_FLOPS_PER_SCORE * B * h * S * S,
        "layernorm": 2 * LAYERNORM_FLOPS_PER_ELEMENT * tokens * d,
        "gelu": GELU_FLOPS_PER_ELEMENT * tokens * 4 * d,
        "residual": 2 * RESIDUAL_FLOPS_PER_ELEMENT * tokens * d,
        "bias": BIAS_FLOPS_PER_ELEMENT * tokens * (3 * d + d + 4 * d + d),
    }
    counts["total"] = sum(counts.values())
    return counts
    ### END SOLUTION


def matmul_fraction(B: int, S: int, d: int, h: int) -> float:
    """Fraction of one layer's forward FLOPs that are matmuls.

    matmul total / (matmul total + non-matmul total), using
    layer_matmul_flops and elementwise_flops.  The chapter says only that
    matmuls dominate training compute (§3.1.3 Matrix-vector and batched
    operations); the share is yours to measure.  Under the per-element
    costs above it is above 0.98 for GPT-2 XL (the lab's threshold, not the
    chapter's): this is why counting matmuls alone is a good estimate of O.

    Returns:
        float in (0, 1).

    Tóm tắt (tiếng Việt): tỉ lệ FLOP lượt xuôi của một lớp là phép nhân ma trận:
    tổng matmul / (tổng matmul + tổng phần còn lại); trả về float trong (0, 1).
    """
    ### BEGIN SOLUTION
    mm = layer_matmul_flops(B, S, d, h)["total"]
    other = elementwise_flops(B, S, d, h)["total"]
    return mm / (mm + other)
    ### END SOLUTION


# ----------------------------------------------------------------------------
# Forward plus backward


def layer_backward_flops(B: int, S: int, d: int, h: int) -> dict:
    """Backward FLOPs of the matmuls of one GPT-2 layer, matmul by matmul.

    The backward pass of Y = A @ W needs two products of the same size as
    the forward one: dA = dY @ W^T (the gradient sent to the layer below)
    and dW = A^T @ dY (the gradient of the weight).  For the two attention
    products both operands are activations and both get a gradient, which
    also costs two products.  So each matmul costs 2x its forward FLOPs
    backward, and training costs 3x forward.  Non-matmul work is not counted.

    Returns:
        dict of int FLOPs with the same keys as layer_matmul_flops
        ("qkv", "scores", "attn_v", "out_proj", "mlp", "total").

    Tóm tắt (tiếng Việt): FLOP lượt ngược của các phép nhân ma trận trong một lớp:
    mỗi phép nhân ma trận tốn 2 lần FLOP lượt xuôi; không đếm phần không phải
    matmul.  Trả về dict các int với cùng các khoá như layer_matmul_flops.
    """
    ### BEGIN SOLUTION
    forward = layer_matmul_flops(B, S, d, h)
    # every product is paid twice: once for the input gradient, once for the weight (or other operand) gradient
    return {key: 2 * flops for key, flops in forward.items()}
    ### END SOLUTION


def step_flops(B: int, S: int, d: int, h: int, n_layers: int) -> dict:
    """Matmul FLOPs of one training step (forward + backward) of n_layers layers.

    Counts the transformer layers only (no embeddings, final LayerNorm or
    language-model head) and matmuls only.

    Returns:
        dict of int FLOPs with exactly these keys:
        "forward":  n_layers * layer_matmul_flops total.
        "backward": n_layers * layer_backward_flops total.
        "total":    forward + backward (3x forward).
        "attention_quadratic": the part of "total" from the "scores" and
                    "attn_v" products, forward and backward.

    Why this differs from 6 * P * tokens (costs.training_flops, the
    chapter's 6 FLOPs per parameter per token, printed in §4.4.2 Batch
    size and parameter updates, "The utility bill"): that rule
    charges each parameter 2 FLOPs per token forward and 4 backward, so it
    counts only products with a weight.  The scores and attention x V
    products multiply two activations, have no parameters, and grow as S^2;
    the rule leaves them out.  For GPT-2 XL (B=32, S=1024, 48 layers) the
    step is 320.8 TFLOP, the rule gives 294.9 TFLOP, and "attention_quadratic"
    is 30.9 TFLOP.  (The rule's P = 1.5e9 also includes embeddings, which do
    no matmul work here; that is why the gap is not exactly 30.9.)

    Tóm tắt (tiếng Việt): FLOP nhân ma trận của một bước huấn luyện (lượt xuôi +
    lượt ngược) của n_layers lớp transformer; trả về dict các int với đúng các
    khoá "forward", "backward", "total" (= 3x lượt xuôi) và "attention_quadratic"
    (phần của "scores" và "attn_v", cả lượt xuôi lẫn lượt ngược).
    """
    ### BEGIN SOLUTION
    fwd = layer_matmul_flops(B, S, d, h)
    bwd = layer_backward_flops(B, S, d, h)
    L = n_layers
    return {
        "forward": L * fwd["total"],
        "backward": L * bwd["total"],
        "total": L * (fwd["total"] + bwd["total"]),
        # products of two activations: no parameter takes part, so 6*P*tokens misses them
        "attention_quadratic": L * sum(c["scores"] + c["attn_v"] for c in (fwd, bwd)),
    }
    ### END SOLUTION


# ----------------------------------------------------------------------------
# Arithmetic intensity and the roofline (§3.4 Arithmetic intensity)
#
# Conventions of the functions below (the tests rely on them):
# * Bytes are what an operation moves between main memory (HBM, DRAM) and the
#   chip, counted from shapes and the element size: bytes_per_element is 2 for
#   FP16 or BF16, 4 for FP32 (torch.tensor([], dtype=...).element_size()).
#   Every tensor an operation reads is read ONCE and every tensor it writes is
#   written ONCE (perfect reuse on chip: the least traffic it can need).
# * Intensity is FLOPs / bytes, in FLOP/byte, a float.  "flops" and "bytes"
#   are exact Python ints.  Every size is at least 1.
# * Hardware rates are given as datasheets print them, in decimal units:
#   1 TFLOP/s = 1e12 FLOP/s and 1 GB/s = 1e9 bytes/s (not GiB/s, 2**30).


def matmul_intensity(m: int, k: int, n: int, bytes_per_element: int) -> dict:
    """Arithmetic intensity of one product (m, k) @ (k, n) in one dtype.

    FLOPs: matmul_flops(m, k, n) = 2*m*k*n.  Bytes: A (m*k elements) and B
    (k*n) read once, C (m*n) written once:
    bytes_per_element * (m*k + k*n + m*n).  For square (n, n) products that
    is 2n/(3*bytes_per_element) FLOP/byte: it grows with n, the O(n) of the
    chapter's table of intensities (§3.4 Arithmetic intensity).  A product
    with one row (m = 1, a matrix-vector product) does about 1 FLOP per
    element of W it reads.

    Returns:
        dict with exactly these keys: "flops" (int), "bytes" (int),
        "intensity" (float, flops / bytes, FLOP/byte).

    Tóm tắt (tiếng Việt): cường độ số học của tích (m, k) @ (k, n): "flops" =
    2*m*k*n (int), "bytes" = bytes_per_element * (m*k + k*n + m*n) (đọc A và B
    một lần, ghi C một lần; int), "intensity" = flops / bytes (float, FLOP/byte).
    """
    ### BEGIN SOLUTION
    flops = matmul_flops(m, k, n)
    moved = bytes_per_element * (m * k + k * n + m * n)  # read A, read B, write C: once each
    return {"flops": flops, "bytes": moved, "intensity": flops / moved}
    ### END SOLUTION


def elementwise_intensity(n_elements: int, flops_per_element: int, n_inputs: int, bytes_per_element: int) -> dict:
    """Arithmetic intensity of an element-wise operation (GELU, an add, LayerNorm).

    The operation reads n_inputs tensors of n_elements each and writes one
    tensor of n_elements, each once (LayerNorm's gamma and beta, a few
    thousand values, are not counted), doing flops_per_element FLOPs per
    output element (use the constants above: GELU_FLOPS_PER_ELEMENT is 9, a
    residual add is 1 FLOP with 2 inputs).
        flops = flops_per_element * n_elements
        bytes = bytes_per_element * n_elements * (n_inputs + 1)

    Returns:
        dict with exactly these keys: "flops" (int), "bytes" (int),
        "intensity" (float, FLOP/byte).

    Tóm tắt (tiếng Việt): phép toán theo từng phần tử đọc n_inputs tensor và ghi
    một tensor, mỗi tensor n_elements phần tử, mỗi cái một lần: "flops" =
    flops_per_element * n_elements, "bytes" = bytes_per_element * n_elements *
    (n_inputs + 1) (int), "intensity" = flops / bytes (float).
    """
    ### BEGIN SOLUTION
    flops = flops_per_element * n_elements
    moved = bytes_per_element * n_elements * (n_inputs + 1)  # each input read once, the output written once
    return {"flops": flops, "bytes": moved, "intensity": flops / moved}
    ### END SOLUTION


def attention_scores_intensity(S: int, d_head: int, bytes_per_element: int) -> dict:
    """Arithmetic intensity of MATERIALISED attention scores, one head, as the chapter counts it.

    §3.4 Arithmetic intensity counts, per head: the Q K^T product,
    (S, d_head) @ (d_head, S), 2*S*S*d_head FLOPs; and the S x S score
    matrix written to memory once and read back once for the softmax,
    2 * S*S * bytes_per_element bytes.  Only the score matrix's traffic is
    counted: reading Q and K (2*S*d_head elements) is left out, as the
    chapter leaves it out (it grows as S, the score matrix as S^2).  So the
    intensity is d_head / bytes_per_element, whatever S is: 32 FLOP/byte
    for GPT-2 small (d_head = 64) in FP16, the chapter's figure.

    Returns:
        dict with exactly these keys: "flops" (int), "bytes" (int),
        "intensity" (float, FLOP/byte).

    Tóm tắt (tiếng Việt): cường độ số học của điểm attention được lưu ra bộ
    nhớ, một head, theo cách đếm của chương: "flops" = 2*S*S*d_head (tích
    Q K^T), "bytes" = 2 * S*S * bytes_per_element (ma trận điểm S x S ghi một
    lần rồi đọc lại một lần cho softmax; không tính việc đọc Q và K),
    "intensity" = flops / bytes = d_head / bytes_per_element (float).
    """
    ### BEGIN SOLUTION
    flops = matmul_flops(S, d_head, S)  # Q K^T
    moved = 2 * S * S * bytes_per_element  # the score matrix: written once, read back once for the softmax
    return {"flops": flops, "bytes": moved, "intensity": flops / moved}
    ### END SOLUTION


def ridge_point(peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> float:
    """The ridge point of an accelerator: its peak FLOP rate over its memory bandwidth.

        ridge = (peak_tflop_per_s * 1e12 FLOP/s) / (bandwidth_gb_per_s * 1e9 bytes/s)

    in FLOP/byte, decimal units as datasheets print them (1 GB/s = 1e9
    bytes/s, not GiB/s).  An operation whose intensity is below the ridge
    cannot keep the arithmetic units busy: it is memory-bound.  Example: an
    A100 at 312 TFLOP/s (FP16/BF16 Tensor Cores) and 2,039 GB/s: about 153.

    Returns:
        float FLOP/byte.

    Tóm tắt (tiếng Việt): điểm gãy (ridge point) của bộ tăng tốc: (peak_tflop_per_s
    * 1e12) / (bandwidth_gb_per_s * 1e9), float FLOP/byte, đơn vị thập phân
    (1 GB/s = 1e9 byte/s, không phải GiB/s).
    """
    ### BEGIN SOLUTION
    return (peak_tflop_per_s * 1e12) / (bandwidth_gb_per_s * 1e9)
    ### END SOLUTION


def roofline(intensity: float, peak_tflop_per_s: float, bandwidth_gb_per_s: float) -> dict:
    """Where an operation of a given intensity sits on an accelerator's roofline.

    The attainable rate is the lower of the two roofs: the peak, and what
    the memory can feed at this intensity,
        attainable = min(peak_tflop_per_s * 1e12, intensity * bandwidth_gb_per_s * 1e9)  FLOP/s.
    The operation is "memory-bound" when its intensity is below the ridge
    point (ridge_point(peak_tflop_per_s, bandwidth_gb_per_s)), "compute-bound"
    otherwise (at the ridge itself both roofs meet; call it compute-bound).

    Returns:
        dict with exactly these keys: "ridge" (float FLOP/byte),
        "attainable_flop_per_s" (float), "regime" ("memory-bound" or
        "compute-bound", exactly these strings).

    Tóm tắt (tiếng Việt): vị trí của một phép toán trên roofline: "ridge" =
    ridge_point(...), "attainable_flop_per_s" = min(đỉnh, intensity * băng thông)
    (FLOP/s, đơn vị thập phân), "regime" = "memory-bound" nếu intensity nhỏ hơn
    ridge, ngược lại "compute-bound".
    """
    ### BEGIN SOLUTION
    ridge = ridge_point(peak_tflop_per_s, bandwidth_gb_per_s)
    attainable = min(peak_tflop_per_s * 1e12, intensity * bandwidth_gb_per_s * 1e9)
    regime = "memory-bound" if intensity < ridge else "compute-bound"
    return {"ridge": ridge, "attainable_flop_per_s": attainable, "regime": regime}
    ### END SOLUTION


# ----------------------------------------------------------------------------
# Measured throughput: how much of the peak rate a matmul reaches


### BEGIN SOLUTION NO PROMPT
def _seconds_of_one(dev, X, W) -> float:
    """Seconds of one product X @ W on the device's clock."""
    t0 = dev.clock()
    dev.matmul(X, W)
    return dev.clock() - t0
### END SOLUTION


def measure_peak_flop_per_s(n: int = 512, repeats: int = 10, device: dict | None = None) -> float:
    """The best FLOP rate of a large square matmul on a device: our "peak".

    Everything goes through lab1_device.open_device(device): None is this
    CPU (float32 torch tensors, time.perf_counter), a dict a simulated
    device (see lab1_device.py).  Make two (n, n) operands with the
    device's randn (before any timing: randn takes time on a device too)
    and run one untimed warm-up product.  Then time `repeats` products
    one at a time: device.clock() just before and just after each single
    device.matmul(X, W).  Return the highest rate, 2*n**3 / (fastest
    time): the BEST of the repeats, not their mean or median.  Uses
    whatever torch thread setting is in effect: never call
    torch.set_num_threads, here or anywhere in this file (a simulated
    device raises ThreadSettingError).  Time: every call has the lab's
    10 s limit; the defaults take well under a second on a CPU core.

    Returns:
        float FLOP/s.

    Tóm tắt (tiếng Việt): mọi việc đi qua lab1_device.open_device(device)
    (None: CPU này; dict: thiết bị mô phỏng).  Tạo hai toán hạng (n, n) bằng
    randn của thiết bị, chạy một tích khởi động không bấm giờ, rồi bấm giờ
    riêng từng tích trong `repeats` tích bằng device.clock() ngay trước và
    ngay sau mỗi device.matmul(X, W); trả về tốc độ cao nhất 2*n**3 / (thời
    gian nhanh nhất), float FLOP/s (lấy lần TỐT NHẤT, không lấy trung bình hay
    trung vị).  Tạo toán hạng trước khi bấm giờ (randn cũng tốn thời gian).
    Không bao giờ gọi torch.set_num_threads (thiết bị mô phỏng báo
    ThreadSettingError).  Mỗi lần gọi có giới hạn 10 s.
    """
    ### BEGIN SOLUTION
    dev = lab1_device.open_device(device)
    X, W = dev.randn(n, n), dev.randn(n, n)
    dev.matmul(X, W)  # warm-up: the first call pays for allocation and kernel selection
    fastest = min(_seconds_of_one(dev, X, W) for _ in range(repeats))
    return matmul_flops(n, n, n) / fastest
    ### END SOLUTION


def measure_matmul_throughput(batch_sizes: list[int], d_in: int, d_out: int, repeats: int = 5,
                              peak_flop_per_s: float | None = None, device: dict | None = None) -> dict:
    """Time one linear layer X @ W over batch sizes on a device; report FLOP/s and utilization.

    Everything goes through lab1_device.open_device(device): None is this
    CPU, a dict a simulated device (see lab1_device.py).  For each b in
    batch_sizes (distinct ints): X is a (b, d_in) operand, and one
    (d_in, d_out) operand W serves every batch size, all made with the
    device's randn before any timing (randn takes time on a device too:
    never between the two clock reads).  First run every product once,
    untimed (warm-up: one per batch size).  Then run `repeats` rounds;
    each round times one product at every batch size, in the given order:
    device.clock() just before and just after each single
    device.matmul(X, W).  (Rounds interleave the batch sizes, so that a
    slow moment on a shared machine hits all of them alike, and so that no
    timed product runs right after one of its own shape: that one would
    find warm caches, which a layer between other work never does.  A
    simulated device models this: see lab1_device.py.  All repeats of one
    batch size, then all of the next, measure something else.)  The
    reported time of a batch size is the MEDIAN of its `repeats` times, as
    statistics.median gives it (for an even number of repeats, the mean of
    the two middle times).  Never call torch.set_num_threads, here or
    anywhere in this file, not even to set it back (a simulated device
    raises ThreadSettingError).

    Peak: peak_flop_per_s if it is given (a stated peak).  Otherwise the best
    rate this call has seen: the larger of measure_peak_flop_per_s(device=device)
    (run once, with its other arguments at their defaults, on a device of
    its own with the same spec) and the highest flop_per_s of the batch
    sizes; with a measured peak, utilization is at most 1.

    Time: every call has the lab's 10 s limit; a few batch sizes up to 512
    with d_in = d_out = 256 take well under a second on a CPU core.

    Returns:
        dict with exactly these keys:
        "batch_sizes":     list[int], as given.
        "flops":           list[int], FLOPs of one product, 2 * b * d_in * d_out (exact Python ints).
        "seconds":         list[float], median seconds of one product, on device.clock().
        "flop_per_s":      list[float], flops / seconds.
        "peak_flop_per_s": float, the peak used.
        "utilization":     list[float], flop_per_s / peak_flop_per_s.
        Every list has one entry per batch size, in the given order.

    Tóm tắt (tiếng Việt): mọi việc đi qua lab1_device.open_device(device).
    Với mỗi b (các giá trị khác nhau), đo X (b, d_in) @ W (d_in, d_out), tạo
    mọi toán hạng trước khi bấm giờ: mỗi tích khởi động một lần không bấm giờ,
    rồi `repeats` vòng, mỗi vòng một tích của mỗi batch theo thứ tự đã cho
    (xen kẽ, không đo hết các lần của một batch liền nhau), bấm giờ từng tích
    bằng device.clock(); lấy TRUNG VỊ (statistics.median: với số lần lặp chẵn
    là trung bình của hai giá trị giữa).  Đỉnh là peak_flop_per_s nếu có,
    nếu không là max(measure_peak_flop_per_s(device=device), tốc độ cao nhất
    của các batch).  Không bao giờ gọi torch.set_num_threads.
    Mỗi lần gọi có giới hạn 10 s.  Trả về dict với đúng các khoá ở trên
    (flops là int chính xác; mỗi list một phần tử cho mỗi batch).
    """
    ### BEGIN SOLUTION
    probe = measure_peak_flop_per_s(device=device) if peak_flop_per_s is None else None
    dev = lab1_device.open_device(device)
    W = dev.randn(d_in, d_out)  # (d_in, d_out): one layer's weight
    Xs = [dev.randn(b, d_in) for b in batch_sizes]  # (b, d_in): b tokens each
    for X in Xs:
        dev.matmul(X, W)  # warm-up
    times = [[] for _ in batch_sizes]
    for _ in range(repeats):
        for X, t in zip(Xs, times):
            t.append(_seconds_of_one(dev, X, W))
    # the median ignores the odd call slowed down by another process
    seconds = [statistics.median(t) for t in times]
    flops = [matmul_flops(b, d_in, d_out) for b in batch_sizes]
    rates = [f / s for f, s in zip(flops, seconds)]
    peak = float(peak_flop_per_s) if probe is None else max(probe, *rates)
    return {"batch_sizes": list(batch_sizes), "flops": flops, "seconds": seconds, "flop_per_s": rates,
            "peak_flop_per_s": peak, "utilization": [r / peak for r in rates]}
    ### END SOLUTION


# ----------------------------------------------------------------------------
# Break it on purpose: a timing that forgets the warm-up, beside the right one
#
# Warming up a timing is beyond the chapter: its only warm-up is the learning rate's
# (§3.2.3 Optimization algorithm system implications), and its profiling advice
# (§5 Identifying Bottlenecks) does not say how to time.  The practice is PyTorch's own:
# torch.utils.benchmark.Timer runs warm-up calls before it times, because parts of PyTorch
# are initialised lazily on first use, and reports the median of replicates (PyTorch
# documentation, "Benchmark Utils - torch.utils.benchmark").


def time_without_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """BROKEN ON PURPOSE: time X @ W with NO warm-up, to see what that mistake measures.

    Write the mistake, exactly: through lab1_device.open_device(device)
    (None: this CPU; a dict: a simulated device), make X (rows, d_in) and
    W (d_in, d_out) with the device's randn (before any timing), then time
    `repeats` products one at a time, device.clock() just before and just
    after each single device.matmul(X, W), with no untimed product first:
    the first timed product is the first product of that shape on the
    device, and so includes its one-time first-call cost (on a simulated
    device, spec["warmup_s"]).  Nothing else differs from
    time_with_warmup.  Never call torch.set_num_threads.  Time: every call
    has the lab's 10 s limit.

    Returns:
        list[float], the `repeats` times in seconds, in the order they were taken.

    Tóm tắt (tiếng Việt): CỐ Ý SAI: bấm giờ X @ W mà KHÔNG khởi động.  Qua
    lab1_device.open_device(device), tạo X (rows, d_in) và W (d_in, d_out)
    bằng randn của thiết bị trước khi bấm giờ, rồi bấm giờ riêng từng tích
    trong `repeats` tích bằng device.clock(), không có tích nào chạy trước
    mà không bấm giờ: lần đo đầu tiên gồm cả chi phí một lần của lần gọi
    đầu tiên.  Trả về list[float] `repeats` thời gian (giây), theo thứ tự đo.
    Không gọi torch.set_num_threads.  Mỗi lần gọi có giới hạn 10 s.
    """
    ### BEGIN SOLUTION
    dev = lab1_device.open_device(device)
    X, W = dev.randn(rows, d_in), dev.randn(d_in, d_out)
    return [_seconds_of_one(dev, X, W) for _ in range(repeats)]  # the first one pays the one-time cost
    ### END SOLUTION


def time_with_warmup(rows: int, d_in: int, d_out: int, repeats: int = 5, device: dict | None = None) -> list[float]:
    """The right timing of X @ W: one untimed warm-up product, then `repeats` timed ones.

    Through lab1_device.open_device(device) (None: this CPU; a dict: a
    simulated device), make X (rows, d_in) and W (d_in, d_out) with the
    device's randn (before any timing), run ONE untimed warm-up product,
    then time `repeats` products one at a time, device.clock() just before
    and just after each single device.matmul(X, W).  No timed product
    includes the first-call cost.  Never call torch.set_num_threads.
    Time: every call has the lab's 10 s limit.

    Returns:
        list[float], the `repeats` times in seconds, in the order they were taken.

    Tóm tắt (tiếng Việt): cách bấm giờ đúng: qua lab1_device.open_device(device),
    tạo X (rows, d_in) và W (d_in, d_out) bằng randn của thiết bị trước khi
    bấm giờ, chạy MỘT tích khởi động không bấm giờ, rồi bấm giờ riêng từng
    tích trong `repeats` tích bằng device.clock().  Trả về list[float]
    `repeats` thời gian (giây), theo thứ tự đo.  Không gọi
    torch.set_num_threads.  Mỗi lần gọi có giới hạn 10 s.
    """
    ### BEGIN SOLUTION
    dev = lab1_device.open_device(device)
    X, W = dev.randn(rows, d_in), dev.randn(d_in, d_out)
    dev.matmul(X, W)  # warm-up: pays the one-time cost, untimed
    return [_seconds_of_one(dev, X, W) for _ in range(repeats)]
    ### END SOLUTION
