"""``autograder otter-tests [LAB]``: rewrite ``assignments/<lab>/otter_tests/`` from the public tests."""

from __future__ import annotations

import click

from autograder.core import labs
from autograder.build import otter


@click.command("otter-tests")
@click.argument("lab", required=False)
def command(**options) -> int:
    """rewrite each notebook's otter tests from the public tests"""
    return main(**options)


def main(*, lab: str | None = None) -> int:
    for the_lab in [labs.get(lab)] if lab else labs.all_labs():
        written = otter.write_test_files(the_lab)
        print(f"{the_lab.name}: {len(written)} otter test file(s) in "
              f"{(the_lab.assignment_dir / otter.TESTS_DIR).relative_to(the_lab.root)}")
    return 0
