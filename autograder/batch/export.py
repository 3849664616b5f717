"""Grade files that Canvas and Moodle import (``docs/exports.md``).

Inputs are plain :class:`GradeRow` values, one per student (a group
submission gives one row per member, :meth:`GradeRow.members`), never the
engine's result types, so this module stands alone.  Each function returns
an :class:`Export`: the file's text and, apart, every row it left out with
the reason (no identity the platform can match, the same student in two
submissions), so the caller can warn.  Nothing is dropped silently.

Conventions shared by both files:

- UTF-8 with a byte-order mark (``\\ufeff``) first, so Excel reads the
  accents in Vietnamese names; both platforms strip it.  Lines end ``\\r\\n``
  (RFC 4180).
- Every text cell that came from a student or a roster goes through
  ``gradebook.text_cell``: a leading ``= + - @`` tab or CR gets a ``'``,
  so a spreadsheet shows ``=HYPERLINK(...)`` as text instead of running it.
  A cell the platform *matches on* is never written escaped (the ``'``
  would make it match nobody, and Moodle aborts a whole import on one
  unknown user): such a value counts as missing.
- Numbers are ours: a score or points value is written with at most six
  decimals, trailing zeros dropped (``7.5``, ``10``); NaN or infinity is a
  ValueError.
- Rows are written sorted by submission id, members in their given order.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from autograder.batch.gradebook import FORMULA_START, text_cell
from autograder.core.files import atomic_write

BOM = "\ufeff"
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
# Canvas's own export writes this cell with four leading spaces; its importer
# takes any row whose first cell contains "Points Possible" for this row.
CANVAS_POINTS_ROW = "    Points Possible"
MOODLE_IDENTIFIERS = {  # identifier -> (header, GradeRow field); the header is what Moodle's own export calls it
    "email": ("Email address", "email"),
    "idnumber": ("ID number", "sid"),
    "username": ("Username", "login"),
}


@dataclass(frozen=True)
class GradeRow:
    """One student's grade for one assignment.

    ``submission``: the graded submission's id.  ``score`` and
    ``max_score``: points, after any late penalty; a ``score`` of None is
    pending: its cell is left blank, for the instructor to fill in.  Identity, each ``""``
    when unknown: ``name`` (shown, never matched on by these files unless
    nothing else is known), ``email``, ``sid`` (the student number: Canvas's
    "SIS User ID", Moodle's "ID number"), ``login`` (Canvas's "SIS Login
    ID", Moodle's username), ``canvas_id`` (Canvas's internal user id, the
    "ID" column of a Canvas gradebook export) and ``section``."""

    submission: str
    score: float | None
    max_score: float
    name: str = ""
    email: str = ""
    sid: str = ""
    login: str = ""
    canvas_id: str = ""
    section: str = ""

    @classmethod
    def members(cls, submission: str, score: float, max_score: float, *,
                names: Sequence[str] = (), emails: Sequence[str] = (), sids: Sequence[str] = (),
                logins: Sequence[str] = ()) -> list[GradeRow]:
        """One row per member of a (group) submission, from parallel lists such
        as a Gradescope roster's names, emails and sids; a shorter list leaves
        the field ``""``.  No members: one row with no identity (reported as
        unmatched by the exports)."""
        n = max(len(names), len(emails), len(sids), len(logins))
        at = lambda seq, i: str(seq[i]).strip() if i < len(seq) and seq[i] is not None else ""  # noqa: E731
        if n == 0:
            return [cls(submission, score, max_score)]
        return [cls(submission, score, max_score, name=at(names, i), email=at(emails, i),
                    sid=at(sids, i), login=at(logins, i)) for i in range(n)]


@dataclass(frozen=True)
class Skipped:
    """A row left out of an export, and why (a sentence for the instructor)."""

    row: GradeRow
    reason: str


@dataclass(frozen=True)
class Export:
    """A grade file: ``text`` (starting with the BOM), the rows in it, and the rows left out."""

    text: str
    written: tuple[GradeRow, ...]
    skipped: tuple[Skipped, ...]

    def write(self, path: Path) -> None:
        """Write ``text`` to ``path`` atomically, as UTF-8 (the BOM included)."""
        atomic_write(Path(path), self.text)


def number(x: float | None) -> str:
    """A score as a CSV cell: at most six decimals, no trailing zeros, never ``-0``; None (pending): blank."""
    if x is None:
        return ""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"a score must be a finite number, not {x!r}")
    s = f"{round(x, 6):.6f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _usable(value: str) -> str:
    """An identifier as written, or ``""`` when it is blank or would need escaping."""
    value = (value or "").strip()
    return "" if value.startswith(FORMULA_START) or "\n" in value or "\r" in value else value


def _text(cells: Iterable[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow(list(cells))
    return buf.getvalue()


def _select(rows: Iterable[GradeRow], missing: Callable[[GradeRow], str],
            keys: Callable[[GradeRow], list[tuple[str, str]]]) -> tuple[list[GradeRow], list[Skipped]]:
    """The rows to write (sorted by submission) and the ones left out.

    ``missing(row)`` is why a row cannot be matched ("" when it can);
    ``keys(row)`` the (column, value) pairs the platform matches it on.  The
    same student in two submissions is left out both times: which grade
    counts is the instructor's call, not ours."""
    rows = sorted(rows, key=lambda r: r.submission)
    ok: list[GradeRow] = []
    skipped: list[Skipped] = []
    for r in rows:
        why = missing(r)
        if why:
            skipped.append(Skipped(r, why))
        else:
            ok.append(r)
    owners: dict[tuple[str, str], set[str]] = {}
    for r in ok:
        for k in keys(r):
            owners.setdefault(k, set()).add(r.submission)
    clash = {k: subs for k, subs in owners.items() if len(subs) > 1}
    written, seen = [], set()
    for r in ok:
        mine = [(k, sorted(clash[k])) for k in keys(r) if k in clash]
        if mine:
            (col, value), subs = mine[0]
            skipped.append(Skipped(r, f"the same student ({col} {value}) is in submissions "
                                      f"{', '.join(subs)}: enter this grade by hand"))
        elif (r.submission, tuple(keys(r))) not in seen:  # one person listed twice in one submission
            seen.add((r.submission, tuple(keys(r))))
            written.append(r)
    return written, skipped


def _points(rows: Sequence[GradeRow], points_possible: float | None) -> str:
    if points_possible is not None:
        return number(points_possible)
    maxima = {r.max_score for r in rows}
    if len(maxima) > 1:
        raise ValueError(f"the rows have different max_score values {sorted(maxima)}: "
                         "pass points_possible")
    return number(maxima.pop()) if maxima else ""


def canvas_csv(rows: Iterable[GradeRow], assignment: str, assignment_id: str | int | None = None,
               *, points_possible: float | None = None) -> Export:
    """A file for Canvas's Gradebook > Import.

    Columns: ``Student, ID, SIS User ID, SIS Login ID, Section`` and one
    assignment column, ``"<assignment> (<assignment_id>)"`` (the header
    Canvas's own export writes; Canvas finds the assignment by that id) or,
    without an id, ``"<assignment>"`` (Canvas matches the title, or offers to
    create a new assignment).  The second line is Canvas's "Points Possible"
    row, with ``points_possible`` (default: the rows' common ``max_score``;
    ValueError when they differ), which sets a new assignment's points.

    Canvas matches each row to a student by ``ID`` (its internal user id),
    then ``SIS User ID``, then ``SIS Login ID``, and only then by the
    ``Student`` name.  So ``ID``, ``SIS User ID``, ``SIS Login ID`` and
    ``Section`` may be blank (Section is never read, but its header must be
    there), yet a row needs at least one of the three ids: a row with only
    a name (or nothing) is left out and reported, because two students can
    share a name.  A name containing "Points Possible" is left out too
    (Canvas would take that row for the points row)."""
    if not str(assignment).strip():
        raise ValueError("the assignment column needs a name")
    if assignment_id is not None and not str(assignment_id).strip().isdigit():
        raise ValueError(f"a Canvas assignment id is a number, not {assignment_id!r}")
    column = f"{assignment} ({str(assignment_id).strip()})" if assignment_id is not None else str(assignment)

    def keys(r: GradeRow) -> list[tuple[str, str]]:
        pairs = [("ID", _usable(r.canvas_id)), ("SIS User ID", _usable(r.sid)),
                 ("SIS Login ID", _usable(r.login))]
        return [(c, v) for c, v in pairs if v]

    def missing(r: GradeRow) -> str:
        if "Points Possible" in r.name:
            return "the name contains 'Points Possible', which Canvas reads as the points row"
        if not keys(r):
            return "no Canvas ID, SIS User ID or SIS Login ID: Canvas could only guess from the name"
        return ""

    written, skipped = _select(rows, missing, keys)
    lines = [_text(text_cell(h) for h in (*CANVAS_COLUMNS, column)),
             _text([CANVAS_POINTS_ROW, "", "", "", "", _points(written, points_possible)])]
    lines += [_text([text_cell(r.name), _usable(r.canvas_id), _usable(r.sid), _usable(r.login),
                     text_cell(r.section), number(r.score)]) for r in written]
    return Export(BOM + "".join(lines), tuple(written), tuple(skipped))


def moodle_csv(rows: Iterable[GradeRow], grade_column: str, identifier: str = "email") -> Export:
    """A file for Moodle's Grades > Import > CSV file.

    Columns: the identifier, ``Full name`` (for the instructor's eyes; map it
    to "Ignore") and ``grade_column`` (map it to the grade item).  At import
    the instructor sets "Identify user by": map *from* the identifier column
    *to* the same user field: ``identifier="email"`` writes ``Email
    address`` (map to "Email address"), ``"idnumber"`` writes ``ID number``
    from ``sid`` (map to "ID number"), ``"username"`` writes ``Username``
    from ``login`` (map to "Username").

    Moodle aborts the whole import when one row names no user, or one it
    cannot find, so a row without a usable identifier is left out and
    reported rather than written."""
    if identifier not in MOODLE_IDENTIFIERS:
        raise ValueError(f"identifier must be one of {', '.join(MOODLE_IDENTIFIERS)}, not {identifier!r}")
    if not str(grade_column).strip():
        raise ValueError("the grade column needs a name")
    header, field = MOODLE_IDENTIFIERS[identifier]
    ident = lambda r: _usable(getattr(r, field))  # noqa: E731

    written, skipped = _select(
        rows,
        missing=lambda r: "" if ident(r) else f"no {header.lower()}: Moodle would stop the whole import",
        keys=lambda r: [(header, ident(r).lower() if identifier == "email" else ident(r))])
    lines = [_text(text_cell(h) for h in (header, "Full name", grade_column))]
    lines += [_text([ident(r), text_cell(r.name), number(r.score)]) for r in written]
    return Export(BOM + "".join(lines), tuple(written), tuple(skipped))
