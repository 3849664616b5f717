"""Who submitted what, from what the export says.

* Gradescope's "Export Submissions": a folder with ``submission_metadata.yml``
  and one folder per submission (``submission_<n>/``).  The YAML maps each
  folder to its ``:submitters`` (Ruby-style keys: ``:name``, ``:email``,
  ``:sid``); group submissions list several.
* Moodle's "Download all submissions": one folder per student named
  ``<full name>_<participant id>_assignsubmission_<plugin>_``: the name is
  taken from it (Moodle writes no email there; its participant id is not a
  user id, so it is not a ``sid``).
* Anything else (Canvas's flat files, a hand-made batch) is graded without
  names: the submission id is what the instructor matches on.
"""

from __future__ import annotations

import os
import re
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


MOODLE_FOLDER = re.compile(r"^(?P<name>.+)_(?P<participant>\d+)_assign(?:submission|feedback)_[a-z]+_?$")


def read(folder: Path) -> dict[str, Submitters]:
    """Submission id (its folder name) -> submitters; empty without an export."""
    path = Path(folder) / METADATA
    if not path.is_file():
        return _moodle(Path(folder))
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


def _moodle(folder: Path) -> dict[str, Submitters]:
    """Folder name -> the student's name, for Moodle's folder names (see the module docstring)."""
    try:
        names = [e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return {}
    return {n: Submitters((m["name"].strip(),), (), ()) for n in names if (m := MOODLE_FOLDER.match(n))}
