"""Arithmetic intensity and the roofline (§3.4 Arithmetic intensity, §3.1.4 Activation functions).

Independent ground truth, never the reference alone:

* FLOPs: torch's ``FlopCounterMode`` on meta tensors (shapes, no values: it
  costs nothing), for every matmul and for the Q K^T product of the scores.
* Bytes: the tensors' own ``element_size()`` and ``numel()``: what a product
  reads (its two operands) and writes (its result), once each; for the
  materialised scores, the S x S matrix written once and read back once, as
  the chapter counts it.  Element-wise operations have no matmul for the
  counter: their FLOPs are the docstring's per-element count.
* Ridge points and regimes: the chapter's hardware and numbers (an A100 at
  312 TFLOP/s over 2,039 GB/s, about 153 FLOP/byte; the footnote's 156 and 78
  at 2 TB/s; d_head/2 = 32 for GPT-2 small; batch 1 memory-bound, the running
  example's matmuls compute-bound) and the roofline's closed form.

Fixed cases (the chapter's) say no direction in their messages; drawn cases
are named by their number and dtype, never by their drawn sizes.
"""

import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_equal, assert_keys, assert_scalar, grader_check
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("roofline")

KEYS = ("flops", "bytes", "intensity")
ROOF_KEYS = ("ridge", "attainable_flop_per_s", "regime")
# a drawn case's dtype follows its number, so that its label names it without naming anything drawn
DTYPES = (torch.float16, torch.float16, torch.bfloat16, torch.bfloat16, torch.float32, torch.float32)
DTYPE_NAMES = {torch.float16: "FP16", torch.bfloat16: "BF16", torch.float32: "FP32"}
A100 = dict(peak_tflop_per_s=312.0, bandwidth_gb_per_s=2039.0)  # the chapter's A100 (FP16/BF16 Tensor Cores)
A100_CASE = N_("an A100, 312 TFLOP/s and 2,039 GB/s")
# its FP32 CUDA cores (§6.3.3 Mixed-precision hardware support)
A100_FP32 = dict(peak_tflop_per_s=19.5, bandwidth_gb_per_s=2039.0)


def size_of(dtype) -> int:
    return torch.empty(0, dtype=dtype).element_size()


def counted_matmul(m: int, k: int, n: int, dtype) -> tuple[int, int]:
    """(FLOPs as torch counts them, bytes of A and B read and C written) of (m, k) @ (k, n)."""
    a = torch.empty(m, k, dtype=dtype, device="meta")
    b = torch.empty(k, n, dtype=dtype, device="meta")
    with FlopCounterMode(display=False) as counter:
        c = a @ b
    return counter.get_total_flops(), sum(t.numel() * t.element_size() for t in (a, b, c))


def counted_scores(S: int, d_head: int, dtype) -> tuple[int, int]:
    """(FLOPs of Q K^T as torch counts them, bytes of the S x S scores written once and read back once)."""
    q = torch.empty(S, d_head, dtype=dtype, device="meta")
    k = torch.empty(S, d_head, dtype=dtype, device="meta")
    with FlopCounterMode(display=False) as counter:
        scores = q @ k.transpose(0, 1)
    return counter.get_total_flops(), 2 * scores.numel() * scores.element_size()


def check_counts(got, flops: int, moved: int, *, what: str, case: str, exact_ints):
    assert_keys(got, KEYS, what=what, case=case)
    exact_ints({key: got[key] for key in ("flops", "bytes")}, what=what, case=case)
    assert_scalar(got["flops"], flops, what=f"{what}['flops']", case=case, rtol=1e-12)
    assert_scalar(got["bytes"], moved, what=f"{what}['bytes']", case=case, rtol=1e-12)
    assert_scalar(got["intensity"], flops / moved, what=f"{what}['intensity']", case=case, rtol=1e-12)


def test_matmul_intensity_against_flop_counter(student, rng, exact_ints):
    # the chapter's batch 1 (§3.4 Arithmetic intensity): one row through GPT-2 small's MLP up-projection, a
    # matrix-vector product
    flops, moved = counted_matmul(1, 768, 3072, torch.float16)
    with fixed_case():
        check_counts(student.matmul_intensity(m=1, k=768, n=3072, bytes_per_element=2), flops, moved,
                     what="matmul_intensity", case=_("one row through GPT-2 small's MLP, FP16"), exact_ints=exact_ints)
    for i, dtype in enumerate(DTYPES, start=1):
        m, k, n = (int(v) for v in rng.integers(1, 3000, size=3))
        flops, moved = counted_matmul(m, k, n, dtype)
        case = _("random product {i} of {n}, {dtype}").format(i=i, n=len(DTYPES), dtype=DTYPE_NAMES[dtype])
        check_counts(student.matmul_intensity(m=m, k=k, n=n, bytes_per_element=size_of(dtype)), flops, moved,
                     what="matmul_intensity", case=case, exact_ints=exact_ints)


def test_attention_and_elementwise_intensity(student, rng, exact_ints):
    # §3.4 Arithmetic intensity: materialised scores in GPT-2 small (d_head = 64), FP16: d_head / 2 = 32 FLOP/byte,
    # whatever S is
    flops, moved = counted_scores(1024, 64, torch.float16)
    got = student.attention_scores_intensity(S=1024, d_head=64, bytes_per_element=2)
    case = _("GPT-2 small's materialised scores, S = 1024, FP16")
    with fixed_case():
        check_counts(got, flops, moved, what="attention_scores_intensity", case=case, exact_ints=exact_ints)
        assert_scalar(got["intensity"], 32.0, what="attention_scores_intensity['intensity']", case=case, rtol=1e-12)
        # an odd head width in FP32: an intensity that is not a whole number (7 / 4)
        flops, moved = counted_scores(5, 7, torch.float32)
        check_counts(student.attention_scores_intensity(S=5, d_head=7, bytes_per_element=4), flops, moved,
                     what="attention_scores_intensity", case=_("a head of odd width, FP32"), exact_ints=exact_ints)
    for i, dtype in enumerate(DTYPES, start=1):
        S, d_head = int(rng.integers(1, 2049)), int(rng.integers(8, 129))
        flops, moved = counted_scores(S, d_head, dtype)
        case = _("random head {i} of {n}, {dtype}").format(i=i, n=len(DTYPES), dtype=DTYPE_NAMES[dtype])
        got = student.attention_scores_intensity(S=S, d_head=d_head, bytes_per_element=size_of(dtype))
        check_counts(got, flops, moved, what="attention_scores_intensity", case=case, exact_ints=exact_ints)
    # element-wise: the lab's per-element counts (flops.py) on GPT-2 XL's activations at B = 32, S = 1024, FP16
    xl = 32 * 1024 * 1600
    for n_elements, per_element, n_inputs, label in (
            (4 * xl, 9, 1, N_("the tanh GELU on GPT-2 XL's MLP activations, FP16")),
            (xl, 7, 1, N_("a LayerNorm on GPT-2 XL's activations, FP16")),
            (xl, 1, 2, N_("a residual add on GPT-2 XL's activations, FP16"))):
        with fixed_case():
            check_counts(student.elementwise_intensity(n_elements=n_elements, flops_per_element=per_element,
                                                       n_inputs=n_inputs, bytes_per_element=2),
                         per_element * n_elements, 2 * n_elements * (n_inputs + 1),
                         what="elementwise_intensity", case=_(label), exact_ints=exact_ints)
    for i, dtype in enumerate(DTYPES, start=1):
        n_elements, per_element, n_inputs = (int(rng.integers(1, 10**7)), int(rng.integers(1, 25)),
                                             int(rng.integers(1, 4)))
        tensor = torch.empty(n_elements, dtype=dtype, device="meta")  # bytes of one operand, from torch
        case = _("random element-wise operation {i} of {n}, {dtype}").format(i=i, n=len(DTYPES),
                                                                            dtype=DTYPE_NAMES[dtype])
        check_counts(student.elementwise_intensity(n_elements=n_elements, flops_per_element=per_element,
                                                   n_inputs=n_inputs, bytes_per_element=size_of(dtype)),
                     per_element * n_elements, (n_inputs + 1) * tensor.numel() * tensor.element_size(),
                     what="elementwise_intensity", case=case, exact_ints=exact_ints)


# (hardware, chapter's ridge in FLOP/byte, rtol, label): the prose, figure and footnote of §3.4 Arithmetic intensity
CHAPTER_RIDGES = (
    (A100, 153.0, 1e-3, A100_CASE),
    (dict(peak_tflop_per_s=312.0, bandwidth_gb_per_s=2040.0), 153.0, 2e-3,
     N_("the roofline figure's A100, 312 TFLOP/s and 2.04 TB/s")),
    (dict(peak_tflop_per_s=312.0, bandwidth_gb_per_s=2000.0), 156.0, 1e-12,
     N_("the footnote's A100 in FP16/BF16, 312 TFLOP/s and 2 TB/s")),
    (dict(peak_tflop_per_s=156.0, bandwidth_gb_per_s=2000.0), 78.0, 1e-12,
     N_("the footnote's A100 in TF32, 156 TFLOP/s and 2 TB/s")),
    (dict(peak_tflop_per_s=989.0, bandwidth_gb_per_s=3350.0), 295.2, 1e-3,
     N_("an H100 SXM, 989 TFLOP/s and 3.35 TB/s")),
)


def test_ridge_points_reproduce_the_chapter(student, reference, rng):
    for hw, ridge, rtol, label in CHAPTER_RIDGES:
        with fixed_case():
            got = student.ridge_point(**hw)
            assert_scalar(got, ridge, what="ridge_point", case=_(label), rtol=rtol)
            assert_scalar(got, hw["peak_tflop_per_s"] * 1e12 / (hw["bandwidth_gb_per_s"] * 1e9), what="ridge_point",
                          case=_(label), rtol=1e-12)
    for i in range(1, 5):
        hw = dict(peak_tflop_per_s=float(10 ** rng.uniform(1, 3.5)), bandwidth_gb_per_s=float(10 ** rng.uniform(2, 4)))
        assert_scalar(student.ridge_point(**hw), reference.ridge_point(**hw), what="ridge_point",
                      case=_("random accelerator {i} of 4").format(i=i), rtol=1e-12)


def matmul_ai(m: int, k: int, n: int, size: int) -> float:
    """A product's intensity by hand: 2mkn FLOPs over its operands and result, each moved once."""
    return 2 * m * k * n / (size * (m * k + k * n + m * n))


def check_roofline(got, intensity: float, hw: dict, regime: str | None, *, case: str):
    assert_keys(got, ROOF_KEYS, what="roofline", case=case)
    peak, bandwidth = hw["peak_tflop_per_s"] * 1e12, hw["bandwidth_gb_per_s"] * 1e9
    assert_scalar(got["ridge"], peak / bandwidth, what="roofline['ridge']", case=case, rtol=1e-12)
    assert_scalar(got["attainable_flop_per_s"], min(peak, intensity * bandwidth),
                  what="roofline['attainable_flop_per_s']", case=case, rtol=1e-12)
    if regime is not None:
        assert_equal(got["regime"], regime, what="roofline['regime']", case=case)


# the chapter's classifications (§3.4 Arithmetic intensity, §3.1.4 Activation functions): (intensity, hardware, regime,
# label).  "Batch 1 memory-bound,
# batch 32 or more compute-bound" holds as written for rows of one token in FP32 on the A100's CUDA cores; in
# FP16 on its Tensor Cores 32 rows are not enough, and the running example's B = 32 sequences of 1024 tokens are
CHAPTER_REGIMES = (
    (32.0, A100, "memory-bound", N_("GPT-2 small's materialised attention scores, FP16, on an A100")),
    (0.5, A100, "memory-bound", N_("the chapter's activation functions (0.5 FLOP/byte) on an A100")),
    (10.0, A100, "memory-bound", N_("the chapter's LayerNorm (about 10 FLOP/byte) on an A100")),
    (5.0, A100, "memory-bound", N_("the chapter's attention softmax (about 5 FLOP/byte) on an A100")),
    (matmul_ai(1, 768, 3072, 2), A100, "memory-bound",
     N_("batch 1: one row through GPT-2 small's MLP, FP16, on an A100")),
    (matmul_ai(1, 768, 3072, 4), A100_FP32, "memory-bound",
     N_("batch 1: one row through GPT-2 small's MLP, FP32, on an A100's FP32 cores")),
    (matmul_ai(32, 768, 3072, 4), A100_FP32, "compute-bound",
     N_("batch 32: 32 rows through GPT-2 small's MLP, FP32, on an A100's FP32 cores")),
    (matmul_ai(32 * 1024, 1600, 3 * 1600, 2), A100, "compute-bound",
     N_("GPT-2 XL's QKV projection at B = 32, S = 1024, FP16, on an A100")),
    (matmul_ai(32 * 1024, 1600, 1600, 2), A100, "compute-bound",
     N_("GPT-2 XL's output projection at B = 32, S = 1024, FP16, on an A100")),
    (matmul_ai(32 * 1024, 4 * 1600, 1600, 2), A100, "compute-bound",
     N_("GPT-2 XL's MLP down-projection at B = 32, S = 1024, FP16, on an A100")),
)


# exactly on the ridge the docstring says compute-bound; 1 TFLOP/s over 1,000 GB/s is a ridge of exactly 1 in any
# order of the operations
RIDGE_OF_ONE = dict(peak_tflop_per_s=1.0, bandwidth_gb_per_s=1000.0)


def test_regimes_on_the_roofline(student, reference, rng):
    for intensity, hw, regime, label in CHAPTER_REGIMES:
        with fixed_case():
            check_roofline(student.roofline(intensity=intensity, **hw), intensity, hw, regime, case=_(label))
    with fixed_case():
        check_roofline(student.roofline(intensity=1.0, **RIDGE_OF_ONE), 1.0, RIDGE_OF_ONE, "compute-bound",
                       case=_("an operation exactly at the ridge point"))
    for i in range(1, 9):
        hw = dict(peak_tflop_per_s=float(10 ** rng.uniform(1, 3.5)), bandwidth_gb_per_s=float(10 ** rng.uniform(2, 4)))
        ridge = hw["peak_tflop_per_s"] * 1e3 / hw["bandwidth_gb_per_s"]
        # a factor of 1.05 to 30 either side of the ridge: never on it, where rounding could pick either side
        side = 1 if i % 2 else -1
        intensity = float(ridge * math.exp(side * rng.uniform(math.log(1.05), math.log(30.0))))
        case = _("random operation {i} of 8 on a random accelerator").format(i=i)
        regime = "compute-bound" if side > 0 else "memory-bound"
        grader_check(reference.roofline(intensity=intensity, **hw)["regime"] == regime,
                     _("grader bug: the reference's regime"))
        check_roofline(student.roofline(intensity=intensity, **hw), intensity, hw, regime, case=case)
