"""Canvas: "Download Submissions" in; the gradebook import file and feedback files out.

In (``docs/intake.md``).  Canvas writes every uploaded file flat, as
``<name>[_LATE]_<user id>_<file id>_<file name>`` (``lib/content_zipper.rb``:
the name is the student's sortable name, lower case, without punctuation;
``LATE`` is Canvas's own verdict; the file id is the id Canvas gave the
upload, in the order of uploading; an upload whose name the student had
already used is renamed ``optimizers-1.py``).  A text entry is
``<name>[_LATE]_<user id>_text.html``, a URL ``..._link.html``; an
anonymous assignment has ``anon_<anonymous id>`` in place of the user id.
Every file of one user id is one submission, id ``<name>_<user id>``: a zip
among them is opened like any upload, and of several files that could be
one declared file the latest upload (the highest file id) is graded, never
the one whose name a student numbered higher.  The display name and the
file name are the student's and Canvas only takes ``_<digits>_`` out of the
first, so a name can read as two users' uploads (:func:`readings`): such a
file joins no one's submission unless the gradebook settles it
(:meth:`Canvas.read`), and a display name holding another student's id, or
one user id under two names, is flagged.

Out (``docs/exports.md``).  ``canvas.csv``, for Grades > Import: every
student of the export (and of the gradebook export given with
``--gradebook``, which names those who handed in nothing), matched on the
Canvas user id.  ``canvas-feedback.zip``: each student's feedback named
``<name>_<user id>_<file id>_<lab>-feedback.md``, the names Canvas's
"Re-Upload Submissions" reads (``Assignment#infer_comment_context_from_
filename``: the first two all-digit parts, the user id and one of their file
ids) to attach each file to its student's submission as a comment; the name
part keeps letters only (:func:`feedback_name`), so the ids are always ours.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.batch import export, roster
from autograder.batch.platforms import Intake, Outcome, Platform, name_doubts
from autograder.core import i18n
from autograder.core.files import write_zip
from autograder.core.i18n import N_, _
from autograder.grading import staging

# What follows the display name: [_LATE]_<user id>_<file id>_<file name>, or _<user id>_text.html / _link.html
TAIL = re.compile(r"_(?:(?P<late>LATE)_)?(?P<user>\d+|anon_[A-Za-z0-9]+)_(?:(?P<file_id>\d+)_(?P<file>.+)|"
                  r"(?P<kind>text|link)\.html)")
ANONYMOUS = re.compile(r"(?P<late>LATE_)?(?P<user>anon_[A-Za-z0-9]+)_(?:(?P<file_id>\d+)_(?P<file>.+)|"
                       r"(?P<kind>text|link)\.html)")
RENAMED = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)(?P<ext>\.[^.]+)$")  # optimizers-1.py
CSV_NAME, FEEDBACK_ZIP = "canvas.csv", "canvas-feedback.zip"
MAX_NAME = 1024  # characters of a file name read (a file system's own limit is 255 bytes)
ROSTER_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
# What the row of a file read as more than one user's upload says (the student reads it too)
TWO_WAYS = N_("the platform's file name {file} reads as the upload of more than one student (user ids {users}): "
              "it was graded on its own, as no one's, and the instructor enters its grade by hand")


def readings(name: str) -> list[dict]:
    """Every way a Canvas download's file name can be read (student, late, user, file_id: 0 for online
    text, file), Canvas's own reading (the first two numbers) first; [] if it is not one.

    Canvas writes ``<display name>[_LATE]_<user id>_<file id>_<file name>`` and only takes
    ``_<digits>_`` out of the display name, so a display name may end in ``_<digits>`` and a file
    name may start with ``<digits>_``: ``bob_123457_9000001_5003_lab2.zip`` is user 123457's
    ``5003_lab2.zip`` or user 9000001's ``lab2.zip``.  Both ends are the student's, so no reading
    is trusted over another here (``Canvas.read`` decides from what the export vouches for)."""
    if len(name) > MAX_NAME:  # no file system holds it: not a download's (and each reading costs its length)
        return []
    m = ANONYMOUS.fullmatch(name)  # no display name: nothing to mistake
    if m:
        return [_reading("", m)]
    found: list[dict] = []
    for at in (i for i, c in enumerate(name) if c == "_" and i):
        m = TAIL.fullmatch(name, at)
        d = _reading(name[:at], m) if m else None
        if d and not any((o["user"], o["file_id"], o["file"]) == (d["user"], d["file_id"], d["file"]) for o in found):
            found.append(d)  # (a name before "_LATE_1_2_x" also reads with "x_LATE" as its name: one reading)
    return found


def _reading(student: str, m: re.Match) -> dict:
    return {"student": student, "late": bool(m["late"]), "user": m["user"], "file_id": int(m["file_id"] or 0),
            "file": m["file"] or f"{m['kind']}.html"}


def parse(name: str) -> dict | None:
    """Canvas's own reading of a download's file name (:func:`readings`); None if it is not one."""
    found = readings(name)
    return found[0] if found else None


@dataclass(frozen=True)
class Student:
    """A row of Canvas's gradebook export."""
    name: str
    canvas_id: str
    sid: str
    login: str
    section: str
    lang: str | None = ""  # a language column the instructor added (roster.language: None, not readable)


def read_roster(path: Path) -> list[Student]:
    """The students of a Canvas gradebook export (Grades > Export); ValueError naming the file."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the Canvas gradebook ({exc})") from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    head = [c.strip() for c in rows[0]] if rows else []
    if len(head) < 2 or "Student" not in head[0] or head[1] != "ID":
        raise ValueError(f"{path}: not a Canvas gradebook export (its header starts Student, ID)")
    at = {c: head.index(c) for c in ROSTER_COLUMNS if c in head}
    cell = lambda r, c: r[at[c]].strip() if c in at and at[c] < len(r) else ""  # noqa: E731
    at_lang = roster.lang_column(head)
    out = []
    for r in rows[1:]:
        if not r or "Points Possible" in r[0] or not cell(r, "ID").isdigit():
            continue  # the points row, a blank line
        lang = roster.language(r[at_lang].strip()) if at_lang is not None and at_lang < len(r) else ""
        out.append(Student(cell(r, "Student"), cell(r, "ID"), cell(r, "SIS User ID"), cell(r, "SIS Login ID"),
                           cell(r, "Section"), lang))
    return out


class Canvas(Platform):
    name = "canvas"
    title = "Canvas"
    layout = "flat files <name>[_LATE]_<user id>_<file id>_<file name>"
    gradebook = "Canvas's gradebook export (Grades > Export): names the students who handed in nothing"

    def detect(self, folder: Path) -> int:
        from autograder.batch.platforms import top_names

        return sum(1 for e in top_names(folder) if not e.is_dir(follow_symlinks=False) and parse(e.name))

    def read(self, folder: Path, gradebook: Path | None = None) -> Intake:
        """Every file of one user id is one submission; the user id is the one thing that decides it.

        A name that reads as more than one user's upload (:func:`readings`) joins no one: it is read
        as the one user the gradebook (``--gradebook``) lists among its readings, else it is graded
        on its own, as no one's (its row says why, and no grade or feedback goes back for it), so a
        display name can never put a file in another student's submission.  Flagged too: a display
        name that holds another student's user id, and a user id seen under two display names."""
        from autograder.batch.platforms import top_names

        students = read_roster(gradebook) if gradebook else []
        listed = {s.canvas_id for s in students}
        groups: dict[str, dict] = {}  # user id (or "?<file name>": a name read two ways) -> its uploads
        other = []
        for e in top_names(folder):
            found = [] if e.is_dir(follow_symlinks=False) else readings(e.name)
            if not found:
                other.append(e.name)
                continue
            users = list(dict.fromkeys(d["user"] for d in found))
            vouched = [d for d in found if d["user"] in listed]
            d = found[0] if len(users) == 1 else vouched[0] if len({v["user"] for v in vouched}) == 1 else None
            g = groups.setdefault(d["user"] if d else f"?{e.name}", {
                "user": d["user"] if d else "", "names": {}, "claims": set(), "late": False, "sources": [],
                "doubt": () if d else tuple(users)})
            g["claims"].update(x["student"] for x in ([d] if d else found))  # what a display name may claim
            d = d or found[0]
            g["names"].setdefault(d["student"], None)
            g["late"] |= d["late"]
            g["sources"].append(staging.Source(Path(e.path), staging.printable(e.name), name=d["file"],
                                               order=d["file_id"], renamed=RENAMED))
        known = {g["user"] for g in groups.values() if g["user"]} | listed
        found_, key_of, warnings = [], {}, []
        for key, g in groups.items():
            srcs = tuple(sorted(g["sources"], key=lambda s: (s.order, s.label)))
            names = [n for n in g["names"] if n]
            label = srcs[0].label
            if g["doubt"]:
                ident = staging.entry_id(label)  # its file's own name: never the id of a student's submission
                problems = [_(TWO_WAYS).format(file=label, users=", ".join(g["doubt"]))]
                warnings.append(f"{label}: its name reads as the upload of user {' or '.join(g['doubt'])}: "
                                "graded on its own as no one's; enter its grade by hand")
            else:
                ident, problems = staging.entry_id(f"{names[0]}_{key}" if names else key), []
            said = name_doubts(label, [] if g["doubt"] else names, g["user"], known, g["claims"])
            problems += said[0]
            warnings += said[1]
            found_.append((ident, srcs[0].path, srcs, (), tuple(problems)))
            key_of[srcs[0].path] = key
        entries = staging.unique(found_)
        keys = {e.id: key_of[e.path] for e in entries}
        by_id = {s.canvas_id: s for s in students}
        people = {}
        for i, key in keys.items():
            g = groups[key]
            s = by_id.get(g["user"])
            names = [n for n in g["names"] if n and not g["doubt"]]  # no one's: named by no display name
            people[i] = roster.Submitters((s.name if s else names[0] if names else "",), (),
                                          (s.sid,) if s and s.sid else (),
                                          logins=(s.login,) if s and s.login else (),
                                          ids=(g["user"],) if g["user"] else (), lang=(s.lang or "") if s else "")
            if s and s.lang is None:
                warnings.append(f"{i}: the gradebook's language is not one of {', '.join(i18n.LANGS)}: the "
                                "batch's language is used")
        intake = Intake(self, folder, entries, people=people)
        trusted = {i: k for i, k in keys.items() if groups[k]["user"]}  # only a user id read one way
        intake.state = {"users": {i: groups[k]["user"] for i, k in trusted.items()},
                        "file_ids": {i: max(s.order for s in groups[k]["sources"]) for i, k in trusted.items()},
                        "names": {i: next(iter(groups[k]["names"]), "") for i, k in trusted.items()},
                        "doubt": {i: groups[k]["doubt"] for i, k in keys.items() if groups[k]["doubt"]},
                        "late": {i: groups[k]["late"] for i, k in keys.items()},
                        "roster": students}
        intake.warnings += warnings
        # no time in the download: Canvas's own verdict (docs/late_policy.md); and who handed in nothing
        intake.late_flags = {i: groups[k]["late"] for i, k in keys.items()}
        handed_in = {g["user"] for g in groups.values()}
        intake.nothing = [s.name or s.canvas_id for s in students if s.canvas_id not in handed_in]
        intake.warnings += [f"{i}: the platform marked this submission LATE" for i, k in keys.items()
                            if groups[k]["late"]]
        intake.others = other  # graded as folders beside it (platforms.read), never left out
        return intake

    def write_back(self, intake: Intake, outcomes: dict[str, Outcome], lab, out: Path,
                   no_file: str = "zero") -> list[Path]:
        state = intake.state or {}
        users, roster_ = state.get("users", {}), {s.canvas_id: s for s in state.get("roster", [])}
        m = lab.manifest
        rows, seen, doubt = [], set(), state.get("doubt", {})
        for i, o in sorted(outcomes.items()):
            if i in doubt:  # whose it is is the instructor's call: it gets no one's row, nor anyone's feedback
                intake.warnings.append(f"{CSV_NAME} leaves out {i}: its file name reads as the upload of user "
                                       f"{' or '.join(doubt[i])}; enter its grade by hand, and attach "
                                       f"feedback/{i}.md by hand")
                continue
            user = users.get(i, "")
            s = roster_.get(user)
            who = intake.people.get(i, roster.NOBODY)
            rows.append(export.GradeRow(i, o.grade(no_file), m.max_score, name=s.name if s else (who.names or ("",))[0],
                                        sid=s.sid if s else "", login=s.login if s else "",
                                        canvas_id=user if user.isdigit() else "", section=s.section if s else ""))
            seen.add(user)
        for s in roster_.values():  # in the gradebook, nothing handed in
            if s.canvas_id not in seen:
                rows.append(export.GradeRow(f"(nothing handed in) {s.canvas_id}", 0.0 if no_file == "zero" else None,
                                            m.max_score,
                                            name=s.name, sid=s.sid, login=s.login, canvas_id=s.canvas_id,
                                            section=s.section))
        made = export.canvas_csv(rows, m.title)
        made.write(out / CSV_NAME)
        intake.warnings += [f"{CSV_NAME} leaves out {s.row.submission}: {s.reason}" for s in made.skipped]
        files, names = {}, state.get("names", {})
        for i, o in outcomes.items():
            file_id = state.get("file_ids", {}).get(i, 0)
            if i in users and file_id:  # Canvas attaches a file named with the user and one of their file ids
                files[feedback_name(names.get(i, ""), users[i], file_id, lab.short)] = o.feedback
            elif i in users:
                intake.warnings.append(f"{i}: handed in no file Canvas can attach feedback to; attach "
                                       f"feedback/{i}.md by hand")
        write_zip(out / FEEDBACK_ZIP, files)
        return [out / CSV_NAME, out / FEEDBACK_ZIP]


def feedback_name(name: str, user: str, file_id: int, lab: str) -> str:
    """A feedback file's name for "Re-Upload Submissions": ``<name>_<user id>_<file id>_<lab>-feedback.md``.

    Canvas takes the first two ``_``-separated parts that are all digits for the user id and the
    file id, so the display name keeps its letters only (no digit, no ``_``): the ids Canvas reads
    are always the trusted ones read from the download, whatever the student called themselves."""
    letters = "".join(c for c in staging.printable(name) if c.isalpha())
    return f"{letters or 'student'}_{user}_{file_id}_{lab}-feedback.md"


PLATFORM = Canvas()
