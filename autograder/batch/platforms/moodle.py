"""Moodle's assignment: "Download all submissions" in; the grading worksheet and feedback files out.

In (``docs/intake.md``).  Moodle writes each student's uploads under a prefix
``<full name>_<participant id>`` (an underscore in the name becomes a space),
then the plugin: ``_assignsubmission_file`` for uploaded files,
``_assignsubmission_onlinetext`` for online text (Moodle 4.1 and later; before,
with a trailing ``_``).  With "Download submissions in folders" (the default)
each is a folder; without it, every file is flat, ``<prefix>_assignsubmission_
file_<file name>``.  All of one participant id is one submission, id
``<full name>_<participant id>``: an online-text folder beside a file
submission is read with it, never graded as a second, empty one.  The
participant id is the number of the grading worksheet's ``Identifier``
("Participant 123"): names, emails and ID numbers come from there, so nothing
needs an email address.  Moodle keeps each file under the name it was
uploaded with and adds `` (1)`` to an upload whose name is taken.  When two
uploads could be one declared file (``bai2.zip``, then ``bai2_nop_lai.zip``),
the later is the one its download's times say (the entry times of Moodle's own
zip, kept when ``platforms.unpacked`` unpacks it; an unpacked folder's file
times), else the one Moodle renamed last, else the one the student's zips' own
times say; the feedback and gradebook row say which decided, or that nothing
could (``staging.upload_order``, ``docs/intake.md``).

Out (``docs/exports.md``).  With the grading worksheet the instructor
downloaded (``--gradebook``: Grading action > "Download grading worksheet"),
``moodle-worksheet.csv`` is that file with its ``Grade`` and ``Feedback
comments`` filled in, every other cell, row and column as downloaded, for
"Upload grading worksheet".  Without one, a worksheet of the graded students
with the columns the importer needs.  ``moodle-feedback.zip`` holds each
student's feedback in a folder named like their download folder, for "Upload
multiple feedback files in a zip".  The formats follow Moodle's own code:
``mod/assign/feedback/offline/importgradeslib.php`` (the worksheet's columns,
found by their English headers), ``mod/assign/classes/downloader.php`` (the
download's names) and ``mod/assign/feedback/file/importziplib.php`` (the
feedback zip's folders).
"""

from __future__ import annotations

import csv
import html
import io
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.batch import export, roster
from autograder.batch.feedback import score_lines
from autograder.grading.notebook_text import Local
from autograder.batch.gradebook import text_cell
from autograder.batch.platforms import Intake, Outcome, Platform, name_doubts
from autograder.batch.platforms import moodle_time
from autograder.core.files import atomic_write, write_zip
from autograder.core import i18n
from autograder.core.i18n import N_, _
from autograder.grading import staging

FOLDER = re.compile(r"^(?P<name>.*?)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_?$")
FLAT = re.compile(r"^(?P<name>.*?)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<file>.+)$")
RENAMED = re.compile(r"^(?P<stem>.+?) \((?P<n>\d+)\)(?P<ext>(?:\.[^.]+)?)$")  # "optimizers (1).py"
ORDER_NOTE = N_("{file}: Moodle's download does not say which upload came last; {graded} was graded as the "
                "latest, by the number Moodle adds to a name uploaded again (\" (1)\"). Check by hand if it matters.")
FILE_PLUGIN = "file"

# The worksheet's columns, as Moodle writes them in English (the importer finds them by these names)
IDENTIFIER, FULL_NAME, EMAIL, ID_NUMBER, USERNAME = "Identifier", "Full name", "Email address", "ID number", "Username"
GRADE, MAX_GRADE, MODIFIED, FEEDBACK = "Grade", "Maximum Grade", "Last modified (grade)", "Feedback comments"
SUBMITTED = "Last modified (submission)"  # when the student last changed the submission (platforms/moodle_time.py)
# "Participant 123": matched whole, from the end (a search for r"(\d+)\s*$" retries at every digit: its time
# grows with the square of a long cell's digits)
PARTICIPANT = re.compile(r"(?:.*\D)?(\d+)\s*", re.S)
WORKSHEET, FEEDBACK_ZIP = "moodle-worksheet.csv", "moodle-feedback.zip"
READ_BACK = (IDENTIFIER, GRADE, MODIFIED, FEEDBACK)  # the cells "Upload grading worksheet" reads: never escaped


@dataclass
class Worksheet:
    """A grading worksheet as downloaded: its rows, and how its bytes were written."""
    path: Path | None
    header: list[str]
    rows: list[list[str]]
    bom: bool = True
    newline: str = "\n"

    def column(self, name: str) -> int | None:
        """Where the column ``name`` is: its exact header (as the importer finds it), else one that
        differs only in case (Moodle has written "Maximum Grade" and "Maximum grade")."""
        if name in self.header:
            return self.header.index(name)
        folded = [h.strip().casefold() for h in self.header]
        return folded.index(name.casefold()) if name.casefold() in folded else None

    def participants(self) -> dict[str, int]:
        """Participant id -> its row's index."""
        at = self.column(IDENTIFIER)
        out = {}
        for i, row in enumerate(self.rows):
            m = PARTICIPANT.fullmatch(row[at]) if at is not None and at < len(row) else None
            if m:
                out[m[1]] = i
        return out

    def cell(self, row: int, name: str) -> str:
        at = self.column(name)
        return self.rows[row][at].strip() if at is not None and at < len(self.rows[row]) else ""

    def text(self) -> str:
        """The file, every cell escaped as ``gradebook.csv``'s (``gradebook.text_cell``: a name or an online
        text starting ``=`` is shown, never run) but the ones Moodle's importer reads back (``READ_BACK``),
        which it would no longer match: the header, the identifier, the grade, the time it compares, the
        comment (ours start with the score)."""
        raw = {self.column(c) for c in READ_BACK} - {None}
        rows = [[c if at in raw else text_cell(c) for at, c in enumerate(r)] for r in self.rows]
        buf = io.StringIO()
        csv.writer(buf, lineterminator=self.newline).writerows([self.header, *rows])
        return ("\ufeff" if self.bom else "") + buf.getvalue()


def read_worksheet(path: Path) -> Worksheet:
    """The worksheet at ``path``; ValueError naming the file when it is not one."""
    try:
        raw = Path(path).read_bytes()
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the grading worksheet ({exc})") from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise ValueError(f"{path}: empty; expected Moodle's grading worksheet")
    header = rows[0]
    missing = [c for c in (IDENTIFIER, GRADE, MODIFIED) if c not in header]
    if missing:
        raise ValueError(f"{path}: not a Moodle grading worksheet: no column {', '.join(map(repr, missing))} "
                         f"(download it with Moodle in English: its importer finds the columns by these names)")
    width = len(header)
    body = [r + [""] * (width - len(r)) for r in rows[1:] if any(c.strip() for c in r)]
    return Worksheet(Path(path), header, body, bom=raw.startswith(b"\xef\xbb\xbf"),
                     newline="\r\n" if raw.split(b"\n", 1)[0].endswith(b"\r") else "\n")  # the header's line end


class Moodle(Platform):
    name = "moodle"
    title = "Moodle"
    layout = "folders <full name>_<participant id>_assignsubmission_<plugin>"
    gradebook = "the grading worksheet (Download grading worksheet), filled in and written back"

    def detect(self, folder: Path) -> int:
        from autograder.batch.platforms import top_names

        return sum(bool(FOLDER.match(e.name) if e.is_dir(follow_symlinks=False) else FLAT.match(e.name))
                   for e in top_names(folder))

    def read(self, folder: Path, gradebook: Path | None = None) -> Intake:
        from autograder.batch.platforms import top_names

        from autograder.batch.platforms import times_in

        sheet = read_worksheet(gradebook) if gradebook else None
        times = times_in(folder)  # the uploads' times: the download's own, or an unpacked folder's (upload_order)
        groups: dict[str, dict] = {}  # participant id -> name, sources, its file folder
        other = []
        for e in top_names(folder):
            is_dir = e.is_dir(follow_symlinks=False)
            m = FOLDER.match(e.name) if is_dir else FLAT.match(e.name)
            if not m:
                other.append(e.name)
                continue
            # the participant id is the folder's own suffix (or, flat, the first "_<digits>_assignsubmission_":
            # Moodle writes no "_" in a name); the name, the student's, never decides whose uploads these are
            g = groups.setdefault(m["pid"], {"name": m["name"], "names": {}, "sources": [], "folder": ""})
            g["names"].setdefault(m["name"], None)
            if is_dir:
                src = staging.Source(Path(e.path), "" if m["plugin"] == FILE_PLUGIN else e.name,
                                     renamed=RENAMED, renamed_is_order=True, order_note=ORDER_NOTE, times=times)
                g["folder"] = e.name if m["plugin"] == FILE_PLUGIN else g["folder"] or ""
            else:
                src = staging.Source(Path(e.path), staging.printable(e.name), name=m["file"], renamed=RENAMED,
                                     renamed_is_order=True, order_note=ORDER_NOTE, times=times)
            g["sources"].append((m["plugin"] != FILE_PLUGIN, e.name, src))  # the file submission first
        rows = sheet.participants() if sheet else {}
        found, pid_of, known, warnings = [], {}, set(groups) | set(rows), []
        for pid, g in groups.items():
            srcs = tuple(s for _k, _n, s in sorted(g["sources"], key=lambda t: t[:2]))
            problems, said = name_doubts(f"participant {pid}", list(g["names"]), pid, known)
            warnings += said
            found.append((staging.entry_id(f"{g['name']}_{pid}"), srcs[0].path, srcs, (), tuple(problems)))
            pid_of[srcs[0].path] = pid
        entries = staging.unique(found)
        pids = {e.id: pid_of[e.path] for e in entries}
        intake = Intake(self, folder, entries, people={
            i: _who(groups[pid]["name"], pid, sheet, rows.get(pid)) for i, pid in pids.items()})
        intake.state = {"sheet": sheet, "pids": pids, "folders": {i: groups[pid]["folder"] for i, pid in pids.items()}}
        intake.warnings += warnings
        intake.warnings += [f"participant {pid}: the worksheet's language {_lang_cell(sheet, r)!r} is not one of "
                            f"{', '.join(i18n.LANGS)}: the batch's language is used" for pid, r in rows.items()
                            if pid in set(pids.values()) and roster.language(_lang_cell(sheet, r)) is None]
        intake.others = other  # graded as folders beside it (platforms.read), never left out
        if sheet and sheet.column(SUBMITTED) is not None:  # Moodle's own times: wall-clock, in the site's zone
            for i, pid in pids.items():
                try:
                    at = moodle_time.parse(sheet.cell(rows[pid], SUBMITTED)) if pid in rows else None
                except ValueError as exc:
                    intake.problems.append(f"{i}: {SUBMITTED} {exc}")
                    continue
                if at is not None:
                    intake.wall_times[i] = at
        if sheet:  # the worksheet's students who handed in nothing: named in the summary
            intake.nothing = [sheet.cell(r, FULL_NAME) or f"Participant {pid}"
                              for pid, r in rows.items() if pid not in set(pids.values())]
            for pid in sorted(set(pids.values()) - set(rows), key=int):
                intake.warnings.append(f"participant {pid} has a submission but no row in {sheet.path.name}: "
                                       "its grade is not in the worksheet written back")
        return intake

    def write_back(self, intake: Intake, outcomes: dict[str, Outcome], lab, out: Path,
                   no_file: str = "zero") -> list[Path]:
        state = intake.state or {}
        sheet: Worksheet | None = state.get("sheet")
        pids = state.get("pids", {})
        by_pid = {pids[i]: o for i, o in outcomes.items() if i in pids}
        names = {pids[i]: (intake.people.get(i, roster.NOBODY).names or ("",))[0] for i in outcomes if i in pids}
        m = lab.manifest
        if sheet is None:  # none given: the rows of the graded students, with the columns the importer needs
            sheet = Worksheet(None, [IDENTIFIER, FULL_NAME, GRADE, MAX_GRADE, MODIFIED, FEEDBACK],
                              [[f"Participant {pid}", names[pid], "", f"{m.max_score:g}", "", ""]
                               for pid in sorted(by_pid, key=int)])
        sheet = Worksheet(sheet.path, list(sheet.header), [list(r) for r in sheet.rows], sheet.bom, sheet.newline)
        grade_at, comment_at = sheet.column(GRADE), sheet.column(FEEDBACK)
        feedback_name = f"{lab.short}-feedback.md"
        scaled = set()
        for pid, row in sheet.participants().items():
            o = by_pid.get(pid)
            top = _number(sheet.cell(row, MAX_GRADE)) or m.max_score
            if o is not None and top != m.max_score:
                scaled.add(top)
            if o is None:  # nothing handed in: 0, or left for the instructor (--no-file pending); a grade
                # Moodle already has (work handed in another way) is never replaced by a 0
                if no_file == "zero" and not sheet.rows[row][grade_at].strip():
                    sheet.rows[row][grade_at] = "0"
                continue
            grade = o.grade(no_file)
            if grade is not None:  # pending: the cell as downloaded (Moodle skips a blank grade)
                sheet.rows[row][grade_at] = export.number(grade * top / m.max_score)
            if comment_at is not None:
                with i18n.speaking(o.result.lang if o.result.lang in i18n.LANGS else None):  # the student's language
                    sheet.rows[row][comment_at] = comment(o, m, feedback_name, top)
        if scaled:  # Moodle skips a grade above the assignment's maximum: the points are put on its scale
            tops = ", ".join(f"{t:g}" for t in sorted(scaled))
            intake.warnings.append(f"{WORKSHEET}: the assignment is out of {tops} in Moodle and {m.max_score:g} "
                                   "here: grades scaled to Moodle's maximum")
        written = [out / WORKSHEET]
        atomic_write(out / WORKSHEET, sheet.text())
        folders = state.get("folders", {})
        # named from the participant id alone (Moodle's importer reads the second "_" part as the id): never the
        # download's folder name as it came, whose name part is the student's; its trailing "_" kept (Moodle < 4.1)
        files = {f"{_folder(names[pids[i]], pids[i], (folders.get(i) or '').endswith('_'))}/{feedback_name}": o.feedback
                 for i, o in outcomes.items() if i in pids}
        write_zip(out / FEEDBACK_ZIP, files)
        written.append(out / FEEDBACK_ZIP)
        return written


def _folder(name: str, pid: str, trailing: bool = False) -> str:
    """A feedback folder's name as Moodle's download writes it (``trailing``: with the ``_`` of Moodle
    before 4.1): the name without ``_`` (as Moodle's), so the importer reads ``pid`` as the id."""
    clean = staging.printable(name).replace("_", " ").replace("/", " ").replace("\\", " ")  # one folder, as Moodle's
    return f"{clean}_{pid}_assignsubmission_{FILE_PLUGIN}" + ("_" if trailing else "")


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "."))
    except ValueError:
        return None
    return value if value > 0 else None


def _who(folder_name: str, pid: str, sheet: Worksheet | None, row: int | None) -> roster.Submitters:
    """A participant, named by the worksheet when it has their row, else by the folder name."""
    if sheet is None or row is None:
        return roster.Submitters((folder_name.strip(),), (), (), ids=(pid,))
    cell = lambda c: tuple(v for v in (sheet.cell(row, c),) if v)  # noqa: E731
    return roster.Submitters(cell(FULL_NAME) or (folder_name.strip(),), cell(EMAIL), cell(ID_NUMBER),
                             logins=cell(USERNAME), ids=(pid,), lang=roster.language(_lang_cell(sheet, row)) or "")


def _lang_cell(sheet: Worksheet, row: int) -> str:
    """The row's cell of a language column the instructor added to the worksheet ("" : none)."""
    at = roster.lang_column(sheet.header)
    return sheet.rows[row][at].strip() if at is not None and at < len(sheet.rows[row]) else ""


def comment(o: Outcome, manifest, feedback_name: str, top: float) -> str:
    """The worksheet's "Feedback comments" of one student: their score (on Moodle's scale), the
    late penalty and pending marks, the problems; HTML (Moodle shows it as such), escaped."""
    lines = score_lines(o.result, manifest, o.lateness, scale=top / manifest.max_score, absent=o.absent)
    if top != manifest.max_score:  # one scale, Moodle's; the lab's points in brackets, as the feedback file has them
        lines[0] += f" ({Local(o.score):g} / {Local(manifest.max_score):g})"
    lines += [_("Problem: {problem}").format(problem=(e.splitlines() or [""])[0]) for e in o.result.errors]
    lines += marker_comments(o.result, manifest)
    lines.append(_("The full feedback is in the file {name}.").format(name=feedback_name))
    return "<br>".join(html.escape(line, quote=False) for line in lines)


def marker_comments(result, manifest) -> list[str]:
    """The TAs' comments on the questions marked by hand, one line each, "title: comment" (what the
    platform's own comment column shows; the feedback file has them too)."""
    from autograder.core import results

    titles = {q.id: q.title for q in manifest.questions}
    return [f"{_(titles.get(t.question, t.question))}: {' '.join(t.feedback.split())}" for t in result.tests
            if t.kind == results.MANUAL and t.feedback.strip() and not manifest.question(t.question).participation]


PLATFORM = Moodle()
