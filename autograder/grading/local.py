"""A student's own runs of the public tests: in this process (breakpoints
work) or sandboxed exactly as the grader runs them.  ``check`` and
``submit`` both run them; the hidden tests are counted, never run.

Counting needs only pytest's collection, which imports the test modules and
runs no fixture, so no student code: the ``student`` fixture is what loads a
submission.  In-process runs count them as they collect; a sandboxed run
passes only the public tests to its grader, so :func:`count_hidden_tests`
collects the hidden ones here.  A student's bundle ships no hidden tests:
there the count is 0 and the wording says "the hidden tests".

A run in which no public test ran (pytest refused its options, found no test,
stopped early) is an error, :class:`TestsDidNotRun`, never a pass: ``check``
and ``submit`` exit non-zero on it.  Every run names the engine's plugin and
loads no other (``pytest_here.run_pytest_here``): where this engine is not
installed (a student bundle on Colab, used from its folder) it has no entry
point to be found by.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from autograder.core import labs
from autograder.core.i18n import N_, _
from autograder.core.results import TestResult
from autograder.grading import pytest_here, runner, staging
from autograder.labkit import plugin


DID_NOT_RUN = N_("The public tests of {lab} did not run ({why}): nothing was checked. This is a problem of "
                 "the set-up, not of your code; run the command again, and if it says the same, show this "
                 "message to your course staff.")
ONLY_PUBLIC = N_("{root} holds only the public tests of {lab} (a student bundle): it cannot grade. Grade in the "
                 "course repository, which holds the hidden tests and the reference.")


class TestsDidNotRun(RuntimeError):
    """No public test ran: the message says why, in the current language."""

    __test__ = False  # a name pytest would otherwise collect as a test class


def _ran(lab: labs.Lab, tests: list[TestResult], status: int | None, detail: str = "") -> list[TestResult]:
    """``tests``, or :class:`TestsDidNotRun` when none ran or pytest stopped short of running them
    (a usage error, an internal error, an interrupted session); ``detail``: what the grader said."""
    if status not in (None, pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        why = _("pytest stopped with exit status {status}").format(status=int(status))
        raise TestsDidNotRun(_(DID_NOT_RUN).format(lab=lab.short, why=why))
    if not tests:  # pytest's NO_TESTS_COLLECTED too
        raise TestsDidNotRun(_(DID_NOT_RUN).format(lab=lab.short, why=detail or _("no public test was found")))
    return tests


def bundle_refusal(lab_name: str) -> str | None:
    """Why ``grade`` cannot grade ``lab_name`` here: this is a student bundle, which has only the
    public tests (no hidden tests folder); None where it can, or where there is no such lab
    (``grade`` says so itself)."""
    try:
        lab = labs.get(lab_name)
    except (KeyError, FileNotFoundError):
        return None
    if lab.hidden_tests_dir.is_dir():
        return None
    return _(ONLY_PUBLIC).format(root=lab.root, lab=lab.short)


class _Collector:
    """Counts hidden tests (without running them) and keeps the results."""

    def __init__(self, hidden_dir: Path):
        self.hidden_dir = hidden_dir.resolve()
        self.hidden = 0
        self.results: list[TestResult] = []

    def pytest_configure(self, config):
        # pytest builds its own report of every failure, shown or not; without the terminal reporter
        # nothing shows it (the table shows the plugin's feedback), so it builds the cheapest: the
        # exception's text, not a long traceback with source (0.1-0.3 s on a stub's failures)
        config.option.tbstyle = "value"

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        hidden = [i for i in items if self.hidden_dir in Path(i.path).resolve().parents]
        self.hidden = len(hidden)
        if hidden:
            items[:] = [i for i in items if i not in hidden]
            config.hook.pytest_deselected(items=hidden)

    def pytest_sessionfinish(self, session):
        self.results = plugin.collected_results(session.config)


def _here_args(lab: labs.Lab) -> list[str]:
    """pytest's options for a student's run in this process.  No terminal reporter: the table is the
    report (pytest's progress line would precede it); without it, addopts' reporting flags (-ra) are
    unknown, so the ones that matter are given here."""
    return [*pytest_here.LEAN, "-p", "no:terminal", "-o", "addopts=", "--strict-markers",
            "--import-mode=importlib", "--rootdir", str(lab.root)]


def public_tests_here(lab: labs.Lab, code_dir: Path) -> tuple[list[TestResult], int]:
    """(the public tests' results, how many hidden tests there are); :class:`TestsDidNotRun`
    when no public test ran."""
    paths = [str(p) for p in runner.test_paths(lab)]
    if not paths:  # no folder of tests: pytest would run its testpaths, every lab's
        _ran(lab, [], None)
    collector = _Collector(lab.hidden_tests_dir)
    status = pytest_here.run_pytest_here([*paths, "--submission", str(code_dir), *_here_args(lab)], lab.root,
                                         [collector])
    return _ran(lab, collector.results, status), collector.hidden


def count_hidden_tests(lab: labs.Lab) -> int:
    """How many hidden tests ``lab`` has here, by collecting them (none runs, no
    student code is imported); 0 where there are none, as in a student's bundle."""
    if not lab.hidden_tests_dir.is_dir():
        return 0
    collector = _Collector(lab.hidden_tests_dir)
    pytest_here.run_pytest_here([str(lab.hidden_tests_dir), "--collect-only", *_here_args(lab)], lab.root, [collector])
    return collector.hidden


def public_tests_sandboxed(lab: labs.Lab, code_dir: Path) -> list[TestResult]:
    """The public tests' results, run as the grader runs them; :class:`TestsDidNotRun` when none ran."""
    with tempfile.TemporaryDirectory(prefix="ironlaw-check-") as tmp:
        staged = staging.stage(code_dir, lab.manifest.student_files, Path(tmp) / "code")
        res = runner.grade_staged(lab, staged.directory, "check", sandbox=True, problems=staged.problems,
                                  public_only=True)
    return _ran(lab, res.tests, None, "; ".join(res.errors)[:1500])


def hidden_tests(count: int) -> str:
    """"24 hidden tests", or "the hidden tests" when none were counted here (a
    student's bundle has none to count; a sandboxed ``check`` counts them with
    :func:`count_hidden_tests`, an in-process one as it collects)."""
    return _("{count} hidden tests").format(count=count) if count else _("the hidden tests")
