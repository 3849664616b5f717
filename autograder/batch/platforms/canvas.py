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
the one whose name a student numbered higher.

Out (``docs/exports.md``).  ``canvas.csv``, for Grades > Import: every
student of the export (and of the gradebook export given with
``--gradebook``, which names those who handed in nothing), matched on the
Canvas user id.  ``canvas-feedback.zip``: each student's feedback named
``<name>_<user id>_<file id>_<lab>-feedback.md``, the names Canvas's
"Re-Upload Submissions" reads (``Assignment#infer_comment_context_from_
filename``: the user id and one of their file ids) to attach each file to
its student's submission as a comment.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.batch import export, roster
from autograder.batch.platforms import Intake, Outcome, Platform
from autograder.core.files import write_zip
from autograder.grading import staging

UPLOAD = re.compile(r"^(?P<student>.+?)(?P<late>_LATE)?_(?P<user>\d+|anon_[A-Za-z0-9]+)_(?P<file_id>\d+)_(?P<file>.+)$")
ONLINE = re.compile(r"^(?P<student>.+?)(?P<late>_LATE)?_(?P<user>\d+|anon_[A-Za-z0-9]+)_(?P<kind>text|link)\.html$")
ANONYMOUS = re.compile(r"^(?P<late>LATE_)?(?P<user>anon_[A-Za-z0-9]+)_(?:(?P<file_id>\d+)_(?P<file>.+)|"
                       r"(?P<kind>text|link)\.html)$")
RENAMED = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)(?P<ext>\.[^.]+)$")  # optimizers-1.py
CSV_NAME, FEEDBACK_ZIP = "canvas.csv", "canvas-feedback.zip"
ROSTER_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def parse(name: str) -> dict | None:
    """A Canvas download's file name: student, late, user, file_id (0 for online text), file; None if not one."""
    m = ANONYMOUS.match(name) or UPLOAD.match(name) or ONLINE.match(name)
    if not m:
        return None
    d = m.groupdict()
    return {"student": d.get("student") or "", "late": bool(d.get("late")), "user": d["user"],
            "file_id": int(d.get("file_id") or 0), "file": d.get("file") or f"{d.get('kind')}.html"}


@dataclass(frozen=True)
class Student:
    """A row of Canvas's gradebook export."""
    name: str
    canvas_id: str
    sid: str
    login: str
    section: str


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
    out = []
    for r in rows[1:]:
        if not r or "Points Possible" in r[0] or not cell(r, "ID").isdigit():
            continue  # the points row, a blank line
        out.append(Student(cell(r, "Student"), cell(r, "ID"), cell(r, "SIS User ID"), cell(r, "SIS Login ID"),
                           cell(r, "Section")))
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
        from autograder.batch.platforms import top_names

        students = read_roster(gradebook) if gradebook else []
        groups: dict[str, dict] = {}
        other = []
        for e in top_names(folder):
            d = None if e.is_dir(follow_symlinks=False) else parse(e.name)
            if d is None:
                other.append(e.name)
                continue
            key = f"{d['student']}_{d['user']}" if d["student"] else d["user"]
            g = groups.setdefault(key, {"user": d["user"], "name": d["student"], "late": False, "sources": []})
            g["late"] |= d["late"]
            g["sources"].append(staging.Source(Path(e.path), staging.printable(e.name), name=d["file"],
                                               order=d["file_id"], renamed=RENAMED))
        found, key_of = [], {}
        for key, g in groups.items():
            srcs = tuple(sorted(g["sources"], key=lambda s: (s.order, s.label)))
            found.append((staging.entry_id(key), srcs[0].path, srcs, ()))
            key_of[srcs[0].path] = key
        entries = staging.unique(found)
        keys = {e.id: key_of[e.path] for e in entries}
        by_id = {s.canvas_id: s for s in students}
        people = {}
        for i, key in keys.items():
            g = groups[key]
            s = by_id.get(g["user"])
            people[i] = roster.Submitters((s.name if s else g["name"],), (), (s.sid,) if s and s.sid else (),
                                          logins=(s.login,) if s and s.login else (), ids=(g["user"],))
        intake = Intake(self, folder, entries, people=people)
        intake.state = {"users": {i: groups[k]["user"] for i, k in keys.items()},
                        "file_ids": {i: max(s.order for s in groups[k]["sources"]) for i, k in keys.items()},
                        "names": {i: groups[k]["name"] for i, k in keys.items()},
                        "late": {i: groups[k]["late"] for i, k in keys.items()},
                        "roster": students}
        intake.warnings += [f"{i}: the platform marked this submission LATE" for i, k in keys.items()
                            if groups[k]["late"]]
        if other:
            intake.warnings.append(f"not read as Canvas's: {', '.join(staging.printable(n) for n in other[:5])}"
                                   + (" ..." if len(other) > 5 else ""))
        return intake

    def write_back(self, intake: Intake, outcomes: dict[str, Outcome], lab, out: Path,
                   no_file: str = "zero") -> list[Path]:
        state = intake.state or {}
        users, roster_ = state.get("users", {}), {s.canvas_id: s for s in state.get("roster", [])}
        m = lab.manifest
        rows, seen = [], set()
        for i, o in sorted(outcomes.items()):
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
                name = staging.printable(names.get(i) or "student").replace("/", " ")
                files[f"{name}_{users[i]}_{file_id}_{lab.short}-feedback.md"] = o.feedback
            elif i in users:
                intake.warnings.append(f"{i}: handed in no file Canvas can attach feedback to; attach "
                                       f"feedback/{i}.md by hand")
        write_zip(out / FEEDBACK_ZIP, files)
        return [out / CSV_NAME, out / FEEDBACK_ZIP]


PLATFORM = Canvas()
