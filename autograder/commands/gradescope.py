"""``autograder gradescope LAB --out FILE.zip``: a Gradescope autograder for one lab
(``autograder.authoring.gradescope_zip`` says what is in it)."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.authoring.gradescope_zip import build_zip
from autograder.commands import lang_option
from autograder.core import i18n, labs


@click.command("gradescope")
@click.argument("lab")
@click.option("--out", required=True, help="the zip to write, e.g. lab2-autograder.zip")
@lang_option("the students' feedback on Gradescope")
def command(**options) -> int:
    """build a Gradescope autograder zip for one lab"""
    return main(**options)


def main(*, lab: str, out: str) -> int:
    the_lab = labs.get(lab)
    dest, count = build_zip(the_lab, Path(out), i18n.current())  # `--lang`: the students' feedback language
    print(f"{dest}: Gradescope autograder for {the_lab.name} ({count} files, "
          f"{dest.stat().st_size // 1024} KiB); upload it as the assignment's autograder")
    return 0
