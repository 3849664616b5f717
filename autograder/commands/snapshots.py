"""``autograder snapshots LAB``: rewrite public-test snapshots from the reference."""

from __future__ import annotations

import time

import click
import pytest

from autograder.core import labs


@click.command("snapshots")
@click.argument("lab")
def command(**options) -> int:
    """rewrite public-test snapshots from the reference"""
    return main(**options)


def main(*, lab: str) -> int:
    the_lab = labs.get(lab)
    if not the_lab.has_solutions:
        print("snapshots are written from the reference, which this copy does not have")
        return 2
    start = time.time()
    code = pytest.main([str(the_lab.public_tests_dir), "--submission", str(the_lab.solution_dir),
                        "--update-snapshots", "-p", "no:cacheprovider", "-q", "--rootdir", str(the_lab.root)])
    if code != 0:
        return int(code)
    stale = [p for p in the_lab.snapshot_dir.glob("*.npz") if p.stat().st_mtime < start]
    for p in stale:  # written by a test that no longer exists
        p.unlink()
    print(f"snapshots of {the_lab.name} rewritten; {len(stale)} stale file(s) removed")
    return 0
