"""Run pytest inside this process more than once.

Without an ini file pytest imports a test file under its base name
(``test_public``), so a second run in the same process, on another lab or
another copy of one, would meet the first run's module and fail to
collect.  So each run forgets the modules it imported from the project's
folders (test files, conftests, lab modules), but never the engine's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent


def run_pytest(args: list[str], root: Path, plugins: list | None = None) -> int:
    before = set(sys.modules)
    try:
        return int(pytest.main(args, plugins=plugins or []))
    finally:
        forget_modules(root, before)


def forget_modules(root: Path, before: set[str]) -> None:
    root = Path(root).resolve()
    for name in set(sys.modules) - before:
        path = getattr(sys.modules[name], "__file__", None)
        if not path:
            continue
        p = Path(path).resolve()
        if root in p.parents and ENGINE not in p.parents:
            del sys.modules[name]
