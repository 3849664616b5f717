"""Grading a folder of submissions: ``autograder grade LAB SUBMISSIONS --out DIR``.

Each submission is staged (declared files only), graded in its own grader
process, and written at once (results/, raw/, feedback/), then its row goes
into the gradebook, which is replaced atomically after every submission: a
killed run loses nothing already graded, and a rerun skips the submissions
whose files are unchanged.  raw/ is read once, when the batch starts (what
is unchanged needs its earlier result); nothing is read back after that.
The summary is written once, at the end, from every result of the batch,
and so are the files that go back to the submissions' platform (Moodle's
grading worksheet, Canvas's import file: ``autograder.batch.platforms``).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from autograder.batch import (export, feedback, gradebook, late, manual, platforms, predictions_report, record, roster,
                              summary)
from autograder.core import stubs
from autograder.core import i18n, labs, untrusted
from autograder.core.files import run_folder, stop_requested, stopped_by, valid_text
from autograder.core.i18n import _
from autograder.core.manifest import Manifest
from autograder.core.results import SubmissionResult
from autograder.grading import predictions as P
from autograder.grading import runner, staging
from autograder.grading.pool import GraderPool, graders


@dataclass
class Batch:
    """What one run did: every result of the batch (graded now or unchanged), by submission."""
    results: dict[str, SubmissionResult] = field(default_factory=dict)
    graded: int = 0  # sent to a grader (one whose files could not even be written is not in results)
    unchanged: int = 0
    warnings: list[str] = field(default_factory=list)  # about the batch as a whole, for the instructor
    people: dict[str, roster.Submitters] = field(default_factory=dict)  # the export's roster, read once
    outcomes: dict[str, platforms.Outcome] = field(default_factory=dict)  # what each came to (late penalty applied)
    written: list[Path] = field(default_factory=list)  # the files that go back to the platform
    graded_at: dict[str, str] = field(default_factory=dict)  # when each result's tests ran (batch/record.py)
    regraded: set[str] = field(default_factory=set)  # the submissions whose tests ran in this run
    closed: manual.Marks = field(default_factory=dict)  # the 0s --close-marking gave
    held_back: str = ""  # why the platform's files were not written ("" : they were)


class Stopped(BaseException):
    """A submission not started because the batch was stopping (a crash in another thread)."""


def intake_warnings(entries: list[staging.Entry]) -> list[str]:
    """Two entries that gave one name (each graded under its own id)."""
    first = {e.id: e for e in entries}
    out = []
    for e in entries:
        if e.collides_with:
            other = first.get(e.collides_with)
            out.append(f"{staging.printable(e.path.name)} and {staging.printable(other.path.name if other else '?')} "
                       f"both give the id {e.collides_with!r}: graded separately, as {e.id!r} and "
                       f"{e.collides_with!r}; merge or remove one by hand if they are one student's")
    return out


def unchanged(entry_id: str, staged: staging.Staged, out: Path,
              previous: dict[str, SubmissionResult], lang: str | None = None) -> SubmissionResult | None:
    """The earlier result, if this submission's files have not changed since
    (and its feedback is in the language asked for now: ``lang``, the student's, else the batch's)."""
    old = previous.get(entry_id)
    if old and not old.grader_error and old.sha256 == staged.sha256 and old.lang == (lang or i18n.current()) \
            and (out / "results" / f"{entry_id}.json").exists():
        return old
    return None


@dataclass(frozen=True)
class Shown:
    """What a student is shown beyond what the tests gave: the marks given by hand
    (``batch.manual``), and the hidden-test details of questions that wait for the
    due date, once it has passed for that student (an extension counts) or with
    ``--after-due``."""
    manifest: Manifest
    marks: manual.Marks = field(default_factory=dict)
    after_due: bool = False
    deadline: gradebook.Deadline | None = None
    people: dict[str, roster.Submitters] = field(default_factory=dict)
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    out: Path | None = None  # the output folder: the answers handed in, to say what was not (manual.absent)
    stamps: dict[str, str] = field(default_factory=dict)  # submission -> when its tests ran, as the record has it
    langs: dict[str, str] = field(default_factory=dict)  # submission -> its student's language (feedback_lang)

    def graded_at(self, submission: str) -> str:
        """When the tests of ``submission``'s result ran: the record's time, else this run's."""
        return self.stamps.get(submission) or self.now.strftime("%Y-%m-%d %H:%M UTC")

    def absent(self, submission: str) -> dict[str, str]:
        return manual.absent(self.out, self.manifest, submission) if self.out is not None else {}

    def past_due(self, submission: str) -> bool:
        if self.after_due or self.deadline is None:
            return self.after_due
        return self.now >= self.deadline.due_for(submission, self.people.get(submission, gradebook.NOBODY))

    def lateness(self, submission: str) -> late.Lateness | None:
        """The late policy's verdict on one submission (None without a due date)."""
        if self.deadline is None:
            return None
        return self.deadline.of(submission, self.people.get(submission, gradebook.NOBODY))[1]

    def feedback(self, shown: SubmissionResult) -> str:
        """The student's feedback of a result as shown (its marks applied), in the student's language."""
        with i18n.speaking(self.langs.get(shown.submission)):
            return self._feedback(shown)

    def _feedback(self, shown: SubmissionResult) -> str:
        return feedback.markdown(shown, self.manifest, after_due=self.past_due(shown.submission),
                                 lateness=self.lateness(shown.submission), absent=self.absent(shown.submission),
                                 graded_at=self.graded_at(shown.submission) if self.out is not None else "")

    def publish(self, out: Path, res: SubmissionResult) -> SubmissionResult:
        """results/<id>.json and feedback/<id>.md of ``res`` (the tests' result), its marks
        applied; returns the result shown, the one the gradebook and summary count."""
        with i18n.speaking(self.langs.get(res.submission)):  # "marked by hand", a missing answer's note
            return self._publish(out, res)

    def _publish(self, out: Path, res: SubmissionResult) -> SubmissionResult:
        shown = manual.apply(res, self.manifest, self.marks)
        shown = predictions_report.participation(out, shown, self.manifest)  # applied like a mark, never in raw/
        shown = manual.missing_notes(out, shown, self.manifest)
        gradebook.write_shown(out, shown, self.manifest, self.feedback(shown),
                              self.graded_at(shown.submission) if self.out is not None else "")
        return shown


def student_lang(manifest: Manifest, staged: staging.Staged) -> str | None:
    """The language of the notebook a student handed in (``<lab>.vi.ipynb``: vi; ``<lab>.ipynb``:
    English), their feedback's; None when they handed in none (or both): the roster's, else the
    batch's language (:func:`feedback_lang`)."""
    found = {i18n.DEFAULT if name == manifest.notebooks[0] else name.rsplit(".", 2)[-2]
             for name in staged.extra if name in manifest.notebooks}
    found &= set(i18n.LANGS)
    return found.pop() if len(found) == 1 else None


def feedback_lang(manifest: Manifest, staged: staging.Staged, who: roster.Submitters) -> str:
    """A student's feedback language: their notebook's (:func:`student_lang`), else the roster's
    language column (``roster.language``: a column in Canvas's gradebook export or Moodle's
    worksheet), else the batch's (``docs/feedback.md``)."""
    return student_lang(manifest, staged) or who.lang or i18n.current()


def failed(lab: labs.Lab, entry_id: str, exc: BaseException, problems: list[str] = ()) -> SubmissionResult:
    """The result of an entry the engine failed on (staging it, reading its notebook, grading
    it, writing its files): every test at 0, the reason in its problems.  No sha256: a rerun
    retries it.  One entry's failure, never the batch's."""
    return SubmissionResult(submission=entry_id, lab=lab.name, lang=i18n.current(), errors=[
        *problems, _("the grader failed on this submission: {error}").format(error=staging.describe(exc))])


def publish(shown: Shown, out: Path, res: SubmissionResult, lab: labs.Lab) -> SubmissionResult:
    """``shown.publish``, and if even that fails for this entry, its failure published instead
    (or, when no file of it can be written, returned all the same: its gradebook row says why)."""
    try:
        return shown.publish(out, res)
    except Exception as exc:  # noqa: BLE001
        res = failed(lab, res.submission, exc, res.errors)
        try:
            return shown.publish(out, res)
        except Exception:  # noqa: BLE001
            return res


def grade_entry(lab: labs.Lab, entry_id: str, staged: staging.Staged, out: Path, *,
                sandbox: bool, pool: GraderPool | None, shown: Shown, cache: Path | None = None) -> SubmissionResult:
    lang = shown.langs.get(entry_id)
    if lang and lang != i18n.current():  # the pool's graders speak the batch's language: a fresh one speaks theirs
        pool = None
    try:  # seed_salt: the hidden tests' inputs follow the files (same files, same inputs)
        with i18n.speaking(lang):  # the grader, and the sandboxed worker it asks, are told this language
            res = runner.grade_staged(lab, staged.directory, entry_id, sandbox=sandbox,
                                      problems=staged.problems, notes=staged.notes, sha256=staged.sha256, pool=pool,
                                      seed_salt=staged.sha256, batch_cache=cache)
    except Exception as exc:  # noqa: BLE001  (this entry's error, never the batch's; no sha256: a rerun retries)
        res = failed(lab, entry_id, exc, staged.problems)
    try:
        gradebook.write_raw(out, res)
    except Exception as exc:  # noqa: BLE001
        res = failed(lab, entry_id, exc, res.errors)
    return publish(shown, out, res, lab)


def prepare(lab: labs.Lab, entry: staging.Entry, dest: Path, out: Path, *, stubs: dict[str, bytes],
            blank: set[str], handed_in: datetime | None = None) -> staging.Staged:
    """Stage one entry and, for a lab with questions marked by hand, extract its notebook's
    answers (a notebook that cannot be read is a problem of the entry: staging.Staged.add_problems);
    for a lab with predictions, keep what its predictions.json says (data, never the grader's),
    its history checked against ``handed_in`` (the platform's time).

    All of it reads the student's bytes in this process, so it runs within one entry's CPU
    budget (``core.untrusted.budget``): past it, what was not read yet is left out, and the
    entry's row and feedback say so in one line; the batch goes on."""
    m = lab.manifest
    st, predictions_kept = None, False
    with untrusted.budget() as spent:
        try:
            st = platforms.stage(lab, entry, dest, stubs)  # as the Gradescope runner stages an upload
            if m.manual:  # the written answers, for the TA (the notebook is not the tests' business)
                st.add_problems(manual.extract(out, m, lab.assignment_dir, {entry.id: st.extra}, blank)
                                .get(entry.id, []))
            if m.predictions:  # a missing or unreadable file is counted in the summary, never a problem
                predictions_report.extract(out, m, {entry.id: st.extra}, unread={entry.id: st.unread},
                                           times={entry.id: handed_in} if handed_in else None)
                predictions_kept = True
        except untrusted.OverBudget:  # stopped between the readers' own guards: what was read stands
            pass
    if not spent.exceeded:
        return st
    why = str(spent.error())
    if st is None:  # stopped inside staging's own bookkeeping: nothing of it is trusted
        st = staging.Staged(dest)
    if m.predictions and not predictions_kept:
        predictions_report.extract(out, m, {entry.id: {}}, unread={entry.id: {P.FILE: why}})
    if not any(why in p for p in st.problems):
        st.add_problems([why])
    return st


def grade_folder(lab: labs.Lab, intake: platforms.Intake, out: Path, *,
                 jobs: int, share: int = 1, sandbox: bool = True, force: bool = False, after_due: bool = False,
                 only: frozenset[str] | None = None, deadline: gradebook.Deadline | None = None,
                 marks: manual.Marks | None = None, console: Console | None = None, no_file: str = "zero",
                 stamps: dict[str, str] | None = None, close_marking: bool = False,
                 before_write_back: Callable[[Batch], str] | None = None) -> Batch:
    """Grade the entries of ``intake`` (an export, read by its platform) into ``out``, then write
    what goes back to the platform (``no_file``: what its grade file gets for a student with
    nothing gradable, ``"zero"`` or ``"pending"``).

    ``jobs``: graders at most; ``share``: submissions each grader gets at least (``pool.graders``).
    ``only``: grade just these ids (unchanged ones too, with ``force``); every
    other submission keeps the result it has in ``out``, as it is.
    ``deadline``: the gradebook's late columns and scores after the penalty.
    ``marks``: the marks of the questions marked by hand (kept in ``out`` for
    the next run); ``None``: the ones kept by an earlier run, if any.
    ``stamps``: when each result's tests ran, as the record has it (``None``: no record; the
    feedback then says no time); ``close_marking``: a 0 for every written answer not handed in
    (``manual.closing``, kept in the record); ``before_write_back``: called with the batch
    once every outcome is known, before anything goes back to the platform; a sentence it
    returns holds the platform's files back and says why."""
    console = console or Console(stderr=True, quiet=True)
    m = lab.manifest
    out.mkdir(parents=True, exist_ok=True)
    entries, submissions, people = intake.entries, intake.folder, intake.people
    previous = {r.submission: r for r in gradebook.load_raw(out)}  # the one read of raw/
    batch = Batch(warnings=intake_warnings(entries) + intake.warnings, people=people)
    if marks is None:
        try:
            marks = manual.kept(out, m)
        except ValueError as exc:  # a lab.toml changed since: said, and nothing marked
            batch.warnings.append(f"the manual marks kept from an earlier run are not used: {exc}")
            marks = {}
    else:
        manual.keep(out, marks)
    batch.warnings += manual.unknown(marks, {e.id for e in entries})
    shown = Shown(m, marks, after_due, deadline, people, out=out if stamps is not None else None,
                  stamps=dict(stamps or {}))
    every = entries
    kept = {e.id: previous[e.id] for e in entries if only is not None and e.id not in only and e.id in previous}
    entries = [e for e in entries if only is None or e.id in only]
    # Everything the batch puts in the temporary folder (the staged submissions, the answers every
    # submission shares (labkit/batch_cache.py), the graders' and the zygote's folders): one private
    # folder, gone with the batch, on Ctrl-C and SIGTERM too (files.run_folder)
    with run_folder(f"{lab.short}-batch") as tmp:
        staged_dir = Path(tempfile.mkdtemp(dir=tmp, prefix="staged-"))
        cache = tempfile.mkdtemp(dir=tmp, prefix="answers-")
        # Stage every entry first: hashing tells what is unchanged, so a resumed
        # batch neither starts a zygote nor a grader for work already done.
        # Each entry on its own: whatever one upload does to this phase is its row's problem.
        stub_bytes = {name: text.encode() for name, text in stubs.texts(lab).items()}  # an untouched stub loses a choice
        blank = manual.blank_answers(lab.assignment_dir, m) if m.manual else set()
        staged, broken = {}, {}
        for e in entries:
            try:
                staged[e.id] = prepare(lab, e, staged_dir / e.id, out, stubs=stub_bytes, blank=blank,
                                       handed_in=(deadline.times if deadline else intake.times).get(e.id))
                shown.langs[e.id] = feedback_lang(m, staged[e.id], people.get(e.id, roster.NOBODY))
                if not force and (r := unchanged(e.id, staged[e.id], out, previous, shown.langs[e.id])):
                    batch.results[e.id] = r
            except Exception as exc:  # noqa: BLE001  (RecursionError, MemoryError: this entry's, not the batch's)
                broken[e.id] = failed(lab, e.id, exc)
        # what could be read of each (the ones --only leaves alone too): nothing at all is --no-file's case
        gradable = {e.id: bool(staged[e.id].found or staged[e.id].extra) if e.id in staged else
                    _gradable(lab, e, Path(tempfile.mkdtemp(dir=tmp, prefix="kept-")), stub_bytes)
                    for e in every if e.id in staged or e.id in kept}
        book = gradebook.Gradebook(out / "gradebook.csv", m, people, deadline,
                                   notes=any(st.notes for st in staged.values()) or any(r.notes for r in kept.values()))
        todo = [e.id for e in entries if e.id not in batch.results and e.id not in broken]
        batch.graded, batch.unchanged = len(todo) + len(broken), len(entries) - len(todo) - len(broken) + len(kept)
        batch.regraded = set(todo) | set(broken)
        shown.langs.update({i: r.lang for i, r in kept.items()})  # --only leaves the others as they were
        for i in batch.regraded:  # their tests run now: this run's time
            shown.stamps.pop(i, None)
        if close_marking and m.manual:  # after staging: the answers of every submission are extracted
            batch.closed = manual.closing(out, m, [e.id for e in every], marks)
            record.merge_marks(out, manual.entries(batch.closed, record.now()))
            marks.update(batch.closed)  # the dict Shown holds
            manual.keep(out, marks)
        batch.results.update(kept)
        # not regraded: shown again all the same (marks may be new, the due date may have passed)
        batch.results = {i: publish(shown, out, r, lab) for i, r in batch.results.items()}
        for i, res in broken.items():
            with contextlib.suppress(Exception):
                gradebook.write_raw(out, res)
            batch.results[i] = publish(shown, out, res, lab)
        book.add(*batch.results.values())  # before any grading: a crash from here on keeps these rows
        stack = contextlib.ExitStack()
        pool = None
        if sandbox and todo:
            from autograder.sandbox.backend import shared_zygote

            stack.enter_context(shared_zygote(hide=[out, submissions], for_labs=[lab.manifest]))
            pool = GraderPool(str(lab.root), graders(jobs, len(todo), share), runner.grader_env(lab))
            stack.callback(pool.close)
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeRemainingColumn(), console=console, transient=False)
        stop = threading.Event()

        def one(i: str) -> SubmissionResult:
            # A crash (not one submission's error: those are results) stops the batch at once,
            # from the thread where it happened: no queued submission starts after it.
            if stop.is_set() or stopped_by() is not None:  # or Ctrl-C, even one the main thread lost
                raise Stopped(i)
            try:
                return grade_entry(lab, i, staged[i], out, sandbox=sandbox, pool=pool, shown=shown,
                                   cache=Path(cache))
            except BaseException:
                stop.set()
                raise

        with stack, progress, ThreadPoolExecutor(max_workers=jobs) as threads:
            task = progress.add_task(f"grading {lab.short}", total=len(todo))
            futures = {threads.submit(one, i): i for i in todo}
            try:
                # Results arrive here, in this one thread: the gradebook needs no lock.
                for fut in as_completed(futures):
                    try:
                        res = fut.result()
                    except Stopped:
                        continue  # the crash that stopped it is raised from its own future
                    except Exception as exc:  # noqa: BLE001  (not even its failure could be written: its row says so)
                        res = failed(lab, futures[fut], exc)
                        console.print(f"{futures[fut]}: could not be graded: {valid_text(str(exc))}", style="red",
                                      markup=False)
                    batch.results[res.submission] = res
                    book.add(res)  # appended after every submission: a killed run loses nothing graded
                    progress.advance(task)
                    stop_requested()  # Ctrl-C or SIGTERM, even one whose exception was lost
                stop_requested()  # the last ones were never started
            except BaseException:
                # Ctrl-C or a crash: stop here, without grading what waits (the executor
                # would otherwise run every queued submission before letting go).
                for fut in futures:
                    fut.cancel()
                raise
            finally:
                book.finish()  # in submission order, once
    if m.manual:
        manual.write_marking(out, m, sorted(batch.results), marks)
    batch.outcomes = {i: platforms.Outcome(
        r, shown.lateness(i).final_score(r.score) if deadline else r.score, shown.lateness(i),
        gradable.get(i, True) or r.score > 0, shown.feedback(r), r.pending_points(m), shown.absent(i))
        for i, r in batch.results.items()}
    batch.graded_at = {i: shown.graded_at(i) for i in batch.results}
    try:  # the platform's files: their own warnings (a student they cannot name) go to the summary too
        batch.held_back = before_write_back(batch) if before_write_back else ""
        if batch.held_back:
            batch.warnings.append(f"{intake.platform.title}'s files were not written: {batch.held_back}")
        else:
            batch.written = intake.platform.write_back(intake, batch.outcomes, lab, out, no_file)
    except Exception as exc:  # noqa: BLE001  (the gradebook and feedback stand: said, never a lost batch)
        batch.warnings.append(f"could not write {intake.platform.title}'s files: {staging.describe(exc)}")
    finally:
        batch.warnings += [w for w in intake.warnings if w not in batch.warnings]
        summary.write(out, list(batch.results.values()), m, batch.warnings,
                      late={i: o.lateness for i, o in batch.outcomes.items() if o.lateness}, nothing=intake.nothing)
    return batch


def _gradable(lab: labs.Lab, entry: staging.Entry, dest: Path, stub_bytes: dict[str, bytes]) -> bool:
    """Whether any of the lab's files can be read from ``entry`` (one ``--only`` did not regrade)."""
    try:
        with untrusted.budget():  # the student's bytes, read again: within an entry's budget like prepare's
            st = platforms.stage(lab, entry, dest, stub_bytes)
        return bool(st.found or st.extra)
    except Exception:  # noqa: BLE001  (its earlier result stands; nothing is decided from here)
        return True


def deadline(intake: platforms.Intake, *, due: str, tz: str, penalty: float, cap: float, grace: float,
             extensions: str | None, times: str | None) -> tuple[gradebook.Deadline, list[str]]:
    """The batch's due date and late policy, with the submission times the export holds
    (Gradescope's ``:created_at``) and ``times`` (a CSV: it wins).  Raises ValueError
    (naming the file and line, or the value) for anything it cannot read; returns the
    problems of single records, to be shown."""
    known, problems = dict(intake.times), list(intake.problems)
    for i, wall in sorted(intake.wall_times.items()):  # Moodle's worksheet: wall-clock time in the site's zone
        try:
            known[i] = late.localize(wall, tz)
        except ValueError as exc:  # a time the clocks skip or repeat: unknown, and said
            problems.append(f"{i}: {exc}")
    if times:
        known.update(late.read_times(Path(times), tz))
    return gradebook.Deadline(
        due=late.parse_time(due, tz), policy=late.LatePolicy(penalty, cap, grace), times=known,
        extensions=late.read_extensions(Path(extensions), tz) if extensions else {},
        late_flags=dict(intake.late_flags)), problems


def write_export(kind: str, batch: Batch, lab: labs.Lab, out: Path, console: Console, no_file: str = "zero") -> Path:
    """``canvas.csv`` or ``moodle.csv`` in ``out`` for submissions that came from elsewhere (a
    Gradescope export, a folder): the final scores, matched through the batch's roster (an
    export's own platform writes its files itself: ``platforms``)."""
    m, people = lab.manifest, batch.people
    rows = []
    for i, o in sorted(batch.outcomes.items()):
        who = people.get(i, gradebook.NOBODY)
        rows += export.GradeRow.members(i, o.grade(no_file), m.max_score, names=who.names, emails=who.emails,
                                        sids=who.sids, logins=who.logins)
    made = export.canvas_csv(rows, m.title) if kind == "canvas" else export.moodle_csv(rows, m.title)
    path = out / f"{kind}.csv"
    made.write(path)
    for s in made.skipped:
        console.print(f"warning: {kind}.csv leaves out {s.row.submission}: {s.reason}", style="yellow", markup=False)
    return path


def late_note(lateness: late.Lateness | None, raw: float) -> str:
    """How late, and what it took, for the instructor's console (empty when on time or unknown)."""
    if not lateness or not lateness.late_days:
        return ""
    return f"late {lateness.late_days} day(s): -{lateness.penalty_percent:g}% of {raw:g}"


def report(batch: Batch, manifest, out: Path, console: Console) -> None:
    console.print(f"graded {batch.graded}, unchanged {batch.unchanged}; "
                  f"gradebook: {out / 'gradebook.csv'}, summary: {out / 'summary.md'}")
    for w in batch.warnings:
        console.print(f"warning: {w}", style="yellow", markup=False)
    pending = sorted(r.submission for r in batch.results.values() if r.grader_error)
    if pending:
        console.print(f"the grader failed on {len(pending)} submission(s), not their code: their scores are pending "
                      f"({', '.join(pending[:10])}{' ...' if len(pending) > 10 else ''}); the reason is in "
                      f"raw/<id>.json (grader_error). Fix it and rerun: they are regraded.", style="red", markup=False)
    to_mark = sum(q.pending for r in batch.results.values() for q in r.questions(manifest))
    if to_mark:
        console.print(f"{to_mark} answer(s) of questions marked by hand wait for their marks: read "
                      f"{out / manual.FOLDER}/<question>.md, fill a copy of {manual.TEMPLATE} and rerun with "
                      f"--manual FILE", markup=False)
    for r in sorted(batch.results.values(), key=lambda r: r.submission):
        o = batch.outcomes.get(r.submission)
        said = [late_note(o.lateness, r.score) if o else ""]
        said += [f"{r.pending_points(manifest):g} pending (marked by hand)"] if r.pending_points(manifest) else []
        said += [(r.errors[0].splitlines() or [""])[0]] if r.errors else []
        note = f"  ({'; '.join(x for x in said if x)})" if any(said) else ""
        score = o.score if o else r.score
        console.print(f"  {r.submission:<24} {score:>6g} / {manifest.max_score:g}{note}", markup=False)  # names: text
    for path in batch.written:
        console.print(f"for the platform: {path}", markup=False)
