"""Opening a platform's download for a course command (``grade``, ``similarity``).

Not in ``commands/__init__.py``: that module ships in the student bundle, and this one
imports ``autograder.batch``, which does not (``authoring/release.py``)."""

from __future__ import annotations

from autograder.commands import usage_error
from autograder.core import labs


def open_batch(command: str, lab: str, folder: str, *, at_least: int = 1, platform: str | None = None,
               gradebook: str | None = None):
    """(the lab, the export in ``folder`` read by its platform: ``platforms.Intake``), or the exit
    status of the one-line error that says why not: an unknown lab or platform, a folder that is
    not there, a gradebook that cannot be read, fewer than ``at_least`` submissions."""
    from pathlib import Path

    from autograder.batch import platforms
    from autograder.grading import staging

    try:
        the_lab = labs.get(lab)
    except KeyError as exc:
        return usage_error(command, exc.args[0])
    if not Path(folder).is_dir():
        return usage_error(command, f"no folder {folder}")
    try:
        intake = platforms.read(Path(folder), platform, gradebook)
    except OSError as exc:
        return usage_error(command, f"cannot read {folder}: {staging.describe(exc)}")
    except ValueError as exc:
        return usage_error(command, str(exc))
    if len(intake.entries) < at_least:
        return usage_error(command, f"{len(intake.entries)} submission(s) (folders, .zip files or Canvas files) in "
                                    f"{folder}" + (f": at least {at_least} are needed" if at_least > 1 else ""))
    return the_lab, intake
