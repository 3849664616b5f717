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

import os
import sys
from pathlib import Path

LAB_FOLDERS = ("assignments", "solutions", "tests")
# Every engine run of pytest (a grader's, a student's check, a notebook's grader.check): no cache
# folder, no unraisableexception plugin, whose gc.collect() at the end of each run costs 0.1-0.6 s
# once torch is imported (more in a notebook's kernel), for warnings about objects no grade reads, and
# no logging plugin, which adds and removes its capturing handlers around every phase of every test
# (about 1 ms a test) for a "captured log" section no grade or feedback shows.
LEAN = ("-p", "no:cacheprovider", "-p", "no:unraisableexception", "-p", "no:logging")
PLUGIN = "autograder.labkit.plugin"
# ... and no plugin but the engine's own (plugins()), named, never found: pytest's search of the
# installed distributions' entry points reads the metadata of every one (30-40 ms in this project's
# venv, and a check searched twice; more in Colab's hundreds of packages), and a plugin that a student's Python
# happens to have (xdist, ...) has no business in a run that grades.  Set in the environment: where
# pytest runs in a process of its own (a fresh grader), runner.GRADER_ENV sets it.
NO_AUTOLOAD = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def plugins() -> list[str]:
    """``-p`` for the engine's plugin and pytest-timeout (which enforces its ``timeout`` marks:
    a lab's ``test_timeout_s``) where it is installed, as its entry point would have loaded it."""
    import importlib.util

    return ["-p", PLUGIN, *(["-p", "pytest_timeout"] if importlib.util.find_spec("pytest_timeout") else [])]


def main(args: list[str], objects: list | None = None) -> int:
    """pytest on ``args`` with the engine's plugins (:func:`plugins`; naming one again in ``args``
    changes nothing) and no other, and ``objects`` as plugins, in this process."""
    import pytest  # here: the grading command's own process reads LEAN without importing pytest

    from autograder.core.files import scoped_environ

    with scoped_environ(**NO_AUTOLOAD):
        return int(pytest.main([*plugins(), *args], plugins=objects or []))


def run_pytest_here(args: list[str], root: Path, objects: list | None = None) -> int:
    """:func:`main`, then forget the modules the run imported from ``root``'s lab folders."""
    before = set(sys.modules)
    try:
        return main(args, objects)
    finally:
        forget_modules(root, before)


def forget_modules(root: Path, before: set[str]) -> None:
    """Forget the modules imported since ``before`` from ``root``'s lab folders."""
    forget(set(sys.modules) - before, [Path(root) / f for f in LAB_FOLDERS])


def forget(names, folders: list[Path]) -> None:
    """Drop from ``sys.modules`` those of ``names`` whose file lies in one of ``folders``."""
    inside = tuple(os.path.join(os.path.realpath(f), "") for f in folders)
    real: dict[str, str] = {}  # a module's folder, resolved once: a first run imports torch's ~1,300 modules
    for name in names:
        path = getattr(sys.modules.get(name), "__file__", None)
        if not path:
            continue
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in real:
            real[folder] = os.path.realpath(folder) + os.sep
        where = os.path.realpath(path) if os.path.islink(path) else real[folder]
        if where.startswith(inside):
            del sys.modules[name]
