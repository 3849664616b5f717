"""``autograder submit LAB``: a student builds the zip to upload.

The zip holds exactly the lab's declared ``student_files`` (flat, so
``autograder grade`` and Gradescope find them by name) and ``MANIFEST.json``
with each file's sha256 and size: a student and an instructor can then agree
on what was handed in.  The public tests run first; failing ones only warn,
since a partial submission still earns the points it has.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from autograder.commands import lang_option
from autograder.core.files import write_zip
from autograder.core import labs
from autograder.core.i18n import _
from autograder.core.results import PASSED
from autograder.grading.handin import MANIFEST, manifest_json
from autograder.grading.local import hidden_tests, public_tests_here


@click.command("submit")
@click.argument("lab")
@click.option("--path", help="folder with your files (default: assignments/<lab>)")
@click.option("--out", help="the zip to write (default: ./<lab>-submission.zip)")
@lang_option("messages")
def command(**options) -> int:
    """build the zip to upload: your files and their hashes"""
    return main(**options)


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

    tests, hidden = public_tests_here(the_lab, code_dir)
    passed = sum(t.status == PASSED for t in tests)
    if tests and passed == len(tests):
        console.print("[green]" + _("public tests: all {total} passed.").format(total=len(tests)))
    else:
        console.print("[bold yellow]" + _("WARNING: {failed} of {total} public tests fail;").format(
            failed=len(tests) - passed, total=len(tests)) + "[/] " + _(
            "submitting anyway. Run `autograder check {lab}` for details.").format(lab=the_lab.short))

    dest = Path(out) if out else Path.cwd() / f"{the_lab.name}-submission.zip"
    write_zip(dest, {**files, MANIFEST: manifest_json(the_lab, files, passed, len(tests))})
    console.print(_("wrote {zip} ({files} + {manifest}).").format(zip=dest, files=", ".join(sorted(files)),
                                                                 manifest=MANIFEST)
                  + " " + _("Upload this file; {hidden} run at grading.").format(hidden=hidden_tests(hidden)))
    return 0
