"""``autograder submit LAB``: a student builds the zip to upload.

The zip holds exactly the lab's declared ``student_files`` (flat, so
``autograder grade`` and Gradescope find them by name) and ``MANIFEST.json``
with each file's sha256 and size: a student and an instructor can then agree
on what was handed in.  The public tests run first; failing ones only warn,
since a partial submission still earns the points it has.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console

from autograder import __version__
from autograder.core import labs
from autograder.grading import staging
from autograder.commands.check import hidden_tests, run_in_process
from autograder.core.i18n import _
from autograder.core.results import PASSED

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


def main(*, lab: str, path: str | None = None, out: str | None = None) -> int:
    console = Console()
    the_lab = labs.get(lab)
    code_dir = Path(path).resolve() if path else the_lab.assignment_dir  # as `check` reads it
    wanted = the_lab.manifest.student_files
    missing = [f for f in wanted if not (code_dir / f).is_file()]
    if missing:
        console.print("[red]" + _("cannot submit: {files} missing from {folder}").format(
            files=", ".join(missing), folder=code_dir) + "[/] " + _("(a {lab} submission holds {files})").format(
            lab=the_lab.short, files=", ".join(wanted)))
        return 2
    files = {f: (code_dir / f).read_bytes() for f in wanted}  # read before the tests run

    tests, hidden = run_in_process(the_lab, code_dir)
    passed = sum(t.status == PASSED for t in tests)
    if tests and passed == len(tests):
        console.print("[green]" + _("public tests: all {total} passed.").format(total=len(tests)))
    else:
        console.print("[bold yellow]" + _("WARNING: {failed} of {total} public tests fail;").format(
            failed=len(tests) - passed, total=len(tests)) + "[/] " + _(
            "submitting anyway. Run `autograder check {lab}` for details.").format(lab=the_lab.short))

    dest = Path(out) if out else Path.cwd() / f"{the_lab.name}-submission.zip"
    staging.write_zip(dest, {**files, MANIFEST: manifest_json(the_lab, files, passed, len(tests))})
    console.print(_("wrote {zip} ({files} + {manifest}).").format(zip=dest, files=", ".join(sorted(files)),
                                                                 manifest=MANIFEST)
                  + " " + _("Upload this file; {hidden} run at grading.").format(hidden=hidden_tests(hidden)))
    return 0
