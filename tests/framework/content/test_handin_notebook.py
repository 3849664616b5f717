"""A student hands in from the released bundle, with nothing of this project installed.

The environment is a fresh venv that sees what a student installs (the bundle's dependencies
and ``[student]`` extra, otter-grader and fica; nbclient to run the notebook) linked from this
project's venv (``linked_venv``: seconds, offline), and not this project: the notebook's first
cell finds the bundle's engine, and ``python -m autograder`` runs the bundle's.

- The lab 2 notebook runs headless from the bundle; its hand-in cell saves the notebook (the
  test's front end saves it when asked, as Jupyter does), writes the zip, and ``autograder
  grade`` in the course repository gives the reference 43/43 and the untouched stub 0, with the
  student's notebook, outputs and all, in the zip.
- ``python -m autograder check`` and ``submit`` run the public tests there (pytest is not told
  of the engine's plugin by an entry point), and exit non-zero when none ran; ``grade`` is not
  there and says why.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.authoring import release
from autograder.core import stubs
from autograder.cli import main
from autograder.core import i18n, labs
from autograder.grading import notebook

REPO = Path(__file__).resolve().parents[3]
LAB = "lab2"
MAX = 51  # lab 2's points (lab.toml)
TESTED = 48  # of them, the tested ones: a headless run answers no prediction, and the reflections are marked by hand
PUBLIC = 11  # lab 2's public tests, one per tested question


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The student bundle, as `autograder release` writes it: one per module, copied by each test."""
    out = tmp_path_factory.mktemp("release") / "iron-law-labs"
    out.mkdir()
    release.build(REPO, out)
    return out


@pytest.fixture(scope="module")
def student_python(tmp_path_factory, linked_venv) -> Path:
    deps, bare = notebook.requirements(REPO)
    return linked_venv(tmp_path_factory.mktemp("student-venv"), [*deps, *bare, "nbclient"])


def _env(python: Path, tmp: Path) -> dict[str, str]:
    """This environment without what leads to the project, its venv or a language setting."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUPYTER_PATH", "JPY_SESSION_NAME", i18n.ENV,
            labs.ROOT_ENV, "IRONLAW_BUNDLE_URL"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["JUPYTER_DATA_DIR"] = str(tmp / "jupyter")  # no kernel spec from the user's folder: this venv's python3
    env["COLUMNS"] = "250"
    return env


def _run(python: Path, cwd: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), *args], cwd=cwd, env=_env(python, tmp), capture_output=True, text=True,
                          timeout=600)


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


Jupyter(nb, timeout=600, kernel_name="python3", skip_cells_with_tag="run-them-all",
        resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}}).execute()
nbformat.write(nb, path)  # the student saves at the end
"""


def _text(cell) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") + "".join(o.get("traceback", []))
                   for o in cell.get("outputs", []))


def _hand_in(bundle: Path, python: Path, tmp: Path, name: str, files: dict[str, str], which: str) -> Path:
    """A copy of the bundle with ``files`` in lab 2's folder; its English notebook run headless
    (``which``: all of it, or only the first and last cells); the zip its hand-in cell wrote."""
    lab = labs.get(LAB)
    copy = tmp / name / "iron-law-labs"
    shutil.copytree(bundle, copy)
    lab_dir = copy / "assignments" / lab.name
    for f, text in files.items():
        (lab_dir / f).write_text(text)
    nb_file = lab_dir / f"{lab.name}.ipynb"
    driver = tmp / "driver.py"
    driver.write_text(DRIVER)
    proc = _run(python, lab_dir, tmp, str(driver), str(nb_file), which)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    dest = lab_dir / f"{lab.name}-submission.zip"
    assert dest.is_file(), proc.stderr[-2000:]
    last = _text(nbformat.read(nb_file, as_version=4).cells[-1])
    assert f"wrote {dest}" in last and "could not make Jupyter save" not in last, last
    return dest


def test_the_lab2_notebook_hands_in_from_the_bundle_and_its_zip_grades(bundle, student_python, tmp_path):
    lab = labs.get(LAB)
    bare = _run(student_python, tmp_path, tmp_path, "-c", "import autograder")
    assert "No module named 'autograder'" in bare.stderr, "the student's venv must not hold this project"
    reference = {f: (lab.solution_dir / f).read_text() for f in lab.manifest.student_files}
    ref = _hand_in(bundle, student_python, tmp_path, "ref", reference, "all")
    stub = _hand_in(bundle, student_python, tmp_path, "stub", stubs.texts(lab), "first-and-last")

    with zipfile.ZipFile(ref) as z:
        names = z.namelist()
        nb = nbformat.reads(z.read(f"{lab.name}.ipynb").decode(), as_version=4)
        manifest = json.loads(z.read("MANIFEST.json"))
    predictions = ["predictions.json"] if lab.manifest.predictions else []  # the notebook's guesses (docs/predictions.md)
    assert sorted(names) == sorted(["MANIFEST.json", f"{lab.name}.ipynb", *lab.manifest.student_files, *predictions])
    code = [c for c in nb.cells if c.cell_type == "code"]
    checks = [_text(c) for c in code if c.source.startswith("grader.check(")]
    assert len(checks) == len(lab.manifest.tested) and all("All test cases passed" in t for t in checks), checks
    assert sum(bool(c.get("outputs")) for c in code) > len(code) // 2, "the student's notebook, run, with its outputs"
    assert manifest["public_tests"] == {"passed": PUBLIC, "total": PUBLIC}
    assert {f["name"] for f in manifest["files"]} == set(names) - {"MANIFEST.json"}

    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(ref, subs / "reference.zip")
    shutil.copy(stub, subs / "stub.zip")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(labs.ROOT_ENV, str(REPO))
        assert main(["grade", LAB, str(subs), "--out", str(tmp_path / "grades")]) == 0
    rows = {r["submission"]: r for r in csv.DictReader(open(tmp_path / "grades" / "gradebook.csv",
                                                            encoding="utf-8-sig"))}
    assert (rows["reference"]["score"], rows["reference"]["max_score"]) == (str(TESTED), str(MAX))
    assert rows["stub"]["score"] == "0"


def test_check_and_submit_run_in_the_bundle_and_no_test_run_is_an_error(bundle, student_python, tmp_path):
    copy = tmp_path / "iron-law-labs"
    shutil.copytree(bundle, copy)
    grade = _run(student_python, copy, tmp_path, "-m", "autograder", "grade", LAB, ".", "--out", "g")
    assert grade.returncode == 2 and "is not in this student bundle" in grade.stderr, grade.stderr
    check = _run(student_python, copy, tmp_path, "-m", "autograder", "check", LAB)
    assert check.returncode == 1, check.stdout + check.stderr  # the stubs fail; every public test ran
    assert "✗ test_update_rules_five_steps" in check.stdout and "0 of 1 possible" in check.stdout, check.stdout
    assert f"{PUBLIC} of {PUBLIC} public tests failed" in check.stdout
    submit = _run(student_python, copy, tmp_path, "-m", "autograder", "submit", LAB, "--out", "s.zip")
    assert submit.returncode == 0 and f"{PUBLIC} of {PUBLIC} public tests fail" in submit.stdout, submit.stdout + submit.stderr
    assert "was never run: it is the one handed out" in submit.stdout.replace("\n", " ")
    with zipfile.ZipFile(copy / "s.zip") as z:  # the bundle's own notebooks are not the student's
        assert z.namelist() == ["MANIFEST.json", "accumulation.py", "optimizers.py"]

    shutil.rmtree(copy / "assignments" / labs.get(LAB).name / "tests")  # nothing to run
    for command in ("check", "submit"):
        proc = _run(student_python, copy, tmp_path, "-m", "autograder", command, LAB, *(
            ["--out", "none.zip"] if command == "submit" else []))
        assert proc.returncode == 2 and "did not run" in proc.stdout, (command, proc.stdout + proc.stderr)
    assert not (copy / "none.zip").exists()
