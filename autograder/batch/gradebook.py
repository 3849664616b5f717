"""The CSV gradebook and the per-submission files, written atomically."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from autograder.core import results
from autograder.batch import roster
from autograder.core.manifest import Manifest

FIXED_COLUMNS = ["submission", "score", "max_score"]
# A spreadsheet runs a cell that starts with one of these as a formula
# (OWASP "CSV injection"); submission names and roster fields are the students'.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text: a leading formula character gets a ``'`` before it.

    A carriage return becomes a line feed: with ``lineterminator="\\n"`` the
    csv module quotes a field holding ``\\n`` but not one holding ``\\r``,
    which readers then take for the end of a row."""
    quote = "'" if value.startswith(FORMULA_START) else ""
    return quote + value.replace("\r\n", "\n").replace("\r", "\n")


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def csv_text(rows: list[results.SubmissionResult], manifest: Manifest,
             people: dict[str, roster.Submitters] | None = None) -> str:
    """One row per submission; name/email/sid columns last, when the batch has a roster."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = FIXED_COLUMNS + [q.id for q in manifest.questions] + (list(roster.COLUMNS) if people else [])
    w.writerow([text_cell(h) for h in header])
    nobody = roster.Submitters((), (), ())
    for r in sorted(rows, key=lambda r: r.submission):  # numbers are ours (never text); the rest is escaped
        qs = {q.id: q.points for q in r.questions(manifest)}
        w.writerow([text_cell(r.submission), f"{r.score:g}", f"{manifest.max_score:g}"]
                   + [f"{qs[q.id]:g}" for q in manifest.questions]
                   + ([text_cell(c) for c in people.get(r.submission, nobody).columns()] if people else []))
    return buf.getvalue()


def write_submission(out: Path, res: results.SubmissionResult, manifest: Manifest, feedback_md: str) -> None:
    """results/<id>.json (Gradescope schema), raw/<id>.json and feedback/<id>.md."""
    atomic_write(out / "results" / f"{res.submission}.json",
                 json.dumps(results.gradescope_json(res, manifest), indent=1))
    atomic_write(out / "raw" / f"{res.submission}.json", json.dumps(res.to_dict()))
    atomic_write(out / "feedback" / f"{res.submission}.md", feedback_md)


def load_raw(out: Path) -> list[results.SubmissionResult]:
    rows = []
    for p in sorted((out / "raw").glob("*.json")):
        try:
            rows.append(results.SubmissionResult.from_dict(json.loads(p.read_text())))
        except (ValueError, KeyError):
            continue  # a torn file from a killed run: regraded next time
    return rows
