"""Which folders no worker may read: the reference and the hidden tests.

A leaf module on purpose: the zygote imports it, and everything the zygote
imports is inherited by every worker, so it may use only ``core.files``
(already in the workers' closure) and never the grader's manifest or course
code (``tests/framework/engine/test_worker_imports.py``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from autograder.core.files import find_root

SECRET_FOLDERS = ("solutions", "tests")  # of a project root: the reference, the hidden tests


def secret_list() -> list[str]:
    """What no worker may read, as this process knows it: ``solutions/`` and ``tests/``
    of the graded project (``find_root``, when there is one) and of the folder that
    holds the engine this process imports (an editable checkout may grade another
    project; an installed copy may have them beside it).  The grader and the zygote
    each call it, and the zygote joins both lists (``zygote.secrets``): the engine it
    imports may be another copy (on Gradescope the grader runs the zip's, the
    zygote the venv's)."""
    import autograder

    roots = {Path(autograder.__file__).resolve().parents[1]}
    with contextlib.suppress(FileNotFoundError):  # a zygote started from "/" may have no project
        roots.add(find_root())
    return sorted(str(r / d) for r in roots for d in SECRET_FOLDERS if (r / d).is_dir())
