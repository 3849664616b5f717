"""``autograder stubs [LAB] [--check]``: write each lab's stubs under assignments/
from its marked reference under solutions/ (``autograder.build.stubs``)."""

from __future__ import annotations

import click

from autograder.build import stubs
from autograder.core import labs


@click.command("stubs")
@click.argument("lab", required=False)
@click.option("--check", is_flag=True, help="only list stubs that differ from what their reference generates")
def command(**options) -> int:
    """write each lab's stubs under assignments/ from the reference; --check lists drift"""
    return main(**options)


def main(*, lab: str | None = None, check: bool = False) -> int:
    stale = []
    for l in [labs.get(lab)] if lab else labs.all_labs():
        try:
            if check:
                stale += stubs.drift(l)
            else:
                for path in stubs.write(l):
                    print(f"wrote {path.relative_to(l.root)}")
        except stubs.MarkerError as exc:
            print(f"autograder stubs: {exc}")
            return 2
    for s in stale:
        print(f"out of date with its reference: {s} (run `autograder stubs`)")
    return 1 if stale else 0
