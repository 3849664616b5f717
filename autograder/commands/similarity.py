"""``autograder similarity LAB SUBMISSIONS --out DIR``: flag similar submissions, grouped into cases.

The options and the console; the comparison is ``autograder.batch.similarity``.
It flags for a person to read and never grades.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from autograder.batch import platforms, similarity
from autograder.commands import usage_error
from autograder.commands.batch_input import open_batch


@click.command("similarity")
@click.argument("lab")
@click.argument("submissions_dir", metavar="SUBMISSIONS")
@click.option("--out", required=True, help="output folder (similarity.csv, similarity.html)")
@click.option("--threshold", type=click.FloatRange(0, 1), default=similarity.THRESHOLD, show_default=True,
              help="flag a file pair when either side shares at least this fraction of its own code")
@click.option("--platform", type=click.Choice(sorted(platforms.platforms())),
              help="the platform SUBMISSIONS was downloaded from (default: recognised from its layout)")
def command(**options) -> int:
    """flag similar submissions, grouped into cases (the stub and public lines excluded); never grades"""
    return main(**options)


def main(*, lab: str, submissions_dir: str, out: str, threshold: float = similarity.THRESHOLD,
         platform: str | None = None) -> int:
    with contextlib.ExitStack() as stack:
        try:  # a platform's download as it is (a zip), as `grade` takes it
            folder, _skipped = stack.enter_context(platforms.unpacked(Path(submissions_dir)))
        except ValueError as exc:
            return usage_error("similarity", str(exc))
        opened = open_batch("similarity", lab, str(folder), at_least=2, platform=platform)
        if isinstance(opened, int):
            return opened
        the_lab, intake = opened
        report = similarity.compare(the_lab, intake.entries, threshold=threshold)
        csv_path, html_path = similarity.write(report, Path(out))
    print(f"{report.pairs_compared} pairs of {len(intake.entries)} submissions compared, {report.pairs_flagged} "
          f"flagged in {len(report.clusters)} case(s) (similarity >= {threshold:g}): {csv_path}, {html_path}")
    return 0
