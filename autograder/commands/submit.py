"""``autograder submit LAB``: a student builds the zip to upload.

What the zip holds is :mod:`autograder.grading.handin`'s to say, one copy for
this command and the notebook's last cell (``notebook.submit``), so both
zips grade alike.  The notebook: the one ``--notebook`` names, else each of
the lab's notebooks in the folder that has been run.  A notebook never run
is the one handed out (in the bundle's own folder while the student worked
in a copy elsewhere, on Colab say): it is left out, and the student is told
how to hand in the one they worked in.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from autograder.commands import lang_option
from autograder.core import labs
from autograder.core.i18n import N_, _
from autograder.grading import handin
from autograder.grading.local import TestsDidNotRun

STYLES = {"warning": "bold yellow", "passed": "green", "written": ""}
NEVER_RUN = N_("WARNING: the notebook in {folder} ({notebooks}) was never run: it is the one handed out, so it is "
               "not in the zip. Hand in from the notebook you worked in (its last cell), or name it: --notebook PATH.")


@click.command("submit")
@click.argument("lab")
@click.option("--path", help="folder with your files (default: assignments/<lab>)")
@click.option("--out", help="the zip to write (default: ./<lab>-submission.zip)")
@click.option("--notebook", "notebook_file", type=click.Path(dir_okay=False),
              help="the notebook you worked in (default: the lab's notebooks in the folder that have been run)")
@lang_option("messages")
def command(**options) -> int:
    """build the zip to upload: your files and their hashes"""
    return main(**options)


def main(*, lab: str, path: str | None = None, out: str | None = None, notebook_file: str | None = None) -> int:
    console = Console()
    the_lab = labs.get(lab)
    code_dir = Path(path).resolve() if path else the_lab.assignment_dir  # as `check` reads it
    warnings, notebooks, never_run = [], {}, []
    if notebook_file:
        data = Path(notebook_file).read_bytes()
        notebooks[handin.notebook_name(the_lab, handin.language_of(data, Path(notebook_file).name))] = data
    else:
        for name in the_lab.manifest.notebooks:
            if (code_dir / name).is_file():
                data = (code_dir / name).read_bytes()
                if handin.was_run(data):
                    notebooks[name] = data
                else:
                    never_run.append(name)
    if never_run and not notebooks:
        warnings.append(_(NEVER_RUN).format(folder=code_dir, notebooks=", ".join(never_run)))
    dest = Path(out) if out else Path.cwd() / f"{the_lab.name}-submission.zip"
    try:
        made = handin.make(the_lab, code_dir, notebooks, dest, warnings)
    except (handin.MissingFiles, TestsDidNotRun) as exc:  # nothing written
        console.print(str(exc), style="red", markup=False, highlight=False)
        return 2
    for kind, text in made.lines(_("Run `autograder check {lab}` for details.").format(lab=the_lab.short)):
        console.print(text, style=STYLES[kind], markup=False, highlight=False)
    return 0
