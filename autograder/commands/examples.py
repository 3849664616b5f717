"""``autograder examples [LAB]``: write the demo submissions as zips.

``examples/<short>/`` holds one zip per candidate that ``verify`` grades
(reference, stub, every negative variant), so the README's demo batch and
``verify`` are the same set.  Zips are byte-reproducible; a framework test
fails when the committed ones drift from the sources.
"""

from __future__ import annotations

from autograder.authoring import candidates
from autograder.commands import chosen_labs, lab_command


@lab_command("examples")
def command(**options) -> int:
    """write the demo submissions under examples/"""
    return main(**options)


def main(*, lab: str | None = None) -> int:
    for l in chosen_labs(lab):
        want = {f"{c.id}.zip" for c in candidates.all_candidates(l)}
        l.examples_dir.mkdir(parents=True, exist_ok=True)
        for stale in l.examples_dir.glob("*.zip"):
            if stale.name not in want:
                stale.unlink()
        for c in candidates.all_candidates(l):
            candidates.zip_candidate(l, c, l.examples_dir / f"{c.id}.zip")
        print(f"{l.examples_dir}: {len(want)} demo submissions")
    return 0
