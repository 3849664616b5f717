"""Hidden tests, question "tiled_attention": exact online softmax, measured memory.

Ground truth is plain softmax(QKᵀ/√d)·V computed here in float64, never by
the code under test.
"""

import numpy as np
import pytest

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_equal, assert_keys, assert_scalar, grader_check

pytestmark = pytest.mark.question("tiled_attention")

UNMEASURED = N_("{what}: could not be measured on this grading machine; please tell your instructor")
NOT_Q_SHAPE = N_("{what}{case}: its shape is not q's shape")
F64 = dict(rtol=1e-10, atol=1e-10)
F32 = dict(rtol=1e-5, atol=1e-5)
CHECKED_ROWS = 128  # of the memory test's outputs, checked against the definition


# Scores beyond these overflow exp in each dtype (exp(88.8) > float32 max, exp(709.8) > float64 max);
# below minus these, exp underflows to exactly 0 (under half the smallest subnormal).
OVERFLOW = {"float32": 88.8, "float64": 709.8}
UNDERFLOW = {"float32": 104.0, "float64": 745.2}
# What each kind of large scores says about a case (the case names the rows, never their values).
LARGE_CASES = {
    "positive": N_("{case}, scores large enough that exp overflows without subtracting the max"),
    "negative": N_("{case}, rows whose scores are all negative, too negative for exp of a score to be nonzero"),
    "rising": N_("{case}, later key blocks with scores far above the first block's (the running max must grow)"),
    "falling": N_("{case}, a first key block with scores far above the later blocks' (the running max must keep "
                  "the largest score seen so far)"),
}


def qkv(rng, shape, dtype=np.float64, scale=1.0):
    return tuple((scale * rng.standard_normal(shape)).astype(dtype) for _tensor in range(3))


def large_qkv(rng, shape, dtype, offsets="positive", block_size=None):
    """Inputs whose scores lie far outside exp's range, yet are exactly representable.

    d = 16, so 1/√d = 1/4 is exact; q and k hold multiples of 1/8 except a first column where q
    has a large integer per row and k a large constant, which adds a large offset to the scores of
    a row (offsets differ between rows); the other columns add at most (d − 1)/4 either way. Every
    score is exact in either dtype, so any stable implementation meets the usual tolerance.

    ``offsets``:
      * "positive": every score of a row shifted up by the offset. Softmax ignores it; exp of an
        unshifted score gives inf, then NaN.
      * "negative": shifted down, so every score of every row is below −UNDERFLOW. A running max
        started at 0 instead of −∞ makes exp(s − 0) exactly 0 for the whole row: 0/0.
      * "rising": keys from ``block_size`` on get the offset, the first key block none, so every
        later block's scores exceed the first block's by more than OVERFLOW. Shifting every block
        by the first block's max (never raising it) overflows.
      * "falling": the other way round: only the first key block gets the offset, so its scores
        exceed every later block's by more than OVERFLOW. A max that is the current block's own
        (m_new = s.max(...), not np.maximum(m, s.max(...))) falls at the second block, and the
        rescaling exp(m_old − m_new) overflows to inf (then inf/inf = NaN). A running max never
        falls: the later blocks' exp(s − m) are (almost) 0, below 1e-300 of the first block's.
    """
    *lead, S, d = shape
    grader_check(d == 16 and offsets in LARGE_CASES, "grader bug: large scores need d=16 and a known offset")
    name = np.dtype(dtype).name
    low, high, big_k = {"float32": (14, 20, 32.0), "float64": (32, 48, 100.0)}[name]
    q, k = (rng.integers(-8, 9, size=shape) / 8.0 for _tensor in range(2))
    sign = -1 if offsets == "negative" else 1
    q[..., 0] = sign * rng.integers(low, high, size=(*lead, S), endpoint=True)
    k[..., 0] = big_k
    if offsets in ("rising", "falling"):
        grader_check(block_size is not None and block_size < S,
                     "grader bug: rising or falling scores need a second key block")
        if offsets == "rising":
            k[..., :block_size, 0] = 0.0
        else:
            k[..., block_size:, 0] = 0.0
    v = rng.standard_normal(shape)
    smallest, rest = low * big_k / 4, (d - 1) / 4  # the smallest offset; the most the other columns add
    # a case that does not show what it is built for is the grader's failure, never the student's 0
    grader_check(smallest - rest > OVERFLOW[name], "grader bug: a large score does not overflow unshifted")
    grader_check(smallest - rest > UNDERFLOW[name], "grader bug: a negative score does not underflow")
    grader_check(smallest - 2 * rest > OVERFLOW[name],  # rising / falling: one block's minus another's overflow
                 "grader bug: one block's scores minus another's do not overflow")
    return q.astype(dtype), k.astype(dtype), v.astype(dtype)


def check_tiled(plain_attention, student, rng, shape, *, causal, block_size, dtype=np.float64, scale=1.0, large=None):
    """``large``: None for ordinary scores, else the kind of large scores (see large_qkv)."""
    q, k, v = (large_qkv(rng, shape, dtype, large, block_size) if large else qkv(rng, shape, dtype, scale))
    got = student.tiled_attention(q=q, k=k, v=v, causal=causal, block_size=block_size)
    case = _("shape {shape}, causal={causal}, block_size={block_size}, {dtype}").format(
        shape=shape, causal=causal, block_size=block_size, dtype=np.dtype(dtype).name)
    if large:
        case = _(LARGE_CASES[large]).format(case=case)
    assert_equal(str(getattr(got, "dtype", type(got).__name__)), np.dtype(dtype).name,
                 what=_("dtype of tiled_attention's output (it must be q's dtype)"), case=case)
    assert_close(got, plain_attention(q, k, v, causal), what=_("tiled_attention output"), case=case,
                 **(F64 if dtype == np.float64 else F32))


def test_attention_score_bytes(student, rng):
    # Chapter: a 128×128 FP32 tile is 64 KiB (65,536 bytes), against 64 MiB for a full 4096² score matrix.
    got = student.attention_score_bytes(S=4096, block_size=128, bytes_per_element=4)
    with M.fixed_case():  # issue 27: the same on every submission, so no direction
        assert_keys(got, ("full_bytes", "tile_bytes"), what="attention_score_bytes", case=_("S=4096, block 128, FP32"))
        assert_scalar(got["full_bytes"], 64 * 2**20, what="full_bytes", case="S=4096, FP32", rtol=0)
        assert_scalar(got["tile_bytes"], 64 * 2**10, what="tile_bytes", case=_("block 128, FP32"), rtol=0)
    S, b, e = int(rng.integers(100, 9000)), int(rng.choice([32, 64, 256])), int(rng.choice([2, 8]))
    got = student.attention_score_bytes(S=S, block_size=b, bytes_per_element=e)
    case = _("a random S, block size and number of bytes per element")  # never the drawn values
    assert_scalar(got["full_bytes"], S * S * e, what="full_bytes", case=case, rtol=0)
    assert_scalar(got["tile_bytes"], b * b * e, what="tile_bytes", case=case, rtol=0)


def test_standard_attention_matches_softmax(plain_attention, student, rng):
    for shape, causal in [((48, 16), False), ((48, 16), True), ((3, 40, 8), True)]:
        q, k, v = qkv(rng, shape)
        got = student.standard_attention(q=q, k=k, v=v, causal=causal)
        assert_close(got, plain_attention(q, k, v, causal), what=_("standard_attention output"),
                     case=_("shape {shape}, causal={causal}, float64").format(shape=shape, causal=causal), **F64)
    # Large scores: the stable softmax subtracts each row's max; exp of the raw scores overflows.
    for shape, causal, dtype in [((40, 16), False, np.float64), ((2, 30, 16), True, np.float64),
                                 ((40, 16), True, np.float32)]:
        q, k, v = large_qkv(rng, shape, dtype)
        got = student.standard_attention(q=q, k=k, v=v, causal=causal)
        assert_close(got, plain_attention(q, k, v, causal), what=_("standard_attention output"),
                     case=_("shape {shape}, causal={causal}, {dtype}, scores large enough that exp overflows "
                            "without subtracting the max").format(shape=shape, causal=causal,
                                                                 dtype=np.dtype(dtype).name),
                     **(F64 if dtype == np.float64 else F32))


def test_tiled_matches_softmax_float64(plain_attention, student, rng):
    # Block sizes that divide S, that do not, one row per block, and one block for everything.
    for S, d, B in [(128, 32, 32), (96, 16, 40), (64, 8, 1), (50, 8, 64)]:
        check_tiled(plain_attention, student, rng, (S, d), causal=False, block_size=B)
    # Large scores: without the running max, exp would overflow.
    check_tiled(plain_attention, student, rng, (80, 16), causal=False, block_size=16, scale=8.0)
    check_tiled(plain_attention, student, rng, (70, 16), causal=False, block_size=16, large="positive")
    check_tiled(plain_attention, student, rng, (2, 45, 16), causal=True, block_size=16, large="positive")
    # All-negative rows (a running max that starts at 0, not −∞, gives 0/0), a later key block far
    # above the first (a max taken from the first block only, never raised, overflows) and the first
    # far above the later ones (a max taken from the current block only, which falls, overflows).
    for large in ("negative", "rising", "falling"):
        check_tiled(plain_attention, student, rng, (70, 16), causal=False, block_size=16, large=large)
        check_tiled(plain_attention, student, rng, (2, 45, 16), causal=True, block_size=16, large=large)


def test_tiled_causal(plain_attention, student, rng):
    for S, d, B in [(128, 16, 32), (90, 8, 16), (33, 8, 64), (20, 4, 1)]:
        check_tiled(plain_attention, student, rng, (S, d), causal=True, block_size=B)


def test_tiled_multiple_heads(plain_attention, student, reference, rng):
    for shape, causal, B in [((4, 64, 16), False, 16), ((3, 70, 8), True, 32), ((2, 3, 40, 8), True, 16)]:
        check_tiled(plain_attention, student, rng, shape, causal=causal, block_size=B)
    # and against the reference on a random head count and length, never named in the feedback
    H, S = int(rng.integers(2, 6)), int(rng.integers(20, 120))
    q, k, v = qkv(rng, (H, S, 16))
    case = _("a random number of heads and length, d=16, causal=True, block_size=24, float64")
    got = student.tiled_attention(q=q, k=k, v=v, causal=True, block_size=24)
    try:
        shape = tuple(np.shape(got))
    except Exception:  # not array-like: assert_close says what it is
        shape = q.shape
    if shape != q.shape:  # assert_close would print the drawn shape
        raise AssertionError(M.say(NOT_Q_SHAPE, what=_("tiled_attention output"), case=M.case_suffix(case)))
    assert_close(got, reference.tiled_attention(q=q, k=k, v=v, causal=True, block_size=24),
                 what=_("tiled_attention output"), case=case, **F64)


def test_tiled_lengths_not_divisible_by_block(plain_attention, student, rng):
    # The last block is shorter: 100 = 3×32 + 4, 130 = 2×64 + 2, 129 = 4×32 + 1.
    for S, B in [(100, 32), (130, 64), (129, 32)]:
        for causal in (False, True):
            check_tiled(plain_attention, student, rng, (S, 16), causal=causal, block_size=B)


def test_tiled_float32(plain_attention, student, rng):
    for shape, causal, B in [((200, 32), False, 64), ((2, 150, 16), True, 32)]:
        check_tiled(plain_attention, student, rng, shape, causal=causal, block_size=B, dtype=np.float32)
    for large in LARGE_CASES:
        for causal in (False, True):
            check_tiled(plain_attention, student, rng, (90, 16), causal=causal, block_size=32, dtype=np.float32, large=large)


def attention_rows(q, k, v, rows, causal):
    """Rows ``rows`` of the definition, in float64, from a (len(rows), S) block of scores: never S×S.
    With causal=True, row i sees keys j ≤ i of the whole sequence (not of the sampled rows)."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    S, d = q.shape[-2:]
    scores = q[rows] @ k.T / np.sqrt(d)
    if causal:
        scores = np.where(np.arange(S)[None, :] <= np.asarray(rows)[:, None], scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v


# The memory test's lengths: each is measured, with and without a mask, and judged on the growth
# from each length to the next. 256 is a small baseline (its own S×S float32 matrix is 256 KiB), so
# a code path that builds an S×S array at 1024 (a "fast path" for short sequences) shows as well as
# one that does so at 2048.
MEMORY_SIZES = (256, 1024, 2048)
MEMORY_BUDGET = 2 * 2**20  # bytes a step may add, beyond q, k, v and the output (the docstring's 2 MiB)


@pytest.mark.question("tiled_attention", points=2)
def test_tiled_peak_memory_below_score_matrix(student, rng):
    # Judged on growth: the peak at each length minus the peak at the one before. Whatever a
    # measurement counts besides the algorithm (the worker's imports, allocator arenas, the
    # transport of small arguments) is the same in every call and cancels, so the verdict does not
    # depend on where the engine starts counting. d=16 and float32 keep q, k, v and the output
    # small next to the budget of 2 MiB a step (half a byte per score at S=2048), which S×S
    # matrices overrun: from 1024 to 2048 one float32 matrix grows by 12 MiB and even a boolean
    # mask by 3 MiB; from 256 to 1024 a float32 matrix grows by 3.75 MiB. causal=True is measured
    # too: a mask is no reason for an S×S array (a full (S, S) mask sliced per tile, or standard
    # attention whenever causal=True).
    d, B = 16, 128
    for causal in (False, True):
        peaks, methods = {}, {}
        for S in MEMORY_SIZES:
            q, k, v = qkv(rng, (S, d), np.float32)
            out, meas = student.tiled_attention.measured(q=q, k=k, v=v, causal=causal, block_size=B)
            if meas.peak_bytes < 0:  # the grader could not read the worker's memory: say so, never pass silently
                raise AssertionError(M.say(UNMEASURED, what=_("peak memory of tiled_attention")))
            case = _("S={S}, d={d}, block_size={B}, causal={causal}, float32, measured with {method}").format(
                S=S, d=d, B=B, causal=causal, method=meas.method)
            # The measured call must have computed attention, not just stayed small. A random sample
            # of rows is checked against the definition (the S×S ground truth would cost more than
            # the call); the other tests check every row.
            out = np.asarray(out)  # an array or a tensor, as the other tests accept
            assert_equal(out.shape, q.shape, what=_("shape of tiled_attention's output"), case=case)
            rows = np.sort(rng.choice(S, size=CHECKED_ROWS, replace=False))
            assert_close(out[rows], attention_rows(q, k, v, rows, causal), what=_("tiled_attention output"),
                         case=case, **F32)
            peaks[S], methods[S] = meas.peak_bytes, meas.method
        for small, large in zip(MEMORY_SIZES, MEMORY_SIZES[1:]):
            method = methods[large]
            # Sandboxed, the worker's resident memory also holds q, k, v as they arrive and the
            # output as it leaves; allow twice the growth of their size for that, on top of the budget.
            io_growth = 4 * (large - small) * d * 4  # q, k, v and the output, float32
            transport = 2 * io_growth if method == "rss" else 0
            budget = MEMORY_BUDGET
            growth = peaks[large] - peaks[small]
            if growth >= budget + transport:
                case = _("S={small} to S={large}, d={d}, block_size={B}, causal={causal}, float32, measured with "
                         "{method}").format(small=small, large=large, d=d, B=B, causal=causal, method=method)
                # resident memory moves by a few percent from run to run: the power of two, so the
                # same code is told the same (tracemalloc's count, in-process, is exact)
                ratio = growth / (budget + transport)
                raise AssertionError(M.say(M.RATIO_AT_LEAST if method == "rss" else M.RATIO_SYMPTOM,
                    what=_("growth of tiled_attention's peak memory"), case=M.case_suffix(case),
                    ratio=M.at_least(ratio) if method == "rss" else ratio,
                    reference_name=_("the budget (2 MiB from one length to the next); keep scores in "
                                     "block_size × block_size tiles and never build an S×S array, with or "
                                     "without causal")))
