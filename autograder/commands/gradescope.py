"""``autograder gradescope LAB --out FILE.zip``: a Gradescope autograder for one lab.

Gradescope unpacks the zip to ``/autograder/source``, so its top level is a
project root holding this one lab: ``setup.sh`` and ``run_autograder``
(from ``autograder/batch/gradescope_scripts/``), the engine package, the lab's
assignment folder, its reference (no variants: they only serve ``verify``),
its hidden tests with their conftest.py, and ``pyproject.toml``,
``requirements.lock`` and ``README.md`` (pyproject's readme: the install
needs it).  The same sources always give the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import autograder
from autograder.core import i18n, labs
from autograder.grading import staging
from autograder.batch.gradescope_run import LANG_FILE
from autograder.sandbox.layers import is_within

ENGINE = Path(autograder.__file__).resolve().parent
SCRIPTS = ("setup.sh", "run_autograder")  # executable, at the top as Gradescope requires
PROJECT_FILES = ("pyproject.toml", "requirements.lock", "README.md")
SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache"}


def _tree(folder: Path, base: Path, skip: tuple[Path, ...] = ()) -> dict[str, Path]:
    """Every file under ``folder``, named relative to ``base``."""
    out = {}
    for p in folder.rglob("*"):
        name = p.relative_to(base)
        if (p.is_file() and p.suffix != ".pyc" and not SKIPPED_PARTS.intersection(name.parts)
                and not any(is_within(p, s) for s in skip)):
            out[name.as_posix()] = p
    return out


def members(lab: labs.Lab) -> dict[str, Path]:
    """Zip name -> file on disk."""
    if not lab.has_solutions:
        raise FileNotFoundError(f"{lab.solution_dir} is missing: the autograder needs the reference")
    files = {name: ENGINE / "batch" / "gradescope_scripts" / name for name in SCRIPTS}
    files.update({name: ENGINE.parent / name for name in PROJECT_FILES})  # the engine's project
    files.update(_tree(ENGINE, ENGINE.parent))
    for folder in (lab.assignment_dir, lab.solution_dir, lab.hidden_tests_dir):
        files.update(_tree(folder, lab.root, skip=(lab.solution_dir / "variants",)))
    return files


def main(*, lab: str, out: str) -> int:
    the_lab = labs.get(lab)
    files = members(the_lab)
    contents: dict[str, bytes] = {name: p.read_bytes() for name, p in files.items()}
    contents[LANG_FILE] = (i18n.current() + "\n").encode()  # `--lang`: the students' feedback language
    dest = staging.write_zip(Path(out), contents, executable=frozenset(SCRIPTS))
    print(f"{dest}: Gradescope autograder for {the_lab.name} ({len(files)} files, "
          f"{dest.stat().st_size // 1024} KiB); upload it as the assignment's autograder")
    return 0
