"""`autograder release`: the real bundle holds no reference code or hidden test, `check` and
`submit` work in it with nothing installed and no solutions/, and a planted leak is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.core import labs
from autograder.authoring import leakscan
from autograder.cli import main

REPO = Path(__file__).resolve().parents[3]
STUDENT_COMMANDS = {"autograder/commands/__init__.py", "autograder/commands/check.py", "autograder/commands/submit.py"}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "student"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRONLAW_ROOT", str(REPO))
        assert main(["release", "--out", str(out)]) == 0
    return out


def _tree(folder: Path) -> dict[str, bytes]:
    return leakscan.read_tree(folder)


def test_bundle_holds_no_reference_code(bundle):
    files = _tree(bundle)
    assert not [n for n in files if n.split("/")[0] in ("solutions", "tests", "examples", "benchmarks", ".git")]
    secret = [p for p in (REPO / "solutions").rglob("*") if p.is_file()]
    secret += [p for lab in labs.all_labs(REPO) for p in lab.hidden_tests_dir.rglob("*") if p.is_file()]
    assert len(secret) > 20
    shipped = set(files.values())
    assert not [p for p in secret if p.read_bytes() in shipped and p.stat().st_size > 0]
    assert leakscan.scan(files, leakscan.collect_secrets(REPO)) == []
    for lab in labs.all_labs(REPO):  # everything a student needs, per lab
        a = f"assignments/{lab.name}"
        need = {f"{a}/lab.toml", f"{a}/{lab.name}.ipynb", f"{a}/{lab.name}.vi.ipynb", f"{a}/tests/test_public.py",
                f"{a}/locale/vi.po",
                *(f"{a}/{f}" for f in lab.manifest.student_files + lab.manifest.support_files)}
        assert need <= set(files), need - set(files)
        assert any(n.startswith(f"{a}/tests/snapshots/") for n in files)


def test_student_half_of_the_engine(bundle):
    files = _tree(bundle)
    assert {"autograder/commands/check.py", "autograder/commands/submit.py", "autograder/labkit/plugin.py",
            "autograder/sandbox/zygote.py", "environment.yml", "requirements.lock", "pyproject.toml",
            "LICENSE"} <= set(files)
    engine = [n for n in files if n.startswith("autograder/")]
    assert not [n for n in engine if n.split("/")[1] in ("batch", "authoring")], "the instructors' folders never ship"
    assert {n for n in engine if n.startswith("autograder/commands/")} == STUDENT_COMMANDS
    assert "assignments/course.toml" in files and "assignments/chapter.toml" in files
    readme = files["README.md"].decode()
    for phrase in ("python3 -m venv .venv", 'pip install -c requirements.lock -e ".[dev]"', "autograder check lab2",
                   "autograder submit lab2", "hidden tests run at grading"):
        assert phrase in readme
    vietnamese = readme.split("## Tiếng Việt", 1)[1]  # the same two set-up commands, in a Vietnamese section
    assert "python3 -m venv .venv" in vietnamese and 'pip install -c requirements.lock -e ".[dev]"' in vietnamese
    assert "autograder check lab2 --lang vi" in vietnamese and "sổ tay thực hành" in vietnamese
    assert "autograder/core/locale/vi.po" in files


def test_the_shipped_engine_imports_only_what_ships(bundle):
    """Every engine import in a shipped module (lazy ones inside functions too)
    names a module that is in the bundle: the folders are self-contained."""
    import ast

    files = [n for n in _tree(bundle) if n.startswith("autograder/") and n.endswith(".py")]
    shipped = {n[:-3].replace("/", ".").removesuffix(".__init__") for n in files}
    packages = {n[:-len("/__init__.py")].replace("/", ".") for n in files if n.endswith("/__init__.py")}
    defined = {pkg: {t.id for n in ast.parse((bundle / pkg.replace(".", "/") / "__init__.py").read_text()).body
                     for t in (n.targets if isinstance(n, ast.Assign) else [n]) if isinstance(t, ast.Name)}
               | {n.name for n in ast.parse((bundle / pkg.replace(".", "/") / "__init__.py").read_text()).body
                  if isinstance(n, (ast.FunctionDef, ast.ClassDef))} for pkg in packages}
    missing = []
    for path in sorted((bundle / "autograder").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            wanted = []
            if isinstance(node, ast.Import):
                wanted = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                wanted = [node.module]  # and each name is a shipped module, or defined in the package's __init__
                wanted += [f"{node.module}.{a.name}" for a in node.names if node.module in packages
                           and a.name not in defined[node.module]]
            missing += [f"{path.relative_to(bundle)}: {n}" for n in wanted
                        if n.split(".")[0] == "autograder" and n not in shipped]
    assert not missing, missing


def test_bundle_catalogs_hold_only_shipped_messages(bundle):
    """A lab's catalog in the bundle keeps the public tests' messages and the titles,
    not those only the hidden tests use."""
    from babel.messages.pofile import read_po

    from autograder.authoring import catalogs

    withheld = 0
    for lab in labs.all_labs(REPO):
        with open(bundle / "assignments" / lab.name / "locale" / "vi.po", "rb") as f:
            shipped = {m.id for m in read_po(f) if m.id}
        with open(lab.assignment_dir / "locale" / "vi.po", "rb") as f:
            full = {m.id for m in read_po(f) if m.id}
        hidden_only = set(catalogs.extract(catalogs.Domain(lab.name, REPO, (lab.hidden_tests_dir,)))) - \
            set(catalogs.extract(catalogs.Domain(lab.name, REPO, (lab.assignment_dir,), lab)))
        assert lab.manifest.title in shipped and shipped <= full
        assert not (shipped & hidden_only), sorted(shipped & hidden_only)[:5]
        withheld += len(full - shipped)
    assert withheld > 20, "the hidden tests' own messages stay out of the bundle"


def test_reproducible(bundle, student_bundle):
    """Two builds of the bundle hold the same bytes: this module's (``autograder release``) and the
    session's (``student_bundle``, conftest.py: ``release.build``, the same build without the CLI's
    leak scan; made once for the files that use it, maybe in another process)."""
    assert _tree(student_bundle) == _tree(bundle)


def _in_bundle(bundle: Path, *args: str) -> subprocess.CompletedProcess:
    """python inside the bundle, with nothing installed from it (PYTHONPATH only)."""
    env = {**os.environ, "IRONLAW_ROOT": str(bundle), "PYTHONPATH": str(bundle), "COLUMNS": "250"}
    return subprocess.run([sys.executable, *args], cwd=bundle, env=env, capture_output=True, text=True,
                          timeout=300)


def test_check_and_submit_work_in_the_bundle(bundle, tmp_path):
    where = _in_bundle(bundle, "-c", "import autograder; print(autograder.__file__)")
    assert Path(where.stdout.strip()).parent == bundle / "autograder", "the bundle's engine, not the repository's"
    grade = _in_bundle(bundle, "-m", "autograder", "grade", "lab2", ".", "--out", "g")
    assert grade.returncode == 2 and "`autograder grade` is not in this student bundle" in grade.stderr, grade.stderr
    listed = _in_bundle(bundle, "-m", "autograder", "--help").stdout.split("Commands:", 1)[1]
    assert [line.split()[0] for line in listed.strip().splitlines()] == ["check", "submit"], listed
    check = _in_bundle(bundle, "-m", "autograder", "check", "lab2")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "not implemented yet" in check.stdout and "hidden tests run at grading" in check.stdout
    check_vi = _in_bundle(bundle, "-m", "autograder", "check", "lab2", "--lang", "vi")
    assert check_vi.returncode == 1 and "chưa được cài đặt" in check_vi.stdout, check_vi.stdout + check_vi.stderr
    out = tmp_path / "lab2.zip"
    submit = _in_bundle(bundle, "-m", "autograder", "submit", "lab2", "--out", str(out))
    assert submit.returncode == 0, submit.stdout + submit.stderr
    assert "WARNING" in submit.stdout
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == ["MANIFEST.json", "accumulation.py", "optimizers.py"]


def test_one_lab_released_alone(tmp_path, monkeypatch, capsys):
    """A course that hands out one lab at a time: `autograder release lab1` ships lab 1 only."""
    monkeypatch.setenv("IRONLAW_ROOT", str(REPO))
    out = tmp_path / "lab1-only"
    assert main(["release", "lab1", "--out", str(out)]) == 0
    assert "1 lab(s) (lab1_iron_law)" in capsys.readouterr().out
    assert sorted(p.name for p in (out / "assignments").iterdir() if p.is_dir()) == ["lab1_iron_law"]
    readme = (out / "README.md").read_text()
    assert "lab1_iron_law" in readme and "lab2_optimizers" not in readme
    assert main(["release", "lab9", "--out", str(tmp_path / "none")]) == 2
    assert "no lab 'lab9'" in capsys.readouterr().err and not (tmp_path / "none").exists()


# -- on the toy project: a planted leak is refused ---------------------------
@pytest.fixture
def toy_project(toy_root) -> Path:
    for name in ("pyproject.toml", "environment.yml", "requirements.lock"):
        shutil.copy(REPO / name, toy_root / name)
    return toy_root


def _release_refused(tmp_path, capsys, needle: str) -> str:
    out = tmp_path / "bundle"
    assert main(["release", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "REFUSED" in err and needle in err, err
    assert not out.exists() and not list(tmp_path.glob(".bundle-*")), "a refused release writes nothing"
    return err


def test_toy_release_is_clean(toy_project, tmp_path, capsys):
    assert main(["release", "--out", str(tmp_path / "bundle")]) == 0
    assert "leak scan clean" in capsys.readouterr().out
    assert (tmp_path / "bundle" / "assignments" / "labx_toy" / "toy.py").exists()


REF_LINE = "    return float(np.sqrt(np.sum(np.asarray(x, dtype=np.float64) ** 2)))\n"


def test_the_bundle_takes_the_stub_from_its_reference_not_from_the_disk(toy_project, tmp_path, capsys):
    from autograder.core import stubs
    from autograder.core import labs

    stub = toy_project / "assignments" / "labx_toy" / "toy.py"
    lines = stub.read_text().splitlines(keepends=True)
    stub.write_text("".join(lines[:-1] + [REF_LINE] + lines[-1:]))  # a stub on disk edited by hand
    assert main(["release", "--out", str(tmp_path / "bundle")]) == 0
    shipped = (tmp_path / "bundle" / "assignments" / "labx_toy" / "toy.py").read_text()
    assert shipped == stubs.texts(labs.get("labx", toy_project))["toy.py"] and REF_LINE not in shipped


def test_reference_line_planted_in_a_shipped_file(toy_project, tmp_path, capsys):
    helper = toy_project / "assignments" / "labx_toy" / "tests" / "helpers.py"
    helper.write_text("import numpy as np\n\n\ndef norm(x):\n" + REF_LINE)
    err = _release_refused(tmp_path, capsys, "assignments/labx_toy/tests/helpers.py:5")
    assert "solutions/labx_toy/toy.py:" in err


def test_hidden_test_line_and_whole_file(toy_project, tmp_path, capsys):
    lab = toy_project / "assignments" / "labx_toy"
    (lab / "notes.md").write_text("Try:\n\n    x = rng.normal(size=7)\n    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))\n")
    from autograder.core import stubs  # the reference without its solution markers: still the reference

    (lab / "toy_solution.py").write_text(stubs.unmarked((toy_project / "solutions" / "labx_toy" / "toy.py").read_text()))
    err = _release_refused(tmp_path, capsys, "assignments/labx_toy/notes.md:4")
    assert "tests/labx_toy/test_toy.py:8" in err
    assert "assignments/labx_toy/toy_solution.py: identical to solutions/labx_toy/toy.py" in err


def test_refuses_a_non_empty_folder(toy_project, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("keep me")
    assert main(["release", "--out", str(tmp_path / "full")]) == 2
    assert (tmp_path / "full" / "mine.txt").read_text() == "keep me"


def test_refuses_without_the_environment_files(toy_root, tmp_path, capsys):
    assert main(["release", "--out", str(tmp_path / "bundle")]) == 2
    assert "environment.yml, requirements.lock, pyproject.toml" in capsys.readouterr().err
    assert not (tmp_path / "bundle").exists()


def test_released_manifests_hide_the_variants(bundle):
    for lab in labs.all_labs():
        text = (bundle / "assignments" / lab.name / "lab.toml").read_text()
        assert "[[variants]]" not in text
        released = labs.Lab(bundle, lab.name).manifest
        assert released.questions == lab.manifest.questions and released.variants == ()
