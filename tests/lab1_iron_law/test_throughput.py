"""Measured throughput: structure and trend of real timings (chapter section 5).

The chapter gives no CPU reference numbers, so nothing here compares absolute
rates with the reference.  The tests check what is true on any CPU:

* bookkeeping: FLOPs follow from the shapes, rates from FLOPs and seconds;
* the timing is real: the grader's own clock, around the call, has seen at
  least the time the function claims to have measured;
* the trend: a batch of 1 is dominated by per-call overhead, so its
  utilization is far below that of large batches, which level off.

Timing is noisy on a shared 2-core machine.  Grading workers run torch on one
thread; the `one_thread` fixture does the same in-process.  Checks of the
trend pass if any of three fresh measurements passes.
"""

import math
import time

import pytest
import torch

from autograder.i18n import N_, _
from autograder.messages import sig2
from autograder.testing import assert_close, assert_equal, assert_keys, assert_scalar

pytestmark = pytest.mark.question("throughput")

KEYS = ("batch_sizes", "flops", "seconds", "flop_per_s", "peak_flop_per_s", "utilization")
LISTS = ("flops", "seconds", "flop_per_s", "utilization")
FASTEST_CPU = 1e13  # FLOP/s: no CPU core (or whole small CPU) is anywhere near this fast in float32
SWEEP = dict(batch_sizes=[1, 2, 8, 32, 128, 256, 512], d_in=256, d_out=256, repeats=9)
SWEEP_CASE = N_("batch sizes 1..512, d_in=d_out=256, 9 repeats")


@pytest.fixture
def one_thread():
    """Grading workers run torch on one thread; in-process, ask torch for the same (a no-op when sandboxed)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def retry(check, attempts: int = 3):
    """Run a timing check up to `attempts` times; a real trend shows up in at least one."""
    for i in range(attempts):
        try:
            return check()
        except AssertionError:
            if i == attempts - 1:
                raise


def check_structure(got, batch_sizes, *, case):
    assert_keys(got, KEYS, what=_("measure_matmul_throughput result"), case=case)
    assert_equal(list(got["batch_sizes"]), list(batch_sizes), what="result['batch_sizes']", case=case)
    for key in LISTS:
        assert_equal(len(got[key]), len(batch_sizes), what=_("number of entries in result[{key!r}]").format(key=key),
                     case=case)
    for b, s in zip(batch_sizes, got["seconds"]):
        assert math.isfinite(s) and s > 0, _(
            "result['seconds'] (case: {case}): not a positive time at batch {batch}").format(case=case, batch=b)


def test_bookkeeping_with_a_stated_peak(student, rng, one_thread):
    d_in, d_out = int(rng.integers(16, 200)), int(rng.integers(16, 200))
    batch_sizes = [int(b) for b in rng.permutation([1, 3, 16, 40])]  # any order, kept as given
    peak = 2.5e11
    case = _("4 batch sizes in random order, d_in={d_in}, d_out={d_out}, stated peak 2.5e11").format(
        d_in=d_in, d_out=d_out)
    got = student.measure_matmul_throughput(batch_sizes=batch_sizes, d_in=d_in, d_out=d_out, repeats=3,
                                            peak_flop_per_s=peak)
    check_structure(got, batch_sizes, case=case)
    assert_close(got["flops"], [2 * b * d_in * d_out for b in batch_sizes], what="result['flops']", case=case,
                 rtol=1e-12)
    rate = [f / s for f, s in zip(got["flops"], got["seconds"])]
    assert_close(got["flop_per_s"], rate, what="result['flop_per_s'] (flops / seconds)", case=case, rtol=1e-9)
    assert_scalar(got["peak_flop_per_s"], peak, what=_("result['peak_flop_per_s'] when a peak is given"), case=case,
                  rtol=1e-12)
    assert_close(got["utilization"], [r / peak for r in rate], what=_("result['utilization'] (flop_per_s / peak)"),
                 case=case, rtol=1e-9)


def test_reported_times_are_real(student, one_thread):
    repeats = SWEEP["repeats"]
    got, m = student.measure_matmul_throughput.measured(**SWEEP, peak_flop_per_s=1e11)
    check_structure(got, SWEEP["batch_sizes"], case=_(SWEEP_CASE))
    # at least half of the timed calls took the median or longer, and the grader's clock saw them all
    claimed = sum((repeats // 2) * s for s in got["seconds"])
    assert m.wall_s >= claimed, _(
        "measure_matmul_throughput ({case}): the reported median times add up to more than the "
        "call took on the grader's clock ({ratio}x); time each product with time.perf_counter").format(
        case=_(SWEEP_CASE), ratio=sig2(claimed / m.wall_s))
    for b, f, s in zip(SWEEP["batch_sizes"], got["flops"], got["seconds"]):
        assert f / s < FASTEST_CPU, _(
            "measure_matmul_throughput ({case}): batch {batch} claims over 1e13 FLOP/s, faster than any CPU; "
            "time the product itself instead of computing a time").format(case=_(SWEEP_CASE), batch=b)


def test_utilization_rises_with_batch_then_levels_off(student, one_thread):
    def check():
        got = student.measure_matmul_throughput(**SWEEP, peak_flop_per_s=None)
        check_structure(got, SWEEP["batch_sizes"], case=_(SWEEP_CASE))
        util, sec, rate = got["utilization"], got["seconds"], got["flop_per_s"]
        assert got["peak_flop_per_s"] >= max(rate) * (1 - 1e-9), _(
            "result['peak_flop_per_s'] (case: {case}, measured peak): below the best rate of the sweep; "
            "a measured peak is the best rate the call has seen").format(case=_(SWEEP_CASE))
        for b, u in zip(SWEEP["batch_sizes"], util):
            assert 0 < u <= 1.5, _("result['utilization'] (case: {case}, measured peak): {utilization} at batch "
                                   "{batch}, outside (0, 1.5]").format(case=_(SWEEP_CASE), utilization=sig2(u), batch=b)
        assert sec[-1] > sec[0], _("result['seconds'] (case: {case}): batch 512 is not slower than batch 1").format(
            case=_(SWEEP_CASE))
        big = max(util[4:])  # the best of batches 128, 256, 512
        assert util[0] < 0.5 * big, _(
            "result['utilization'] (case: {case}): batch 1 reaches {ratio}x the best large-batch "
            "utilization; a single row should be far less efficient (per-call overhead)").format(
            case=_(SWEEP_CASE), ratio=sig2(util[0] / big))
        # real matmuls level off: from batch 32 on there is little left to gain.  (Not "flat": on a
        # busy machine large batches lose cache, so only growth is checked.)
        assert big < 3 * util[3], _(
            "result['utilization'] (case: {case}): still {ratio}x higher at large batches than "
            "at batch 32 instead of levelling off; are the times measured?").format(
            case=_(SWEEP_CASE), ratio=sig2(big / util[3]))

    retry(check)


def test_peak_is_the_best_large_matmul_rate(student, one_thread):
    n, repeats = 384, 5

    def grader_peak():  # the same measurement, on the grader's side
        X, W = torch.randn(n, n), torch.randn(n, n)
        X @ W
        best = math.inf
        for _trial in range(repeats):
            t0 = time.perf_counter()
            X @ W
            best = min(best, time.perf_counter() - t0)
        return 2 * n**3 / best

    def check():
        before = grader_peak()
        peak, m = student.measure_peak_flop_per_s.measured(n=n, repeats=repeats)
        after = grader_peak()
        case = _("n={n}, {repeats} repeats").format(n=n, repeats=repeats)
        assert_scalar(peak, peak, what="measure_peak_flop_per_s", case=case)  # a single finite number
        assert 1e8 < peak < FASTEST_CPU, _("measure_peak_flop_per_s (case: {case}): not a plausible CPU rate").format(
            case=case)
        # every timed product took at least the best time, and the grader's clock saw them all
        assert m.wall_s >= repeats * 2 * n**3 / peak, _(
            "measure_peak_flop_per_s (case: {case}): the rate implies the products took longer than the call").format(
            case=case)
        low, high = min(before, after), max(before, after)
        assert 0.6 * low < peak < 1.67 * high, _(
            "measure_peak_flop_per_s (case: {case}): {low_ratio}x to {high_ratio}x the rate the grader "
            "measures for the same matmul; FLOPs of an (n, n) @ (n, n) product are 2 n^3").format(
            case=case, low_ratio=sig2(peak / high), high_ratio=sig2(peak / low))

    retry(check)
