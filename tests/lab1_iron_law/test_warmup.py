"""Break it on purpose: a timing that forgets the warm-up, graded by its symptom.

Warming up a timing is beyond the chapter (its only warm-up is the learning rate's); the practice
is torch.utils.benchmark.Timer's (PyTorch documentation, "Benchmark Utils"), and the question's
hint points to §5 Identifying Bottlenecks, where the chapter says to measure before optimizing.

The student writes the mistake as its own function, ``time_without_warmup``,
beside the right one, ``time_with_warmup``.  On a simulated device
(``lab1_device.py``, the grader's copy) the first product of a shape pays a
one-time cost (``spec["warmup_s"]``), and the same calls always take the same
times, so each function's times are checked against the device model
replaying its protocol:

* ``time_without_warmup``: its FIRST time includes the first-call cost and the
  later ones do not: the times of calls 0 to repeats - 1 of the shape.  A
  "broken" function that warms up first (accidentally right) shows no such
  cost and loses this test; one broken another way (operands made between
  the clock reads, more or fewer products) does not give these times either.
* ``time_with_warmup``: no time includes it: calls 1 to repeats.  One that
  forgets the warm-up loses this test.

Times shorter than any product of the shape on the device (the model's lower
bound: no noise, warm caches, no first-call cost) were not taken on
``device.clock()``: that is said first, whatever else is wrong.  "No symptom"
is said only of times equal to those after a warm-up.

The one-time cost is 10 to 1000 times a product's time on every drawn device,
so the two protocols never give the same times.  Cases are named by number,
never by their drawn sizes.
"""

import math

import pytest
import torch

from autograder.core.i18n import N_, _
from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_equal, grader_check

pytestmark = pytest.mark.question("warmup")

RTOL = 1e-9  # same model, same calls: only the order of float additions can differ
GRADER_THREADS = 1  # the setting a student's simulated device is given (test_throughput.py says why)
CASES = 3

CASE = N_("simulated device {i} of {n}, random shape and repeats")
NOT_TIMES = N_("{what}{case}: not a list of positive, finite times, one per timed product")
NO_SYMPTOM = N_("{what}{case}: its first time does not include the first-call cost, so the mistake does not show: "
                "this function must time the very first product of the shape, with no untimed product before it")
OTHER_MISTAKE = N_("{what}{case}: its times are not those of `repeats` products timed one at a time from the very "
                   "first one: make X and W first, then read device.clock() just before and just after each "
                   "device.matmul, with nothing else between")
HAS_SYMPTOM = N_("{what}{case}: its first time includes the first-call cost: run one untimed product before the "
                 "timed ones")
REAL_CLOCK = N_("{what}{case}: faster than this device can run any product: time with device.clock(), not with "
                "time.perf_counter or time.time")
NOT_RIGHT = N_("{what}{case}: its times are not those of `repeats` products timed one at a time after one untimed "
               "warm-up product: make X and W first, then read device.clock() just before and just after each "
               "device.matmul, with nothing else between")


def replay(dm, spec: dict, shape: tuple[int, int, int], products: int) -> list[float]:
    """The simulated seconds of ``products`` products of one shape, back to back, on a new device."""
    s = dm.simulated_spec(spec)
    return [dm.product_seconds(s, shape, c, after_same_shape=c > 0) for c in range(products)]


def below_the_model(dm, spec: dict, shape: tuple[int, int, int], times: list[float]) -> bool:
    """Some time is shorter than any product of ``shape`` on this device (its least time: no noise, warm
    caches, no first-call cost): not measured on ``device.clock()``."""
    least = dm.least_product_seconds(dm.simulated_spec(spec), shape)
    return any(t < least * (1 - RTOL) for t in times)


def same(a, b) -> bool:
    return len(a) == len(b) and all(math.isfinite(x) and abs(x - y) <= RTOL * abs(y) for x, y in zip(a, b))


def draw_case(rng) -> tuple[dict, dict]:
    """(arguments, device spec): a product of 10 to 1000 times less than the one-time cost."""
    rows, d_in, d_out = (int(rng.integers(1, 300)) for _k in range(3))
    spec = {"kind": "simulated", "peak_flop_per_s": float(10 ** rng.uniform(10.5, 12)),
            "overhead_s": float(10 ** rng.uniform(-5.5, -5)), "half_rate_flops": float(10 ** rng.uniform(6, 7)),
            "warmup_s": float(10 ** rng.uniform(-2.5, -1.5)), "noise": float(rng.uniform(0.05, 0.3)),
            "seed": int(rng.integers(0, 2**31)), "repeat_speedup": float(rng.uniform(0.1, 0.4)),
            "randn_s_per_value": float(10 ** rng.uniform(-9.5, -8.5))}
    return {"rows": rows, "d_in": d_in, "d_out": d_out, "repeats": int(rng.integers(3, 9))}, spec


def times_of(got, repeats: int, *, what: str, case: str) -> list[float]:
    ok = isinstance(got, (list, tuple)) and all(
        isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) and t > 0 for t in got)
    if not ok:
        raise AssertionError(M.say(NOT_TIMES, what=what, case=M.case_suffix(case)))
    assert_equal(len(got), repeats, what=_("number of times {what} returns").format(what=what), case=case)
    return [float(t) for t in got]


def cases(rng, dm):
    for i in range(1, CASES + 1):
        args, spec = draw_case(rng)
        shape = (args["rows"], args["d_in"], args["d_out"])
        r = args["repeats"]
        timed = replay(dm, spec, shape, r + 1)  # call 0 (with the one-time cost), then calls 1 to r
        without, right = timed[:r], timed[1:]
        grader_check(not same(without[:1], right[:1]), _("grader bug: the two protocols agree"))
        yield _(CASE).format(i=i, n=CASES), args, spec, shape, without, right


def graded(rng, dm, student_fn, reference_fn, *, what: str, broken: bool) -> list[tuple]:
    """(case, without, right, got) of every case, the reference checked on each.  Times below the model's
    least on any case (another clock than device.clock()) are said first: the real clock's few
    microseconds can reach a drawn product's least time, but hardly on all three cases."""
    out = []
    for case, args, spec, shape, without, right in cases(rng, dm):
        want = reference_fn(**args, device={**spec, "threads": torch.get_num_threads()})
        grader_check(same(list(want), without if broken else right),
                     _("grader bug: the reference disagrees with the device model"))
        got = times_of(student_fn(**args, device={**spec, "threads": GRADER_THREADS}), args["repeats"], what=what,
                       case=case)
        out.append((case, spec, shape, without, right, got))
    for case, spec, shape, _without, _right, got in out:
        if below_the_model(dm, spec, shape, got):  # another clock: say so, not "no symptom"
            raise AssertionError(M.say(REAL_CLOCK, what=what, case=M.case_suffix(case)))
    return [(case, without, right, got) for case, _spec, _shape, without, right, got in out]


def test_no_warmup_shows_the_first_call_cost(student, reference, rng, device_model):
    """The broken function's first time includes the one-time cost of the shape's first product; the others do not."""
    what = "time_without_warmup"
    for case, without, right, got in graded(rng, device_model, student.time_without_warmup,
                                            reference.time_without_warmup, what=what, broken=True):
        if not same(got[:1], without[:1]):
            template = NO_SYMPTOM if same(got, right) else OTHER_MISTAKE  # warmed up, and timed right otherwise
            raise AssertionError(M.say(template, what=what, case=M.case_suffix(case)))
        if not same(got, without):
            raise AssertionError(M.say(OTHER_MISTAKE, what=what, case=M.case_suffix(case)))


def test_with_warmup_leaves_it_out(student, reference, rng, device_model):
    """The right function's times are those after one untimed warm-up: none includes the one-time cost."""
    what = "time_with_warmup"
    for case, without, right, got in graded(rng, device_model, student.time_with_warmup,
                                            reference.time_with_warmup, what=what, broken=False):
        if same(got[:1], without[:1]):
            raise AssertionError(M.say(HAS_SYMPTOM, what=what, case=M.case_suffix(case)))
        if not same(got, right):
            raise AssertionError(M.say(NOT_RIGHT, what=what, case=M.case_suffix(case)))
