"""Hidden tests, question "prefetch": a background loader thread, measured from outside.

Timing is graded on trend with generous margins, and the sleep cases are
measured three times (best of three), so a busy 2-core machine does not flip
a result. The GIL case compares each call's CPU time with its own wall time,
a ratio that a machine's changing speed does not distort. The timeline a
submission returns is only checked for structure; every time claim is
measured here around the call.
"""

import pytest

from autograder import messages as M
from autograder.i18n import N_, _
from autograder.testing import assert_equal, assert_keys

pytestmark = pytest.mark.question("prefetch")

TIMELINE_KEYS = ("order", "load_start", "load_end", "compute_start", "compute_end")
# Symptoms that the shared templates do not cover: structure of a timeline.
TIMELINE_BROKEN = N_("{what}{case}: {symptom}")
TOO_FAST = N_("{what}{case}: finished in {ratio:.2f}× the time its own sleeps need: "
              "some loading or computing was skipped")

UNMEASURED = N_("{what}: could not be measured on this grading machine; please tell your instructor")

SLEEP_S = 0.03  # one simulated load or compute (I/O-like: time.sleep releases the GIL)
CPU_ITERS = 1_000_000  # one pure-Python stage, about 30 ms (holds the GIL)


def best_wall(student, repeats: int = 3, **kw) -> float:
    return min(student.run_loader.measured(**kw)[1].wall_s for _repeat in range(repeats))


def best_pair(student, repeats: int = 3, **kw) -> tuple[float, float]:
    """Best-of-n wall time without and with prefetching, interleaved so load noise hits both."""
    seq, pre = [], []
    for _repeat in range(repeats):
        seq.append(student.run_loader.measured(prefetch=False, **kw)[1].wall_s)
        pre.append(student.run_loader.measured(prefetch=True, **kw)[1].wall_s)
    return min(seq), min(pre)


@pytest.mark.question("prefetch", points=2)
def test_prefetch_overlaps_sleep_loading(student):
    n = 8
    kw = dict(n_items=n, load_work=SLEEP_S, compute_work=SLEEP_S, kind="sleep", queue_size=2)
    case = _("kind='sleep', load = compute = 30 ms, 8 items")
    seq, pre = best_pair(student, **kw)
    floor = n * 2 * SLEEP_S  # the sequential loop cannot beat its own sleeps
    if seq < 0.95 * floor:
        raise AssertionError(M.say(TOO_FAST, what="run_loader(prefetch=False)", case=M.case_suffix(case),
                                   ratio=seq / floor))
    if pre < 0.95 * n * SLEEP_S:
        raise AssertionError(M.say(TOO_FAST, what="run_loader(prefetch=True)", case=M.case_suffix(case),
                                   ratio=pre / (n * SLEEP_S)))
    if pre / seq > 0.8:  # ideal 0.5: the loads hide behind the computes
        raise AssertionError(M.say(M.RATIO_SYMPTOM,
            what=_("wall time with prefetch=True"), case=M.case_suffix(case), ratio=pre / seq,
            reference_name=_("the sequential loop's; waits that release the GIL should overlap "
                             "(at most 0.80× expected)")))


def test_prefetch_total_is_max_not_sum(student):
    # Loading is the slower stage here: the compute thread waits on the queue.
    n, load, compute = 6, 0.06, 0.03
    case = _("kind='sleep', load 60 ms, compute 30 ms, 6 items")
    pre = best_wall(student, n_items=n, load_work=load, compute_work=compute, kind="sleep", prefetch=True, queue_size=2)
    ideal = n * max(load, compute) + min(load, compute)  # steady state: the slowest stage sets the pace
    if pre < 0.95 * n * load:
        raise AssertionError(M.say(TOO_FAST, what="run_loader(prefetch=True)", case=M.case_suffix(case),
                                   ratio=pre / (n * load)))
    if pre / ideal > 1.25:  # the plain sum would be 1.38× the ideal
        raise AssertionError(M.say(M.RATIO_SYMPTOM,
            what=_("wall time with prefetch=True"), case=M.case_suffix(case), ratio=pre / ideal,
            reference_name=_("the overlapped ideal n × max(load, compute) + min(load, compute) "
                             "(at most 1.25× expected; adding the stages would give 1.38×)")))


def test_gil_python_cpu_loading_does_not_speed_up(student, reference):
    # Judged within each call: its CPU time (all threads, plus any child process it joined)
    # against its own wall time. Under the GIL one thread at a time runs Python, so a call
    # cannot use much more than one CPU-second per second; truly parallel loading (processes)
    # would use up to two. Comparing with a *different* call instead lets a busy machine's
    # changing speed decide: a correct thread measured 0.69× another call's CPU time in CI.
    kw = dict(n_items=8, load_work=CPU_ITERS, compute_work=CPU_ITERS, kind="python_cpu", queue_size=2)
    case = _("kind='python_cpu', load = compute = 1e6 iterations, 8 items")
    ref_cpu = reference.run_loader.measured(prefetch=False, **kw)[1].cpu_s
    runs = {prefetch: [student.run_loader.measured(prefetch=prefetch, **kw)[1] for _repeat in range(2)]
            for prefetch in (False, True)}
    if not all(m.cpu_s == m.cpu_s for ms in runs.values() for m in ms) or not ref_cpu > 0:
        raise AssertionError(M.say(UNMEASURED, what=_("CPU time of run_loader")))  # NaN: /proc unreadable
    for prefetch, ms in runs.items():
        cpu = max(m.cpu_s for m in ms)
        if cpu < 0.3 * ref_cpu:  # the pure-Python work must actually run
            raise AssertionError(M.say(M.RATIO_SYMPTOM,
                what=_("CPU time of run_loader(prefetch={prefetch})").format(prefetch=prefetch),
                case=M.case_suffix(case), ratio=cpu / ref_cpu,
                reference_name=_("the CPU time the given python_work loops take: some work was skipped")))
    parallel = min(m.cpu_s / m.wall_s for m in runs[True])
    if parallel > 1.3:  # a thread under the GIL: at most about 1.0
        raise AssertionError(M.say(M.RATIO_SYMPTOM,
            what=_("CPU time of run_loader(prefetch={prefetch})").format(prefetch=True), case=M.case_suffix(case),
            ratio=parallel,
            reference_name=_("its own wall time; pure-Python loading in a thread cannot run in parallel "
                             "under the GIL (at most 1.30× expected; use a threading.Thread, not processes)")))


def check_timeline(tl, n: int, *, prefetch: bool, case: str) -> None:
    what = _("run_loader(prefetch={prefetch}) timeline").format(prefetch=prefetch)
    sfx = M.case_suffix(case)

    def broken(symptom: str):
        raise AssertionError(M.say(TIMELINE_BROKEN, what=what, case=sfx, symptom=symptom))

    assert_keys(tl, TIMELINE_KEYS, what=what, case=case)
    assert_equal(list(tl["order"]), list(range(n)),
                 what=_("{what}['order'] (items must be computed in order)").format(what=what), case=case)
    for key in TIMELINE_KEYS[1:]:
        if len(tl[key]) != n:
            broken(_("{key} has {count} entries for {n} items").format(key=repr(key), count=len(tl[key]), n=n))
    ls, le, cs, ce = (tl[k] for k in TIMELINE_KEYS[1:])
    eps = 1e-6
    for i in range(n):
        if not (0 <= ls[i] <= le[i] + eps and cs[i] <= ce[i] + eps):
            broken(_("item {i} ends before it starts, or starts before the call").format(i=i))
        if cs[i] < le[i] - eps:
            broken(_("item {i} is computed before it finished loading").format(i=i))
        if i and (ls[i] < le[i - 1] - eps or cs[i] < ce[i - 1] - eps):
            broken(_("item {i} starts loading (or computing) before item {previous} finished: "
                     "one loader, one consumer").format(i=i, previous=i - 1))
    overlapped = any(ls[i + 1] < ce[i] - eps for i in range(n - 1))
    if prefetch and not overlapped:
        broken(_("no item was loaded while the previous one was computing: nothing was prefetched"))
    if not prefetch and overlapped:
        broken(_("an item was loaded while the previous one was computing, but prefetch=False is sequential"))


def test_timeline_structure(student):
    n = 5
    for prefetch in (False, True):
        case = _("kind='sleep', load = compute = 10 ms, 5 items")
        tl, meas = student.run_loader.measured(n_items=n, load_work=0.01, compute_work=0.01, kind="sleep",
                                               prefetch=prefetch, queue_size=2)
        check_timeline(tl, n, prefetch=prefetch, case=case)
        if max(tl["compute_end"]) > meas.wall_s + 1e-3:
            raise AssertionError(M.say(TIMELINE_BROKEN,
                what=_("run_loader(prefetch={prefetch}) timeline").format(prefetch=prefetch), case=M.case_suffix(case),
                symptom=_("it ends after the call returned (times must be seconds since the call began)")))


def test_queue_bounds_how_far_the_loader_runs_ahead(student):
    # Fast loads, slow computes: an unbounded loader would load everything at once.
    n, q = 8, 2
    case = _("kind='sleep', load 2 ms, compute 30 ms, 8 items, queue_size=2")
    tl = student.run_loader(n_items=n, load_work=0.002, compute_work=0.03, kind="sleep", prefetch=True, queue_size=q)
    check_timeline(tl, n, prefetch=True, case=case)
    # Loading item i needs item i-1 in the queue, so item i-q-1 was taken out,
    # which happens only after item i-q-2 finished computing.
    for i in range(q + 2, n):
        if tl["load_start"][i] < tl["compute_end"][i - q - 2] - 1e-6:
            raise AssertionError(M.say(TIMELINE_BROKEN,
                what=_("run_loader(prefetch={prefetch}) timeline").format(prefetch=True), case=M.case_suffix(case),
                symptom=_("item {i} started loading before item {earlier} finished computing: the loader ran "
                          "more than queue_size + 1 items ahead (is the queue bounded by queue_size?)").format(
                              i=i, earlier=i - q - 2)))
