"""How long each lab notebook takes to run headless on the reference, against the chapter's budget.

The chapter promises that a notebook, its reference filled in, runs from top to
bottom in under a minute.  This times that run: each lab's notebook in each
language, in a copy of the lab's folder as a student has it (lab.toml, otter
tests, public tests, the chapter's outline beside it), with the reference's
modules, through nbclient as ``tests/framework/content/test_notebooks.py``
runs it.  A time is a fact about the machine as much as about the notebook,
so it is measured here and never decides a test: the test suite checks what
the run prints, draws and says (issue #36).  The exit status is 1 when a run
is over the budget, so a CI step on a known machine may use it.

    python benchmarks/notebooks.py                      # every lab, both languages
    python benchmarks/notebooks.py lab1 lab4 --lang en --repeat 3

A run is timed from the kernel's start to the end of its last cell, what a
student waits for; the kernel's shutdown after it, which nbclient waits for
and Jupyter or Colab do not (``notebook_cells.py`` prints it), is left out.
The best of ``--repeat`` runs is the figure (the machine's floor); the first
and the median are printed beside it.  Pass ``--busy N`` to time them beside
N busy loops.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
from pathlib import Path

from autograder.authoring import notebooks
from autograder.core import i18n, labs
from notebook_cells import run_once  # this folder: the one timed run of a notebook

BUDGET_S = 60.0  # the chapter's "under one minute"


def busy_loop() -> None:
    while True:
        pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labs", nargs="*", help="labs to run (default: all)")
    ap.add_argument("--lang", choices=notebooks.LANGS, action="append", help="default: every language")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--busy", type=int, default=0, help="busy loops beside the runs")
    args = ap.parse_args()
    targets = [labs.get(n) for n in args.labs] if args.labs else labs.all_labs()
    langs = args.lang or list(notebooks.LANGS)
    os.environ.pop(i18n.ENV, None)  # as on Colab: the notebook's first cell says its language
    loops = [multiprocessing.Process(target=busy_loop, daemon=True) for _ in range(args.busy)]
    for p in loops:
        p.start()
    over = []
    try:
        print(f"{'notebook':<34} {'best s':>7} {'first s':>8} {'median s':>9}  budget {BUDGET_S:.0f} s")
        for lab in targets:
            for lang in langs:
                times = [run_once(lab, lang)[0] for _ in range(args.repeat)]
                name = notebooks.notebook_path(Path(), lab.name, lang).name
                best = min(times)
                verdict = "ok" if best < BUDGET_S else "OVER"
                if best >= BUDGET_S:
                    over.append(name)
                print(f"{name:<34} {best:7.1f} {times[0]:8.1f} {statistics.median(times):9.1f}  {verdict}", flush=True)
    finally:
        for p in loops:
            p.terminate()
    if over:
        print(f"over the {BUDGET_S:.0f} s budget: {', '.join(over)}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
