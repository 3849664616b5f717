"""``autograder grade LAB SUBMISSIONS --out DIR``: bulk grading.

The options and the console; the batch itself is ``autograder.batch.bulk``.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.console import Console

from autograder.batch import bulk
from autograder.commands import jobs_option, lang_option, sandbox_option
from autograder.core import labs
from autograder.grading import runner, staging  # noqa: F401  (runner: tests patch grade.runner.grade_staged)


@click.command("grade")
@click.argument("lab")
@click.argument("submissions_dir", metavar="SUBMISSIONS")
@click.option("--out", required=True, help="output folder")
@jobs_option
@click.option("--force", is_flag=True, help="regrade submissions that did not change")
@sandbox_option("UNSAFE: run student code inside the grader (warns, and results say so)")
@click.option("--after-due", is_flag=True, help="the due date has passed: feedback shows the hidden-test details of "
              'questions with details = "after_due_date" in lab.toml')
@lang_option("the students' feedback")
def command(**options) -> int:
    """grade a folder of submissions (SUBMISSIONS: per-student folders or .zip files), sandboxed"""
    return main(**options)


def main(*, lab: str, submissions_dir: str, out: str, jobs: int | None = None,
         sandbox: bool = True, force: bool = False, quiet: bool = False, after_due: bool = False) -> int:
    console = Console(stderr=True, quiet=quiet)
    the_lab = labs.get(lab)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = staging.discover(Path(submissions_dir))
    if not entries:
        console.print(f"[red]no submissions (folders or .zip files) in {submissions_dir}")
        return 2
    if not sandbox:
        console.print("[bold yellow]WARNING: --no-sandbox runs student code inside the grader; "
                      "grades are not protected against hostile submissions.")
    batch = bulk.grade_folder(the_lab, entries, Path(submissions_dir), out_dir, jobs=jobs or os.cpu_count() or 1,
                              sandbox=sandbox, force=force, after_due=after_due, console=console)
    bulk.report(batch, the_lab.manifest, out_dir, console)
    return 0
