"""Otter-grader: generated test files, the notebook's first cell, the otter zip, and ``otter run``.

The otter tests call the public pytest tests (one source of truth), so their
committed copies must be exactly what ``autograder otter-tests`` writes.  The
zip must be self-contained: ``otter run`` in a venv holding only otter-grader
and Colab-like packages (not this project) gives the reference the lab's
points and the stub zero (docs/otter.md).
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
from autograder.authoring import otter

LABS = labs.all_labs()
REPO = Path(__file__).resolve().parents[3]

def run_otter_test(lab, question: str):
    """Run the committed otter test of ``question`` against the current folder, as grader.check does."""
    test = create_test_file(str(lab.assignment_dir / otter.TESTS_DIR / f"{question}.py"), NBMetadataConfig())
    test.run({})
    return test


@pytest.fixture(scope="module")
def once():
    """``once(fn, lab)``: ``fn(lab)``, computed once in this module for the tests that read it
    (``otter.test_files`` and ``otter.otter_points`` each collect the lab's public tests)."""
    done = {}

    def once(fn, lab):
        if (fn, lab.name) not in done:
            done[fn, lab.name] = fn(lab)
        return done[fn, lab.name]

    return once


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_committed_otter_tests_match_generation(lab, once):
    folder = lab.assignment_dir / otter.TESTS_DIR
    committed = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.py")}
    assert committed == once(otter.test_files, lab), f"run `autograder otter-tests {lab.short}` and commit the result"


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


def test_autoreload_skips_installed_modules_and_never_a_labs(tmp_path):
    """Modules in a folder named site-packages or dist-packages (or the standard library) are not
    reloaded; a lab's module is, whatever its folder's name contains."""
    skip = notebook._SkipInstalled(shell=None)
    assert skip._installed(os.__file__) and skip._installed("/opt/venv/lib/python3.11/site-packages/torch/x.py")
    assert skip._installed("/usr/lib/python3/dist-packages/numpy/core.py")
    for lab in ("my-site-packages-notes/lab1", "dist-packages-course/lab2", "site-packages.old/lab3"):
        assert not skip._installed(str(tmp_path / lab / "flops.py")), lab


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
    shutil.copy(lab.root / "assignments" / "chapter.toml", bundle / "assignments")  # as the bundle has it
    (bundle / "autograder").symlink_to(Path(notebook.__file__).parents[1])
    nb = nbformat.read(lab.assignment_dir / f"{lab.name}.ipynb", as_version=4)
    setup = next(c.source for c in nb.cells if c.cell_type == "code" and "locate_bundle" in c.source)
    script = setup + "\nprint('CWD', os.getcwd())\nprint('CHECK', grader.check('update_rules').passed_all)\n"
    site = next(p for p in sys.path if p.endswith("site-packages"))
    env = {**os.environ, "PYTHONPATH": site}
    env.pop("IRONLAW_ROOT", None)
    proc = subprocess.run([sys.executable, "-S", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)  # a hang guard: seconds, minutes on a loaded machine
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"CWD {bundle / 'assignments' / lab.name}" in proc.stdout
    assert "CHECK False" in proc.stdout  # the stubs fail their public tests


# -- the zip -----------------------------------------------------------------------------
OTTER_LAB = "lab3"  # the quickest under `otter run`: about 13 s for the reference, 11 s for the stub
ENGINE = Path(notebook.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def otter_zip(tmp_path_factory) -> Path:
    return otter.build_zip(labs.get(OTTER_LAB), tmp_path_factory.mktemp("otter") / "autograder.zip")


def _pip_lines(environment_yml: str) -> list[str]:
    import yaml

    deps = yaml.safe_load(environment_yml)["dependencies"]
    return next(d["pip"] for d in deps if isinstance(d, dict))


def test_the_zip_carries_the_engine_its_tests_import_and_their_requirements(otter_zip, tmp_path):
    from autograder.authoring import release

    lab = labs.get(OTTER_LAB)
    with zipfile.ZipFile(otter_zip) as z:
        names = set(z.namelist())
        read = lambda n: z.read(n).decode()  # noqa: E731
        engine = {n.removeprefix(f"{otter.ENGINE_DIR}/") for n in names if n.startswith(f"{otter.ENGINE_DIR}/autograder/")}
        assert engine == set(release.engine_files(ENGINE)), "the engine modules `autograder release` ships, no other"
        assert "autograder/grading/notebook.py" in engine and not {n for n in engine if "/batch/" in n or "/authoring/" in n}
        assert {f"{otter.ENGINE_DIR}/{f}" for f in lab.manifest.support_files} <= names
        assert {f"tests/{q}.py" for q in otter.otter_points(lab)} <= names
        assert "[[variants" not in read(f"{otter.ZIP_LAB_ROOT}/assignments/{lab.name}/lab.toml")
        assert f"{otter.ZIP_LAB_ROOT}/assignments/{lab.name}/locale/vi.po" in names  # a notebook in Vietnamese
        assert f"{otter.ZIP_LAB_ROOT}/assignments/chapter.toml" in names  # the outline the manifest is checked against
        reqs = read(otter.REQUIREMENTS).splitlines()
        pip = _pip_lines(read("environment.yml"))
        config = json.loads(read("otter_config.json"))
    assert pip == [f"otter-grader[grading,plugins]=={otter_version()}", *reqs], "environment.yml installs them"
    assert set(reqs) <= set((REPO / "requirements.lock").read_text().splitlines()), "pinned as the lock pins them"
    assert "torch==2.13.0" in reqs
    assert {"numpy", "torch", "pytest", "pytest-timeout", "babel", "matplotlib"} <= {r.split("==")[0].lower() for r in reqs}
    # no "Public Tests" row without a score above the questions (NaN NaN in otter run's table)
    assert config["show_hidden"] and not config["force_public_test_summary"] and config["show_all_public"]
    again = otter.build_zip(lab, tmp_path / "again.zip")
    assert again.read_bytes() == otter_zip.read_bytes(), "the zip must be reproducible"


def otter_version() -> str:
    from otter.version import __version__

    return __version__


def test_torch_index_goes_into_the_requirements(tmp_path, monkeypatch, capsys, once):
    from autograder.cli import main

    url = "https://torch-cpu.example.invalid/whl"
    monkeypatch.setenv("TORCH_INDEX_URL", url)  # as for the Gradescope zip's setup.sh
    assert main(["otter", OTTER_LAB, "--out", str(tmp_path / "a.zip")]) == 0
    points = sum(once(otter.otter_points, labs.get(OTTER_LAB)).values())  # every question's lab.toml points
    assert f"{points:g} otter point(s)" in capsys.readouterr().out
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        assert z.read(otter.REQUIREMENTS).decode().splitlines()[0] == f"--extra-index-url {url}"
        assert f"--extra-index-url {url}" in _pip_lines(z.read("environment.yml").decode())


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_otter_points_are_the_lab_points_of_the_tested_questions(lab, once):
    """A question marked by hand (lab 1's rent_or_buy_memo) has no otter test; every other
    question of the real labs has public tests, so it is worth its lab.toml points."""
    assert once(otter.otter_points, lab) == {q.id: q.points for q in lab.manifest.tested}
    assert set(once(otter.test_files, lab)) == {f"{q.id}.py" for q in lab.manifest.tested}


def test_otter_points_of_a_question_without_public_tests_or_marked_by_hand(toy_root):
    manifest = toy_root / "assignments" / "labx_toy" / "lab.toml"
    manifest.write_text(manifest.read_text().replace('[[variants]]', '[[questions]]\nid = "essay"\n'
                        'title = "Say why"\npoints = 4\nmanual = true\n\n[[variants]]', 1))
    lab = labs.get("labx_toy", toy_root)
    assert [q.id for q in lab.manifest.manual] == ["essay"]
    assert otter.otter_points(lab) == {"add": 3.0, "norm": 0.0}  # norm: no public test, grader.check only imports


# -- otter run, in an environment without this project ---------------------------------------
# What a course's machine or Colab has: otter-grader and Colab's packages (pytest-timeout, rich
# and this project not among them), at requirements.lock's pins.
CLEAN_PACKAGES = ("otter-grader", "numpy", "torch", "matplotlib", "pytest", "ipykernel")


def _tail(proc: subprocess.CompletedProcess) -> str:
    return (proc.stdout or "")[-1500:] + (proc.stderr or "")[-1500:]


@pytest.fixture(scope="session")
def clean_python(tmp_path_factory, linked_venv) -> Path:
    """A venv with only CLEAN_PACKAGES and what they need, at requirements.lock's pins,
    linked from this one (``linked_venv``: seconds, offline; this project not in it)."""
    return linked_venv(tmp_path_factory.mktemp("otter-venv"), CLEAN_PACKAGES)


def _clean_env(python: Path, tmp: Path) -> dict[str, str]:
    """This process's environment without anything that leads to this project or its venv."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUPYTER_PATH", "PYTHONDONTWRITEBYTECODE", labs.ROOT_ENV}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["JUPYTER_DATA_DIR"] = str(tmp / "jupyter")  # no kernel spec from the user's folder: this venv's python3
    return env


def otter_run(python: Path, autograder_zip: Path, submission: Path, out: Path) -> tuple[dict, str]:
    """``otter run`` in the clean venv: (question -> (score, max), its stdout); asserts a sane run."""
    out.mkdir()
    proc = subprocess.run([str(python), "-m", "otter", "run", "-a", str(autograder_zip), "-o", str(out), "--no-logo",
                           str(submission)], cwd=out, env=_clean_env(python, out), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, _tail(proc)
    tests = json.loads((out / "results.json").read_text())["tests"]
    assert all("max_score" in t for t in tests), [t["name"] for t in tests]  # no "Public Tests" row
    assert not [t["name"] for t in tests if "No module named" in t.get("output", "")], "the zip lacks a module"
    assert "NaN" not in proc.stdout, proc.stdout[-2000:]
    return {t["name"]: (t["score"], t["max_score"]) for t in tests}, proc.stdout


def test_otter_run_without_the_project_gives_the_reference_full_marks_and_the_stub_zero(
        clean_python, otter_zip, tmp_path):
    from autograder.core import stubs

    lab = labs.get(OTTER_LAB)
    bare = subprocess.run([str(clean_python), "-c", "import autograder"], env=_clean_env(clean_python, tmp_path),
                          cwd=tmp_path, capture_output=True, text=True)
    assert "No module named 'autograder'" in bare.stderr, "the clean venv must not hold this project"
    points = {q.id: q.points for q in lab.manifest.tested}
    total = sum(points.values())
    reference = {f: (lab.solution_dir / f).read_text() for f in lab.manifest.student_files}
    got, stdout = otter_run(clean_python, otter_zip, otter.submission_zip(lab, reference, tmp_path / "ref.zip"),
                            tmp_path / "ref")
    assert got == {q: (p, p) for q, p in points.items()}
    assert f"Total Score: {total:.3f} / {total:.3f} (100.000%)" in stdout
    got, stdout = otter_run(clean_python, otter_zip, otter.submission_zip(lab, stubs.texts(lab), tmp_path / "stub.zip"),
                            tmp_path / "stub")
    assert got == {q: (0, p) for q, p in points.items()}
    assert f"Total Score: 0.000 / {total:.3f} (0.000%)" in stdout


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
