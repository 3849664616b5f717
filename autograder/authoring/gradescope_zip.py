"""A Gradescope autograder zip for one lab (``autograder gradescope``).

Gradescope unpacks the zip to ``/autograder/source``, so its top level is a
project root holding this one lab: ``setup.sh`` and ``run_autograder``
(from ``autograder/batch/gradescope_scripts/``), the engine package, the lab's
assignment folder (not the generated stubs: a submission brings its own
files), its reference (no variants: they only serve ``verify``),
its hidden tests with their conftest.py, the course file, and
``pyproject.toml``, ``requirements.lock`` and ``README.md`` (pyproject's
readme: the install needs it).  The same sources always give the same bytes.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import autograder
from autograder.batch.gradescope_run import LANG_FILE
from autograder.core import chapter, course, labs
from autograder.core.files import shipped_files, write_zip

ENGINE = Path(autograder.__file__).resolve().parent
SCRIPTS = ("setup.sh", "run_autograder")  # executable, at the top as Gradescope requires
PROJECT_FILES = ("pyproject.toml", "requirements.lock", "README.md")


def members(lab: labs.Lab) -> dict[str, Path]:
    """Zip name -> file on disk."""
    if not lab.has_solutions:
        raise FileNotFoundError(f"{lab.solution_dir} is missing: the autograder needs the reference")
    files = {name: ENGINE / "batch" / "gradescope_scripts" / name for name in SCRIPTS}
    files.update({name: ENGINE.parent / name for name in PROJECT_FILES})  # the engine's project
    files.update(shipped_files(ENGINE, ENGINE.parent))
    for name in (course.FILE, chapter.FILE):  # the course's files, beside the labs
        files[f"assignments/{name}"] = lab.root / "assignments" / name
    stubs = {lab.assignment_dir / f for f in lab.manifest.student_files}  # generated; a submission brings its own
    for folder in (lab.assignment_dir, lab.solution_dir, lab.hidden_tests_dir):
        files.update({name: p for name, p in shipped_files(folder, lab.root, skip=(lab.solution_dir / "variants",)).items()
                      if p not in stubs})
    return files


def build_zip(lab: labs.Lab, dest: Path, lang: str) -> tuple[Path, int]:
    """Write the zip; ``lang`` is the students' feedback language.  Returns (zip, file count)."""
    files = members(lab)
    contents: dict[str, bytes] = {name: p.read_bytes() for name, p in files.items()}
    contents[LANG_FILE] = (lang + "\n").encode()
    return write_zip(dest, contents, executable=frozenset(SCRIPTS)), len(files)


def lay_out(autograder_zip: Path, root: Path, files: dict[str, str], upload: str = "") -> Path:
    """Gradescope's ``/autograder`` tree under ``root``, for running ``source/run_autograder``
    here with ``$AUTOGRADER_ROOT=root`` (the tests, ``benchmarks/otter_vs_gradescope.py``):
    the zip unpacked to ``source/`` with its files' modes (Gradescope's unzip keeps them,
    ``extractall`` drops them), ``files`` uploaded to ``submission/<upload>``.  Returns ``root``."""
    with zipfile.ZipFile(autograder_zip) as z:
        z.extractall(root / "source")
        for info in z.infolist():
            (root / "source" / info.filename).chmod(stat.S_IMODE(info.external_attr >> 16))
    folder = root / "submission" / upload
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return root
