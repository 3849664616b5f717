"""A notebook alone on Colab sets itself up: its first cell downloads the student bundle,
installs only what Colab lacks, and the whole notebook runs, every ``grader.check`` answering,
in the notebook's language with no setting.

"Colab" here is a fresh venv that sees only what Colab preinstalls (numpy, torch, matplotlib,
pytest, ipykernel; nbclient to run the notebook), nothing of this project, no otter: the
distributions of those packages and their dependencies are linked, read-only, from this
project's venv, at requirements.lock's pins (a ``.pth`` file names the folder of links; pip
sees them as installed and never writes there).  Linking instead of installing keeps the test
at about a minute: installing torch alone takes two.  The bundle comes from a ``file://``
address written into the notebook when it was built, as ``autograder release`` writes the
course's; what the cell installs comes from the package registry (pip, as on Colab), so the
test is skipped when no registry answers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.authoring import notebooks, release
from autograder.core import stubs
from autograder.core import i18n, labs
from autograder.grading import notebook

REPO = Path(__file__).resolve().parents[3]
COLAB = ("pip", "numpy", "torch", "matplotlib", "pytest", "ipykernel", "nbclient")  # what Colab has (and the test's runner)
LAB, LANG = "lab4", "vi"  # the quickest notebook, in the language that is not the default


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    """Skip unless pip reaches a package registry (what the cell installs comes from there)."""
    probe = tmp_path_factory.mktemp("probe")
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(probe),
                           "-c", str(REPO / "requirements.lock"), "otter-grader"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode:
        pytest.skip(f"no package registry reachable (pip download otter-grader): {proc.stderr[-300:]}")


DRIVER = """\
import json, sys, time
import nbformat
from nbclient import NotebookClient

path, folder = sys.argv[1:3]
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, timeout=600, kernel_name="python3", shutdown_kernel="immediate",  # Colab's lives on
                        resources={"metadata": {"path": folder}})
times = []
client.on_cell_executed = lambda **kw: times.append(time.perf_counter())
t0 = time.perf_counter()
client.execute()
nbformat.write(nb, path)
print(json.dumps({"total": time.perf_counter() - t0, "first": times[0] - t0}))
"""


def test_a_notebook_alone_on_colab_downloads_installs_and_runs(registry, tmp_path, linked_venv, passed_check,
                                                              clean_environ):
    lab = labs.get(LAB)
    # the bundle zip, as `autograder release --zip` writes it, with the reference in place of the
    # stubs, so that every cell runs and every check passes; the notebook knows its address
    zipped = tmp_path / "served" / "iron-law-labs.zip"
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    release.build(REPO, bundle, bundle_url=zipped.as_uri())
    for f in lab.manifest.student_files:
        shutil.copy(lab.solution_dir / f, bundle / "assignments" / lab.name / f)
    release.write_zip(bundle, zipped)
    work = tmp_path / "content"  # Colab's folder: the notebook alone in it
    work.mkdir()
    nb_file = work / notebooks.notebook_path(Path(), lab.name, LANG).name
    shutil.copy(bundle / "assignments" / lab.name / nb_file.name, nb_file)
    assert zipped.as_uri() in nb_file.read_text(encoding="utf-8"), "the release writes the bundle's address"

    python = linked_venv(tmp_path, COLAB)
    env = clean_environ(python, tmp_path)
    bare = subprocess.run([str(python), "-c", "import torch, matplotlib, nbclient, ipykernel\n"
                           "for m in ('otter', 'autograder'):\n"
                           "    try:\n        __import__(m)\n    except ImportError:\n        print('no', m)"],
                          env=env, cwd=work, capture_output=True, text=True, timeout=600)  # a hang guard
    assert bare.stdout.split("\n")[:2] == ["no otter", "no autograder"], bare.stdout + bare.stderr

    # after the lab's own cells: the kernel's Python, then the student's unfinished files and a check
    first = lab.manifest.questions[0].id
    nb = nbformat.read(nb_file, as_version=4)
    nb.cells += [nbformat.v4.new_code_cell("import sys\nprint('PYTHON', sys.executable)"),
                 nbformat.v4.new_code_cell("".join(f"open({f!r}, 'w').write({text!r})\n"
                                                   for f, text in stubs.texts(lab).items())),
                 nbformat.v4.new_code_cell(f'grader.check("{first}")')]
    nbformat.write(nb, nb_file)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.run([str(python), str(driver), str(nb_file), str(work)], env=env, cwd=work,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    timing = json.loads(proc.stdout.strip().splitlines()[-1])

    nb = nbformat.read(nb_file, as_version=4)
    text = [_text(c) for c in nb.cells if c.cell_type == "code"]
    setup = text[0]
    assert "pip install " in setup and "otter-grader" in setup and "Đã cài trong " in setup, setup  # in Vietnamese
    assert f"{work / notebook.BUNDLE_DIR}" in setup, setup  # unpacked beside the notebook
    assert (work / notebook.BUNDLE_DIR / "assignments" / lab.name / "lab.toml").is_file()
    checks = [_text(c) for c in nb.cells if c.cell_type == "code" and c.source.startswith("grader.check(")]
    assert len(checks) == len(lab.manifest.tested) + 1  # a check cell per question the tests score
    *lab_checks, last = checks
    assert all(passed_check(LANG) in t for t in lab_checks), [t[-500:] for t in lab_checks if passed_check(LANG) not in t]
    assert "chưa được cài đặt" in last and "not implemented" not in last, last  # Vietnamese, with no setting
    assert f"PYTHON {python}" in text[-3]

    # only what was missing: torch and numpy stay Colab's, none of otter's grading tools came
    own = [p.name.lower() for p in Path(python).parents[1].glob("lib/python3*/site-packages/*")]
    assert any(n.startswith("otter_grader") for n in own), own
    assert not [n for n in own if n.split("-")[0] in ("torch", "numpy", "matplotlib", "playwright", "sphinx")], own
    assert timing["first"] < 240, timing  # on Colab well under a minute; here the registry's speed decides


def _text(cell) -> str:
    return "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") + "".join(o.get("traceback", []))
                   for o in cell.outputs)


# -- the pieces, offline ---------------------------------------------------------------------
def test_what_a_student_needs_is_pinned():
    lock = {notebook.canonical(line.split("==")[0]) for line in (REPO / "requirements.lock").read_text().splitlines()
            if "==" in line and not line.startswith("#")}
    deps, bare = notebook.requirements(REPO)
    assert "otter-grader" in bare and "otter-grader" not in map(notebook.canonical, deps)
    assert {"numpy", "torch", "pytest", "babel", "click", "ipykernel", "pandas", "nbconvert"} <= set(
        map(notebook.canonical, deps))
    assert not [n for n in deps + bare if notebook.canonical(n) not in lock], "pin them in requirements.lock"


def test_only_what_is_missing_is_installed_pinned_and_otter_without_its_dependencies():
    have = {notebook.canonical(n) for n in notebook.requirements(REPO)[0]} - {"babel", "rich"}
    have |= {"fica", "numpy"}
    commands = notebook.install_commands(REPO, have)
    assert [sorted(c[c.index("install") + 1:][-2:]) for c in commands] == [["babel", "rich"], ["--no-deps", "otter-grader"]]
    pins = Path(commands[0][commands[0].index("-c") + 1]).read_text()
    assert "babel==2.19.0\n" in pins and "otter-grader==7.0.0\n" in pins
    assert "numpy==" not in pins, "what is installed stays as it is (Colab's numpy)"
    assert commands[0][:3] == [sys.executable, "-m", "pip"]
    assert notebook.install_commands(REPO, notebook.installed()) == [], "this venv lacks nothing"
    assert notebook.install_missing(REPO) == []


def test_the_engine_module_of_the_first_cell_imports_with_the_standard_library_alone():
    """The first cell imports autograder.grading.notebook before anything is installed."""
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\nbefore = set(sys.modules)\n"
            "import autograder.grading.notebook\n"
            "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] not in sys.stdlib_module_names"
            " and m.split('.')[0] != 'autograder'))")
    proc = subprocess.run([sys.executable, "-S", "-c", code, str(REPO)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def _setup_cell(lang: str) -> str:
    lab = labs.get(LAB)
    nb = nbformat.read(notebooks.notebook_path(lab.assignment_dir, lab.name, lang), as_version=4)
    return next(c for c in notebooks.code_cells(nb) if "notebook.checker()" in c)


@pytest.mark.parametrize("lang", notebooks.LANGS)
def test_without_a_bundle_the_cell_says_how_to_get_one_in_its_language(lang, tmp_path):
    """No bundle around, no address (or one that fails): the cell's message, in the notebook's
    language; $IRONLAW_BUNDLE_URL is the address it tries first."""
    cell = _setup_cell(lang).replace('LANG, BUNDLE_URL = "%s", ' % lang, 'LANG, BUNDLE_URL = "%s", "" or ' % lang)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", labs.ROOT_ENV, i18n.ENV)}
    run = lambda **extra: subprocess.run([sys.executable, "-S", "-c", cell], cwd=tmp_path,  # noqa: E731
                                         env={**env, **extra}, capture_output=True, text=True, timeout=60)
    words = {"en": "Cannot get the lab bundle", "vi": "Không lấy được bộ bài lab"}[lang]
    nothing = run()
    assert nothing.returncode == 1 and words in nothing.stderr and "IRONLAW_BUNDLE_URL" in nothing.stderr, \
        nothing.stderr[-1500:]
    missing = (tmp_path / "nowhere.zip").as_uri()
    wrong = run(IRONLAW_BUNDLE_URL=missing)
    assert f"{missing} -> " in wrong.stdout and words in wrong.stderr and "nowhere.zip" in wrong.stderr, wrong.stderr
    assert not (tmp_path / notebook.BUNDLE_DIR).exists()


def test_release_writes_the_bundle_zip_the_cell_unpacks(toy_root, tmp_path, capsys):
    from autograder.cli import main

    for name in ("pyproject.toml", "environment.yml", "requirements.lock"):
        shutil.copy(REPO / name, toy_root / name)
    out, zipped = tmp_path / "bundle", tmp_path / "served" / "iron-law-labs.zip"
    assert main(["release", "--out", str(out), "--zip", str(zipped), "--bundle-url", zipped.as_uri()]) == 0
    assert f"{zipped}: the bundle zip, to publish at {zipped.as_uri()}" in capsys.readouterr().out
    import zipfile

    with zipfile.ZipFile(zipped) as z:  # its files at the root: it unpacks into iron-law-labs/ as it is
        assert sorted(z.namelist()) == sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
        assert "autograder/grading/notebook.py" in z.namelist() and "requirements.lock" in z.namelist()
    before = zipped.read_bytes()
    release.write_zip(out, zipped)
    assert zipped.read_bytes() == before, "reproducible"


@pytest.mark.parametrize("lang", i18n.LANGS)
def test_a_failed_install_says_what_pip_said_and_the_commands(lang, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["ironlaw-not-installed-here"]\n')
    (tmp_path / "requirements.lock").write_text("ironlaw-not-installed-here==1.0\n")
    monkeypatch.setenv(i18n.ENV, lang)
    ran = []

    def pip(cmd, **kwargs):
        ran.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found\n")

    monkeypatch.setattr(notebook.subprocess, "run", pip)
    with pytest.raises(RuntimeError) as err:
        notebook.install_missing(tmp_path)
    text = str(err.value)
    assert "No matching distribution found" in text and "ironlaw-not-installed-here" in text
    assert {"en": "run this cell again", "vi": "chạy lại ô này"}[lang] in text
    pins = Path(ran[0][ran[0].index("-c") + 1])
    assert str(pins) in text and "ironlaw-not-installed-here==1.0" in pins.read_text(), "the printed commands work"


def test_a_bundle_zip_with_a_top_level_folder_unpacks_and_the_cell_finds_the_lab(student_bundle, tmp_path):
    """A course zipped the bundle with its folder in it (iron-law-labs-2026/...): the first cell
    downloads and unpacks it, finds the engine and the lab one level down, and works there
    (``student_bundle``: the one release of the session, conftest.py)."""
    from autograder.core.files import write_zip

    lab = labs.get("lab2")
    bundle = student_bundle
    zipped = write_zip(tmp_path / "served" / "iron-law-labs.zip",
                       {p.relative_to(bundle).as_posix(): p.read_bytes() for p in bundle.rglob("*") if p.is_file()},
                       folder="iron-law-labs-2026")
    built = notebooks.build(notebooks.source_path(lab.assignment_dir, lab.name), "en")
    cell = next(c for c in notebooks.code_cells(built) if "notebook.checker()" in c)
    work = tmp_path / "content"
    work.mkdir()
    site = next(p for p in sys.path if p.endswith("site-packages"))  # -S: the editable install is invisible
    env = {k: v for k, v in os.environ.items() if k not in (labs.ROOT_ENV, i18n.ENV)}
    proc = subprocess.run([sys.executable, "-S", "-c", cell + "\nprint('CWD', os.getcwd())"], cwd=work,
                          env={**env, "PYTHONPATH": site, "IRONLAW_BUNDLE_URL": zipped.as_uri()},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    inside = work / notebook.BUNDLE_DIR / "iron-law-labs-2026"
    assert f"CWD {inside / 'assignments' / lab.name}" in proc.stdout, proc.stdout
    assert "temporary storage" not in proc.stdout  # not Colab
