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
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.core import stubs
from autograder.cli import main
from autograder.core import labs

REPO = Path(__file__).resolve().parents[3]
LAB = "lab2"
MAX = 51  # lab 2's points (lab.toml)
TESTED = 48  # of them, the tested ones: a headless run answers no prediction, and the reflections are marked by hand
PUBLIC = 11  # lab 2's public tests, one per tested question


# The bundle, the student's venv (``student_bundle``, ``student_python``, ``student_run``) and the
# notebook's run and hand-in (``hand_in``) are made once per session in conftest.py: the
# reference's run is the one test_notebooks.py checks headless for lab 2 in English.


def _text(cell) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") + "".join(o.get("traceback", []))
                   for o in cell.get("outputs", []))


def test_the_lab2_notebook_hands_in_from_the_bundle_and_its_zip_grades(hand_in, student_run, tmp_path):
    lab = labs.get(LAB)
    bare = student_run(tmp_path, tmp_path, "-c", "import autograder")
    assert "No module named 'autograder'" in bare.stderr, "the student's venv must not hold this project"
    reference = {f: (lab.solution_dir / f).read_text() for f in lab.manifest.student_files}
    ref = hand_in(LAB, reference, "all")
    stub = hand_in(LAB, stubs.texts(lab), "first-and-last")

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


def test_check_and_submit_run_in_the_bundle_and_no_test_run_is_an_error(student_bundle, student_run, tmp_path):
    copy = tmp_path / "iron-law-labs"
    shutil.copytree(student_bundle, copy)
    grade = student_run(copy, tmp_path, "-m", "autograder", "grade", LAB, ".", "--out", "g")
    assert grade.returncode == 2 and "is not in this student bundle" in grade.stderr, grade.stderr
    check = student_run(copy, tmp_path, "-m", "autograder", "check", LAB)
    assert check.returncode == 1, check.stdout + check.stderr  # the stubs fail; every public test ran
    assert "✗ test_update_rules_five_steps" in check.stdout and "0 of 1 possible" in check.stdout, check.stdout
    assert f"{PUBLIC} of {PUBLIC} public tests failed" in check.stdout
    submit = student_run(copy, tmp_path, "-m", "autograder", "submit", LAB, "--out", "s.zip")
    assert submit.returncode == 0 and f"{PUBLIC} of {PUBLIC} public tests fail" in submit.stdout, submit.stdout + submit.stderr
    assert "was never run: it is the one handed out" in submit.stdout.replace("\n", " ")
    with zipfile.ZipFile(copy / "s.zip") as z:  # the bundle's own notebooks are not the student's
        assert z.namelist() == ["MANIFEST.json", "accumulation.py", "optimizers.py"]

    shutil.rmtree(copy / "assignments" / labs.get(LAB).name / "tests")  # nothing to run
    for command in ("check", "submit"):
        proc = student_run(copy, tmp_path, "-m", "autograder", command, LAB, *(
            ["--out", "none.zip"] if command == "submit" else []))
        assert proc.returncode == 2 and "did not run" in proc.stdout, (command, proc.stdout + proc.stderr)
    assert not (copy / "none.zip").exists()
