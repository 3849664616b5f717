"""The CSV gradebook and the per-submission files, written atomically.

gradebook.csv is UTF-8 with a byte order mark (so that Excel shows
Vietnamese names rightly), one row per submission, in submission order
once the batch is done (in the order graded while it runs: :class:`Gradebook`):
``submission,score,max_score``, a column per question, ``problems`` (what
went wrong outside the tests, and what the late policy could not decide),
``notes`` when a submission of the batch has any (which upload was graded
where there was a choice, and why), then, with a due date (:class:`Deadline`), ``submitted_at,late_days,
penalty_percent,raw_score`` (``score`` is then the score after the
penalty), and, with a roster, ``name,email,sid``.  Every text cell that
came from a student is escaped against spreadsheet formulas.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from autograder.batch import late, roster
from autograder.core import results
from autograder.core.files import append_text, atomic_write, text_bytes
from autograder.core.manifest import Manifest

FIXED_COLUMNS = ["submission", "score", "max_score"]
PROBLEMS_COLUMN = "problems"
NOTES_COLUMN = "notes"
LATE_COLUMNS = ["submitted_at", "late_days", "penalty_percent", "raw_score"]
BOM = "\ufeff"  # Excel reads a CSV without one in the machine's code page
# A spreadsheet runs a cell that starts with one of these as a formula
# (OWASP "CSV injection"); submission names and roster fields are the students'.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NOBODY = roster.NOBODY


def text_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text: a leading formula character gets a ``'`` before it.
    Every CSV the engine writes goes through this one function (``docs/exports.md``).  A lone
    ``-`` (Moodle's "never" in its worksheet's dates) is no formula and stays as it is.

    A carriage return becomes a line feed: with ``lineterminator="\\n"`` the
    csv module quotes a field holding ``\\n`` but not one holding ``\\r``,
    which readers then take for the end of a row.

    A value that already starts with ``'`` before a formula character gets one more (``'=bob``
    is written ``''=bob``): else it would read as the escaped ``=bob``, another student's id
    (:func:`cell_text` reads a cell back)."""
    quote = "'" if _formula(value.lstrip("'")) else ""
    return quote + value.replace("\r\n", "\n").replace("\r", "\n")


def _formula(value: str) -> bool:
    return value.startswith(FORMULA_START) and value != "-"


def cell_text(cell: str) -> str:
    """The text a :func:`text_cell` holds (the value it was given, but for line ends): its ``'``
    taken off again, one only."""
    return cell[1:] if cell.startswith("'") and _formula(cell[1:].lstrip("'")) else cell


def _line(cells: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()


@dataclass(frozen=True)
class Deadline:
    """The due date and the late policy of a batch, and what it knows of submission times."""
    due: datetime
    policy: late.LatePolicy
    times: dict[str, datetime] = field(default_factory=dict)  # submission id -> when it was submitted
    extensions: dict[str, datetime] = field(default_factory=dict)  # late.read_extensions
    late_flags: dict[str, bool] = field(default_factory=dict)  # the platform's verdict where it gives no time

    def due_for(self, submission: str, who: roster.Submitters = NOBODY) -> datetime:
        """The due date that applies to one submission (an extension, else the batch's)."""
        return late.effective_due(self.due, self.extensions, submission, who.emails, who.sids)

    def of(self, submission: str, who: roster.Submitters = NOBODY) -> tuple[datetime | None, late.Lateness]:
        at = self.times.get(submission)
        if at is None and self.late_flags.get(submission) is False:  # on time by the platform's own verdict
            return at, late.Lateness(0, 0.0)
        return at, late.lateness(at, self.due_for(submission, who), self.policy, submission=submission)


def header(manifest: Manifest, people: dict[str, roster.Submitters] | None = None,
           deadline: Deadline | None = None, notes: bool = False) -> str:
    """The header line (after the BOM): see the module docstring for the columns."""
    cols = (FIXED_COLUMNS + [q.id for q in manifest.questions] + [PROBLEMS_COLUMN] + ([NOTES_COLUMN] if notes else [])
            + (LATE_COLUMNS if deadline else []) + (list(roster.COLUMNS) if people else []))
    return BOM + _line([text_cell(h) for h in cols])


def _problems(res: results.SubmissionResult, extra: str = "") -> str:
    firsts = [(e.splitlines() or [""])[0][:200] for e in res.errors] + ([extra] if extra else [])
    return text_cell("; ".join(firsts))


def row(res: results.SubmissionResult, manifest: Manifest,
        people: dict[str, roster.Submitters] | None = None, deadline: Deadline | None = None,
        notes: bool = False) -> str:
    """One submission's line.  Numbers are ours (never text); the rest is escaped."""
    qs = {q.id: "" if q.pending else f"{q.points:g}" for q in res.questions(manifest)}  # a pending mark: empty
    who = (people or {}).get(res.submission, NOBODY)
    score, late_cells, late_problem = f"{res.score:g}", [], ""
    if deadline:
        at, lateness = deadline.of(res.submission, who)
        score, late_problem = f"{lateness.final_score(res.score):g}", lateness.problem
        late_cells = [at.isoformat() if at else "", "" if lateness.late_days is None else str(lateness.late_days),
                      f"{lateness.penalty_percent:g}", f"{res.score:g}"]
    return _line([text_cell(res.submission), score, f"{manifest.max_score:g}"]
                 + [qs[q.id] for q in manifest.questions] + [_problems(res, late_problem)]
                 + ([text_cell("; ".join((n.splitlines() or [""])[0][:300] for n in res.notes))] if notes else [])
                 + late_cells
                 + ([text_cell(c) for c in who.columns()] if people else []))


def csv_text(rows: list[results.SubmissionResult], manifest: Manifest,
             people: dict[str, roster.Submitters] | None = None, deadline: Deadline | None = None,
             notes: bool = False) -> str:
    """The whole gradebook: one row per submission, in submission order."""
    return header(manifest, people, deadline, notes) + "".join(row(r, manifest, people, deadline, notes)
                                                               for r in sorted(rows, key=lambda r: r.submission))


class Gradebook:
    """gradebook.csv of one batch, grown one submission at a time, in O(n).

    The file is written whole once when the batch starts (the header and the
    rows it already has), then each submission's row is appended as it is
    graded, in one ``write`` of one line: the file always holds whole rows of
    the submissions done, nothing is rewritten per submission, and nothing is
    read back.  :meth:`finish` (at the end of the batch, whether it ended well
    or not) writes it once more, whole and atomically, in submission order, so
    the last file is ``csv_text``'s; until then rows are in the order graded.
    A row given again for a submission (a regrade within the batch) makes the
    file whole again at once, so it never holds two rows of one submission."""

    def __init__(self, path: Path, manifest: Manifest, people: dict[str, roster.Submitters] | None = None,
                 deadline: Deadline | None = None, notes: bool = False):
        self.path, self.manifest, self.people, self.deadline = path, manifest, people, deadline
        self.notes = notes  # the notes column (known before the first row: staging comes first)
        self._rows: dict[str, str] = {}
        self._started = False

    def add(self, *done: results.SubmissionResult) -> None:
        new, again = [], False
        for res in done:
            again |= res.submission in self._rows
            self._rows[res.submission] = line = row(res, self.manifest, self.people, self.deadline, self.notes)
            new.append(line)
        if not self._started or again:
            self.finish()
            return
        if new:
            append_text(self.path, "".join(new))  # one write: a killed run leaves whole rows

    def finish(self) -> None:
        """The whole gradebook, in submission order, written atomically."""
        atomic_write(self.path, header(self.manifest, self.people, self.deadline, self.notes)
                     + "".join(self._rows[k] for k in sorted(self._rows)))
        self._started = True

    def __len__(self) -> int:
        return len(self._rows)


def write_raw(out: Path, res: results.SubmissionResult) -> None:
    """raw/<id>.json: what the tests gave (for instructors; a rerun reads it back)."""
    atomic_write(out / "raw" / f"{res.submission}.json", res.to_json())


def write_shown(out: Path, res: results.SubmissionResult, manifest: Manifest, feedback_md: str,
                graded_at: str = "") -> None:
    """What the student reads: results/<id>.json (Gradescope schema; ``graded_at``, when its tests
    ran, in its ``extra_data``) and feedback/<id>.md."""
    shown = results.gradescope_json(res, manifest)
    if graded_at:
        shown.setdefault("extra_data", {})["graded_at"] = graded_at
    for path, text in ((out / "results" / f"{res.submission}.json", results.gradescope_text(shown)),
                       (out / "feedback" / f"{res.submission}.md", feedback_md)):
        if _same_text(path, text):  # a student --only did not name keeps their files as they were
            continue
        atomic_write(path, text)


def _same_text(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() == text_bytes(text)
    except OSError:
        return False


def load_raw(out: Path) -> list[results.SubmissionResult]:
    """Every result in raw/, each file read once."""
    rows = []
    for p in sorted((out / "raw").glob("*.json")):
        try:
            rows.append(results.SubmissionResult.from_json(p.read_text()))
        except (ValueError, KeyError, TypeError):
            continue  # a torn or foreign file (a killed run's): that submission is regraded
    return rows
