"""``autograder otter-tests [LAB]``: rewrite ``assignments/<lab>/otter_tests/`` from the public tests
(one file per question the tests score, worth its ``lab.toml`` points: docs/otter.md)."""

from __future__ import annotations

from autograder.authoring import otter
from autograder.commands import chosen_labs, lab_command


@lab_command("otter-tests")
def command(**options) -> int:
    """rewrite each notebook's otter tests from the public tests"""
    return main(**options)


def main(*, lab: str | None = None) -> int:
    for the_lab in chosen_labs(lab):
        written = otter.write_test_files(the_lab)
        print(f"{the_lab.name}: {len(written)} otter test file(s) in "
              f"{(the_lab.assignment_dir / otter.TESTS_DIR).relative_to(the_lab.root)}")
    return 0
