"""Gradescope: its "Export Submissions" in, and its autograder (the runner) out.

In: a folder with ``submission_metadata.yml`` and one folder per submission
(``submission_<n>/``).  The YAML maps each folder to its ``:submitters``
(Ruby-style keys: ``:name``, ``:email``, ``:sid``; a group lists several) and
gives the exported submission's time (its top-level ``:created_at``; the
``:history`` list holds earlier ones and is not used).  A record that cannot
be read names nobody, or has no time: that submission is still graded.

Out: nothing is written here.  Grades reach Gradescope through its own
autograder, ``autograder gradescope LAB`` (the runner is
``autograder.batch.gradescope_run``, which stages an upload with
:func:`autograder.batch.platforms.stage`, as ``grade`` does).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from autograder.batch import late, roster
from autograder.batch.platforms import Intake, Platform
from autograder.grading import staging

METADATA = "submission_metadata.yml"


class Gradescope(Platform):
    name = "gradescope"
    title = "Gradescope"
    layout = f"{METADATA} and a folder per submission"

    def detect(self, folder: Path) -> int:
        return 1000 if (Path(folder) / METADATA).is_file() else 0  # its own file: no doubt

    def read(self, folder: Path, gradebook: Path | None = None) -> Intake:
        intake = Intake(self, folder, staging.discover(folder))
        try:
            data = _metadata(folder)
        except ValueError as exc:  # a damaged export still gets graded, without names or times
            intake.warnings.append(f"{exc}; the gradebook has no names and no submission times")
            return intake
        intake.people = people(data)
        intake.times, intake.problems = times(data)
        return intake


def _metadata(folder: Path) -> dict:
    import yaml  # only an export needs it

    path = Path(folder) / METADATA
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as e:
        raise ValueError(f"could not read {METADATA} ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"could not read {METADATA} (a mapping of submission folders was expected)")
    return data


def people(data: dict) -> dict[str, roster.Submitters]:
    """Submission id (its folder name) -> submitters, from the YAML's records."""
    out = {}
    for sub_id, meta in data.items():
        found = (meta.get(":submitters") if isinstance(meta, dict) else None) or []
        found = [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []
        out[str(sub_id)] = roster.Submitters(  # a malformed record names nobody; it never stops the batch
            names=tuple(str(p.get(":name", "") or "") for p in found),
            emails=tuple(str(p.get(":email", "") or "") for p in found),
            sids=tuple(str(p.get(":sid", "") or "") for p in found),
        )
    return out


def times(data: dict) -> tuple[dict[str, datetime], list[str]]:
    """Submission id -> the time of the exported submission (``:created_at``), and a problem
    sentence for each record whose time is missing or unreadable (those get no late days)."""
    found: dict[str, datetime] = {}
    problems: list[str] = []
    for sub_id, meta in data.items():
        raw = meta.get(":created_at") if isinstance(meta, dict) else None
        if raw is None:
            problems.append(f"{sub_id}: {METADATA} gives no :created_at")
            continue
        try:
            found[str(sub_id)] = late.parse_gradescope_time(raw)
        except ValueError as e:
            problems.append(f"{sub_id}: {e}")
    return found, problems


def read_times(folder: Path) -> tuple[dict[str, datetime], list[str]]:
    """:func:`times` of the export in ``folder`` (``({}, [])`` without one); ValueError for a file
    that is not YAML."""
    if not (Path(folder) / METADATA).is_file():
        return {}, []
    return times(_metadata(folder))


PLATFORM = Gradescope()
