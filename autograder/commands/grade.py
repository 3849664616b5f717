"""``autograder grade LAB SUBMISSIONS --out DIR``: bulk grading.

The options and the console; the batch itself is ``autograder.batch.bulk``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import click
from rich.console import Console

from autograder.batch import bulk, manual, platforms
from autograder.commands import default_jobs, jobs_option, lang_option, sandbox_option, usage_error
from autograder.commands.batch_input import open_batch
from autograder.grading import runner  # noqa: F401  (tests patch grade.runner.grade_staged)
from autograder.grading.local import bundle_refusal


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
@click.option("--only", help="regrade just these submissions (comma-separated): an id, or a student's name, "
                             "email, login or platform id, or the start of one that names a single submission; "
                             "the rest keep their results")
@click.option("--platform", type=click.Choice(sorted(platforms.platforms())),
              help="the platform SUBMISSIONS was downloaded from (default: recognised from its layout)")
@click.option("--gradebook", type=click.Path(dir_okay=False),
              help="the platform's grade file as downloaded: Moodle's grading worksheet (filled in and written "
                   "back as OUT/moodle-worksheet.csv), Canvas's gradebook export (names who handed in nothing)")
@click.option("--no-file", "no_file", type=click.Choice(platforms.NO_FILE), default="zero", show_default=True,
              help="the grade the platform's file gets for a student with nothing gradable (no lab file could "
                   "be read, or nothing handed in): zero, or pending (left blank for you to decide)")
@click.option("--due", help="due date, ISO 8601 (2026-12-20T23:59, or with an offset): adds the late columns")
@click.option("--tz", default="UTC", show_default=True, help="IANA time zone of --due and of times without an offset")
@click.option("--late-penalty", type=click.FloatRange(0, 100), default=0.0, help="percent taken per late day started")
@click.option("--late-cap", type=click.FloatRange(0, 100), default=100.0, help="the most percent ever taken")
@click.option("--grace", type=click.FloatRange(min=0), default=0.0, help="minutes after --due that count as on time")
@click.option("--extensions", type=click.Path(dir_okay=False), help="CSV: submission|email|sid,due (per-student dates)")
@click.option("--times", type=click.Path(dir_okay=False), help="CSV: submission,submitted_at (exports without times)")
@click.option("--export", "export_to", type=click.Choice(["canvas", "moodle"]),
              help="also write the final scores as this platform's grade import file, matched through the "
                   "roster, for submissions from elsewhere (a Moodle or Canvas export writes its own files)")
@lang_option("the students' feedback")
def command(**options) -> int:
    """grade a folder of submissions or a platform's download (.zip): Moodle, Canvas, Gradescope, or a
    folder per student; sandboxed"""
    return main(**options)


def main(*, lab: str, submissions_dir: str, out: str, jobs: int | None = None,
         sandbox: bool = True, force: bool = False, quiet: bool = False, after_due: bool = False,
         only: str | None = None, due: str | None = None, tz: str = "UTC", late_penalty: float = 0.0,
         late_cap: float = 100.0, grace: float = 0.0, extensions: str | None = None, times: str | None = None,
         export_to: str | None = None, manual_marks: str | None = None, platform: str | None = None,
         gradebook: str | None = None, no_file: str = "zero") -> int:
    console = Console(stderr=True, quiet=quiet)
    if refused := bundle_refusal(lab):  # a student bundle: only public tests, nothing to grade with
        return usage_error("grade", refused)
    with contextlib.ExitStack() as stack:
        try:  # a platform's download as it is (a zip): unpacked into a private folder for this run
            folder, skipped = stack.enter_context(platforms.unpacked(Path(submissions_dir)))
        except ValueError as exc:
            return usage_error("grade", str(exc))
        opened = open_batch("grade", lab, str(folder), platform=platform, gradebook=gradebook)
        if isinstance(opened, int):
            return opened
        the_lab, intake = opened
        intake.warnings[:0] = skipped
        said = (f"{submissions_dir}: {intake.platform.title} ({intake.platform.layout}"
                f"{', as --platform says' if platform else ''}), {len(intake.entries)} submission(s)")
        return _grade(console, the_lab, intake, said=said, out=out, jobs=jobs, sandbox=sandbox,
                      force=force, after_due=after_due, only=only, due=due, tz=tz, late_penalty=late_penalty,
                      late_cap=late_cap, grace=grace, extensions=extensions, times=times, export_to=export_to,
                      manual_marks=manual_marks, no_file=no_file)


def chosen(intake: platforms.Intake, only: str) -> frozenset[str] | str:
    """The submissions ``--only`` names, or the sentence that says why it names none."""
    terms = [t.strip() for t in only.split(",") if t.strip()]
    if not terms:
        return "--only names no submission"
    ids = set()
    for term in terms:
        found = intake.find(term)
        if not found:
            return f"--only {term!r} names no submission of this batch"
        if len(found) > 1:
            shown = ", ".join(intake.label(i) for i in found[:10]) + (" ..." if len(found) > 10 else "")
            return f"--only {term!r} names {len(found)} submissions: {shown}; give more of it"
        ids.update(found)
    return frozenset(ids)


def _grade(console: Console, the_lab, intake: platforms.Intake, *, said: str, out: str, jobs: int | None,
           sandbox: bool, force: bool, after_due: bool, only: str | None, due: str | None, tz: str,
           late_penalty: float, late_cap: float, grace: float, extensions: str | None, times: str | None,
           export_to: str | None, manual_marks: str | None, no_file: str) -> int:
    picked = chosen(intake, only) if only is not None else None
    if isinstance(picked, str):
        return usage_error("grade", picked)
    deadline = None
    if due:
        try:
            deadline, problems = bulk.deadline(intake, due=due, tz=tz, penalty=late_penalty,
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
    console.print(said, markup=False)  # which platform's download this was taken for
    if not sandbox:
        console.print("[bold yellow]WARNING: --no-sandbox runs student code inside the grader; "
                      "grades are not protected against hostile submissions.")
    batch = bulk.grade_folder(the_lab, intake, out_dir, jobs=jobs or default_jobs([the_lab]),
                              sandbox=sandbox, force=force, after_due=after_due, only=picked, deadline=deadline,
                              marks=marks, console=console, no_file=no_file)
    bulk.report(batch, the_lab.manifest, out_dir, console)
    failed = any(r.grader_error for r in batch.results.values())
    if export_to and export_to != intake.platform.name:
        console.print(f"{export_to} import file: "
                      f"{bulk.write_export(export_to, batch, the_lab, out_dir, console, no_file)}", markup=False)
    return 1 if failed else 0  # a grader failure is the instructor's to fix: never a quiet 0
