"""``autograder otter LAB --out FILE.zip``: an otter-grader autograder zip for one lab.

``otter run -a FILE.zip SUBMISSION.zip`` grades a zip of the notebook plus the
student's modules with the public tests only, in the student's own process:
feedback, not trusted grades (those come from ``autograder grade`` or
``autograder gradescope``).  The zip carries the engine modules its tests
import and its pip requirements (docs/otter.md).
"""

from __future__ import annotations

from pathlib import Path

import click

from autograder.core import labs
from autograder.authoring import otter

TORCH_INDEX_ENV = "TORCH_INDEX_URL"  # as the Gradescope zip's setup.sh reads it


@click.command("otter")
@click.argument("lab")
@click.option("--out", required=True, help="the zip to write, e.g. lab2-otter.zip")
@click.option("--torch-index", envvar=TORCH_INDEX_ENV, default=None, metavar="URL",
              help="an extra pip index for torch's CPU wheel, written into the zip's requirements "
                   f"(default: ${TORCH_INDEX_ENV}; none: otter's image takes torch from the default index)")
def command(**options) -> int:
    """build an otter-grader autograder zip for one lab (public tests, untrusted)"""
    return main(**options)


def main(*, lab: str, out: str, torch_index: str | None = None) -> int:
    the_lab = labs.get(lab)
    dest = otter.build_zip(the_lab, Path(out), torch_index or None)
    files = ", ".join(the_lab.manifest.student_files)
    points = otter.otter_points(the_lab)
    print(f"wrote {dest}: {len(points)} question(s), {sum(points.values()):g} otter point(s) "
          f"(public tests only; see docs/otter.md). Grade with: otter run -a {dest} SUBMISSION.zip "
          f"(the zip holds {the_lab.name}.ipynb and {files})")
    return 0
