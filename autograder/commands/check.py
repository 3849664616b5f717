"""``autograder check LAB``: a student runs the public tests on their copy.

Default: in this process, so a student can debug (breakpoints work).
``--sandbox`` grades exactly as the instructor's grader does.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from autograder.grading import pytest_here, runner, staging
from autograder.core import labs
from autograder.labkit import plugin
from autograder.core.i18n import _
from autograder.core.results import PASSED, TestResult


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


def run_in_process(lab: labs.Lab, code_dir: Path) -> tuple[list[TestResult], int]:
    paths = [str(p) for p in runner.test_paths(lab)]
    collector = _Collector(lab.hidden_tests_dir)
    # No terminal reporter: the table below is the report (pytest's progress line would precede it).
    # Without it, addopts' reporting flags (-ra) are unknown: give the ones that matter here.
    pytest_here.run_pytest([*paths, "--submission", str(code_dir), "-p", "no:cacheprovider", "-p", "no:terminal",
                          "-o", "addopts=", "--strict-markers", "--import-mode=importlib",
                          "--rootdir", str(lab.root)], lab.root, [collector])
    return collector.results, collector.hidden


def run_sandboxed(lab: labs.Lab, code_dir: Path) -> list[TestResult]:
    with tempfile.TemporaryDirectory(prefix="ironlaw-check-") as tmp:
        staged = staging.stage(code_dir, lab.manifest.student_files, Path(tmp) / "code")
        res = runner.grade_staged(lab, staged.directory, "check", sandbox=True, problems=staged.problems,
                                  public_only=True)
    return res.tests


def hidden_tests(count: int) -> str:
    """"24 hidden tests", or "the hidden tests" when the count is not known here."""
    return _("{count} hidden tests").format(count=count) if count else _("the hidden tests")


def render(console: Console, lab: labs.Lab, tests: list[TestResult], hidden: int) -> bool:
    table = Table(title=_("{title}: public tests").format(title=_(lab.manifest.title)))
    for col in (_("question"), _("public tests"), _("points")):
        table.add_column(col)
    for q in lab.manifest.questions:
        ts = [t for t in tests if t.question == q.id]
        ok = sum(t.status == PASSED for t in ts)
        pts = sum(t.points for t in ts)
        style = "green" if ts and ok == len(ts) else ("red" if ts else "dim")
        table.add_row(_(q.title), f"[{style}]" + _("{passed}/{total} passed").format(passed=ok, total=len(ts)),
                      _("{points:g} of {max_points:g}").format(points=pts, max_points=q.points))
    console.print(table)
    failed = [t for t in tests if t.status != PASSED]
    for t in failed:
        console.rule(f"[red]{t.name}")
        console.print(t.feedback, markup=False, highlight=False)
    all_ok = bool(tests) and not failed
    hidden_txt = hidden_tests(hidden)
    if all_ok:
        console.print("[green]" + _("public tests passed; {hidden} run at grading.").format(hidden=hidden_txt))
    else:
        console.print("[red]" + _("{failed} of {total} public tests failed.").format(failed=len(failed), total=len(tests))
                      + "[/] " + _("Public tests are a sample: {hidden} run at grading.").format(hidden=hidden_txt))
    return all_ok


def main(*, lab: str, path: str | None = None, sandbox: bool = False) -> int:
    console = Console()
    the_lab = labs.get(lab)
    code_dir = Path(path).resolve() if path else the_lab.assignment_dir
    if sandbox:
        tests, hidden = run_sandboxed(the_lab, code_dir), 0
    else:
        tests, hidden = run_in_process(the_lab, code_dir)
    return 0 if render(console, the_lab, tests, hidden) else 1
