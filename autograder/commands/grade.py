"""``autograder grade LAB SUBMISSIONS --out DIR``: bulk grading.

Each submission is staged (declared files only), graded in its own grader
process, and written at once (results/, raw/, feedback/); the gradebook is
rebuilt from raw/ after every submission, so a killed run loses nothing
already graded and a rerun skips submissions whose files are unchanged.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from autograder import feedback, gradebook, labs, roster, runner, submissions, summary
from autograder.results import SubmissionResult


def grade_entry(lab: labs.Lab, entry: submissions.Entry, out: Path, *, sandbox: bool,
                previous: dict[str, SubmissionResult], force: bool) -> tuple[SubmissionResult, bool]:
    """Grade one entry; returns (result, was_skipped)."""
    with tempfile.TemporaryDirectory(prefix=f"ironlaw-{lab.short}-") as tmp:
        staged = submissions.stage(entry.path, lab.manifest.student_files, Path(tmp) / "code")
        old = previous.get(entry.id)
        if old and not force and old.sha256 == staged.sha256 and (out / "results" / f"{entry.id}.json").exists():
            return old, True
        res = runner.grade_staged(lab, staged.directory, entry.id, sandbox=sandbox,
                                  problems=staged.problems, sha256=staged.sha256)
    gradebook.write_submission(out, res, lab.manifest, feedback.markdown(res, lab.manifest))
    return res, False


def main(*, lab: str, submissions_dir: str, out: str, jobs: int | None = None,
         sandbox: bool = True, force: bool = False, quiet: bool = False) -> int:
    console = Console(stderr=True, quiet=quiet)
    the_lab = labs.get(lab)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = submissions.discover(Path(submissions_dir))
    if not entries:
        console.print(f"[red]no submissions (folders or .zip files) in {submissions_dir}")
        return 2
    if not sandbox:
        console.print("[bold yellow]WARNING: --no-sandbox runs student code inside the grader; "
                      "grades are not protected against hostile submissions.")
    jobs = jobs or os.cpu_count() or 1
    people = roster.read(Path(submissions_dir))  # a Gradescope export names its students
    previous = {r.submission: r for r in gradebook.load_raw(out_dir)}
    lock = threading.Lock()
    done: dict[str, SubmissionResult] = {}

    def rebuild():
        rows = [r for r in gradebook.load_raw(out_dir) if r.submission in {e.id for e in entries}]
        gradebook.atomic_write(out_dir / "gradebook.csv", gradebook.csv_text(rows, the_lab.manifest, people))

    batch = contextlib.nullcontext()
    if sandbox:
        from autograder.sandbox import shared_zygote

        batch = shared_zygote(hide=[out_dir, Path(submissions_dir)])
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeRemainingColumn(), console=console, transient=False)
    skipped = 0
    with batch, progress, ThreadPoolExecutor(max_workers=jobs) as pool:
        task = progress.add_task(f"grading {the_lab.short}", total=len(entries))
        futures = {pool.submit(grade_entry, the_lab, e, out_dir, sandbox=sandbox,
                               previous=previous, force=force): e for e in entries}
        for fut in as_completed(futures):
            res, was_skipped = fut.result()
            with lock:
                done[res.submission] = res
                skipped += was_skipped
                rebuild()
            progress.advance(task)
    m = the_lab.manifest
    summary.write(out_dir, list(done.values()), m)
    console.print(f"graded {len(done) - skipped}, unchanged {skipped}; gradebook: {out_dir / 'gradebook.csv'}, "
                  f"summary: {out_dir / 'summary.md'}")
    for r in sorted(done.values(), key=lambda r: r.submission):
        note = f"  ({r.errors[0].splitlines()[0]})" if r.errors else ""
        console.print(f"  {r.submission:<24} {r.score:>6g} / {m.max_score:g}{note}")
    return 0
