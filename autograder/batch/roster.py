"""Who submitted what, from Gradescope's "Export Submissions" layout.

The export is a folder with ``submission_metadata.yml`` and one folder per
submission (``submission_<n>/``).  The YAML maps each folder to its
``:submitters`` (Ruby-style keys: ``:name``, ``:email``, ``:sid``); group
submissions list several.  Other folders are graded too, without names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

METADATA = "submission_metadata.yml"
COLUMNS = ("name", "email", "sid")


@dataclass(frozen=True)
class Submitters:
    names: tuple[str, ...]
    emails: tuple[str, ...]
    sids: tuple[str, ...]

    def columns(self) -> list[str]:
        return ["; ".join(v) for v in (self.names, self.emails, self.sids)]


def read(folder: Path) -> dict[str, Submitters]:
    """Submission id (its folder name) -> submitters; empty without an export."""
    path = Path(folder) / METADATA
    if not path.is_file():
        return {}
    import yaml  # only an export needs it

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = {}
    for sub_id, meta in (data.items() if isinstance(data, dict) else ()):
        people = (meta.get(":submitters") if isinstance(meta, dict) else None) or []
        people = [p for p in people if isinstance(p, dict)] if isinstance(people, list) else []
        out[str(sub_id)] = Submitters(  # a malformed record names nobody; it never stops the batch
            names=tuple(str(p.get(":name", "") or "") for p in people),
            emails=tuple(str(p.get(":email", "") or "") for p in people),
            sids=tuple(str(p.get(":sid", "") or "") for p in people),
        )
    return out
