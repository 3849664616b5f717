"""``autograder check LAB``: a student runs the public tests on their copy.

Default: in this process, so a student can debug (breakpoints work).
``--sandbox`` grades exactly as the instructor's grader does.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from autograder.commands import lang_option
from autograder.core import labs
from autograder.core.i18n import _
from autograder.core.results import PASSED, TestResult
from autograder.grading.local import count_hidden_tests, hidden_tests, public_tests_here, public_tests_sandboxed


@click.command("check")
@click.argument("lab")
@click.option("--path", help="folder with your files (default: assignments/<lab>)")
@click.option("--sandbox", is_flag=True, help="grade exactly as the grader does (slower)")
@lang_option("messages")
def command(**options) -> int:
    """run the public tests on your copy of a lab"""
    return main(**options)


def render(console: Console, lab: labs.Lab, tests: list[TestResult], hidden: int) -> bool:
    table = Table(title=_("{title}: public tests").format(title=_(lab.manifest.title)))
    for col in (_("question"), _("public tests"), _("points")):
        table.add_column(col)
    for q in lab.manifest.questions:
        if q.manual:  # a written answer in the notebook: no test, a marker's points
            table.add_row(_(q.title), "[dim]" + _("marked by hand"), f"- / {q.points:g}")
            continue
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
    absent = [f for f in the_lab.manifest.student_files if not (code_dir / f).is_file()]
    if not path and absent and the_lab.has_solutions:  # the course repository, where stubs are build outputs
        console.print(_("{files}: not there. In the course repository the stubs are generated from "
                        "solutions/: run `autograder stubs`.").format(files=", ".join(absent)), markup=False)
        return 2
    if sandbox:
        tests, hidden = public_tests_sandboxed(the_lab, code_dir), count_hidden_tests(the_lab)
    else:
        tests, hidden = public_tests_here(the_lab, code_dir)
    return 0 if render(console, the_lab, tests, hidden) else 1
