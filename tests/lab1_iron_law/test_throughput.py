"""Measured throughput (chapter section 5), graded deterministically.

A grade must be a function of the submission alone, so no test here judges
this machine's timings.  Two kinds of check (docs/lab1.md):

* **This CPU, structure only**: keys, lengths, batch sizes as given, exact
  int FLOPs, positive finite times, rates = FLOPs / seconds, utilization =
  rate / peak, a measured peak at least every rate of the sweep.  No timing
  is compared with anything.
* **Simulated devices** (``lab1_device.py``, the grader's copy): the same
  calls always give the same times, so the student's results and the
  reference's, on the same device spec, must agree to rtol 1e-9.  Each case
  is drawn (from the per-submission seed) so that every mistake below gives
  a different answer from the right one; when a result is wrong, the test
  replays those mistakes on the device model and names the one it equals:
  no warm-up, mean or best instead of median, mean or median instead of
  best, a middle time instead of the median of an even number of repeats,
  one repeat too many or too few, a changed torch thread setting, the real
  clock instead of the device's, computed instead of timed, a measured peak
  not maxed with the sweep's rates, or the sweep's rates without the
  measured peak.

Reference calls get the grader's current thread count as ``spec["threads"]``,
so they measure at the expected rate whatever a submission did to torch
in-process (the conftest puts torch's setting back after every test).
"""

import math
import statistics

import pytest
import torch

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_equal, assert_keys, assert_scalar

pytestmark = pytest.mark.question("throughput")

KEYS = ("batch_sizes", "flops", "seconds", "flop_per_s", "peak_flop_per_s", "utilization")
LISTS = ("flops", "seconds", "flop_per_s", "utilization")
RTOL = 1e-9  # same model, same calls: only the order of float additions can differ
DISTINCT = 1e-6  # every mistake must miss the right answer by more than this (relative) in a drawn case
SEED_TRIES = 5000  # the peak needs its last timed call fastest and one more faster still: about 1 in r(r+1) seeds
PEAK_N, PEAK_REPEATS = 512, 10  # measure_peak_flop_per_s's defaults
SWEEP_REPEATS = 5  # measure_matmul_throughput's default
THREAD_RATIOS = sorted({k / j for k in range(1, 129) for j in (1, 2, 4)} - {1.0})

# Symptoms, in the style of autograder.labkit.messages: what the result equals, and what to do instead.
NO_WARMUP = N_("{what}{case}: it equals what timing without the untimed warm-up gives: run every product once, "
               "untimed, before the timed repeats (the first product of each shape pays a one-time cost)")
OFF_BY_ONE = N_("{what}{case}: it equals what {count} timed repeats give; time exactly `repeats` products of each "
                "shape, after the warm-up")
PEAK_MEAN = N_("{what}{case}: it equals the rate of the MEAN time of the repeats; the peak is the rate of the "
               "fastest one")
PEAK_MEDIAN = N_("{what}{case}: it equals the rate of the MEDIAN time of the repeats; the peak is the rate of the "
                 "fastest one")
SWEEP_MEAN = N_("{what}{case}: it equals the MEAN of the timed repeats; report their median")
SWEEP_BEST = N_("{what}{case}: it equals the FASTEST of the timed repeats; report their median")
SWEEP_MIDDLE = N_("{what}{case}: it equals one of the two middle times of an even number of repeats; the median "
                  "is their mean (statistics.median)")
THREADS = N_("{what}{case}: it equals what the device gives with torch at {ratio}x the threads it expects: do not "
             "change torch's thread setting (torch.set_num_threads)")
REAL_CLOCK = N_("{what}{case}: faster than this device can run any product: time with device.clock(), not with "
                "time.perf_counter or time.time")
COMPUTED = N_("{what}{case}: the times equal flops / peak: time each product with device.clock() instead of "
              "computing its time")
NOT_MAXED = N_("{what}{case}: a batch size ran faster than the peak you report (utilization above 1): with a "
               "measured peak, take the larger of measure_peak_flop_per_s(device=device) and the best rate of the "
               "sweep")
NO_PROBE = N_("{what}{case}: it equals the best rate of the sweep alone: with a measured peak, also run "
              "measure_peak_flop_per_s(device=device) once and take the larger")
NOT_POSITIVE_RATE = N_("{what}{case}: not a positive rate")
NOT_POSITIVE = N_("{what}{case}: not a positive, finite time at batch size {batch}")
RATES_AT_MOST_PEAK = N_("{what}{case}: a batch size's rate is above the measured peak; a measured peak is the "
                        "best rate the call has seen")

SIM_PEAK_CASE = N_("simulated device {i} of {n}, ({size}, {size}) operands, {repeats} repeats")
SIM_PEAK_DEFAULTS = N_("simulated device {i} of {n}, default n and repeats")
SIM_SWEEP_CASE = N_("simulated device {i} of {n}, {count} batch sizes, {repeats} repeats, {peak}")
STATED = N_("stated peak")
MEASURED_BIG = N_("measured peak, large batches")
MEASURED_SMALL = N_("measured peak, small batches")


# -- the device model, replayed on the grader's side ----------------------------------
def full(dm, spec: dict) -> dict:
    return dm.simulated_spec(spec)


def times_of(dm, spec: dict, shape, calls, ratio: float = 1.0) -> list[float]:
    spec = full(dm, spec)
    return [dm.product_seconds(spec, shape, c, ratio) for c in calls]


def timed(repeats: int, *, warmup: bool = True, extra: int = 0) -> range:
    """Call indices of the timed products of one shape: after the warm-up (call 0), or from call 0 without it."""
    first = 1 if warmup else 0
    return range(first, first + repeats + extra)


def peak_answers(dm, spec, n: int, repeats: int) -> dict[str, float]:
    """measure_peak_flop_per_s, the right way and with each known mistake."""
    shape, F = (n, n, n), 2 * n**3
    good = times_of(dm, spec, shape, timed(repeats))
    out = {"right": F / min(good), "no_warmup": F / min(times_of(dm, spec, shape, timed(repeats, warmup=False))),
           "mean": F / statistics.mean(good), "median": F / statistics.median(good),
           "one_more": F / min(times_of(dm, spec, shape, timed(repeats, extra=1)))}
    if repeats > 1:
        out["one_fewer"] = F / min(times_of(dm, spec, shape, timed(repeats, extra=-1)))
    return out


def peak_threads(dm, spec, n: int, repeats: int, ratio: float) -> float:
    return 2 * n**3 / min(times_of(dm, spec, (n, n, n), timed(repeats), ratio))


def sweep_seconds(dm, spec, batch_sizes, d_in, d_out, repeats, *, how="median", warmup=True, extra=0, ratio=1.0):
    pick = {"median": statistics.median, "mean": statistics.mean, "best": min,
            "low": statistics.median_low, "high": statistics.median_high}[how]
    return [pick(times_of(dm, spec, (b, d_in, d_out), timed(repeats, warmup=warmup, extra=extra), ratio))
            for b in batch_sizes]


def sweep_answers(dm, spec, batch_sizes, d_in, d_out, repeats) -> dict[str, list[float]]:
    """The sweep's seconds, the right way and with each known mistake."""
    args = (dm, spec, batch_sizes, d_in, d_out, repeats)
    out = {"right": sweep_seconds(*args), "no_warmup": sweep_seconds(*args, warmup=False),
           "mean": sweep_seconds(*args, how="mean"), "best": sweep_seconds(*args, how="best"),
           "one_more": sweep_seconds(*args, extra=1)}
    if repeats > 1:
        out["one_fewer"] = sweep_seconds(*args, extra=-1)
    if repeats % 2 == 0:
        out["low"], out["high"] = sweep_seconds(*args, how="low"), sweep_seconds(*args, how="high")
    return out


def rates_of(batch_sizes, d_in, d_out, seconds) -> list[float]:
    return [2 * b * d_in * d_out / s for b, s in zip(batch_sizes, seconds)]


def same(a, b, rtol: float = RTOL) -> bool:
    a, b = (list(x) if isinstance(x, (list, tuple)) else [x] for x in (a, b))
    return len(a) == len(b) and all(
        isinstance(x, (int, float)) and math.isfinite(x) and abs(x - y) <= rtol * abs(y) for x, y in zip(a, b))


def distinct(answers: dict) -> bool:
    """Every mistake misses the right answer by more than DISTINCT, in at least one entry."""
    right = answers["right"]
    return all(not same(v, right, DISTINCT) for k, v in answers.items() if k != "right")


def draw_spec(rng, **over) -> dict:
    """A simulated device: every parameter drawn, overridable."""
    spec = {"kind": "simulated", "peak_flop_per_s": float(10 ** rng.uniform(10, 12)),
            "overhead_s": float(10 ** rng.uniform(-5.5, -4)), "half_rate_flops": float(10 ** rng.uniform(6, 8)),
            "warmup_s": float(10 ** rng.uniform(-2.5, -1.5)), "noise": float(rng.uniform(0.05, 0.3)),
            "seed": int(rng.integers(0, 2**31))}
    return {**spec, **over}


def with_distinct_noise(spec: dict, answers_of, also=lambda s, answers: True) -> tuple[dict, dict]:
    """``spec`` with the first seed from its own on whose noise every mistake gives another answer
    (and ``also(spec, answers)`` holds)."""
    for bump in range(SEED_TRIES):
        s = {**spec, "seed": spec["seed"] + bump}
        answers = answers_of(s)
        if distinct(answers) and also(s, answers):
            return s, answers
    raise AssertionError(_("grader bug: no simulated case tells the known mistakes apart"))


def for_reference(spec: dict) -> dict:
    """The reference measures at the expected rate, whatever a submission did to torch's threads in-process."""
    return {**spec, "threads": torch.get_num_threads()}


def fail(template: str, *, what: str, case: str, **fields):
    raise AssertionError(M.say(template, what=what, case=M.case_suffix(case), **fields))


# -- checks -----------------------------------------------------------------------------
def check_structure(got, batch_sizes, d_in, d_out, *, case, exact_ints):
    assert_keys(got, KEYS, what=_("measure_matmul_throughput result"), case=case)
    assert_equal(list(got["batch_sizes"]), list(batch_sizes), what="result['batch_sizes']", case=case)
    for key in LISTS:
        assert_equal(len(got[key]), len(batch_sizes), what=_("number of entries in result[{key!r}]").format(key=key),
                     case=case)
    exact_ints(list(got["flops"]), what="result['flops']", case=case)
    assert_close(got["flops"], [2 * b * d_in * d_out for b in batch_sizes], what="result['flops']", case=case,
                 rtol=0)
    for b, s in zip(batch_sizes, got["seconds"]):
        if not (isinstance(s, (int, float)) and math.isfinite(s) and s > 0):
            fail(NOT_POSITIVE, what="result['seconds']", case=case, batch=b)
    rate = [f / s for f, s in zip(got["flops"], got["seconds"])]
    assert_close(got["flop_per_s"], rate, what=_("result['flop_per_s'] (flops / seconds)"), case=case, rtol=RTOL)
    assert_scalar(got["peak_flop_per_s"], got["peak_flop_per_s"], what="result['peak_flop_per_s']", case=case)
    assert_close(got["utilization"], [r / got["peak_flop_per_s"] for r in rate],
                 what=_("result['utilization'] (flop_per_s / peak)"), case=case, rtol=RTOL)


def explain_peak(got: float, dm, spec, n, repeats, answers, *, what, case):
    """Name the mistake a wrong peak equals, if it is a known one."""
    for key, template in (("no_warmup", NO_WARMUP), ("mean", PEAK_MEAN), ("median", PEAK_MEDIAN)):
        if same(got, answers[key]):
            fail(template, what=what, case=case)
    for key, count in (("one_more", repeats + 1), ("one_fewer", repeats - 1)):
        if key in answers and same(got, answers[key]):
            fail(OFF_BY_ONE, what=what, case=case, count=count)
    for ratio in THREAD_RATIOS:
        if same(got, peak_threads(dm, spec, n, repeats, ratio)):
            fail(THREADS, what=what, case=case, ratio=f"{ratio:g}")
    if got > full(dm, spec)["peak_flop_per_s"]:  # no product on the device reaches its peak rate
        fail(REAL_CLOCK, what=what, case=case)


def explain_seconds(got: list, dm, spec, batch_sizes, d_in, d_out, repeats, answers, *, peak, what, case):
    """Name the mistake wrong sweep times equal, if it is a known one."""
    templates = {"no_warmup": NO_WARMUP, "mean": SWEEP_MEAN, "best": SWEEP_BEST, "low": SWEEP_MIDDLE,
                 "high": SWEEP_MIDDLE}
    for key, template in templates.items():
        if key in answers and same(got, answers[key]):
            fail(template, what=what, case=case)
    for key, count in (("one_more", repeats + 1), ("one_fewer", repeats - 1)):
        if key in answers and same(got, answers[key]):
            fail(OFF_BY_ONE, what=what, case=case, count=count)
    flops = [2 * b * d_in * d_out for b in batch_sizes]
    if isinstance(peak, (int, float)) and peak > 0 and same(got, [f / peak for f in flops]):
        fail(COMPUTED, what=what, case=case)
    for ratio in THREAD_RATIOS:
        if same(got, sweep_seconds(dm, spec, batch_sizes, d_in, d_out, repeats, ratio=ratio)):
            fail(THREADS, what=what, case=case, ratio=f"{ratio:g}")
    s = full(dm, spec)
    least = [s["overhead_s"] + (f + s["half_rate_flops"]) / s["peak_flop_per_s"] for f in flops]
    if any(t < bound * (1 - RTOL) for t, bound in zip(got, least)):  # shorter than any product of that shape
        fail(REAL_CLOCK, what=what, case=case)


# -- this CPU: structure only ------------------------------------------------------------
def test_real_cpu_structure(student, rng, exact_ints):
    """On this CPU, with no timing threshold: the result's bookkeeping, for a stated and a measured peak."""
    d_in, d_out = int(rng.integers(16, 200)), int(rng.integers(16, 200))
    batch_sizes = [int(b) for b in rng.permutation([1, 3, 16, 40])]  # any order, kept as given
    case = _("this CPU, 4 batch sizes in random order, d_in={d_in}, d_out={d_out}, stated peak 2.5e11").format(
        d_in=d_in, d_out=d_out)
    got = student.measure_matmul_throughput(batch_sizes=batch_sizes, d_in=d_in, d_out=d_out, repeats=3,
                                            peak_flop_per_s=2.5e11)
    check_structure(got, batch_sizes, d_in, d_out, case=case, exact_ints=exact_ints)
    assert_scalar(got["peak_flop_per_s"], 2.5e11, what=_("result['peak_flop_per_s'] when a peak is given"), case=case,
                  rtol=1e-12)

    case = _("this CPU, batch sizes 1, 8 and 64, d_in=d_out=64, measured peak")
    got = student.measure_matmul_throughput(batch_sizes=[1, 8, 64], d_in=64, d_out=64, repeats=3)
    check_structure(got, [1, 8, 64], 64, 64, case=case, exact_ints=exact_ints)
    if max(got["flop_per_s"]) > got["peak_flop_per_s"] * (1 + RTOL):
        fail(RATES_AT_MOST_PEAK, what="result['peak_flop_per_s']", case=case)

    case = _("this CPU, n=64, 3 repeats")
    peak = student.measure_peak_flop_per_s(n=64, repeats=3)
    assert_scalar(peak, peak, what="measure_peak_flop_per_s", case=case)  # a single finite number
    if not float(peak) > 0:
        fail(NOT_POSITIVE_RATE, what="measure_peak_flop_per_s", case=case)


# -- simulated devices: the same answer as the reference ----------------------------------------
def test_peak_on_simulated_devices(student, reference, rng, device_model):
    """The best rate of an (n, n) product, after one warm-up, over `repeats` products timed one by one."""
    dm = device_model
    # the defaults, a tiny product (a low rate, where every digit of 2 n^3 / fastest counts), two drawn sizes
    cases = [(None, None), (int(rng.integers(2, 9)), int(rng.integers(2, 13)))]
    cases += [(int(rng.integers(64, 700)), int(rng.integers(2, 13))) for _trial in range(2)]
    for i, (n, repeats) in enumerate(cases, start=1):
        nn, rr = (PEAK_N, PEAK_REPEATS) if n is None else (n, repeats)
        spec, answers = with_distinct_noise(draw_spec(rng), lambda s: peak_answers(dm, s, nn, rr))
        if n is None:  # the defaults: n=512, repeats=10
            case = _(SIM_PEAK_DEFAULTS).format(i=i, n=len(cases))
            got = student.measure_peak_flop_per_s(device=spec)
            want = reference.measure_peak_flop_per_s(device=for_reference(spec))
        else:
            case = _(SIM_PEAK_CASE).format(i=i, n=len(cases), size=n, repeats=repeats)
            got = student.measure_peak_flop_per_s(n=n, repeats=repeats, device=spec)
            want = reference.measure_peak_flop_per_s(n=n, repeats=repeats, device=for_reference(spec))
        assert same(want, answers["right"]), _("grader bug: the reference disagrees with the device model")
        assert_scalar(got, got, what="measure_peak_flop_per_s", case=case)  # a single finite number
        if not same(got, want):
            explain_peak(float(got), dm, spec, nn, rr, answers, what="measure_peak_flop_per_s", case=case)
        assert_scalar(got, want, what="measure_peak_flop_per_s", case=case, rtol=RTOL)


def sweep_case(rng, *, big: bool | None):
    """(batch sizes, d_in, d_out, repeats, spec overrides) for a stated peak (big=None) or a measured one."""
    if big is None:
        sizes = [1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512]
        batch_sizes = [int(b) for b in rng.choice(sizes, size=int(rng.integers(3, 7)), replace=False)]
        return batch_sizes, int(rng.integers(16, 400)), int(rng.integers(16, 400)), int(rng.integers(3, 8)), {}
    if big:  # large products run faster than the (512, 512) peak measurement: the sweep's best rate wins
        d = int(rng.integers(512, 1025))
        batch_sizes = [int(b) for b in rng.permutation([1, 64, 1024, 2048])]
        return batch_sizes, d, d, int(rng.integers(3, 8)), {"half_rate_flops": float(10 ** rng.uniform(8.2, 8.6))}
    d = int(rng.integers(32, 129))  # small products only: the peak measurement wins
    return [int(b) for b in rng.permutation([1, 4, 16, 64])], d, d, int(rng.integers(3, 8)), {}


def check_sweep_case(student, reference, rng, dm, exact_ints, *, i: int, n: int, big: bool | None,
                     default_repeats: bool = False, even: bool = False):
    """One drawn sweep on a simulated device, against the reference; a wrong result is explained."""
    batch_sizes, d_in, d_out, repeats, over = sweep_case(rng, big=big)
    if default_repeats:
        repeats = SWEEP_REPEATS
    if even and repeats % 2:
        repeats += 1  # an even number of repeats: the median is the mean of the two middle times
    stated = float(10 ** rng.uniform(10.5, 12.5)) if big is None else None

    def answers_of(s):
        return sweep_answers(dm, s, batch_sizes, d_in, d_out, repeats)

    def peak_sides(s, answers):
        """(the sweep's best rate, the measured peak) the right way."""
        rates = rates_of(batch_sizes, d_in, d_out, answers["right"])
        return max(rates), peak_answers(dm, s, PEAK_N, PEAK_REPEATS)["right"]

    def peaks_apart(s, answers):
        best, probe = peak_sides(s, answers)
        return best > probe * (1 + DISTINCT) if big else probe > best * (1 + DISTINCT)

    spec, answers = with_distinct_noise(draw_spec(rng, **over), answers_of,
                                        also=(lambda s, a: True) if big is None else peaks_apart)
    label = {None: STATED, True: MEASURED_BIG, False: MEASURED_SMALL}[big]
    case = _(SIM_SWEEP_CASE).format(i=i, n=n, count=len(batch_sizes), repeats=repeats, peak=_(label))
    kw = dict(batch_sizes=batch_sizes, d_in=d_in, d_out=d_out)
    if not default_repeats:
        kw["repeats"] = repeats
    if stated is not None:
        kw["peak_flop_per_s"] = stated
    got = student.measure_matmul_throughput(**kw, device=spec)
    want = reference.measure_matmul_throughput(**kw, device=for_reference(spec))
    assert same(want["seconds"], answers["right"]), _("grader bug: the reference disagrees with the device model")

    check_structure(got, batch_sizes, d_in, d_out, case=case, exact_ints=exact_ints)
    if not same(got["seconds"], want["seconds"]):
        explain_seconds([float(s) for s in got["seconds"]], dm, spec, batch_sizes, d_in, d_out, repeats, answers,
                        peak=got["peak_flop_per_s"], what="result['seconds']", case=case)
    assert_close(got["seconds"], want["seconds"], what="result['seconds']", case=case, rtol=RTOL)
    assert_close(got["flop_per_s"], want["flop_per_s"], what="result['flop_per_s']", case=case, rtol=RTOL)
    what = "result['peak_flop_per_s']"
    if stated is not None:
        assert_scalar(got["peak_flop_per_s"], stated, what=_("result['peak_flop_per_s'] when a peak is given"),
                      case=case, rtol=1e-12)
    elif not same(got["peak_flop_per_s"], want["peak_flop_per_s"]):
        best, _probe = peak_sides(spec, answers)
        if best > got["peak_flop_per_s"] * (1 + RTOL):
            fail(NOT_MAXED, what=what, case=case)
        if same(got["peak_flop_per_s"], best):
            fail(NO_PROBE, what=what, case=case)
    assert_scalar(got["peak_flop_per_s"], want["peak_flop_per_s"], what=what, case=case, rtol=RTOL)
    assert_close(got["utilization"], want["utilization"], what="result['utilization']", case=case, rtol=RTOL)


def test_sweep_with_a_stated_peak(student, reference, rng, device_model, exact_ints):
    """Median seconds per batch size (one warm-up each, interleaved rounds), rates and utilization."""
    for i in (1, 2, 3):  # an even number of repeats, the default repeats, any repeats
        check_sweep_case(student, reference, rng, device_model, exact_ints, i=i, n=3, big=None,
                         even=i == 1, default_repeats=i == 2)


def test_sweep_with_a_measured_peak(student, reference, rng, device_model, exact_ints):
    """The peak is the larger of measure_peak_flop_per_s(device=device) and the sweep's best rate."""
    for i, big in enumerate((True, False), start=1):  # the sweep's best rate wins, then the peak measurement
        check_sweep_case(student, reference, rng, device_model, exact_ints, i=i, n=2, big=big)
