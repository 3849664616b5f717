"""``autograder grade LAB SUBMISSIONS --out DIR``: bulk grading.

The options and the console; the batch itself is ``autograder.batch.bulk``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shlex
from pathlib import Path

import click
from rich.console import Console

from autograder.batch import bulk, late, manual, platforms, record, summary
from autograder.commands import default_jobs, jobs_option, sandbox_option, usage_error
from autograder.commands.batch_input import open_batch
from autograder.core import i18n
from autograder.grading import pool, runner  # noqa: F401  (tests patch grade.runner.grade_staged)
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
                             "email, login or platform id, or the start of one, that names a single submission and "
                             "starts no other's (\"tran thi\" beside \"Tran Thi Binh\" is refused, with the list: "
                             "give the id); the rest keep their results")
@click.option("--platform", type=click.Choice(sorted(platforms.platforms())),
              help="the platform SUBMISSIONS was downloaded from (default: recognised from its layout)")
@click.option("--gradebook", type=click.Path(dir_okay=False),
              help="the platform's grade file as downloaded: Moodle's grading worksheet (filled in and written "
                   "back as OUT/moodle-worksheet.csv), Canvas's gradebook export (names who handed in nothing)")
@click.option("--no-file", "no_file", type=click.Choice(platforms.NO_FILE), default=None,
              help="the grade the platform's file gets for a student with nothing gradable (no lab file could "
                   "be read, or nothing handed in): zero (the default), or pending (left blank for you to decide)")
@click.option("--due", help="due date, ISO 8601 (2026-12-20T23:59, or with an offset): adds the late columns")
@click.option("--tz", default=None, help="IANA time zone of --due, of times without an offset and of Moodle's "
                                         "worksheet (the site's zone); default UTC")
@click.option("--late-penalty", type=click.FloatRange(0, 100), default=None, help="percent taken per late day started")
@click.option("--late-cap", type=click.FloatRange(0, 100), default=None, help="the most percent ever taken (100)")
@click.option("--grace", type=click.FloatRange(min=0), default=None, help="minutes after --due that count as on time")
@click.option("--extensions", type=click.Path(dir_okay=False), help="CSV: submission|email|sid,due (per-student dates)")
@click.option("--times", type=click.Path(dir_okay=False), help="CSV: submission,submitted_at (exports without times)")
@click.option("--allow-unknown-times", is_flag=True,
              help="with --due, go on when a submission's time is unknown (no late penalty for it); without it the "
                   "platform's files are held back and the exit status is 1")
@click.option("--export", "export_to", type=click.Choice(["canvas", "moodle"]),
              help="also write the final scores as this platform's grade import file, matched through the "
                   "roster, for submissions from elsewhere (a Moodle or Canvas export writes its own files)")
@click.option("--change-settings", is_flag=True,
              help="take settings that differ from the ones OUT/record/ keeps (the console lists every grade that "
                   "changes before anything goes back to the platform)")
@click.option("--prefer", type=click.Choice(["new", "old"]),
              help="--manual: a mark that differs from the one the record has: take the file's (new) or keep "
                   "the record's (old)")
@click.option("--remove-mark", multiple=True, metavar="SUBMISSION:QUESTION",
              help="take a recorded mark away (again for more; a marks file's points cell 'remove' does the same)")
@click.option("--marker", help="who gave the marks of --manual (when its file has no marker column)")
@click.option("--close-marking", is_flag=True,
              help="give 0 to every written answer not handed in (no notebook, or no answer), the reason in the "
                   "feedback, and keep it in the record")
@click.option("--lang", type=click.Choice(i18n.LANGS), default=None,
              help="language of the students' feedback: en or vi (kept in the record; default: "
                   f"${i18n.ENV}, then the locale, then en)")
def command(**options) -> int:
    """grade a folder of submissions or a platform's download (.zip): Moodle, Canvas, Gradescope, or a
    folder per student; sandboxed.  OUT is the assignment's record: its settings, marks and history
    (docs/record.md)"""
    return main(**options)


def main(*, lab: str, submissions_dir: str, out: str, jobs: int | None = None,
         sandbox: bool = True, force: bool = False, quiet: bool = False, after_due: bool = False,
         only: str | None = None, due: str | None = None, tz: str | None = None, late_penalty: float | None = None,
         late_cap: float | None = None, grace: float | None = None, extensions: str | None = None,
         times: str | None = None, export_to: str | None = None, manual_marks: str | None = None,
         platform: str | None = None, gradebook: str | None = None, no_file: str | None = None,
         lang: str | None = None, change_settings: bool = False, allow_unknown_times: bool = False,
         prefer: str | None = None, remove_mark: tuple[str, ...] = (), marker: str | None = None,
         close_marking: bool = False) -> int:
    console = Console(stderr=True, quiet=quiet)
    if refused := bundle_refusal(lab):  # a student bundle: only public tests, nothing to grade with
        return usage_error("grade", refused)
    given = {"platform": platform, "gradebook": gradebook, "export": export_to, "no_file": no_file, "lang": lang,
             "after_due": after_due or None, "due": due, "tz": tz, "late_penalty": late_penalty,
             "late_cap": late_cap, "grace": grace, "extensions": extensions}
    for key in record.FILE_SETTINGS:
        if given[key] and not Path(given[key]).is_file():
            return usage_error("grade", f"{record.SETTINGS_FLAGS[key][0]}: no file {given[key]}")
    try:  # OUT is the assignment's record: what it keeps, unless a flag says otherwise (--change-settings)
        settings = record.resolve(Path(out), given, change=change_settings)
    except (ValueError, OSError) as exc:
        return usage_error("grade", str(exc))
    if isinstance(settings, str):
        return usage_error("grade", settings)
    s = settings.values
    with i18n.language(s["lang"]) as chosen_lang, contextlib.ExitStack() as stack:
        s["lang"] = settings.recorded["lang"] = chosen_lang  # the first run's language, kept
        try:  # a platform's download as it is (a zip): unpacked into a private folder for this run
            folder, skipped = stack.enter_context(platforms.unpacked(Path(submissions_dir)))
        except ValueError as exc:
            return usage_error("grade", str(exc))
        opened = open_batch("grade", lab, str(folder), platform=s["platform"], gradebook=s["gradebook"])
        if isinstance(opened, int):
            return opened
        the_lab, intake = opened
        intake.warnings[:0] = skipped
        how = ", as --platform says" if platform else ", as the record says" if s["platform"] else ""
        s["platform"] = settings.recorded["platform"] = intake.platform.name
        said = (f"{submissions_dir}: {intake.platform.title} ({intake.platform.layout}{how}), "
                f"{len(intake.entries)} submission(s)")
        command_line = _command_line(lab, submissions_dir, out, only=only, force=force, manual=manual_marks,
                                     times=times, prefer=prefer, remove=remove_mark, marker=marker,
                                     close=close_marking, change=change_settings, given=given)
        return _grade(console, the_lab, intake, settings, said=said, out=out, jobs=jobs, sandbox=sandbox,
                      force=force, only=only, times=times, manual_marks=manual_marks, prefer=prefer,
                      remove_mark=remove_mark, marker=marker, close_marking=close_marking,
                      allow_unknown_times=allow_unknown_times, given=given, command_line=command_line,
                      change=change_settings)


def _command_line(lab: str, submissions: str, out: str, *, given: dict, **flags) -> str:
    """The run as the history says it: the arguments and every option given."""
    words = ["grade", lab, submissions, "--out", out]
    for key, value in given.items():
        if value is not None and value is not False:
            words += [record.SETTINGS_FLAGS[key][0]] + ([] if value is True else [record.shown(value)])
    names = {"only": "--only", "force": "--force", "manual": "--manual", "times": "--times", "prefer": "--prefer",
             "marker": "--marker", "close": "--close-marking", "change": "--change-settings"}
    for key, value in flags.items():
        if key == "remove":
            for r in value:
                words += ["--remove-mark", r]
        elif value:
            words += [names[key]] + ([] if value is True else [str(value)])
    return " ".join(shlex.quote(w) for w in words)


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
            return f"--only {term!r} names {len(found)} submissions: {shown}; give the id of the one you mean"
        ids.update(found)
    return frozenset(ids)


def _grade(console: Console, the_lab, intake: platforms.Intake, settings: record.Settings, *, said: str, out: str,
           jobs: int | None, sandbox: bool, force: bool, only: str | None, times: str | None,
           manual_marks: str | None, prefer: str | None, remove_mark: tuple[str, ...], marker: str | None,
           close_marking: bool, allow_unknown_times: bool, given: dict, command_line: str, change: bool) -> int:
    s, m, out_dir = settings.values, the_lab.manifest, Path(out)
    picked = chosen(intake, only) if only is not None else None
    if isinstance(picked, str):
        return usage_error("grade", picked)
    deadline, moved, newly = None, {}, {}
    if s["due"]:
        try:
            deadline, problems = bulk.deadline(intake, due=s["due"], tz=s["tz"], penalty=s["late_penalty"],
                                               cap=s["late_cap"], grace=s["grace"], extensions=s["extensions"],
                                               times=None)
            given_times = late.read_times(Path(times), s["tz"]) if times else {}
            # the record's times, and the new ones (--times wins over the platform's, in one run as across
            # runs): a time already recorded moves only with --change-settings
            known, moved = record.merge_times(out_dir, deadline.times, given_times, change=change)
        except (ValueError, OSError) as exc:
            return usage_error("grade", str(exc))
        if moved and not change:
            (i, (old, new)), *more = sorted(moved.items())
            return usage_error("grade", f"the submission time of {i} is recorded as {old}, and the platform's files or "
                                        f"--times now say {new}{f' ({len(more)} more like it)' if more else ''}: "
                                        "add --change-settings to take the new time(s)")
        recorded_times = record.read_times(out_dir)
        newly = {i: t for i, t in known.items() if i not in recorded_times}
        platform_times = deadline.times
        deadline = dataclasses.replace(deadline, times=known)
        for p in problems:
            console.print(f"warning: {p}", style="yellow", markup=False)
    elif given["extensions"] or times or given["late_penalty"]:
        return usage_error("grade", "--late-penalty, --extensions and --times need --due")
    if (manual_marks or remove_mark or close_marking) and not m.manual:
        return usage_error("grade", f"--manual: {the_lab.short} has no question marked by hand (manual = true)")
    new_marks: manual.Marks = {}
    removals: set[tuple[str, str]] = set()
    if manual_marks:
        try:
            new_marks = manual.read_marks(Path(manual_marks), m, removals)
        except ValueError as exc:
            return usage_error("grade", str(exc))
    for item in remove_mark:
        sub, _sep, qid = item.rpartition(":")
        if not sub or qid not in {q.id for q in m.manual}:
            return usage_error("grade", f"--remove-mark {item!r}: give SUBMISSION:QUESTION, a question marked by hand")
        removals.add((sub, qid))
    if marker:
        new_marks = {k: dataclasses.replace(v, marker=v.marker or marker) for k, v in new_marks.items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    merged = record.Merge()
    if m.manual and not record.has_marks(out_dir):  # a folder from before the record kept marks: taken in
        with contextlib.suppress(ValueError):
            record.merge_marks(out_dir, manual.entries(manual.kept(out_dir, m), ""))
    if new_marks or removals:
        merged = record.merge_marks(out_dir, manual.entries(new_marks, record.now()), remove=frozenset(removals),
                                    prefer=prefer)
        if merged.conflicts and prefer is None:
            console.print(f"{len(merged.conflicts)} mark(s) differ from the ones the record has:\n"
                          f"{record.conflicts_text(merged)}", markup=False)
            return usage_error("grade", f"--manual: {len(merged.conflicts)} mark(s) differ from the record's (listed "
                                        "above); nothing was taken: rerun with --prefer new (the file's) or "
                                        "--prefer old (the record's)")
    marks = None
    if m.manual:
        with contextlib.suppress(ValueError):  # a lab.toml changed since: grade_folder says so
            marks = manual.kept(out_dir, m)
    console.print(said, markup=False)  # which platform's download this was taken for
    if not sandbox:
        console.print("[bold yellow]WARNING: --no-sandbox runs student code inside the grader; "
                      "grades are not protected against hostile submissions.")
    before = record.read_grades(out_dir)

    def check(batch: bulk.Batch) -> str:
        """Before anything goes back to the platform: what changed, and the times not known."""
        if settings.changed or moved:
            for key, (old, new) in settings.changed.items():
                console.print(f"setting changed: {record.SETTINGS_FLAGS[key][0]} {record.shown(old)} -> "
                              f"{record.shown(new)}", markup=False)
            changed = [c for c in record.changes(before, _grades(batch, m), {})
                       if c.get("score", [None])[0] is not None]
            console.print(f"{len(changed)} grade(s) change:", markup=False)
            for c in changed:
                console.print(f"  {c['submission']}: {c['score'][0]:g} -> {c['score'][1]:g}", markup=False)
        unknown = summary.unknown_times({i: o.lateness for i, o in batch.outcomes.items() if o.lateness})
        if unknown:
            console.print(f"{len(unknown)} submission time(s) unknown, so no late penalty was applied: "
                          f"{', '.join(unknown[:20])}{' ...' if len(unknown) > 20 else ''}", style="yellow",
                          markup=False)
            if not allow_unknown_times:
                return (f"{len(unknown)} submission time(s) unknown: give them (--times, or the platform's "
                        "worksheet), or rerun with --allow-unknown-times")
        return ""

    # --jobs is what was asked for; the default starts a grader only where it pays for its start
    batch = bulk.grade_folder(the_lab, intake, out_dir, jobs=jobs or default_jobs([the_lab]),
                              share=1 if jobs else pool.SHARE,
                              sandbox=sandbox, force=force, after_due=s["after_due"], only=picked, deadline=deadline,
                              marks=marks, console=console, no_file=s["no_file"],
                              stamps={i: g.graded_at for i, g in before.items()}, close_marking=close_marking,
                              before_write_back=check)
    bulk.report(batch, m, out_dir, console)
    failed = any(r.grader_error for r in batch.results.values())
    if s["export"] and s["export"] != intake.platform.name and not batch.held_back:
        console.print(f"{s['export']} import file: "
                      f"{bulk.write_export(s['export'], batch, the_lab, out_dir, console, s['no_file'])}",
                      markup=False)
    # the record: what this run used, and what it changed (docs/record.md)
    record.save(out_dir, settings)
    if deadline:
        record.save_times(out_dir, platform_times, given_times)
    after = _grades(batch, m)
    changes = record.changes(before, after, _why(batch, before, settings, moved, newly, merged, new_marks,
                                                 manual_marks, force))
    record.write_grades(out_dir, {**before, **after})
    record.append_history(out_dir, {"at": record.now(), "lab": the_lab.short, "command": command_line,
                                    "settings": settings.recorded, "engine": record.engine_version(),
                                    "graded": sorted(batch.regraded), "changes": changes})
    return 1 if failed or batch.held_back else 0  # a grader failure is the instructor's to fix: never a quiet 0


def _grades(batch: bulk.Batch, m) -> dict[str, record.Grade]:
    """Each student's grade as the record keeps it, from this run's outcomes."""
    from autograder.core import results

    out = {}
    for i, o in batch.outcomes.items():
        people = batch.people.get(i)
        out[i] = record.Grade(
            score=o.score, raw=o.result.score, penalty_percent=o.lateness.penalty_percent if o.lateness else 0.0,
            late_days=o.lateness.late_days if o.lateness else 0,
            marks={t.question: t.points for t in o.result.tests if t.kind == results.MANUAL},
            sha256=o.result.sha256, graded_at=batch.graded_at.get(i, ""),
            names=tuple(n for n in (people.names if people else ()) if n))
    return out


def _why(batch: bulk.Batch, before: dict[str, record.Grade], settings: record.Settings, moved: dict, newly: dict,
         merged: record.Merge, new_marks: manual.Marks, manual_marks: str | None, force: bool
         ) -> dict[str, list[str]]:
    """Per submission, the reasons this run knows for a change of its grade."""
    why: dict[str, list[str]] = {}
    add = lambda i, text: why.setdefault(i, []).append(text)  # noqa: E731
    for i in sorted(batch.regraded):
        old = before.get(i)
        res = batch.results.get(i)
        if old and res and old.sha256 != res.sha256:
            add(i, "regraded: its files changed")
        elif old:
            add(i, "regraded" + (" (--force)" if force else ""))
    every = [f"setting {record.SETTINGS_FLAGS[k][0]}: {record.shown(o)} -> {record.shown(n)}"
             for k, (o, n) in settings.changed.items()]
    for i in batch.results:
        for text in every:
            add(i, text)
    for i, (old, new) in moved.items():
        add(i, f"submission time {old} -> {new}")
    for i, t in newly.items():
        if i in before:  # a student first graded needs no word on it
            add(i, f"submission time now known: {t.isoformat()}")
    source = f"marks file {Path(manual_marks).name}" if manual_marks else "--remove-mark"
    for s, q in merged.added:
        who = new_marks[(s, q)].marker if (s, q) in new_marks else ""
        add(s, f"mark {q} given{f' by {who}' if who else ''} ({source})")
    for s, q, o, n in merged.changed:
        add(s, f"mark {q}: {o.points:g} -> {n.points:g}" + (f" by {n.marker}" if n.marker else "") + f" ({source})")
    for s, q, o in merged.removed:
        add(s, f"mark {q} ({o.points:g}) removed ({source})")
    for (s, q), mark in batch.closed.items():
        add(s, f"mark {q}: 0 by --close-marking ({mark.comment})")
    for i, o in batch.outcomes.items():
        if o.lateness and o.lateness.late_days is None:
            add(i, "submission time unknown: no late penalty applied")
    return why
