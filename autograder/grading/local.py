"""A student's own runs of the public tests: in this process (breakpoints
work) or sandboxed exactly as the grader runs them.  ``check`` and
``submit`` both run them; the hidden tests are counted, never run.

Counting needs only pytest's collection, which imports the test modules and
runs no fixture, so no student code: the ``student`` fixture is what loads a
submission.  In-process runs count them as they collect; a sandboxed run
passes only the public tests to its grader, so :func:`count_hidden_tests`
collects the hidden ones here.  A student's bundle ships no hidden tests:
there the count is 0 and the wording says "the hidden tests".
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from autograder.core import labs
from autograder.core.i18n import _
from autograder.core.results import TestResult
from autograder.grading import pytest_here, runner, staging
from autograder.labkit import plugin


class _Collector:
    """Counts hidden tests (without running them) and keeps the results."""

    def __init__(self, hidden_dir: Path):
        self.hidden_dir = hidden_dir.resolve()
        self.hidden = 0
        self.results: list[TestResult] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        hidden = [i for i in items if self.hidden_dir in Path(i.path).resolve().parents]
        self.hidden = len(hidden)
        if hidden:
            items[:] = [i for i in items if i not in hidden]
            config.hook.pytest_deselected(items=hidden)

    def pytest_sessionfinish(self, session):
        self.results = plugin.collected_results(session.config)


def public_tests_here(lab: labs.Lab, code_dir: Path) -> tuple[list[TestResult], int]:
    paths = [str(p) for p in runner.test_paths(lab)]
    collector = _Collector(lab.hidden_tests_dir)
    # No terminal reporter: the table below is the report (pytest's progress line would precede it).
    # Without it, addopts' reporting flags (-ra) are unknown: give the ones that matter here.
    pytest_here.run_pytest_here([*paths, "--submission", str(code_dir), "-p", "no:cacheprovider", "-p", "no:terminal",
                          "-o", "addopts=", "--strict-markers", "--import-mode=importlib",
                          "--rootdir", str(lab.root)], lab.root, [collector])
    return collector.results, collector.hidden


def count_hidden_tests(lab: labs.Lab) -> int:
    """How many hidden tests ``lab`` has here, by collecting them (none runs, no
    student code is imported); 0 where there are none, as in a student's bundle."""
    if not lab.hidden_tests_dir.is_dir():
        return 0
    collector = _Collector(lab.hidden_tests_dir)
    pytest_here.run_pytest_here([str(lab.hidden_tests_dir), "--collect-only", "-p", "no:cacheprovider",
                                 "-p", "no:terminal", "-o", "addopts=", "--strict-markers", "--import-mode=importlib",
                                 "--rootdir", str(lab.root)], lab.root, [collector])
    return collector.hidden


def public_tests_sandboxed(lab: labs.Lab, code_dir: Path) -> list[TestResult]:
    with tempfile.TemporaryDirectory(prefix="ironlaw-check-") as tmp:
        staged = staging.stage(code_dir, lab.manifest.student_files, Path(tmp) / "code")
        res = runner.grade_staged(lab, staged.directory, "check", sandbox=True, problems=staged.problems,
                                  public_only=True)
    return res.tests


def hidden_tests(count: int) -> str:
    """"24 hidden tests", or "the hidden tests" when none were counted here (a
    student's bundle has none to count; a sandboxed ``check`` counts them with
    :func:`count_hidden_tests`, an in-process one as it collects)."""
    return _("{count} hidden tests").format(count=count) if count else _("the hidden tests")
