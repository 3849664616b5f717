"""``autograder submit LAB``: a student builds the zip to upload.

The zip holds exactly the lab's declared ``student_files`` (flat, so
``autograder grade`` and Gradescope find them by name), for a lab with
questions marked by hand its notebook (the written answers; outputs
cleared, so plots do not swell the upload; both languages' where both are
there, since either may hold the answers) and
``MANIFEST.json`` with each file's sha256 and size: a student and an
instructor can then agree on what was handed in.  The public tests run
first; failing ones only warn, since a partial submission still earns the
points it has.
"""

from __future__ import annotations

import json
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
    notebooks = {n: cleared(code_dir / n) for n in the_lab.manifest.notebooks
                 if the_lab.manifest.manual and (code_dir / n).is_file()}  # only a written answer needs it
    if the_lab.manifest.manual and not notebooks:
        console.print("[bold yellow]" + _("WARNING: no notebook ({names}) in {folder}: your written answers "
                                          "are not in the zip.").format(
            names=", ".join(the_lab.manifest.notebooks), folder=code_dir))

    tests, hidden = public_tests_here(the_lab, code_dir)
    passed = sum(t.status == PASSED for t in tests)
    if tests and passed == len(tests):
        console.print("[green]" + _("public tests: all {total} passed.").format(total=len(tests)))
    else:
        console.print("[bold yellow]" + _("WARNING: {failed} of {total} public tests fail;").format(
            failed=len(tests) - passed, total=len(tests)) + "[/] " + _(
            "the zip is written all the same. Run `autograder check {lab}` for details.").format(lab=the_lab.short))

    dest = Path(out) if out else Path.cwd() / f"{the_lab.name}-submission.zip"
    files.update(notebooks)
    write_zip(dest, {**files, MANIFEST: manifest_json(the_lab, files, passed, len(tests))})
    console.print(_("wrote {zip} ({files} + {manifest}).").format(zip=dest, files=", ".join(sorted(files)),
                                                                 manifest=MANIFEST)
                  + " " + _("Upload this file; {hidden} run at grading.").format(hidden=hidden_tests(hidden)))
    return 0


def cleared(path: Path) -> bytes:
    """A notebook with its outputs cleared (the answers are in the cells' sources); as it
    is, when it is not a notebook's JSON: what was handed in is the student's to decide."""
    data = path.read_bytes()
    try:
        nb = json.loads(data)
        for cell in nb["cells"]:
            if cell.get("cell_type") == "code":
                cell["outputs"], cell["execution_count"] = [], None
    except (ValueError, KeyError, TypeError, AttributeError):
        return data
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode()
