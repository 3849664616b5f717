"""Bulk grading throughput, measured in one run.

Generates N Lab 2 submissions (a mix of correct, partly correct and broken:
the reference, the negative variants, the partial one, the stub and a syntax
error, each made unique by a comment), grades them with `--jobs 1` and
`--jobs 2`, then reruns the finished batch (a resume: nothing changed).
Prints submissions per minute and the ratios.

Targets: 300 submissions in <= 10 min on 2 cores; --jobs 2 at least 1.6x
faster than --jobs 1; a resumed rerun in <= 5 s (it stages and hashes,
reads raw/ once and grades nothing: ``autograder/batch/bulk.py``).

    python benchmarks/bulk_grading.py [--n 200]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from autograder.build import candidates
from autograder.core import labs
from autograder.commands import grade


def make_batch(lab: labs.Lab, n: int, dest: Path) -> None:
    pool = candidates.all_candidates(lab)
    for i in range(n):
        cand = pool[i % len(pool)]
        sub = dest / f"student_{i:04d}"
        for name, text in candidates.sources(lab, cand).items():
            sub.mkdir(parents=True, exist_ok=True)
            (sub / name).write_text(f"{text}\n# submission {i}\n")


def timed(**kwargs) -> float:
    t0 = time.perf_counter()
    assert grade.main(quiet=True, **kwargs) == 0
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    lab = labs.get("lab2")
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "subs"
        make_batch(lab, args.n, subs)
        t1 = timed(lab="lab2", submissions_dir=str(subs), out=str(Path(tmp) / "j1"), jobs=1)
        t2 = timed(lab="lab2", submissions_dir=str(subs), out=str(Path(tmp) / "j2"), jobs=2)
        tr = timed(lab="lab2", submissions_dir=str(subs), out=str(Path(tmp) / "j2"), jobs=2)
    n = args.n
    print(f"{'measure':<40}{'value':>14}{'target':>16}")
    print(f"{'--jobs 1':<40}{n / t1 * 60:>9.1f} /min")
    print(f"{'--jobs 2':<40}{n / t2 * 60:>9.1f} /min")
    print(f"{'--jobs 2 speed-up over --jobs 1':<40}{t1 / t2:>13.2f}x{'>= 1.6x':>16}")
    print(f"{'300 submissions at --jobs 2 (projected)':<40}{300 * t2 / n / 60:>10.1f} min{'<= 10 min':>16}")
    print(f"{'resumed rerun of the finished batch':<40}{tr:>12.2f} s{'<= 5 s':>16}")


if __name__ == "__main__":
    main()
