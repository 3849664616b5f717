"""A notebook's first run, cell by cell: where its seconds go, against the student-loop goals.

Runs each lab's notebook once per ``--repeat``, headless on the reference, in
a fresh kernel and a copy of the lab's folder as a student has it (as
``benchmarks/notebooks.py`` and ``tests/framework/content/test_notebooks.py``
run it), and times every cell.  Prints, per notebook, the best run's total
(from the kernel's start to the end of the last cell: what a student waits
for), its set-up cell (the first code cell: finds the lab, installs what is
missing, starts otter's checker), its slowest cells, and beside them the
kernel's shutdown, which nbclient waits for after the last cell (1.6-2.8 s
for lab 2 on the project's VM: a kernel holding torch, ``torch._dynamo`` and
matplotlib tearing itself down) and which nobody waits for in Jupyter or
Colab, where the kernel lives on after a run.

Goals (issue #36): a notebook's first run <= 10 s, its set-up cell <= 3 s.
Part of every run is torch's own: ``import torch``, and ``torch._dynamo``,
which torch imports the first time a ``torch.optim`` optimizer is built or a
``FlopCounterMode`` counts (about 1.2 s of CPU each); no cell can avoid them.

    python benchmarks/notebook_cells.py [lab1 lab3] [--lang en] [--repeat 1] [--top 6]
    python benchmarks/notebook_cells.py --student-venv ~/student-install   # in a student's own install

By default the kernel is this project's Python.  ``--student-venv DIR`` runs
them as a student's first run does instead: in ``DIR`` (made on the first
use, 2-3 minutes, and kept), ``autograder release`` writes the bundle and the
bundle README's own install commands make its venv (a fresh ``python3 -m
venv``, the pinned ``[student]`` dependencies, otter-grader); its Python is
the kernel (a kernelspec ``ipykernel install`` writes under ``DIR``), each
run works in a fresh copy of the bundle's lab folder with the reference's
modules, and nothing of this project is on its path.  The engine's and the
lab's bytecode is written as a student's Python writes it: before each lab's
first run every bytecode cache of the bundle (not the venv's, which pip
compiled) is removed, so that run compiles them as a first run on a fresh
install does, and the best of ``--repeat`` is a later run's.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograder.authoring import notebooks, release
from autograder.core import i18n, labs

GOAL_S, SETUP_GOAL_S = 10.0, 3.0
CPU_CELL = "import resource\nu = resource.getrusage(resource.RUSAGE_SELF)\nprint(u.ru_utime + u.ru_stime)"


KERNEL = "student-install"  # the kernelspec of a --student-venv install
# the bundle README's install commands, as a student types them in the bundle's folder
INSTALL = re.compile(r"^(python3 -m venv \.venv|\.venv/bin/pip install .*)$", re.MULTILINE)


def student_venv(where: Path) -> Path:
    """A student's install under ``where`` (made once, then reused): the bundle ``autograder release``
    writes, installed by its README's own commands; returns the bundle's ``assignments`` folder.  Its
    kernelspec (``ipykernel install``) is under ``where/jupyter``, which ``JUPYTER_PATH`` names."""
    bundle = where / "bundle"
    python = bundle / ".venv" / "bin" / "python"
    if not python.exists():
        if bundle.exists():
            raise SystemExit(f"{bundle} holds an unfinished install: remove {where} and run again")
        bundle.mkdir(parents=True)
        release.build(labs.find_root(), bundle)
        commands = list(dict.fromkeys(INSTALL.findall((bundle / "README.md").read_text(encoding="utf-8"))))
        assert commands and commands[0].startswith("python3 -m venv"), commands
        for command in commands:
            print(f"{bundle}$ {command}", flush=True)
            subprocess.run(["bash", "-c", command], cwd=bundle, check=True, env=student_environ())
    specs = where / "jupyter" / "share" / "jupyter"
    if not (specs / "kernels" / KERNEL / "kernel.json").exists():
        subprocess.run([str(python), "-m", "ipykernel", "install", "--prefix", str(where / "jupyter"),
                        "--name", KERNEL], check=True, capture_output=True)
    os.environ["JUPYTER_PATH"] = str(specs)
    return bundle / "assignments"


def student_environ() -> dict[str, str]:
    """This process's environment without what points a Python at this project or stops its bytecode."""
    drop = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV", labs.ROOT_ENV, i18n.ENV)
    return {k: v for k, v in os.environ.items() if k not in drop}


def run_once(lab: labs.Lab, lang: str, assignments: Path | None = None
             ) -> tuple[float, float, dict[int, float], nbformat.NotebookNode, float]:
    """(seconds from the kernel's start to the last cell's end, the kernel's CPU seconds, {cell index: seconds},
    the executed notebook, seconds of the kernel's shutdown after it).  ``assignments``: a student
    install's (``student_venv``), run in its venv's kernel; default: the course's, in this Python."""
    with tempfile.TemporaryDirectory(prefix="ironlaw-nb-") as tmp:
        work = notebooks.student_copy(lab, Path(tmp), assignments=assignments)
        nb = nbformat.read(notebooks.notebook_path(work, lab.name, lang), as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(CPU_CELL))  # the kernel's CPU time: what load does not change
        client = NotebookClient(nb, timeout=600, kernel_name=KERNEL if assignments else "python3",
                                resources={"metadata": {"path": str(work)}})
        start: dict[int, float] = {}
        end: dict[int, float] = {}
        client.on_cell_execute = lambda cell, cell_index: start.__setitem__(cell_index, time.perf_counter())
        client.on_cell_executed = lambda cell, cell_index, execute_reply: end.__setitem__(
            cell_index, time.perf_counter())
        t0 = time.perf_counter()
        client.execute()
        shut = time.perf_counter()
        last = len(nb.cells) - 1  # the CPU cell
        cpu = float("".join(o.get("text", "") for o in nb.cells[last].outputs).split()[-1])
        cells = {i: end[i] - start[i] for i in end if i != last}
        del nb.cells[last]
        return max(end[i] for i in cells) - t0, cpu, cells, nb, shut - end[last]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labs", nargs="*", help="labs to run (default: all)")
    ap.add_argument("--lang", choices=notebooks.LANGS, default="en")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--top", type=int, default=6, help="slowest cells to list")
    ap.add_argument("--student-venv", type=Path, metavar="DIR",
                    help="run in a student's install of the bundle, made in DIR on first use and kept")
    args = ap.parse_args()
    os.environ.pop(i18n.ENV, None)  # as on Colab: the notebook's first cell says its language
    targets = [labs.get(n) for n in args.labs] if args.labs else labs.all_labs()
    assignments = None
    if args.student_venv:
        assignments = student_venv(args.student_venv.resolve())
        environ = student_environ()  # the kernel inherits it: nothing of this project, bytecode written
        os.environ.clear()
        os.environ.update(environ)
    summary = []
    for lab in targets:
        if assignments:  # each lab's first run is the install's first: the engine's bytecode not yet written
            for cache in [d for d in assignments.parent.rglob("__pycache__") if ".venv" not in d.parts]:
                shutil.rmtree(cache)
        runs = [run_once(lab, args.lang, assignments) for _ in range(args.repeat)]
        first = runs[0]
        total, cpu, cells, nb, shut = min(runs, key=lambda r: r[0])
        setup_i = min(cells)
        setup = cells[setup_i]
        checks = sum(s for i, s in cells.items() if nb.cells[i].source.startswith("grader.check("))
        summary.append((lab.short, first[0], first[2][setup_i], total, cpu, setup, checks))
        print(f"\n{lab.short} ({args.lang}): runs {', '.join(f'{r[0]:.1f}' for r in runs)} s; the best: {total:.1f} s "
              f"in all ({cpu:.1f} s of the kernel's CPU); set-up cell {setup:.2f} s; "
              f"the {sum(nb.cells[i].source.startswith('grader.check(') for i in cells)} grader.check cells "
              f"{checks:.1f} s; then the kernel's shutdown {shut:.1f} s")
        for i, s in sorted(cells.items(), key=lambda kv: -kv[1])[:args.top]:
            print(f"  {s:6.2f} s  cell {i:3d}  {nb.cells[i].source.splitlines()[0][:90]}")
    where = f"a student's install in {args.student_venv}" if args.student_venv else "this project's Python"
    print(f"\n{where}:")
    print(f"{'lab':<6}{'first s':>9}{'goal':>6}{'set-up s':>10}{'goal':>6}{'best s':>9}{'kernel CPU s':>14}"
          f"{'set-up s':>10}{'checks s':>10}")
    verdict = lambda ok: "met" if ok else "NOT"  # noqa: E731
    for short, first_s, first_setup, total, cpu, setup, checks in summary:
        print(f"{short:<6}{first_s:>9.1f}{verdict(first_s <= GOAL_S):>6}{first_setup:>10.2f}"
              f"{verdict(first_setup <= SETUP_GOAL_S):>6}{total:>9.1f}{cpu:>14.1f}{setup:>10.2f}{checks:>10.1f}")
    print(f"goals, on the first run: total <= {GOAL_S:g} s (the kernel's start to the last cell's end), set-up cell "
          f"<= {SETUP_GOAL_S:g} s; best: of --repeat {args.repeat}, its kernel's CPU (user + system, its start "
          "included: the figure load barely moves), set-up and grader.check cells")


if __name__ == "__main__":
    main()
