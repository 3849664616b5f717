"""``autograder similarity LAB SUBMISSIONS --out DIR``: flag pairs of similar submissions.

The options and the console; the comparison is ``autograder.batch.similarity``.
It flags for a person to read and never grades.
"""

from __future__ import annotations

from pathlib import Path

import click

from autograder.batch import similarity
from autograder.commands import open_batch


@click.command("similarity")
@click.argument("lab")
@click.argument("submissions_dir", metavar="SUBMISSIONS")
@click.option("--out", required=True, help="output folder (similarity.csv, similarity.html)")
@click.option("--threshold", type=click.FloatRange(0, 1), default=similarity.THRESHOLD, show_default=True,
              help="flag a file pair when either side shares at least this fraction of its own code")
def command(**options) -> int:
    """flag pairs of similar submissions (the stub and public lines excluded); never grades"""
    return main(**options)


def main(*, lab: str, submissions_dir: str, out: str, threshold: float = similarity.THRESHOLD) -> int:
    opened = open_batch("similarity", lab, submissions_dir, at_least=2)
    if isinstance(opened, int):
        return opened
    the_lab, entries = opened
    report = similarity.compare(the_lab, entries, threshold=threshold)
    csv_path, html_path = similarity.write(report, Path(out))
    print(f"{report.pairs_compared} pairs of {len(entries)} submissions compared, {report.pairs_flagged} flagged "
          f"(similarity >= {threshold:g}): {csv_path}, {html_path}")
    return 0
