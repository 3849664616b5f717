"""Bulk grading throughput, measured in one run, for each lab.

For each lab: generates N submissions (a mix of correct, partly correct and
broken: the reference, the negative variants, the partial one, the stub, a
syntax error and the correct alternatives, each made unique by a comment),
grades one of them alone (``autograder grade`` on a folder of one: a fresh
zygote, a fresh grader), then the N with ``--jobs 1`` and ``--jobs 2``, and
with ``autograder grade``'s default (one grader a core, times the lab's
``graders_per_core``: 2 for lab 4, whose tests mostly sleep), then reruns
the finished batch (a resume: nothing changed).  Prints, per lab, each
submission's cost in a batch as ``grade`` runs it against its cost alone,
and the ratios; beside them, the bounds that a batch's CPU sets on this
machine's cores: the most ``--jobs 2`` could gain, and the least batch/alone
could be (its CPU-seconds spread over every core).

Targets: per submission in a batch / one submission alone <= 0.10 and
--jobs 2 at least 1.7x faster than --jobs 1 on 2 cores, in every lab (issue
#36; #17 set 0.15 and 1.6x); 300 submissions in <= 10 min; a resumed rerun
in <= 5 s (it stages and hashes, reads raw/ once and grades nothing:
``autograder/batch/bulk.py``).

    python benchmarks/bulk_grading.py [--n 24] [--labs lab1,lab2,lab3,lab4] [--mix reference,stub,...]

``--mix`` fixes the candidates the batch cycles through (ids as ``autograder
verify`` prints them; ids a lab lacks are skipped).  Comparing two commits
needs the same mix in both: the set of negative variants grows, and a new
variant costs what its tests cost, not what the engine costs.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from autograder.batch import gradebook
from autograder.authoring import candidates
from autograder.commands import default_jobs, grade
from autograder.core import labs


def make_batch(lab: labs.Lab, n: int, dest: Path, mix: list[str] | None = None) -> None:
    pool = [c for c in candidates.all_candidates(lab) if mix is None or c.id in mix]
    for i in range(n):
        cand = pool[i % len(pool)]
        sub = dest / f"student_{i:04d}"
        sub.mkdir(parents=True, exist_ok=True)
        for name, text in candidates.sources(lab, cand).items():
            (sub / name).write_text(f"{text}\n# submission {i}\n")


def cpu_s() -> float:
    """CPU-seconds (user + system) of this process and of every process it and its children waited for.

    ``grade`` runs here; its zygote, graders and workers are its descendants, each reaped by its parent.
    """
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                        resource.RUSAGE_CHILDREN)))


def timed(**kwargs) -> tuple[float, float]:
    """(seconds, CPU-seconds) of one ``grade``."""
    t0, c0 = time.perf_counter(), cpu_s()
    assert grade.main(quiet=True, **kwargs) == 0
    return time.perf_counter() - t0, cpu_s() - c0


def measure(lab: labs.Lab, n: int, mix: list[str] | None = None) -> dict[str, float]:
    """Seconds: one submission alone, the batch at --jobs 1, 2 and grade's default, and the resumed rerun."""
    with tempfile.TemporaryDirectory() as tmp:
        subs, alone = Path(tmp) / "subs", Path(tmp) / "alone"
        make_batch(lab, n, subs, mix)
        make_batch(lab, 1, alone)  # the reference (the first candidate), by itself
        t0, _ = timed(lab=lab.short, submissions_dir=str(alone), out=str(Path(tmp) / "a"), jobs=1)
        t1, cpu1 = timed(lab=lab.short, submissions_dir=str(subs), out=str(Path(tmp) / "j1"), jobs=1)
        t2, cpu2 = timed(lab=lab.short, submissions_dir=str(subs), out=str(Path(tmp) / "j2"), jobs=2)
        jd = default_jobs([lab])
        td, cpud = (t2, cpu2) if jd == 2 else timed(lab=lab.short, submissions_dir=str(subs), out=str(Path(tmp) / "jd"),
                                                   jobs=jd)
        tr, _ = timed(lab=lab.short, submissions_dir=str(subs), out=str(Path(tmp) / "j2"), jobs=2)
        graded = gradebook.load_raw(Path(tmp) / "j1")  # --jobs 1: one submission at a time
    # where a submission's time goes in a warm grader: its tests' calls (student code in the
    # worker, the tests' comparisons, answers not yet kept) and the rest (pytest's collection
    # and fixtures, the report)
    tests = sum(t.duration_s for r in graded for t in r.tests) / len(graded)
    grader = sum(r.duration_s for r in graded) / len(graded)
    return {"alone": t0, "jobs1": t1, "jobs2": t2, "default": td, "default_jobs": jd, "resume": tr, "tests": tests,
            "grader": grader, "cpu1": cpu1, "cpu2": cpu2, "cpud": cpud}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=24, help="submissions per batch (default 24)")
    ap.add_argument("--labs", default="lab1,lab2,lab3,lab4")
    ap.add_argument("--mix", default=None, help="candidate ids to cycle through (default: all)")
    args = ap.parse_args()
    n = args.n
    mix = args.mix.split(",") if args.mix else None
    rows = {short: measure(labs.get(short), n, mix) for short in args.labs.split(",")}
    head = ["lab", "alone s", "jobs", "batch s/sub", "batch/alone", "jobs1 /min", "jobs2 /min", "speed-up",
            "300 subs", "resume s"]
    print(("{:<6}{:>12}{:>6}" + "{:>12}" * (len(head) - 3)).format(*head))
    for short, t in rows.items():
        per = t["default"] / n
        print(f"{short:<6}{t['alone']:>12.2f}{t['default_jobs']:>6}{per:>12.2f}{per / t['alone']:>12.3f}"
              f"{n / t['jobs1'] * 60:>12.1f}{n / t['jobs2'] * 60:>12.1f}{t['jobs1'] / t['jobs2']:>11.2f}x"
              f"{300 * per / 60:>8.1f} min{t['resume']:>12.2f}")
    print(f"targets: batch/alone <= 0.10, speed-up (--jobs 2 over --jobs 1) >= 1.7x, 300 subs <= 10 min, "
          f"resume <= 5 s (batches of {n}; jobs: grade's default here, the per-submission cost's)")
    print("\nwhere a submission's time goes in a warm grader (--jobs 1, mean per submission):")
    print(f"{'lab':<6}{'grader s':>12}{'test calls':>12}{'the rest':>12}")
    for short, t in rows.items():
        print(f"{short:<6}{t['grader']:>12.2f}{t['tests']:>12.2f}{t['grader'] - t['tests']:>12.2f}")
    print("test calls: student code in its worker and the tests' own work; the rest: pytest's "
          "collection, fixtures and report")
    cores = os.cpu_count() or 1
    print(f"\nthe CPU the batches took (user + system, every process of the run), and the most --jobs 2 could gain "
          f"on this machine's {cores} cores:")
    print(f"{'lab':<6}{'jobs1 CPU s':>13}{'busy cores':>12}{'jobs2 CPU s':>13}{'busy cores':>12}{'speed-up':>10}"
          f"{'at most':>9}")
    for short, t in rows.items():
        bound = cores * t["jobs1"] / t["cpu2"]  # --jobs 2 cannot finish before its CPU-seconds spread over every core
        print(f"{short:<6}{t['cpu1']:>13.1f}{t['cpu1'] / t['jobs1']:>12.2f}{t['cpu2']:>13.1f}"
              f"{t['cpu2'] / t['jobs2']:>12.2f}{t['jobs1'] / t['jobs2']:>9.2f}x{bound:>8.2f}x")
    print("at most: (cores x the --jobs 1 batch's seconds) / the --jobs 2 batch's CPU-seconds; --jobs 1 is one grader "
          "at a time, but its zygote, workers and the batch's own process run beside it")
    print(f"\nand the least batch/alone its CPU allows: a batch cannot finish before its CPU-seconds spread over the "
          f"{cores} cores")
    print(f"{'lab':<6}{'jobs':>6}{'CPU s':>10}{'CPU s/sub':>11}{'batch/alone':>13}{'at least':>10}")
    for short, t in rows.items():
        floor = t["cpud"] / cores / n  # seconds a submission, were every core busy with the batch throughout
        print(f"{short:<6}{t['default_jobs']:>6}{t['cpud']:>10.1f}{t['cpud'] / n:>11.2f}"
              f"{t['default'] / n / t['alone']:>13.3f}{floor / t['alone']:>10.3f}")
    print("at least: (the batch's CPU-seconds / cores / submissions) / one submission alone; below the target only "
          "if the tests' own work a submission is cheap enough")


if __name__ == "__main__":
    main()
