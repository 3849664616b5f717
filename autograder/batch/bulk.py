"""Grading a folder of submissions: ``autograder grade LAB SUBMISSIONS --out DIR``.

Each submission is staged (declared files only), graded in its own grader
process, and written at once (results/, raw/, feedback/), then its row goes
into the gradebook, which is replaced atomically after every submission: a
killed run loses nothing already graded, and a rerun skips the submissions
whose files are unchanged.  raw/ is read once, when the batch starts (what
is unchanged needs its earlier result); nothing is read back after that.
The summary is written once, at the end, from every result of the batch.
"""

from __future__ import annotations

import contextlib
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from autograder.batch import feedback, gradebook, roster, summary
from autograder.core.files import atomic_write
from autograder.core import i18n, labs
from autograder.core.i18n import _
from autograder.core.results import SubmissionResult
from autograder.grading import runner, staging
from autograder.grading.pool import GraderPool


@dataclass
class Batch:
    """What one run did: every result of the batch (graded now or unchanged), by submission."""
    results: dict[str, SubmissionResult] = field(default_factory=dict)
    graded: int = 0  # sent to a grader (one whose files could not even be written is not in results)
    unchanged: int = 0


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


def read_roster(submissions: Path, console: Console) -> dict[str, roster.Submitters]:
    try:
        return roster.read(submissions)  # a Gradescope export names its students
    except Exception as exc:  # noqa: BLE001  (a damaged export still gets graded, without names)
        console.print(f"could not read {roster.METADATA} ({exc}); the gradebook has no names",
                      style="yellow", markup=False)
        return {}


def grade_folder(lab: labs.Lab, entries: list[staging.Entry], submissions: Path, out: Path, *,
                 jobs: int, sandbox: bool = True, force: bool = False, after_due: bool = False,
                 console: Console | None = None) -> Batch:
    """Grade ``entries`` (from ``staging.discover(submissions)``) into ``out``."""
    console = console or Console(stderr=True, quiet=True)
    m = lab.manifest
    out.mkdir(parents=True, exist_ok=True)
    people = read_roster(submissions, console)
    previous = {r.submission: r for r in gradebook.load_raw(out)}  # the one read of raw/
    book = gradebook.Gradebook(out / "gradebook.csv", m, people)
    batch = Batch()
    with tempfile.TemporaryDirectory(prefix=f"ironlaw-{lab.short}-batch-") as tmp:
        # Stage every entry first: hashing tells what is unchanged, so a resumed
        # batch neither starts a zygote nor a grader for work already done.
        staged = {e.id: staging.stage(e.path, m.student_files, Path(tmp) / e.id) for e in entries}
        if not force:
            batch.results = {e.id: r for e in entries if (r := unchanged(e.id, staged[e.id], out, previous))}
        todo = [e.id for e in entries if e.id not in batch.results]
        batch.graded, batch.unchanged = len(todo), len(entries) - len(todo)
        for i, r in batch.results.items():  # unchanged, not regraded: their feedback follows --after-due too
            atomic_write(out / "feedback" / f"{i}.md", feedback.markdown(r, m, after_due=after_due))
        book.add(*batch.results.values())  # before any grading: a crash from here on keeps these rows
        stack = contextlib.ExitStack()
        pool = None
        if sandbox and todo:
            from autograder.sandbox.backend import shared_zygote

            stack.enter_context(shared_zygote(hide=[out, submissions]))
            pool = GraderPool(str(lab.root), min(jobs, len(todo)), runner.grader_env(lab))
            stack.callback(pool.close)
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn(), console=console, transient=False)
        with stack, progress, ThreadPoolExecutor(max_workers=jobs) as threads:
            task = progress.add_task(f"grading {lab.short}", total=len(todo))
            futures = {threads.submit(grade_entry, lab, i, staged[i], out, sandbox=sandbox, pool=pool,
                                      after_due=after_due): i
                       for i in todo}
            try:
                # Results arrive here, in this one thread: the gradebook needs no lock.
                for fut in as_completed(futures):
                    try:
                        res = fut.result()
                    except Exception as exc:  # noqa: BLE001  (even its result could not be written: go on)
                        console.print(f"{futures[fut]}: could not be graded: {exc}", style="red", markup=False)
                        progress.advance(task)
                        continue
                    batch.results[res.submission] = res
                    book.add(res)  # after every submission: a killed run loses nothing graded
                    progress.advance(task)
            except BaseException:
                # Ctrl-C or a crash: stop here, without grading what waits (the executor
                # would otherwise run every queued submission before letting go).
                for fut in futures:
                    fut.cancel()
                raise
    summary.write(out, list(batch.results.values()), m)
    return batch


def report(batch: Batch, manifest, out: Path, console: Console) -> None:
    console.print(f"graded {batch.graded}, unchanged {batch.unchanged}; "
                  f"gradebook: {out / 'gradebook.csv'}, summary: {out / 'summary.md'}")
    for r in sorted(batch.results.values(), key=lambda r: r.submission):
        note = f"  ({(r.errors[0].splitlines() or [''])[0]})" if r.errors else ""
        console.print(f"  {r.submission:<24} {r.score:>6g} / {manifest.max_score:g}{note}", markup=False)  # names: text
