"""``autograder stubs [LAB] [--check]``: write each lab's stubs under assignments/
from its marked reference under solutions/ (``autograder.core.stubs``)."""

from __future__ import annotations

from autograder.core import stubs
from autograder.commands import build_or_check, lab_command


@lab_command("stubs", check="only list stubs that differ from what their reference generates")
def command(**options) -> int:
    """write each lab's stubs under assignments/ from the reference; --check lists drift"""
    return main(**options)


def main(*, lab: str | None = None, check: bool = False) -> int:
    try:
        return build_or_check(lab, check, write=lambda l: (p.relative_to(l.root) for p in stubs.write(l)),
                              stale=stubs.drift,
                              out_of_date="out of date with its reference: {} (run `autograder stubs`)")
    except stubs.MarkerError as exc:
        print(f"autograder stubs: {exc}")
        return 2
