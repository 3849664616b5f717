"""Otter-grader: generated test files, the notebook's first cell, and ``otter run``.

The otter tests call the public pytest tests (one source of truth), so their
committed copies must be exactly what ``autograder otter-tests`` writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from otter.nbmeta_config import NBMetadataConfig
from otter.test_files import create_test_file

from autograder.core import labs
from autograder.grading import notebook
from autograder.build import otter

LABS = labs.all_labs()
OTTER_LAB = "lab4"  # the quickest notebook: `otter run` executes it whole


def run_otter_test(lab, question: str):
    """Run the committed otter test of ``question`` against the current folder, as grader.check does."""
    test = create_test_file(str(lab.assignment_dir / otter.TESTS_DIR / f"{question}.py"), NBMetadataConfig())
    test.run({})
    return test


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_committed_otter_tests_match_generation(lab):
    folder = lab.assignment_dir / otter.TESTS_DIR
    committed = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.py")}
    assert committed == otter.test_files(lab), f"run `autograder otter-tests {lab.short}` and commit the result"


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_first_check_fails_on_the_stub_and_passes_on_the_reference(lab, monkeypatch):
    first = lab.manifest.questions[0].id
    monkeypatch.chdir(lab.assignment_dir)  # the stubs, as a student gets them
    stub = run_otter_test(lab, first)
    assert not stub.passed_all
    assert f"public tests of {first!r} failed" in stub.summary() and "not implemented" in stub.summary()
    monkeypatch.chdir(lab.solution_dir)
    assert run_otter_test(lab, first).passed_all


# -- finding the bundle (offline) ------------------------------------------------------
def make_lab(root: Path, lab: str = "labx_toy", module: str = "mod") -> Path:
    d = root / "assignments" / lab
    d.mkdir(parents=True)
    (d / "lab.toml").write_text("")
    (d / f"{module}.py").write_text("")
    return d


def test_find_lab_dir_prefers_the_current_folder(tmp_path):
    (tmp_path / "mod.py").write_text("")
    make_lab(tmp_path / notebook.BUNDLE_DIR)
    assert notebook.find_lab_dir("labx_toy", "mod", cwd=tmp_path, environ={}) == tmp_path


def test_find_lab_dir_uses_the_environment_then_a_sibling_bundle(tmp_path):
    named = make_lab(tmp_path / "somewhere")
    sibling = make_lab(tmp_path / "work" / notebook.BUNDLE_DIR)
    cwd = tmp_path / "work"
    env = {"IRONLAW_ROOT": str(tmp_path / "somewhere")}
    assert notebook.find_lab_dir("labx_toy", "mod", cwd=cwd, environ=env) == named.resolve()
    assert notebook.find_lab_dir("labx_toy", "mod", cwd=cwd, environ={}) == sibling.resolve()
    assert notebook.find_lab_dir("labx_toy", "other", cwd=cwd, environ={}) is None


def test_locate_bundle_moves_to_the_lab_or_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("IRONLAW_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="IRONLAW_ROOT") as err:
        notebook.locate_bundle("labx_toy", "mod")
    assert f"-d {notebook.BUNDLE_DIR}" in str(err.value)  # the unzip / pip install lines
    lab_dir = make_lab(tmp_path / notebook.BUNDLE_DIR)
    assert notebook.locate_bundle("labx_toy", "mod") == lab_dir.resolve()
    assert Path.cwd() == lab_dir.resolve() and str(lab_dir.resolve()) in sys.path


def test_setup_cell_finds_an_uninstalled_bundle_beside_the_notebook(tmp_path):
    """The Colab case: the notebook alone in a folder, the bundle unpacked next to it
    and not installed.  Python runs without site (so the editable install is invisible)."""
    lab = labs.get("lab2")
    bundle = tmp_path / notebook.BUNDLE_DIR
    shutil.copytree(lab.assignment_dir, bundle / "assignments" / lab.name)
    (bundle / "autograder").symlink_to(Path(notebook.__file__).parents[1])
    nb = nbformat.read(lab.assignment_dir / f"{lab.name}.ipynb", as_version=4)
    setup = next(c.source for c in nb.cells if c.cell_type == "code" and "locate_bundle" in c.source)
    script = setup + "\nprint('CWD', os.getcwd())\nprint('CHECK', grader.check('update_rules').passed_all)\n"
    site = next(p for p in sys.path if p.endswith("site-packages"))
    env = {**os.environ, "PYTHONPATH": site}
    env.pop("IRONLAW_ROOT", None)
    proc = subprocess.run([sys.executable, "-S", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"CWD {bundle / 'assignments' / lab.name}" in proc.stdout
    assert "CHECK False" in proc.stdout  # the stubs fail their public tests


# -- otter run -------------------------------------------------------------------------
def submission_zip(path: Path, lab, code_dir: Path) -> Path:
    """What a student uploads to otter: the notebook and their modules, side by side."""
    with zipfile.ZipFile(path, "w") as z:
        z.write(lab.assignment_dir / f"{lab.name}.ipynb", f"{lab.name}.ipynb")
        for f in lab.manifest.student_files:
            z.write(code_dir / f, f)
    return path


def otter_score(autograder_zip: Path, submission: Path, out: Path) -> tuple[float, float]:
    out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "otter", "run", "-a", str(autograder_zip), "-o", str(out),
                           "--no-logo", str(submission)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    tests = [t for t in json.loads((out / "results.json").read_text())["tests"] if "max_score" in t]
    return sum(t["score"] for t in tests), sum(t["max_score"] for t in tests)


def test_otter_run_gives_the_reference_full_marks_and_the_stub_zero(tmp_path):
    lab = labs.get(OTTER_LAB)
    ag = otter.build_zip(lab, tmp_path / "autograder.zip")
    public = sum(otter.public_points(lab).values())
    ref = otter_score(ag, submission_zip(tmp_path / "ref.zip", lab, lab.solution_dir), tmp_path / "ref")
    assert ref == (public, public)
    stub = otter_score(ag, submission_zip(tmp_path / "stub.zip", lab, lab.assignment_dir), tmp_path / "stub")
    assert stub == (0, public)


# -- a question without public tests (the toy lab has two) ------------------------------------
def test_check_without_public_tests_only_imports(toy_root, tmp_path, capsys):
    code = toy_root / "assignments" / "labx_toy"
    with pytest.raises(AssertionError, match="public tests of 'add' failed"):
        notebook.check("labx_toy", "add", code_dir=code, root=toy_root)
    notebook.check("labx_toy", "norm", code_dir=code, root=toy_root)  # the stub imports: nothing to fail
    assert "no public test" in capsys.readouterr().out
    (tmp_path / "toy.py").write_text("def add(:\n")
    with pytest.raises(AssertionError, match="importing toy.py failed"):
        notebook.check("labx_toy", "norm", code_dir=tmp_path, root=toy_root)
