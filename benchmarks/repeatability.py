"""Are grades a function of the submission alone?  Grade twice under load and compare.

Grades every candidate ``autograder verify`` knows (reference, stub, negative
variants, correct alternatives) of the chosen labs, ``--runs`` times, each
time with ``--busy`` busy loops competing for the CPUs, and compares every
test's verdict across the runs.  A grade may never depend on the machine's
load, so every verdict must match; any that does not is printed with the
feedback of both runs, and the exit status is 1.

    python benchmarks/repeatability.py                 # all labs, 2 runs, 2 busy loops
    python benchmarks/repeatability.py lab1 lab4 --busy 3 --runs 3

Not part of CI (it grades every candidate several times); run it after
changing a hidden test that measures anything.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time

from autograder.authoring import candidates
from autograder.commands import default_jobs
from autograder.core import labs
from autograder.authoring import verify


def busy_loop() -> None:
    while True:
        pass


def verdicts(results) -> dict[tuple[str, str], str]:
    """(candidate, test) -> status, for one run."""
    return {(sub_id, t.name): t.status for sub_id, res in results for t in res.tests}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labs", nargs="*", help="labs to grade (default: all)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--busy", type=int, default=2, help="busy loops beside the grading")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--no-sandbox", dest="sandbox", action="store_false")
    args = ap.parse_args()
    targets = [labs.get(n) for n in args.labs] if args.labs else labs.all_labs()
    jobs = args.jobs or default_jobs(targets)  # as `autograder verify` grades them
    items = [(lab, f"{lab.short}/{c.id}", candidates.sources(lab, c))
             for lab in targets for c in candidates.verify_candidates(lab)]
    loops = [multiprocessing.Process(target=busy_loop, daemon=True) for _ in range(args.busy)]
    for p in loops:
        p.start()
    runs, feedback = [], []
    try:
        for r in range(args.runs):
            t0 = time.perf_counter()
            graded = verify.grade_batch(items, jobs=jobs, sandbox=args.sandbox)
            pairs = [(sub_id, res) for (_lab, sub_id, _src), res in zip(items, graded)]
            runs.append(verdicts(pairs))
            feedback.append({(sub_id, t.name): t.feedback for sub_id, res in pairs for t in res.tests})
            print(f"run {r + 1}: {len(items)} candidates, {len(runs[-1])} verdicts, "
                  f"{time.perf_counter() - t0:.0f} s with {args.busy} busy loops", flush=True)
    finally:
        for p in loops:
            p.terminate()
    keys = sorted(set().union(*runs))
    differ = [k for k in keys if len({run.get(k) for run in runs}) > 1]
    for k in differ:
        print(f"DIFFERS {k[0]} {k[1]}: " + " / ".join(str(run.get(k)) for run in runs))
        for i, fb in enumerate(feedback):
            first = next(iter((fb.get(k) or "").strip().splitlines()), "")
            print(f"    run {i + 1}: {first[:200]}")
    print(f"{len(keys) - len(differ)} of {len(keys)} verdicts identical over {args.runs} runs "
          f"({len(items)} candidates, {args.busy} busy loops, {'sandboxed' if args.sandbox else 'in-process'})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
