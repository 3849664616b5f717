"""``autograder otter LAB --out FILE.zip``: an otter-grader autograder zip for one lab.

``otter run -a FILE.zip SUBMISSION.zip`` grades a zip of the notebook plus the
student's modules with the public tests only, in the student's own process:
feedback, not trusted grades (those come from ``autograder grade`` or
``autograder gradescope``).
"""

from __future__ import annotations

from pathlib import Path

import click

from autograder.core import labs
from autograder.build import otter


@click.command("otter")
@click.argument("lab")
@click.option("--out", required=True, help="the zip to write, e.g. lab2-otter.zip")
def command(**options) -> int:
    """build an otter-grader autograder zip for one lab (public tests, untrusted)"""
    return main(**options)


def main(*, lab: str, out: str) -> int:
    the_lab = labs.get(lab)
    dest = otter.build_zip(the_lab, Path(out))
    files = ", ".join(the_lab.manifest.student_files)
    print(f"wrote {dest}. Grade with: otter run -a {dest} SUBMISSION.zip "
          f"(the zip holds {the_lab.name}.ipynb and {files})")
    return 0
