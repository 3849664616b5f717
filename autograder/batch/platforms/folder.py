"""A plain folder: one folder, zip or other archive per student (a hand-made batch).

The submission id is the entry's name (``staging.discover``).  Nothing names
the students, nothing gives times (``--times``), and no grade file goes back:
``gradebook.csv`` and ``feedback/<id>.md`` are the instructor's to use.
"""

from __future__ import annotations

from pathlib import Path

from autograder.batch.platforms import Intake, Platform
from autograder.grading import staging


class Folder(Platform):
    name = "folder"
    title = "a plain folder"
    layout = "a folder, .zip or other archive per student"

    def detect(self, folder: Path) -> int:
        return 1  # the fallback: any folder reads as one

    def read(self, folder: Path, gradebook: Path | None = None) -> Intake:
        return Intake(self, folder, staging.discover(folder))


PLATFORM = Folder()
