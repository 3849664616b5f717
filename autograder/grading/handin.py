"""The hand-in zip's ``MANIFEST.json``: each declared file's sha256 and size,
so a student and an instructor can agree on what was handed in."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass

from autograder import __version__
from autograder.core import labs

MANIFEST = "MANIFEST.json"


@dataclass(frozen=True)
class FileRecord:
    name: str
    sha256: str
    size: int


def utc_timestamp() -> str:
    """Now in UTC, or $SOURCE_DATE_EPOCH when set (reproducible builds' convention)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch) if epoch else None))


def manifest_json(lab: labs.Lab, files: dict[str, bytes], passed: int, total: int) -> str:
    records = [FileRecord(n, hashlib.sha256(d).hexdigest(), len(d)) for n, d in sorted(files.items())]
    return json.dumps({
        "lab": lab.name,
        "title": lab.manifest.title,
        "created_utc": utc_timestamp(),
        "autograder_version": __version__,
        "public_tests": {"passed": passed, "total": total},
        "files": [asdict(r) for r in records],
    }, indent=2) + "\n"
