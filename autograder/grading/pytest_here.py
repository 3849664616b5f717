"""Run pytest inside this process more than once (``run_pytest_here``).

The grader pool's warm processes and a student's ``check`` do; one
submission's grading in a grader process is ``runner.grade_staged``.

Without an ini file pytest imports a test file under its base name
(``test_public``), so a second run in the same process, on another lab or
another copy of one, would meet the first run's module and fail to
collect.  So each run forgets the modules it imported from the labs'
folders (test files, conftests, lab modules) and nothing else: a venv
inside the project must keep its half-imported torch intact.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

LAB_FOLDERS = ("assignments", "solutions", "tests")


def run_pytest_here(args: list[str], root: Path, plugins: list | None = None) -> int:
    before = set(sys.modules)
    try:
        return int(pytest.main(args, plugins=plugins or []))
    finally:
        forget_modules(root, before)


def forget_modules(root: Path, before: set[str]) -> None:
    folders = [Path(root).resolve() / f for f in LAB_FOLDERS]
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None)
        if path and any(f in Path(path).resolve().parents for f in folders):
            del sys.modules[name]
