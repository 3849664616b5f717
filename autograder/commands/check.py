"""``autograder check LAB``: a student runs the public tests on their copy.

Default: in this process, so a student can debug (breakpoints work).
``--sandbox`` grades exactly as the instructor's grader does.

The table names, per question, the public tests that ran (each passed ✓ or
failed ✗), the points they earned of the points they can earn, and the
question's points at grading; it exits 0 when every public test passes, 1
when one fails, 2 when none ran (:class:`TestsDidNotRun`: never a pass).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autograder.commands import lang_option
from autograder.core import labs
from autograder.core.i18n import N_, _
from autograder.core.results import PASSED, TestResult
from autograder.grading.notebook_text import Local
from autograder.grading.local import (TestsDidNotRun, count_hidden_tests, hidden_tests, public_tests_here,
                                      public_tests_sandboxed)


@click.command("check")
@click.argument("lab")
@click.option("--path", help="folder with your files (default: assignments/<lab>)")
@click.option("--sandbox", is_flag=True, help="grade exactly as the grader does (slower)")
@lang_option("messages")
def command(**options) -> int:
    """run the public tests on your copy of a lab"""
    return main(**options)


# the table's columns: the tests that ran (each one's name) and what they earned, in points, of what they
# can earn; then the question's points at grading, which the hidden tests give the rest of
COLUMNS = (N_("question"), N_("public tests that ran"), N_("points earned"), N_("points at grading"))
EARNED = N_("{earned:g} of {possible:g} possible")
POINTS_NOTE = N_("Points earned: what the public tests that ran earned, of the points they can earn. At grading "
                 "the hidden tests run too, and give the rest of each question's points.")
MARK = {True: "✓", False: "✗"}


def render(console: Console, lab: labs.Lab, tests: list[TestResult], hidden: int) -> bool:
    table = Table(title=_("{title}: public tests").format(title=_(lab.manifest.title)))
    for col in COLUMNS:
        table.add_column(_(col))
    for q in lab.manifest.questions:
        at_grading = f"{Local(q.points):g}"
        if q.manual:  # a written answer in the notebook: no test, a marker's points (or predictions.json's)
            table.add_row(_(q.title), "[dim]" + (_("from your predictions.json") if q.participation
                                                 else _("marked by hand")), "-", at_grading)
            continue
        ts = [t for t in tests if t.question == q.id]
        if not ts:
            table.add_row(_(q.title), "[dim]" + _("none: the hidden tests check it at grading"), "-", at_grading)
            continue
        ok = [t.status == PASSED for t in ts]
        names = Text("\n").join(Text(f"{MARK[p]} {t.name}", style="green" if p else "red") for t, p in zip(ts, ok))
        earned = _(EARNED).format(earned=Local(sum(t.points for t in ts)), possible=Local(sum(t.max_points for t in ts)))
        table.add_row(_(q.title), names, Text(earned, style="green" if all(ok) else "red"), at_grading)
    console.print(table)
    console.print(_(POINTS_NOTE), style="dim", markup=False, highlight=False)
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
    absent = [f for f in the_lab.manifest.student_files if not (code_dir / f).is_file()]
    if not path and absent and the_lab.has_solutions:  # the course repository, where stubs are build outputs
        console.print(_("{files}: not there. In the course repository the stubs are generated from "
                        "solutions/: run `autograder stubs`.").format(files=", ".join(absent)), markup=False)
        return 2
    try:
        if sandbox:
            tests, hidden = public_tests_sandboxed(the_lab, code_dir), count_hidden_tests(the_lab)
        else:
            tests, hidden = public_tests_here(the_lab, code_dir)
    except TestsDidNotRun as exc:  # no test ran: an error, never a pass
        console.print(str(exc), style="red", markup=False, highlight=False)
        return 2
    return 0 if render(console, the_lab, tests, hidden) else 1
