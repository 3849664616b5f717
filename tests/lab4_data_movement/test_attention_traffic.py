"""Hidden tests, question "attention_traffic": the bytes standard and tiled attention hold and move.

Ground truth: the chapter's numbers (§6.4.1 The standard attention memory bottleneck: a 4096² FP32 score
matrix is 67.1 MB per head, 1.1 GB for 16 heads; §6.4.3 Memory and IO complexity analysis: Q, K, V take
3.1 MB per head, 21.3× less), and traffic counted here tensor by tensor and tile by tile, walking the
kernels and the loops the docstring describes (never a formula taken from the code under test).

The count is of the documented algorithm, not of the bytes the submission's own tiled_attention touches:
numpy has no HBM and no SRAM to tell apart, and what an instrumented array would see depends on the idiom
(a block sliced once or twice, a view or a copy), which the docstrings leave free (docs/lab4.md).
"""

import math

import pytest

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_fields, grader_check

pytestmark = pytest.mark.question("attention_traffic")


def standard_kernels(S, d):
    """Elements each kernel of standard attention reads and writes in HBM, one head: (reads, writes)."""
    return [(S * d + S * d, S * S),  # Z = QKᵀ/√d: reads Q and K, writes Z
            (S * S, S * S),  # P = softmax(Z): reads Z, writes P
            (S * S + S * d, S * d)]  # O = P·V: reads P and V, writes O


def tiled_loop(S, d, B):
    """Elements the tiled loop reads and writes in HBM, one head, walking its blocks: (reads, writes)."""
    reads = writes = 0
    for i0 in range(0, S, B):
        rows = min(i0 + B, S) - i0
        reads += rows * d  # the query block, loaded once, kept on chip
        for j0 in range(0, S, B):
            reads += 2 * (min(j0 + B, S) - j0) * d  # K and V blocks stream past it
        writes += rows * d  # the finished output rows
    return reads, writes


def expected(*, S, d, block_size, n_heads=1, bytes_per_element=4):
    scale = n_heads * bytes_per_element
    standard = sum(r + w for r, w in standard_kernels(S, d)) * scale
    tiled = sum(tiled_loop(S, d, block_size)) * scale
    scores, qkv = S * S * scale, 3 * S * d * scale
    return {"score_bytes": scores, "qkv_bytes": qkv, "footprint_ratio": scores / qkv,
            "standard_traffic_bytes": standard, "tiled_traffic_bytes": tiled, "traffic_ratio": standard / tiled}


def test_attention_bytes_chapter_numbers(student):
    # 4096² × 4 B = 67,108,864 B (67.1 MB) per head, 1,073,741,824 B (1.1 GB) for 16 heads; Q, K, V:
    # 3 × 4096 × 64 × 4 B = 3,145,728 B (3.1 MB) per head; 21.3× less.
    for heads in (1, 16):
        got = student.attention_hbm_bytes(S=4096, d=64, block_size=128, n_heads=heads, bytes_per_element=4)
        want = expected(S=4096, d=64, block_size=128, n_heads=heads)
        grader_check(want["score_bytes"] == 67_108_864 * heads and want["qkv_bytes"] == 3_145_728 * heads
                     and math.isclose(want["footprint_ratio"], 64 / 3),
                     "grader bug: the test's own bytes disagree with the chapter's numbers")
        assert_fields(got, want, what="attention_hbm_bytes",
                      case=_("S=4096, d=64, block 128, {heads} head(s), FP32").format(heads=heads), rtol=1e-12)
    # The signature's defaults: one head, FP32 (4 bytes per element).
    assert_fields(student.attention_hbm_bytes(S=4096, d=64, block_size=128),
                  expected(S=4096, d=64, block_size=128), what="attention_hbm_bytes",
                  case=_("S=4096, d=64, block 128, the default heads and element size"), rtol=1e-12)


def test_attention_traffic_counted_kernel_by_kernel_and_tile_by_tile(student):
    # A block that divides S and one that does not (a shorter last block), FP16, several heads, one block for all.
    for S, d, B, heads, nbytes in ((1024, 64, 128, 12, 2), (1000, 64, 96, 1, 4), (2048, 128, 64, 4, 2),
                                   (300, 16, 512, 2, 4)):
        got = student.attention_hbm_bytes(S=S, d=d, block_size=B, n_heads=heads, bytes_per_element=nbytes)
        assert_fields(got, expected(S=S, d=d, block_size=B, n_heads=heads, bytes_per_element=nbytes),
                      what="attention_hbm_bytes",
                      case=_("S={S}, d={d}, block {B}, {heads} head(s), {nbytes} bytes per element").format(
                          S=S, d=d, B=B, heads=heads, nbytes=nbytes), rtol=1e-12)


def test_attention_bytes_matches_reference(student, reference, rng):
    for _trial in range(3):
        kw = {"S": int(rng.integers(64, 8193)), "d": int(rng.choice([32, 64, 80, 128])),
              "block_size": int(rng.choice([32, 64, 100, 128, 256])), "n_heads": int(rng.integers(1, 33)),
              "bytes_per_element": int(rng.choice([2, 4]))}
        case = _("a random length, head dimension, block size, number of heads and element size")
        got = student.attention_hbm_bytes(**kw)
        assert_fields(got, expected(**kw), what="attention_hbm_bytes", case=case, rtol=1e-12)
        assert_fields(got, reference.attention_hbm_bytes(**kw), what="attention_hbm_bytes", case=case, rtol=1e-12)
