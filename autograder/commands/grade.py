"""``autograder grade LAB SUBMISSIONS --out DIR``: bulk grading.

The options and the console; the batch itself is ``autograder.batch.bulk``.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from autograder.batch import bulk, manual
from autograder.commands import default_jobs, jobs_option, lang_option, open_batch, sandbox_option, usage_error
from autograder.grading import runner  # noqa: F401  (tests patch grade.runner.grade_staged)


@click.command("grade")
@click.argument("lab")
@click.argument("submissions_dir", metavar="SUBMISSIONS")
@click.option("--out", required=True, help="output folder")
@jobs_option
@click.option("--force", is_flag=True, help="regrade submissions that did not change")
@sandbox_option("UNSAFE: run student code inside the grader (warns, and results say so)")
@click.option("--after-due", is_flag=True, help="show every student the hidden-test details of questions with "
              'details = "after_due_date" in lab.toml (with --due they show once a student\'s due date has passed)')
@click.option("--manual", "manual_marks", type=click.Path(dir_okay=False),
              help="CSV submission,question,points[,comment]: the marks of the questions marked by hand "
                   "(kept in OUT/manual/ for later runs; start from OUT/manual/marks-template.csv)")
@click.option("--only", help="regrade just these submission ids (comma-separated); the rest keep their results")
@click.option("--due", help="due date, ISO 8601 (2026-12-20T23:59, or with an offset): adds the late columns")
@click.option("--tz", default="UTC", show_default=True, help="IANA time zone of --due and of times without an offset")
@click.option("--late-penalty", type=click.FloatRange(0, 100), default=0.0, help="percent taken per late day started")
@click.option("--late-cap", type=click.FloatRange(0, 100), default=100.0, help="the most percent ever taken")
@click.option("--grace", type=click.FloatRange(min=0), default=0.0, help="minutes after --due that count as on time")
@click.option("--extensions", type=click.Path(dir_okay=False), help="CSV: submission|email|sid,due (per-student dates)")
@click.option("--times", type=click.Path(dir_okay=False), help="CSV: submission,submitted_at (exports without times)")
@click.option("--export", "export_to", type=click.Choice(["canvas", "moodle"]),
              help="also write the final scores as the platform's grade import file")
@lang_option("the students' feedback")
def command(**options) -> int:
    """grade a folder of submissions (folders, .zip files, Moodle or Canvas exports), sandboxed"""
    return main(**options)


def main(*, lab: str, submissions_dir: str, out: str, jobs: int | None = None,
         sandbox: bool = True, force: bool = False, quiet: bool = False, after_due: bool = False,
         only: str | None = None, due: str | None = None, tz: str = "UTC", late_penalty: float = 0.0,
         late_cap: float = 100.0, grace: float = 0.0, extensions: str | None = None, times: str | None = None,
         export_to: str | None = None, manual_marks: str | None = None) -> int:
    console = Console(stderr=True, quiet=quiet)
    opened = open_batch("grade", lab, submissions_dir)
    if isinstance(opened, int):
        return opened
    the_lab, entries = opened
    chosen = frozenset(i.strip() for i in only.split(",") if i.strip()) if only is not None else None
    unknown = sorted((chosen or set()) - {e.id for e in entries})
    if unknown or chosen == frozenset():
        return usage_error("grade", f"--only names no submission of {submissions_dir}: {', '.join(unknown) or '-'}")
    deadline = None
    if due:
        try:
            deadline, problems = bulk.deadline(Path(submissions_dir), due=due, tz=tz, penalty=late_penalty,
                                               cap=late_cap, grace=grace, extensions=extensions, times=times)
        except (ValueError, OSError) as exc:
            return usage_error("grade", str(exc))
        for p in problems:
            console.print(f"warning: {p}", style="yellow", markup=False)
    elif extensions or times or late_penalty:
        return usage_error("grade", "--late-penalty, --extensions and --times need --due")
    marks = None
    if manual_marks:
        if not the_lab.manifest.manual:
            return usage_error("grade", f"--manual: {the_lab.short} has no question marked by hand (manual = true)")
        try:
            marks = manual.read_marks(Path(manual_marks), the_lab.manifest)
        except ValueError as exc:
            return usage_error("grade", str(exc))
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not sandbox:
        console.print("[bold yellow]WARNING: --no-sandbox runs student code inside the grader; "
                      "grades are not protected against hostile submissions.")
    batch = bulk.grade_folder(the_lab, entries, Path(submissions_dir), out_dir, jobs=jobs or default_jobs([the_lab]),
                              sandbox=sandbox, force=force, after_due=after_due, only=chosen, deadline=deadline,
                              marks=marks, console=console)
    bulk.report(batch, the_lab.manifest, out_dir, console)
    failed = any(r.grader_error for r in batch.results.values())
    if export_to:
        console.print(f"{export_to} import file: "
                      f"{bulk.write_export(export_to, batch, the_lab, out_dir, deadline, console)}",
                      markup=False)
    return 1 if failed else 0  # a grader failure is the instructor's to fix: never a quiet 0
