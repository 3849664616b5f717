"""``autograder translations [LAB] [--check]``: keep the message catalogs in step with the code.

Without ``--check``: add every newly marked message to each PO file
(untranslated, for a translator to fill in) and drop those no longer used.
With it: list what is missing, fuzzy or inconsistent (``autograder.authoring.catalogs``).
"""

from __future__ import annotations

from autograder.authoring import catalogs
from autograder.commands import lab_command
from autograder.core import labs


@lab_command("translations", check="change nothing; list missing or inconsistent translations")
def command(**options) -> int:
    """update the Vietnamese message catalogs from the code; --check lists gaps"""
    return main(**options)


def main(*, lab: str | None = None, check: bool = False) -> int:
    only = labs.get(lab).name if lab else None  # one lab's catalog; default: all, the engine's too
    if not check:
        for path in catalogs.update(only=only):
            print(f"updated {path}")
    found = catalogs.problems(only=only)
    for p in found:
        print(p)
    print(f"{len(found)} problem(s) in the catalogs" if found else "catalogs complete")
    return 1 if found else 0
