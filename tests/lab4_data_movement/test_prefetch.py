"""Hidden tests, question "prefetch": a background loader thread, judged from recorded events.

run_loader does its work through the shipped lab4_sim.Recorder, which
records every load and compute: start, end, thread and process. The
submission returns those records as plain data and these tests judge the
order of the intervals only: what overlapped, how far loading ran ahead,
which thread and which process did what. No test compares a time with a
threshold or a CPU/wall ratio, so a busy machine cannot change a verdict:

* a sequential loop never overlaps, whatever the load (by construction);
* the queue bound is a happens-before fact: put(i−1) returned before
  load i began, so item i−queue_size−1 had been taken, so item
  i−queue_size−2 had finished computing. A correct loader never breaks
  it; whether a loader without the bound shows that it runs ahead depends
  on how fast it loads next to the computes, so only the queue test
  checks it, with loads of 1 ms against computes of 40 ms (over seven
  windows). The other tests, whose stages are short or hold the GIL,
  check structure only: there a missing bound would show only sometimes;
* each item is loaded exactly once: the Recorder files every load when it
  happens, so a consumer that loads an item again (and drops the copy)
  shows a second load event, whatever the timing;
* the loader thread is joined: the report lists the threads that did
  recorded work and had not been joined when rec.report() ran (a flag
  that join() sets, not whether the thread happened to have ended);
* the queue is used up to queue_size (checked where queue_size > 1, in the
  queue test): some item i starts loading before item i−queue_size−1 has
  finished computing. A queue that holds fewer items makes that impossible
  (happens-before again); a correct loader does it at every item, one
  window is enough, as for overlap;
* overlap needs only one item i+1 that starts loading during the 50 ms
  sleep of computing item i: a correct loader starts it right after the
  put, and would have to be starved for the whole sleep of every item to
  miss. Loaders that do not overlap never do, so they always lose.
"""

import pytest

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_equal, assert_keys

pytestmark = pytest.mark.question("prefetch")

EVENT_KEYS = ("item", "stage", "start", "end", "thread", "pid", "kind", "amount")
BROKEN = N_("{what}{case}: {symptom}")
CPU_ITERS = 100_000  # one pure-Python stage, about 3 ms (holds the GIL)


def events_by_item(report, n: int, *, prefetch: bool, kind: str, load: float, compute: float, case: str):
    """Check a Recorder report's structure; return ({item: load event}, {item: compute event})."""
    what = _("run_loader(prefetch={prefetch}) events").format(prefetch=prefetch)
    sfx = M.case_suffix(case)

    def broken(symptom: str):
        raise AssertionError(M.say(BROKEN, what=what, case=sfx, symptom=symptom))

    assert_keys(report, ("pid", "thread", "events", "unjoined"), what=_("run_loader's return value (rec.report())"),
                case=case)
    events = report["events"]
    if not isinstance(events, list) or not all(isinstance(e, dict) and set(e) == set(EVENT_KEYS) for e in events):
        broken(_("not a list of Recorder events: return rec.report()"))
    # Recorded by the Recorder when report() ran: threads that loaded or computed and had not been
    # joined. A fact about the code path (was join() called before the report?), never about timing.
    if report["unjoined"] != []:
        broken(_("a thread that loaded items had not been joined when rec.report() ran: join the loader thread "
                 "before calling rec.report()"))
    loads, computes = {}, {}
    for e in events:
        stage = {"load": loads, "compute": computes}.get(e["stage"])
        if stage is None or e["item"] not in range(n):
            broken(_("an event for an unknown stage or item"))
        if e["item"] in stage:  # every load is recorded, also one whose item was then dropped
            broken(_("item {i} has more than one {stage} event (load and compute each item once)").format(
                i=e["item"], stage=e["stage"]))
        stage[e["item"]] = e
    for i in range(n):
        if i not in loads or i not in computes:
            broken(_("item {i} was never loaded or never computed (each item once, through rec.load and "
                     "rec.compute)").format(i=i))
    for stage, by_item, amount in (("load", loads, load), ("compute", computes, compute)):
        if any(e["kind"] != kind or e["amount"] != float(amount) for e in by_item.values()):
            broken(_("a {stage} ran with another kind or amount than the call asked for").format(stage=stage))
    L, C = [loads[i] for i in range(n)], [computes[i] for i in range(n)]
    if not all(0 <= e["start"] <= e["end"] for e in events):
        broken(_("an event ends before it starts, or starts before the Recorder was created"))
    for i in range(n):
        if C[i]["start"] < L[i]["end"]:
            broken(_("item {i} is computed before it finished loading").format(i=i))
        if i and C[i]["start"] < C[i - 1]["end"]:
            broken(_("item {i} starts computing before item {previous} finished: items are computed one at a "
                     "time, in order").format(i=i, previous=i - 1))
        if i and L[i]["start"] < L[i - 1]["end"]:
            broken(_("item {i} starts loading before item {previous} finished: one loader, in order").format(
                i=i, previous=i - 1))
    if any(e["pid"] != report["pid"] for e in C) or any(e["thread"] != report["thread"] for e in C):
        broken(_("items are computed outside the calling thread (create the Recorder there and compute there)"))
    if any(e["pid"] != report["pid"] for e in L):
        broken(_("items are loaded in another process: prefetch with a threading.Thread, whose limits under "
                 "the GIL are what this exercise shows"))
    load_threads = {e["thread"] for e in L}
    if not prefetch and load_threads != {report["thread"]}:
        broken(_("prefetch=False loads in another thread; the sequential loop uses only the calling thread"))
    if prefetch and (len(load_threads) != 1 or report["thread"] in load_threads):
        broken(_("prefetch=True must load every item in one background thread, not in the calling thread"))
    overlapped = any(L[i + 1]["start"] < C[i]["end"] for i in range(n - 1))
    if not prefetch and overlapped:
        broken(_("an item was loaded while the previous one was computing, but prefetch=False is sequential"))
    return L, C, overlapped


def check_bound(L, C, q: int, *, case: str) -> None:
    # Loading item i needs put(i-1) to have returned, so item i-q-1 was taken out, which
    # happens only after item i-q-2 finished computing.
    for i in range(q + 2, len(L)):
        if L[i]["start"] < C[i - q - 2]["end"]:
            raise AssertionError(M.say(BROKEN,
                what=_("run_loader(prefetch={prefetch}) events").format(prefetch=True), case=M.case_suffix(case),
                symptom=_("item {i} started loading before item {earlier} finished computing: the loader ran more "
                          "than queue_size + 1 items ahead (is the queue bounded by queue_size?)").format(
                              i=i, earlier=i - q - 2)))


def check_fills_the_queue(L, C, q: int, *, case: str) -> None:
    # The other side of the bound, for queue_size > 1: with fast loads and slow computes, while item
    # j computes, items j+1 .. j+q wait in the queue and the loader is already loading item j+q+1
    # (it took a few ms to get there after get(j)). A loader whose queue holds fewer than queue_size
    # items (maxsize=1 whatever queue_size says) cannot load item i before item i-q-1 has been
    # computed and the next one taken: a happens-before fact, so it never shows this. Only one of the
    # windows is needed: a correct loader would have to be starved for a whole 40 ms compute at every
    # one of them to miss, as in the overlap test.
    if not any(L[i]["start"] < C[i - q - 1]["end"] for i in range(q + 1, len(L))):
        raise AssertionError(M.say(BROKEN,
            what=_("run_loader(prefetch={prefetch}) events").format(prefetch=True), case=M.case_suffix(case),
            symptom=_("no item i started loading before item i − queue_size − 1 finished computing: with fast "
                      "loads and slow computes the loader never ran queue_size + 1 items ahead (does the queue "
                      "hold up to queue_size items, and does the loader put each item right after loading it?)")))


def test_sequential_loader_runs_in_one_thread(student):
    # Structure only (a sequential loop cannot overlap at any speed), so the stages are short.
    n = 5
    case = _("kind='sleep', load = compute = 2 ms, {n} items").format(n=n)
    report = student.run_loader(n_items=n, load_work=0.002, compute_work=0.002, kind="sleep", prefetch=False)
    events_by_item(report, n, prefetch=False, kind="sleep", load=0.002, compute=0.002, case=case)


@pytest.mark.question("prefetch", points=2)
def test_prefetch_overlaps_loading_with_compute(student):
    n, t = 6, 0.05
    case = _("kind='sleep', load = compute = 50 ms, {n} items, queue_size=2").format(n=n)
    report = student.run_loader(n_items=n, load_work=t, compute_work=t, kind="sleep", prefetch=True, queue_size=2)
    _L, _C, overlapped = events_by_item(report, n, prefetch=True, kind="sleep", load=t, compute=t, case=case)
    if not overlapped:
        raise AssertionError(M.say(BROKEN,
            what=_("run_loader(prefetch={prefetch}) events").format(prefetch=True), case=M.case_suffix(case),
            symptom=_("no item was loaded while the previous one was computing: nothing was prefetched")))


def test_queue_bounds_how_far_the_loader_runs_ahead(student):
    # Fast loads, slow computes: an unbounded loader would load everything at once, and a queue
    # smaller than queue_size would keep the loader from running queue_size + 1 items ahead.
    for n, q in ((8, 2), (6, 1)):
        case = _("kind='sleep', load 1 ms, compute 40 ms, {n} items, queue_size={q}").format(n=n, q=q)
        report = student.run_loader(n_items=n, load_work=0.001, compute_work=0.04, kind="sleep", prefetch=True,
                                    queue_size=q)
        L, C, _overlapped = events_by_item(report, n, prefetch=True, kind="sleep", load=0.001, compute=0.04,
                                           case=case)
        check_bound(L, C, q, case=case)
        if q > 1:  # with queue_size=1 a loader that ignores queue_size looks the same
            check_fills_the_queue(L, C, q, case=case)


def test_gil_python_cpu_loader_is_a_thread(student):
    # Pure-Python loading: the lab's point is that a *thread* cannot speed it up under the GIL
    # (the notebook measures it). Graded: the same structure, and the loads in a thread of the
    # calling process, never in another process.
    n = 6
    case = _("kind='python_cpu', load = compute = 1e5 iterations, {n} items").format(n=n)
    for prefetch in (False, True):
        report = student.run_loader(n_items=n, load_work=CPU_ITERS, compute_work=CPU_ITERS, kind="python_cpu",
                                    prefetch=prefetch, queue_size=2)
        events_by_item(report, n, prefetch=prefetch, kind="python_cpu", load=CPU_ITERS, compute=CPU_ITERS,
                       case=case)


def test_every_item_once_in_order(student, rng):
    n, q = int(rng.integers(3, 10)), int(rng.integers(1, 4))
    # Order and the queue bound are happens-before facts, true at any speed: short sleeps.
    load, compute = (round(float(x), 4) for x in rng.uniform(0.0005, 0.003, size=2))
    case = _("kind='sleep', a random number of items and queue_size, random short sleeps")  # never n or q
    for prefetch in (False, True):
        report = student.run_loader(n_items=n, load_work=load, compute_work=compute, kind="sleep",
                                    prefetch=prefetch, queue_size=q)
        events_by_item(report, n, prefetch=prefetch, kind="sleep", load=load, compute=compute, case=case)
        computed = [e["item"] for e in sorted(report["events"], key=lambda e: e["start"]) if e["stage"] == "compute"]
        assert_equal(computed, list(range(n)), what=_("the order in which items were computed"), case=case)
