"""Measured throughput (§3.2.1.2 Mini-batch processing, §3.4 Arithmetic intensity), graded deterministically.

A grade must be a function of the submission alone, so no test here judges
this machine's timings.  Two kinds of check (docs/lab1.md):

* **This CPU, structure only**: keys, lengths, batch sizes as given, exact
  int FLOPs, positive finite times, rates = FLOPs / seconds, utilization =
  rate / peak, a measured peak at least every rate of the sweep.  No timing
  is compared with anything.
* **Simulated devices** (``lab1_device.py``, the grader's copy): the same
  calls in the same order always give the same times, so the student's
  results and the reference's, on the same device spec, must agree to rtol
  1e-9.  Each case is drawn (from the per-submission seed) so that every
  mistake below gives a different answer from the right one; when a result
  is wrong, the test replays those mistakes on the device model and names
  the one it equals: no warm-up, mean or best instead of median, mean or
  median instead of best, a middle time instead of the median of an even
  number of repeats, more or fewer timed repeats, the repeats of one batch
  size back to back instead of interleaved rounds, randn inside the timed
  region, the real clock instead of the device's, computed instead of
  timed, a measured peak not maxed with the sweep's rates, the sweep's
  rates without the measured peak, or a peak measured with the sweep's
  repeats instead of its own defaults.  The order of the sweep's untimed
  warm-ups, which the docstring leaves open, never shows in a drawn case.
  A changed torch thread setting needs no replay: the simulated device
  raises ThreadSettingError in the code that changed it, whatever the
  machine's cores.

A drawn device on which no noise seed tells the known mistakes apart (about 1
submission in 250: a tiny product whose operands take too little time to
make) is replaced by a fixed, pre-checked case of the same kind
(``FIXED_PEAK``, ``FIXED_SWEEP``): the grader's failure to build its case is
never the student's 0.  A check of the grader's own work (the reference
against the device model) raises ``GraderError`` (``grader_check``): the
score is pending, not a grade.

Every simulated spec carries ``threads``: the student's the grader's setting
(GRADER_THREADS), the reference's the setting torch has at its call, so that
in-process runs stay right even after a submission changed the grader's torch
(the conftest puts it back after every test).  Cases are named by number and
by what they are, never by their drawn sizes or repeats.
"""

import math
import statistics
from collections import Counter
from typing import NamedTuple

import pytest
import torch

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_equal, assert_keys, assert_scalar, grader_check
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("throughput")

KEYS = ("batch_sizes", "flops", "seconds", "flop_per_s", "peak_flop_per_s", "utilization")
LISTS = ("flops", "seconds", "flop_per_s", "utilization")
RTOL = 1e-9  # same model, same calls: only the order of float additions can differ
DISTINCT = 1e-6  # every mistake must miss the right answer by more than this (relative) in a drawn case
SEED_TRIES = 5000  # the peak needs its last timed call fastest and one more faster still: about 1 in r(r+1) seeds
PEAK_N, PEAK_REPEATS = 512, 10  # measure_peak_flop_per_s's defaults
SWEEP_REPEATS = 5  # measure_matmul_throughput's default
# graders and sandbox workers run torch on one thread (runner.GRADER_ENV, the zygote, the plugin):
# the setting a student's simulated device is given, on any machine
GRADER_THREADS = 1

# Symptoms, in the style of autograder.labkit.messages: what the result equals, and what to do instead.
NO_WARMUP = N_("{what}{case}: it equals what timing without the untimed warm-up gives: run every product once, "
               "untimed, before the timed repeats (the first product of each shape pays a one-time cost)")
MORE_REPEATS = N_("{what}{case}: it equals what timing more than `repeats` products of each shape gives; time "
                  "exactly `repeats` of them, after the warm-up")
FEWER_REPEATS = N_("{what}{case}: it equals what timing fewer than `repeats` products of each shape gives; time "
                   "exactly `repeats` of them, after the warm-up")
PEAK_MEAN = N_("{what}{case}: it equals the rate of the MEAN time of the repeats; the peak is the rate of the "
               "fastest one")
PEAK_MEDIAN = N_("{what}{case}: it equals the rate of the MEDIAN time of the repeats; the peak is the rate of the "
                 "fastest one")
SWEEP_MEAN = N_("{what}{case}: it equals the MEAN of the timed repeats; report their median")
SWEEP_BEST = N_("{what}{case}: it equals the FASTEST of the timed repeats; report their median")
SWEEP_MIDDLE = N_("{what}{case}: it equals one of the two middle times of an even number of repeats; the median "
                  "is their mean (statistics.median)")
NOT_INTERLEAVED = N_("{what}{case}: it equals what timing all repeats of one batch size back to back, then the next "
                     "one's, gives; a product right after one of its own shape finds warm caches: time rounds, each "
                     "with one product of every batch size in the given order")
RANDN_TIMED = N_("{what}{case}: it equals what timing the making of the operands (device.randn) together with the "
                 "product gives: make X and W first, then read device.clock() just before and just after "
                 "device.matmul alone")
REAL_CLOCK = N_("{what}{case}: faster than this device can run any product: time with device.clock(), not with "
                "time.perf_counter or time.time")
COMPUTED = N_("{what}{case}: the times equal flops / peak: time each product with device.clock() instead of "
              "computing its time")
NOT_MAXED = N_("{what}{case}: a batch size ran faster than the peak you report (utilization above 1): with a "
               "measured peak, take the larger of measure_peak_flop_per_s(device=device) and the best rate of the "
               "sweep")
NO_PROBE = N_("{what}{case}: it equals the best rate of the sweep alone: with a measured peak, also run "
              "measure_peak_flop_per_s(device=device) once and take the larger")
PROBE_REPEATS = N_("{what}{case}: it equals what measure_peak_flop_per_s gives with the sweep's `repeats`: run it "
                   "with its own defaults, measure_peak_flop_per_s(device=device), and take the larger of that and "
                   "the sweep's best rate")
NOT_POSITIVE_RATE = N_("{what}{case}: not a positive rate")
NOT_POSITIVE = N_("{what}{case}: not a positive, finite time in entry {index}")
RATES_AT_MOST_PEAK = N_("{what}{case}: a batch size's rate is above the measured peak; a measured peak is the "
                        "best rate the call has seen")

REAL_CPU_CASE = N_("this CPU, 4 batch sizes in random order, random d_in and d_out, stated peak 2.5e11")
SIM_PEAK_DEFAULTS = N_("simulated device {i} of {n}, default n and repeats")
SIM_PEAK_TINY = N_("simulated device {i} of {n}, a tiny product, random repeats")
SIM_PEAK_RANDOM = N_("simulated device {i} of {n}, random n and repeats")
SIM_SWEEP_CASE = N_("simulated device {i} of {n}, random batch sizes, {repeats}, {peak}")
REPEATS_EVEN = N_("an even number of repeats")
REPEATS_DEFAULT = N_("repeats left at its default")
REPEATS_RANDOM = N_("random repeats")
STATED = N_("stated peak")
MEASURED_BIG = N_("measured peak, large batches")
MEASURED_SMALL = N_("measured peak, small batches")


# -- the device model, replayed on the grader's side ----------------------------------
def full(dm, spec: dict) -> dict:
    return dm.simulated_spec(spec)


def run(dm, spec: dict, order: list) -> list[float]:
    """The simulated seconds of each product of ``order`` (shapes, in the order they run) on a new device."""
    s, calls, last, out = full(dm, spec), Counter(), None, []
    for shape in order:
        out.append(dm.product_seconds(s, shape, calls[shape], after_same_shape=shape == last))
        calls[shape] += 1
        last = shape
    return out


def sweep_times(dm, spec, shapes, repeats: int, *, warmup: bool = True, extra: int = 0, order: str = "rounds",
                randn: int = 0, first_warmed_last: bool = False) -> list[list[float]]:
    """The timed seconds of each shape, in a protocol that runs them all: its warm-ups (one per shape,
    first), then ``repeats + extra`` timed products of each, in rounds or each shape's back to back
    ("blocked": after all the warm-ups; "blocked_warm": each shape's warm-up just before its repeats).
    ``randn``: operands made inside each timed region (1: X, 2: X and W).  ``first_warmed_last``: the
    warm-ups in another order, the first shape's last (the only way their order can show: the first timed
    product then runs right after one of its own shape)."""
    r = repeats + extra
    ups = shapes[1:] + shapes[:1] if first_warmed_last else shapes
    if order == "rounds":
        plan = ([(s, False) for s in ups] if warmup else []) + [(s, True) for _r in range(r) for s in shapes]
    elif order == "blocked":
        plan = ([(s, False) for s in ups] if warmup else []) + [(s, True) for s in shapes for _r in range(r)]
    else:  # blocked_warm
        plan = [p for s in shapes for p in ([(s, False)] if warmup else []) + [(s, True)] * r]
    seconds = run(dm, spec, [s for s, _timed in plan])
    made = {s: randn_cost(dm, full(dm, spec), s, randn) for s in shapes} if randn else dict.fromkeys(shapes, 0.0)
    timed = {s: [] for s in shapes}
    for (shape, is_timed), t in zip(plan, seconds):
        if is_timed:
            timed[shape].append(t + made[shape])
    return [timed[s] for s in shapes]


def randn_cost(dm, full_spec, shape, randn: int) -> float:
    """Seconds of making X (randn = 1), or X and W (2), of ``shape`` = (m, k, n) inside a timed region."""
    m, k, n = shape
    return dm.randn_seconds(full_spec, m, k) + (dm.randn_seconds(full_spec, k, n) if randn > 1 else 0.0)


def peak_answers(dm, spec, n: int, repeats: int) -> dict[str, float]:
    """measure_peak_flop_per_s, the right way and with each known mistake."""
    shapes, F = [(n, n, n)], 2 * n**3

    def best(**kw):
        return F / min(sweep_times(dm, spec, shapes, repeats, **kw)[0])

    good = sweep_times(dm, spec, shapes, repeats)[0]
    out = {"right": F / min(good), "no_warmup": best(warmup=False), "mean": F / statistics.mean(good),
           "median": F / statistics.median(good), "one_more": best(extra=1), "randn_x": best(randn=1),
           "randn_xw": best(randn=2)}
    if repeats > 1:
        out["one_fewer"] = best(extra=-1)
    return out


PICK = {"median": statistics.median, "mean": statistics.mean, "best": min, "low": statistics.median_low,
        "high": statistics.median_high}


def sweep_seconds(dm, spec, batch_sizes, d_in, d_out, repeats, *, how="median", **protocol) -> list[float]:
    shapes = [(b, d_in, d_out) for b in batch_sizes]
    return [PICK[how](t) for t in sweep_times(dm, spec, shapes, repeats, **protocol)]


def sweep_answers(dm, spec, batch_sizes, d_in, d_out, repeats) -> dict[str, list[float]]:
    """The sweep's seconds, the right way and with each known mistake."""
    args = (dm, spec, batch_sizes, d_in, d_out, repeats)
    out = {"right": sweep_seconds(*args), "no_warmup": sweep_seconds(*args, warmup=False),
           "mean": sweep_seconds(*args, how="mean"), "best": sweep_seconds(*args, how="best"),
           "one_more": sweep_seconds(*args, extra=1), "blocked": sweep_seconds(*args, order="blocked"),
           "blocked_warm": sweep_seconds(*args, order="blocked_warm"), "randn_x": sweep_seconds(*args, randn=1),
           "randn_xw": sweep_seconds(*args, randn=2)}
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
            "seed": int(rng.integers(0, 2**31)), "repeat_speedup": float(rng.uniform(0.1, 0.4)),
            "randn_s_per_value": float(10 ** rng.uniform(-9.5, -8.5))}
    return {**spec, **over}


def with_distinct_noise(spec: dict, answers_of, also=lambda s, answers: True,
                        tries: int | None = None) -> tuple[dict, dict] | None:
    """``spec`` with the first seed from its own on whose noise every mistake gives another answer
    (and ``also(spec, answers)`` holds), and its answers; None when none of ``tries`` (SEED_TRIES) does.

    Some drawn devices have no such seed at all (a tiny product on a device whose fixed cost dwarfs making
    its operands: randn inside the timed region changes the time by less than DISTINCT, whatever the
    noise; about 1 submission in 250).  The caller then grades on its fixed case of the same kind
    (FIXED_PEAK, FIXED_SWEEP), never the student for the grader's failure to build one (issue 35)."""
    for bump in range(SEED_TRIES if tries is None else tries):
        s = {**spec, "seed": spec["seed"] + bump}
        answers = answers_of(s)
        if distinct(answers) and also(s, answers):
            return s, answers
    return None


NO_FIXED_CASE = N_("grader bug: the fixed simulated case {name} no longer tells the known mistakes apart")


def for_student(spec: dict) -> dict:
    """The student measures at the grader's thread setting, whatever torch said when their files were imported."""
    return {**spec, "threads": GRADER_THREADS}


def for_reference(spec: dict) -> dict:
    """The reference measures at the setting torch has now, whatever a submission did to it in-process."""
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
    for index, s in enumerate(got["seconds"]):  # the entry, never its (drawn) batch size
        if not (isinstance(s, (int, float)) and math.isfinite(s) and s > 0):
            fail(NOT_POSITIVE, what="result['seconds']", case=case, index=index)
    rate = [f / s for f, s in zip(got["flops"], got["seconds"])]
    assert_close(got["flop_per_s"], rate, what=_("result['flop_per_s'] (flops / seconds)"), case=case, rtol=RTOL)
    assert_scalar(got["peak_flop_per_s"], got["peak_flop_per_s"], what="result['peak_flop_per_s']", case=case)
    assert_close(got["utilization"], [r / got["peak_flop_per_s"] for r in rate],
                 what=_("result['utilization'] (flop_per_s / peak)"), case=case, rtol=RTOL)


MISTAKES = {  # answers' key: the symptom it is reported with, in the order they are tried
    "no_warmup": NO_WARMUP, "mean": SWEEP_MEAN, "best": SWEEP_BEST, "low": SWEEP_MIDDLE, "high": SWEEP_MIDDLE,
    "one_more": MORE_REPEATS, "one_fewer": FEWER_REPEATS, "blocked": NOT_INTERLEAVED,
    "blocked_warm": NOT_INTERLEAVED, "randn_x": RANDN_TIMED, "randn_xw": RANDN_TIMED,
}
PEAK_MISTAKES = {**MISTAKES, "mean": PEAK_MEAN, "median": PEAK_MEDIAN}


def explain(got, answers: dict, templates: dict, *, what, case):
    """Name the known mistake ``got`` equals, if any."""
    for key, template in templates.items():
        if key in answers and same(got, answers[key]):
            fail(template, what=what, case=case)


def explain_peak(got: float, dm, spec, answers, *, what, case):
    explain(got, answers, PEAK_MISTAKES, what=what, case=case)
    if got > full(dm, spec)["peak_flop_per_s"]:  # no product on the device reaches its peak rate
        fail(REAL_CLOCK, what=what, case=case)


def explain_seconds(got: list, dm, spec, batch_sizes, d_in, d_out, answers, *, peak, what, case):
    explain(got, answers, MISTAKES, what=what, case=case)
    flops = [2 * b * d_in * d_out for b in batch_sizes]
    if isinstance(peak, (int, float)) and peak > 0 and same(got, [f / peak for f in flops]):
        fail(COMPUTED, what=what, case=case)
    s = full(dm, spec)
    least = [dm.least_product_seconds(s, (b, d_in, d_out)) for b in batch_sizes]
    if any(t < bound * (1 - RTOL) for t, bound in zip(got, least)):  # shorter than any product of that shape
        fail(REAL_CLOCK, what=what, case=case)


# -- this CPU: structure only ------------------------------------------------------------
def test_real_cpu_structure(student, rng, exact_ints):
    """On this CPU, with no timing threshold: the result's bookkeeping, for a stated and a measured peak."""
    d_in, d_out = int(rng.integers(16, 200)), int(rng.integers(16, 200))
    batch_sizes = [int(b) for b in rng.permutation([1, 3, 16, 40])]  # any order, kept as given
    case = _(REAL_CPU_CASE)
    got = student.measure_matmul_throughput(batch_sizes=batch_sizes, d_in=d_in, d_out=d_out, repeats=3,
                                            peak_flop_per_s=2.5e11)
    check_structure(got, batch_sizes, d_in, d_out, case=case, exact_ints=exact_ints)
    assert_scalar(got["peak_flop_per_s"], 2.5e11, what=_("result['peak_flop_per_s'] when a peak is given"), case=case,
                  rtol=1e-12)

    with fixed_case():  # the same inputs on every submission: no direction in the messages
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
# A fixed case of each kind, for a submission whose drawn case has no noise seed that tells the known
# mistakes apart (with_distinct_noise): the same for every such submission, and checked to tell them apart
# at its own seed (tests/framework/content/test_lab1_held_out.py).  Their labels are the drawn cases'.
FIXED_PEAK = {  # label: (n, repeats, device spec); None: the defaults
    SIM_PEAK_DEFAULTS: (None, None,
        {"kind": "simulated", "peak_flop_per_s": 110349781089.3723, "overhead_s": 2.5454394491473295e-05,
         "half_rate_flops": 8747492.819218544, "warmup_s": 0.005049494954025235, "noise": 0.18218975640501317,
         "seed": 636695751, "repeat_speedup": 0.18446367959255552, "randn_s_per_value": 1.7934181150601569e-09}),
    SIM_PEAK_TINY: (3, 5,
        {"kind": "simulated", "peak_flop_per_s": 110349781089.3723, "overhead_s": 2.5454394491473295e-05,
         "half_rate_flops": 8747492.819218544, "warmup_s": 0.005049494954025235, "noise": 0.18218975640501317,
         "seed": 636695050, "repeat_speedup": 0.18446367959255552, "randn_s_per_value": 1.7934181150601569e-09}),
    SIM_PEAK_RANDOM: (300, 6,
        {"kind": "simulated", "peak_flop_per_s": 110349781089.3723, "overhead_s": 2.5454394491473295e-05,
         "half_rate_flops": 8747492.819218544, "warmup_s": 0.005049494954025235, "noise": 0.18218975640501317,
         "seed": 636695063, "repeat_speedup": 0.18446367959255552, "randn_s_per_value": 1.7934181150601569e-09}),
}


def peak_search(dm, n, repeats, spec: dict, tries: int | None = None):
    """with_distinct_noise for measure_peak_flop_per_s(n, repeats) (None: its defaults) from ``spec``."""
    nn, rr = (PEAK_N, PEAK_REPEATS) if n is None else (n, repeats)
    return with_distinct_noise(spec, lambda s: peak_answers(dm, s, nn, rr), tries=tries)


def peak_case(rng, dm, n, repeats, label: str) -> tuple:
    """(n, repeats, spec, answers): a device drawn from ``rng`` whose noise tells the mistakes apart, or else
    the fixed case of this label (a grader that cannot build its case grades on one it can)."""
    found = peak_search(dm, n, repeats, draw_spec(rng))
    if found is None:
        n, repeats, spec = FIXED_PEAK[label]
        found = peak_search(dm, n, repeats, spec, tries=1)
        grader_check(found is not None, _(NO_FIXED_CASE).format(name=label))
    return (n, repeats, *found)


def test_peak_on_simulated_devices(student, reference, rng, device_model):
    """The best rate of an (n, n) product, after one warm-up, over `repeats` products timed one by one."""
    dm = device_model
    # the defaults, a tiny product (a low rate, where every digit of 2 n^3 / fastest counts), two drawn sizes
    cases = [(None, None, SIM_PEAK_DEFAULTS), (int(rng.integers(2, 9)), int(rng.integers(2, 13)), SIM_PEAK_TINY)]
    cases += [(int(rng.integers(64, 700)), int(rng.integers(2, 13)), SIM_PEAK_RANDOM) for _trial in range(2)]
    for i, (n, repeats, label) in enumerate(cases, start=1):
        n, repeats, spec, answers = peak_case(rng, dm, n, repeats, label)
        case = _(label).format(i=i, n=len(cases))
        if n is None:  # the defaults: n=512, repeats=10
            got = student.measure_peak_flop_per_s(device=for_student(spec))
            want = reference.measure_peak_flop_per_s(device=for_reference(spec))
        else:
            got = student.measure_peak_flop_per_s(n=n, repeats=repeats, device=for_student(spec))
            want = reference.measure_peak_flop_per_s(n=n, repeats=repeats, device=for_reference(spec))
        grader_check(same(want, answers["right"]), _("grader bug: the reference disagrees with the device model"))
        assert_scalar(got, got, what="measure_peak_flop_per_s", case=case)  # a single finite number
        if not same(got, want):
            explain_peak(float(got), dm, spec, answers, what="measure_peak_flop_per_s", case=case)
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
        # the peak measurement's repeats find warm caches, the sweep's never do: a small speedup
        over = {"half_rate_flops": float(10 ** rng.uniform(8.2, 8.6)), "repeat_speedup": float(rng.uniform(0.02, 0.08))}
        return batch_sizes, d, d, int(rng.integers(3, 8)), over
    d = int(rng.integers(32, 129))  # small products only: the peak measurement wins
    return [int(b) for b in rng.permutation([1, 4, 16, 64])], d, d, int(rng.integers(3, 8)), {}


class SweepCase(NamedTuple):
    """A drawn sweep: the call's arguments, its device spec, and the model's answers on it."""
    batch_sizes: list
    d_in: int
    d_out: int
    repeats: int
    stated: float | None  # a stated peak, or None for a measured one
    spec: dict
    answers: dict  # sweep_answers
    best: float  # the sweep's best rate, the right way
    probe: float  # measure_peak_flop_per_s(device=...) with its defaults
    probe_sweep_repeats: float  # the same with the sweep's repeats (a mistake)


def probe_times(dm, spec) -> list[float]:
    """The timed seconds of measure_peak_flop_per_s with its defaults, in the order they are taken."""
    return sweep_times(dm, spec, [(PEAK_N, PEAK_N, PEAK_N)], PEAK_REPEATS)[0]


FIXED_SWEEP = {  # (big, default_repeats, even): (batch_sizes, d_in, d_out, repeats, stated peak, device spec)
    (None, False, True): ([256, 2, 64, 16, 32, 512], 184, 94, 8, 107450903057.06592,
        {"kind": "simulated", "peak_flop_per_s": 264009061813.0936, "overhead_s": 3.3752045451878894e-06,
         "half_rate_flops": 1797065.8012806624, "warmup_s": 0.007098816048695848, "noise": 0.09831953171636572,
         "seed": 511652679, "repeat_speedup": 0.2501838232854403, "randn_s_per_value": 7.729759467898054e-10}),
    (None, True, False): ([8, 4, 64, 3, 512], 17, 36, 5, 394023196082.34174,
        {"kind": "simulated", "peak_flop_per_s": 23521457377.56422, "overhead_s": 1.5320243674843862e-05,
         "half_rate_flops": 17326233.266459018, "warmup_s": 0.016026683022085684, "noise": 0.14430788814494866,
         "seed": 1246216824, "repeat_speedup": 0.1501373545299669, "randn_s_per_value": 1.2812831670687864e-09}),
    (None, False, False): ([16, 8, 128, 512], 116, 22, 3, 326787487623.589,
        {"kind": "simulated", "peak_flop_per_s": 232241077123.9847, "overhead_s": 3.199790837853367e-06,
         "half_rate_flops": 5126250.896511259, "warmup_s": 0.016712415412190228, "noise": 0.16654354067457788,
         "seed": 1270647790, "repeat_speedup": 0.27888942926535576, "randn_s_per_value": 1.4604275908888578e-09}),
    (True, False, False): ([64, 1, 2048, 1024], 590, 590, 7, None,
        {"kind": "simulated", "peak_flop_per_s": 830901518339.0831, "overhead_s": 4.099450525828829e-06,
         "half_rate_flops": 209442259.57245418, "warmup_s": 0.027968890406025005, "noise": 0.2669132703111603,
         "seed": 633852718, "repeat_speedup": 0.041491870135293756, "randn_s_per_value": 3.5889139898283603e-10}),
    (False, False, False): ([1, 64, 16, 4], 70, 70, 4, None,
        {"kind": "simulated", "peak_flop_per_s": 209308400573.87158, "overhead_s": 8.666304568769361e-06,
         "half_rate_flops": 16474208.867357116, "warmup_s": 0.01653202807272961, "noise": 0.07523890996080689,
         "seed": 465501106, "repeat_speedup": 0.30196422286459884, "randn_s_per_value": 5.300182375671136e-10}),
}


def draw_sweep(rng, dm, *, big: bool | None, default_repeats: bool = False, even: bool = False) -> SweepCase:
    """A sweep for a stated peak (big=None) or a measured one, drawn from ``rng`` (sweep_search), or the
    fixed one of its kind where no noise seed of the drawn device tells the known mistakes apart."""
    batch_sizes, d_in, d_out, repeats, over = sweep_case(rng, big=big)
    if default_repeats:
        repeats = SWEEP_REPEATS
    if even and repeats % 2:
        repeats += 1  # an even number of repeats: the median is the mean of the two middle times
    stated = float(10 ** rng.uniform(10.5, 12.5)) if big is None else None
    found = sweep_search(dm, batch_sizes, d_in, d_out, repeats, stated, draw_spec(rng, **over), big=big)
    if found is None:
        kind = (big, default_repeats, even)
        found = sweep_search(dm, *FIXED_SWEEP[kind], big=big, tries=1)
        grader_check(found is not None, _(NO_FIXED_CASE).format(name=f"sweep {kind}"))
    return found


def sweep_search(dm, batch_sizes, d_in, d_out, repeats, stated, spec, *, big: bool | None,
                 tries: int | None = None) -> SweepCase | None:
    """The sweep on the first noise seed from ``spec``'s own (None if none of ``tries``) where:

    * every known mistake gives another answer (``distinct``);
    * the warm-ups' order does not show: the first batch size's warm-up run last (so that its first
      timed product finds warm caches) gives the same medians.  The docstring leaves their order open;
    * with a measured peak, the side the case is about wins by more than DISTINCT (the sweep's best rate
      for big=True, the peak measurement for big=False); for big=False also the peak measurement's
      fastest timed product is its last, so that timing fewer than its default repeats (the sweep's
      `repeats`, say) gives a lower peak, still above the sweep's best rate."""
    F = 2 * PEAK_N**3

    def answers_of(s):
        return sweep_answers(dm, s, batch_sizes, d_in, d_out, repeats)

    def sides(s, answers, timed) -> tuple[float, float, float]:
        """(the sweep's best rate, the measured peak, the peak measured with the sweep's repeats)."""
        return (max(rates_of(batch_sizes, d_in, d_out, answers["right"])), F / min(timed),
                F / min(timed[:repeats]))

    def fits(s, answers) -> bool:
        warm_first = sweep_seconds(dm, s, batch_sizes, d_in, d_out, repeats, first_warmed_last=True)
        if not same(warm_first, answers["right"]):
            return False
        if big is None:
            return True
        timed = probe_times(dm, s)
        best, probe, probe_r = sides(s, answers, timed)
        if big:
            return best > probe * (1 + DISTINCT)
        return (probe > best * (1 + DISTINCT) and timed[-1] < min(timed[:-1]) * (1 - DISTINCT)
                and probe_r > best * (1 + DISTINCT))

    found = with_distinct_noise(spec, answers_of, also=fits, tries=tries)
    if found is None:
        return None
    spec, answers = found
    best, probe, probe_r = sides(spec, answers, probe_times(dm, spec))
    return SweepCase(list(batch_sizes), d_in, d_out, repeats, stated, spec, answers, best, probe, probe_r)


def check_sweep_case(student, reference, rng, dm, exact_ints, *, i: int, n: int, big: bool | None,
                     default_repeats: bool = False, even: bool = False):
    """One drawn sweep on a simulated device, against the reference; a wrong result is explained."""
    c = draw_sweep(rng, dm, big=big, default_repeats=default_repeats, even=even)
    batch_sizes, d_in, d_out, spec, answers, stated = c.batch_sizes, c.d_in, c.d_out, c.spec, c.answers, c.stated
    label = {None: STATED, True: MEASURED_BIG, False: MEASURED_SMALL}[big]
    how_many = REPEATS_EVEN if even else REPEATS_DEFAULT if default_repeats else REPEATS_RANDOM
    case = _(SIM_SWEEP_CASE).format(i=i, n=n, repeats=_(how_many), peak=_(label))
    kw = dict(batch_sizes=batch_sizes, d_in=d_in, d_out=d_out)
    if not default_repeats:
        kw["repeats"] = c.repeats
    if stated is not None:
        kw["peak_flop_per_s"] = stated
    got = student.measure_matmul_throughput(**kw, device=for_student(spec))
    want = reference.measure_matmul_throughput(**kw, device=for_reference(spec))
    right_peak = stated if stated is not None else max(c.best, c.probe)
    grader_check(same(want["seconds"], answers["right"]) and same(want["peak_flop_per_s"], right_peak),
                 _("grader bug: the reference disagrees with the device model"))

    check_structure(got, batch_sizes, d_in, d_out, case=case, exact_ints=exact_ints)
    if not same(got["seconds"], want["seconds"]):
        explain_seconds([float(s) for s in got["seconds"]], dm, spec, batch_sizes, d_in, d_out, answers,
                        peak=got["peak_flop_per_s"], what="result['seconds']", case=case)
    assert_close(got["seconds"], want["seconds"], what="result['seconds']", case=case, rtol=RTOL)
    assert_close(got["flop_per_s"], want["flop_per_s"], what="result['flop_per_s']", case=case, rtol=RTOL)
    what = "result['peak_flop_per_s']"
    if stated is not None:
        assert_scalar(got["peak_flop_per_s"], stated, what=_("result['peak_flop_per_s'] when a peak is given"),
                      case=case, rtol=1e-12)
    elif not same(got["peak_flop_per_s"], want["peak_flop_per_s"]):
        if c.best > got["peak_flop_per_s"] * (1 + RTOL):
            fail(NOT_MAXED, what=what, case=case)
        # told apart from the sweep's best rate alone only where the probe with the sweep's repeats beats it
        if c.probe_sweep_repeats > c.best * (1 + DISTINCT) and same(got["peak_flop_per_s"], c.probe_sweep_repeats):
            fail(PROBE_REPEATS, what=what, case=case)
        if same(got["peak_flop_per_s"], c.best):
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
