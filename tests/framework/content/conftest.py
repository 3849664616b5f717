"""What several test files of this folder need from one run: the student bundle, a venv that
sees only what a student installs, and a lab notebook run headless from the bundle and handed in.

Made once per pytest session, however many pytest-xdist workers ask (``shared_once``): the
first to ask makes it under a file lock, in a folder of the session's temporary tree that
every worker sees, and the others read what it made.  The notebook run that
``test_handin_notebook.py`` hands in (lab 2, English, the reference filled in) is the same run
``test_notebooks.py`` checks headless (same notebook, same code, same language): run once, both
read it (issue 36: the suite does no work twice).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from filelock import FileLock

from autograder.core import i18n, labs

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def shared_once(session_dir):
    """``once(name, make)``: the folder ``make(folder)`` filled, made once per session, in the
    folder where the session's xdist workers meet (``session_dir``).  A ``make`` that failed
    part-way leaves no mark of completion: the next to ask makes it again (and fails again, in
    its own test)."""
    root = session_dir / "made-once"
    root.mkdir(exist_ok=True)

    def once(name: str, make) -> Path:
        folder = root / name
        with FileLock(str(root / f"{name}.lock")):
            if not (root / f"{name}.done").is_file():
                if folder.exists():
                    shutil.rmtree(folder)
                folder.mkdir()
                make(folder)
                (root / f"{name}.done").touch()
        return folder

    return once


@pytest.fixture(scope="session")
def student_bundle(shared_once) -> Path:
    """The student bundle, as ``autograder release`` writes it (tests copy it, never change it)."""
    from autograder.authoring import release

    def make(folder: Path) -> None:
        (folder / "iron-law-labs").mkdir()
        release.build(REPO, folder / "iron-law-labs")

    return shared_once("bundle", make) / "iron-law-labs"


@pytest.fixture(scope="session")
def student_python(shared_once, linked_venv) -> Path:
    """A fresh venv that sees the bundle's dependencies and ``[student]`` extra (otter-grader, fica)
    and nbclient to run a notebook, not this project (``linked_venv``); its python."""
    from autograder.grading import notebook

    deps, bare = notebook.requirements(REPO)
    return shared_once("student-venv", lambda f: linked_venv(f, [*deps, *bare, "nbclient"])) / "venv" / "bin" / "python"


def student_env(python: Path, tmp: Path) -> dict[str, str]:
    """This environment without what leads to the project, its venv or a language setting."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUPYTER_PATH", "JPY_SESSION_NAME", i18n.ENV,
            labs.ROOT_ENV, "IRONLAW_BUNDLE_URL"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["JUPYTER_DATA_DIR"] = str(tmp / "jupyter")  # no kernel spec from the user's folder: this venv's python3
    env["COLUMNS"] = "250"
    return env


@pytest.fixture(scope="session")
def clean_environ():
    """``clean_environ(python, tmp)``: :func:`student_env`, for a test that makes its own venv."""
    return student_env


@pytest.fixture(scope="session")
def student_run(student_python):
    """``run(cwd, tmp, *args)``: ``student_python *args`` in ``cwd``, in :func:`student_env`."""
    def run(cwd: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(student_python), *args], cwd=cwd, env=student_env(student_python, tmp),
                              capture_output=True, text=True, timeout=600)

    return run


# The front end: runs the notebook (the hand-in cell too: a headless run skips it unless told) and,
# when the kernel asks it to save (otter's save_notebook: classic Jupyter's save call), writes the
# notebook as it is at that moment, outputs and all, as Jupyter does.
DRIVER = """\
import sys
import nbformat
from nbclient import NotebookClient

path, which = sys.argv[1:3]
nb = nbformat.read(path, as_version=4)
if which == "first-and-last":  # a student who did nothing: the set-up cell, then the hand-in cell
    code = [c for c in nb.cells if c.cell_type == "code"]
    nb.cells = [code[0], code[-1]]
    nbformat.write(nb, path)


class Jupyter(NotebookClient):
    def output(self, outs, msg, display_id, cell_index):
        out = super().output(outs, msg, display_id, cell_index)
        if "save_checkpoint" in str(msg["content"].get("data", {}).get("application/javascript", "")):
            nbformat.write(self.nb, path)
        return out


# "immediate": the kernel is killed once its last cell has answered, not left 1-3 s to tear torch down
Jupyter(nb, timeout=600, kernel_name="python3", skip_cells_with_tag="run-them-all", shutdown_kernel="immediate",
        resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}}).execute()
nbformat.write(nb, path)  # the student saves at the end
"""


def _text(cell) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") + "".join(o.get("traceback", []))
                   for o in cell.get("outputs", []))


@pytest.fixture(scope="session")
def hand_in(shared_once, student_bundle, student_python, student_run):
    """``hand_in(lab, files, which)``: a copy of the bundle with ``files`` in the lab's folder, its
    English notebook run headless in the student's venv (``which``: ``"all"`` of it, or only its
    ``"first-and-last"`` cells), and the zip its hand-in cell wrote; returns the zip (the run
    notebook beside it).  Once per session for the same lab, files and cells."""
    def run(lab_short: str, files: dict[str, str], which: str) -> Path:
        lab = labs.get(lab_short)
        key = hashlib.sha256(json.dumps([lab.name, which, sorted(files.items())]).encode()).hexdigest()[:16]

        def make(tmp: Path) -> None:
            copy = tmp / "iron-law-labs"
            shutil.copytree(student_bundle, copy)
            for f, text in files.items():
                (copy / "assignments" / lab.name / f).write_text(text)
            driver = tmp / "driver.py"
            driver.write_text(DRIVER)
            lab_dir = copy / "assignments" / lab.name
            proc = student_run(lab_dir, tmp, str(driver), str(lab_dir / f"{lab.name}.ipynb"), which)
            assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
            dest = lab_dir / f"{lab.name}-submission.zip"
            assert dest.is_file(), proc.stderr[-2000:]

        dest = shared_once(f"hand-in-{lab.short}-{key}", make) / "iron-law-labs" / "assignments" / lab.name / \
            f"{lab.name}-submission.zip"
        last = _text(nbformat.read(dest.parent / f"{lab.name}.ipynb", as_version=4).cells[-1])
        assert f"wrote {dest}" in last and "could not make Jupyter save" not in last, last
        return dest

    return run
