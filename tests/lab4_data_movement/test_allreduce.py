"""Hidden tests, question "ring_allreduce": the sum on every rank, and the bytes moved.

Ground truth is numpy's element-wise sum over ranks and byte counts derived
here; the reference is also checked against torch.distributed (gloo) in the
framework tests.
"""

import numpy as np
import pytest

from autograder import messages as M
from autograder.i18n import N_, _
from autograder.testing import assert_close, assert_equal, assert_keys, assert_scalar

pytestmark = pytest.mark.question("ring_allreduce")

# Integers add exactly; floats may be summed in any order (the ring's differs from numpy's).
TOL = {"int64": dict(rtol=0, atol=0), "float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-5)}
NOT_IDENTICAL = N_("{what}{case}: rank {rank} ends with a different buffer than rank 0 (max abs difference {diff:.3g})")


def make_buffers(rng, N, M_, dtype):
    if np.dtype(dtype).kind == "i":
        return [rng.integers(-1000, 1000, size=M_).astype(dtype) for _rank in range(N)]
    return [rng.standard_normal(M_).astype(dtype) for _rank in range(N)]


def check_sum_on_every_rank(student, rng, N, M_, dtype):
    bufs = make_buffers(rng, N, M_, dtype)
    out = student.ring_allreduce(buffers=bufs)
    case = _("N={N} ranks, M={M} elements, {dtype}").format(N=N, M=M_, dtype=np.dtype(dtype).name)
    assert_keys(out, ("results", "bytes_sent"), what="ring_allreduce", case=case)
    assert_equal(len(out["results"]), N, what=_("number of per-rank results"), case=case)
    stacked = np.stack(bufs) if np.dtype(dtype).kind == "i" else np.stack(bufs).astype(np.float64)
    total = np.sum(stacked, axis=0)  # what every rank must hold: the SUM, not the mean
    tol = TOL[np.dtype(dtype).name]
    for r, res in enumerate(out["results"]):
        assert_equal(str(getattr(res, "dtype", type(res).__name__)), np.dtype(dtype).name,
                     what=_("dtype of rank {r}'s result").format(r=r), case=case)
        assert_close(res, total, what=_("rank {r}'s buffer after AllReduce").format(r=r), case=case, **tol)
        # All-gather copies the finished chunks, so every rank ends bit-identical.
        if not np.array_equal(res, out["results"][0]):
            diff = float(np.max(np.abs(np.asarray(res, dtype=np.float64) - np.asarray(out["results"][0], dtype=np.float64))))
            raise AssertionError(M.say(NOT_IDENTICAL, what="ring_allreduce", case=M.case_suffix(case), rank=r,
                                       diff=diff))
    return out


def test_chunk_bounds(student):
    for M_, N in [(12, 4), (10, 3), (3, 5), (0, 2), (1001, 8), (7, 1)]:
        sizes = [len(c) for c in np.array_split(np.arange(M_), N)]  # first M mod N chunks one longer
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        expected = [(int(a), int(a + s)) for a, s in zip(starts, sizes)]
        got = student.chunk_bounds(M=M_, N=N)
        got = [tuple(int(x) for x in pair) for pair in got] if isinstance(got, (list, tuple)) else got
        assert_equal(got, expected, what="chunk_bounds", case=f"M={M_}, N={N}")


def test_sum_on_every_rank(student, rng):
    for N, M_, dtype in [(2, 8, np.int64), (4, 64, np.int64), (3, 300, np.float64), (8, 800, np.float64)]:
        check_sum_on_every_rank(student, rng, N, M_, dtype)


def test_sum_for_any_buffer_length(student, rng):
    # Lengths the rank count does not divide, shorter than N, a single element, and one rank.
    for N, M_, dtype in [(4, 10, np.int64), (3, 301, np.float64), (5, 3, np.int64), (6, 1, np.float64),
                         (8, 8 * 13 + 5, np.int64), (1, 7, np.float64), (int(rng.integers(2, 9)), int(rng.integers(50, 500)), np.float64)]:
        check_sum_on_every_rank(student, rng, N, M_, dtype)


def test_bytes_sent_per_rank(student, rng):
    # N >= 3: with two ranks the ring and a naive exchange send the same bytes.
    for N, M_, dtype in [(3, 30, np.float32), (4, 64, np.int64), (8, 8 * 25, np.float64)]:
        out = check_sum_on_every_rank(student, rng, N, M_, dtype)
        itemsize = np.dtype(dtype).itemsize
        expected = 2 * (N - 1) / N * M_ * itemsize
        case = _("N={N} ranks, M={M} elements of {itemsize} bytes").format(N=N, M=M_, itemsize=itemsize)
        assert_equal(len(out["bytes_sent"]), N, what=_("number of per-rank byte counts"), case=case)
        for r, b in enumerate(out["bytes_sent"]):
            assert_scalar(b, expected, what=_("bytes sent by rank {r}").format(r=r), case=case, rtol=0)


def test_bytes_sent_counts_real_chunks(student, reference, rng):
    # M not divisible by N: chunks differ by one element, so ranks send slightly different amounts.
    for N, M_, dtype in [(3, 31, np.float32), (5, 3, np.int64), (6, 6 * 11 + 4, np.float64)]:
        bufs = make_buffers(rng, N, M_, dtype)
        out = student.ring_allreduce(buffers=bufs)
        itemsize = np.dtype(dtype).itemsize
        case = _("N={N} ranks, M={M} elements of {itemsize} bytes").format(N=N, M=M_, itemsize=itemsize)
        assert_keys(out, ("results", "bytes_sent"), what="ring_allreduce", case=case)
        sent = out["bytes_sent"]
        assert_equal(len(sent), N, what=_("number of per-rank byte counts"), case=case)
        if not all(float(b) == int(b) for b in sent):
            raise AssertionError(_("bytes sent{case}: not whole numbers of bytes; count the chunks "
                                   "actually sent rather than evaluating the formula").format(case=M.case_suffix(case)))
        # Every step moves each chunk exactly once, whatever the chunk sizes.
        assert_scalar(sum(sent), 2 * (N - 1) * M_ * itemsize, what=_("bytes sent by all ranks together"), case=case,
                      rtol=0)
        for r, (b, e) in enumerate(zip(sent, reference.ring_allreduce(buffers=bufs)["bytes_sent"])):
            assert_scalar(b, e, what=_("bytes sent by rank {r} (chunks split as chunk_bounds says)").format(r=r),
                          case=case, rtol=0)
