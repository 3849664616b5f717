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

from autograder.batch import feedback, gradebook, roster, summary
from autograder.core import i18n, labs
from autograder.grading import runner, staging
from autograder.grading.pool import GraderPool
from autograder.core.i18n import _
from autograder.core.results import SubmissionResult


def unchanged(entry_id: str, staged: staging.Staged, out: Path,
              previous: dict[str, SubmissionResult]) -> SubmissionResult | None:
    """The earlier result, if this submission's files have not changed since
    (and its feedback is in the language asked for now)."""
    old = previous.get(entry_id)
    if old and old.sha256 == staged.sha256 and old.lang == i18n.current() \
            and (out / "results" / f"{entry_id}.json").exists():
        return old
    return None


def grade_entry(lab: labs.Lab, entry_id: str, staged: staging.Staged, out: Path, *,
                sandbox: bool, pool: GraderPool | None, after_due: bool = False) -> SubmissionResult:
    try:  # seed_salt: the hidden tests' inputs follow the files (same files, same inputs)
        res = runner.grade_staged(lab, staged.directory, entry_id, sandbox=sandbox,
                                  problems=staged.problems, sha256=staged.sha256, pool=pool,
                                  seed_salt=staged.sha256)
    except Exception as exc:  # noqa: BLE001  (this entry's error, never the batch's; no sha256: a rerun retries)
        res = SubmissionResult(submission=entry_id, lab=lab.name, lang=i18n.current(), errors=[
            *staged.problems, _("the grader failed on this submission: {error}").format(
                error=staging.describe(exc))])
    gradebook.write_submission(out, res, lab.manifest, feedback.markdown(res, lab.manifest, after_due=after_due))
    return res


def main(*, lab: str, submissions_dir: str, out: str, jobs: int | None = None,
         sandbox: bool = True, force: bool = False, quiet: bool = False, after_due: bool = False) -> int:
    console = Console(stderr=True, quiet=quiet)
    the_lab = labs.get(lab)
    m = the_lab.manifest
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = staging.discover(Path(submissions_dir))
    if not entries:
        console.print(f"[red]no submissions (folders or .zip files) in {submissions_dir}")
        return 2
    if not sandbox:
        console.print("[bold yellow]WARNING: --no-sandbox runs student code inside the grader; "
                      "grades are not protected against hostile submissions.")
    jobs = jobs or os.cpu_count() or 1
    try:
        people = roster.read(Path(submissions_dir))  # a Gradescope export names its students
    except Exception as exc:  # noqa: BLE001  (a damaged export still gets graded, without names)
        console.print(f"could not read {roster.METADATA} ({exc}); the gradebook has no names",
                      style="yellow", markup=False)
        people = {}
    previous = {r.submission: r for r in gradebook.load_raw(out_dir)}
    ids = {e.id for e in entries}

    def rebuild():
        rows = [r for r in gradebook.load_raw(out_dir) if r.submission in ids]
        gradebook.atomic_write(out_dir / "gradebook.csv", gradebook.csv_text(rows, m, people))

    with tempfile.TemporaryDirectory(prefix=f"ironlaw-{the_lab.short}-batch-") as tmp:
        # Stage every entry first: hashing tells what is unchanged, so a resumed
        # batch neither starts a zygote nor a grader for work already done.
        staged = {e.id: staging.stage(e.path, m.student_files, Path(tmp) / e.id) for e in entries}
        done = {} if force else {i: r for i in ids if (r := unchanged(i, staged[i], out_dir, previous))}
        todo = [e.id for e in entries if e.id not in done]
        for i, r in done.items():  # unchanged, not regraded: their feedback follows --after-due too
            gradebook.atomic_write(out_dir / "feedback" / f"{i}.md", feedback.markdown(r, m, after_due=after_due))
        batch = contextlib.ExitStack()
        pool = None
        if sandbox and todo:
            from autograder.sandbox.backend import shared_zygote

            batch.enter_context(shared_zygote(hide=[out_dir, Path(submissions_dir)]))
            pool = GraderPool(str(the_lab.root), min(jobs, len(todo)), runner.grader_env(the_lab))
            batch.callback(pool.close)
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn(), console=console, transient=False)
        lock = threading.Lock()
        with batch, progress, ThreadPoolExecutor(max_workers=jobs) as threads:
            task = progress.add_task(f"grading {the_lab.short}", total=len(todo))
            futures = {threads.submit(grade_entry, the_lab, i, staged[i], out_dir, sandbox=sandbox, pool=pool,
                                      after_due=after_due): i
                       for i in todo}
            for fut in as_completed(futures):
                try:
                    res = fut.result()
                except Exception as exc:  # noqa: BLE001  (even its result could not be written: go on)
                    console.print(f"{futures[fut]}: could not be graded: {exc}", style="red", markup=False)
                    progress.advance(task)
                    continue
                with lock:
                    done[res.submission] = res
                    rebuild()  # after every submission: a killed run loses nothing graded
                progress.advance(task)
    rebuild()
    summary.write(out_dir, list(done.values()), m)
    console.print(f"graded {len(todo)}, unchanged {len(entries) - len(todo)}; "
                  f"gradebook: {out_dir / 'gradebook.csv'}, summary: {out_dir / 'summary.md'}")
    for r in sorted(done.values(), key=lambda r: r.submission):
        note = f"  ({(r.errors[0].splitlines() or [''])[0]})" if r.errors else ""
        console.print(f"  {r.submission:<24} {r.score:>6g} / {m.max_score:g}{note}", markup=False)  # names: text
    return 0
