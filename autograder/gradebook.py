"""The CSV gradebook and the per-submission files, written atomically."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from autograder import results, roster
from autograder.manifest import Manifest

FIXED_COLUMNS = ["submission", "score", "max_score"]


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
    w.writerow(FIXED_COLUMNS + [q.id for q in manifest.questions] + (list(roster.COLUMNS) if people else []))
    nobody = roster.Submitters((), (), ())
    for r in sorted(rows, key=lambda r: r.submission):
        qs = {q.id: q.points for q in r.questions(manifest)}
        w.writerow([r.submission, f"{r.score:g}", f"{manifest.max_score:g}"]
                   + [f"{qs[q.id]:g}" for q in manifest.questions]
                   + (people.get(r.submission, nobody).columns() if people else []))
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
