"""The CSV gradebook and the per-submission files, written atomically."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.core import results
from autograder.batch import roster
from autograder.core.files import atomic_write
from autograder.core.manifest import Manifest

FIXED_COLUMNS = ["submission", "score", "max_score"]
# A spreadsheet runs a cell that starts with one of these as a formula
# (OWASP "CSV injection"); submission names and roster fields are the students'.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NOBODY = roster.Submitters((), (), ())


def text_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text: a leading formula character gets a ``'`` before it.

    A carriage return becomes a line feed: with ``lineterminator="\\n"`` the
    csv module quotes a field holding ``\\n`` but not one holding ``\\r``,
    which readers then take for the end of a row."""
    quote = "'" if value.startswith(FORMULA_START) else ""
    return quote + value.replace("\r\n", "\n").replace("\r", "\n")


def _line(cells: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()


def header(manifest: Manifest, people: dict[str, roster.Submitters] | None = None) -> str:
    """The header line; name/email/sid columns last, when the batch has a roster."""
    cols = FIXED_COLUMNS + [q.id for q in manifest.questions] + (list(roster.COLUMNS) if people else [])
    return _line([text_cell(h) for h in cols])


def row(res: results.SubmissionResult, manifest: Manifest,
        people: dict[str, roster.Submitters] | None = None) -> str:
    """One submission's line.  Numbers are ours (never text); the rest is escaped."""
    qs = {q.id: q.points for q in res.questions(manifest)}
    return _line([text_cell(res.submission), f"{res.score:g}", f"{manifest.max_score:g}"]
                 + [f"{qs[q.id]:g}" for q in manifest.questions]
                 + ([text_cell(c) for c in people.get(res.submission, NOBODY).columns()] if people else []))


def csv_text(rows: list[results.SubmissionResult], manifest: Manifest,
             people: dict[str, roster.Submitters] | None = None) -> str:
    """The whole gradebook: one row per submission, in submission order."""
    return header(manifest, people) + "".join(row(r, manifest, people)
                                              for r in sorted(rows, key=lambda r: r.submission))


class Gradebook:
    """gradebook.csv of one batch, grown one submission at a time.

    Each row is formatted once, when its submission is added, and kept here;
    every ``add`` replaces the file atomically with the rows so far.  So the
    file on disk is always a whole CSV of the submissions done (a crash
    leaves no torn row, which appending to the file in place could), and
    nothing is read back: a batch of N reads no raw file for its gradebook.
    Rows stay in submission order, so the last file is ``csv_text``'s."""

    def __init__(self, path: Path, manifest: Manifest, people: dict[str, roster.Submitters] | None = None):
        self.path, self.manifest, self.people = path, manifest, people
        self._rows: dict[str, str] = {}

    def add(self, *done: results.SubmissionResult) -> None:
        for res in done:
            self._rows[res.submission] = row(res, self.manifest, self.people)
        self.write()

    def write(self) -> None:
        atomic_write(self.path, header(self.manifest, self.people)
                     + "".join(self._rows[k] for k in sorted(self._rows)))

    def __len__(self) -> int:
        return len(self._rows)


def write_submission(out: Path, res: results.SubmissionResult, manifest: Manifest, feedback_md: str) -> None:
    """results/<id>.json (Gradescope schema), raw/<id>.json and feedback/<id>.md."""
    atomic_write(out / "results" / f"{res.submission}.json",
                 results.gradescope_text(results.gradescope_json(res, manifest)))
    atomic_write(out / "raw" / f"{res.submission}.json", res.to_json())
    atomic_write(out / "feedback" / f"{res.submission}.md", feedback_md)


def load_raw(out: Path) -> list[results.SubmissionResult]:
    """Every result in raw/, each file read once."""
    rows = []
    for p in sorted((out / "raw").glob("*.json")):
        try:
            rows.append(results.SubmissionResult.from_json(p.read_text()))
        except (ValueError, KeyError, TypeError):
            continue  # a torn or foreign file (a killed run's): that submission is regraded
    return rows
