"""Handing in, on the toy lab: the notebook's last cell (``notebook.submit``) writes the zip that
``autograder submit`` writes, byte for byte, and both grade alike; on Colab (``google.colab``
faked by stub modules) it takes the notebook from the editor and downloads the zip; in Jupyter it
takes the saved file and says so when it could not save.  A run in which no public test ran is an
error, never a pass; ``grade`` refuses a student bundle; the first cell warns when the lab lives
in Colab's temporary storage and prefers a copy kept in Drive."""

from __future__ import annotations

import csv
import json
import shutil
import sys
import types
import zipfile
from pathlib import Path

import pytest

from autograder.cli import main
from autograder.grading import handin, notebook, predictions

REF = ("solutions", "labx_toy")
NOTEBOOK = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "My answer: *buy*."},
                      {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": "print(42)",
                       "outputs": [{"output_type": "stream", "name": "stdout", "text": "42\n"}]}],
            "metadata": {"ironlaw": {"language": "vi"}}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def work(toy_root, tmp_path, monkeypatch) -> Path:
    """A student's lab folder (the reference, a prediction made), the current folder as the
    notebook's first cell leaves it, and the folder the notebook was opened in."""
    folder = tmp_path / "work"
    shutil.copytree(toy_root.joinpath(*REF), folder)
    predictions.predict("norm_of_ones", 10, folder=folder)
    monkeypatch.chdir(folder)
    opened = tmp_path / "opened"
    opened.mkdir()
    monkeypatch.setattr(notebook, "_opened_in", opened)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # MANIFEST.json's time: the zips compare byte for byte
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    return folder


def _grade(zips: dict[str, Path], out: Path) -> dict[str, str]:
    subs = out.parent / f"{out.name}-subs"
    subs.mkdir()
    for name, z in zips.items():
        shutil.copy(z, subs / f"{name}.zip")
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1"]) == 0
    rows = csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig"))
    return {r["submission"]: r["score"] for r in rows}


def _members(z: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(z) as f:
        return {n: f.read(n) for n in f.namelist()}


def test_the_notebook_cell_writes_the_zip_the_command_writes(work, tmp_path, monkeypatch, capsys):
    nb = work / "labx_toy.ipynb"
    nb.write_text(json.dumps({**NOTEBOOK, "metadata": {}}))
    monkeypatch.setattr(notebook, "save", lambda path: True)  # the front end saved it
    from_cell = notebook.submit("labx", "en")
    assert from_cell == notebook._opened_in / "labx_toy-submission.zip"
    said = capsys.readouterr().out
    assert "public tests: all 1 passed." in said and f"wrote {from_cell}" in said
    assert "Upload this file" in said and "could not make Jupyter save" not in said
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "cli.zip")]) == 0
    assert from_cell.read_bytes() == (tmp_path / "cli.zip").read_bytes(), "one zip, whichever way it was made"
    members = _members(from_cell)
    assert sorted(members) == ["MANIFEST.json", "labx_toy.ipynb", predictions.FILE, "toy.py"]
    assert json.loads(members["labx_toy.ipynb"])["cells"][1]["outputs"], "the notebook keeps its outputs"
    listed = {f["name"] for f in json.loads(members["MANIFEST.json"])["files"]}
    assert listed == {"labx_toy.ipynb", predictions.FILE, "toy.py"}
    assert _grade({"cell": from_cell, "cli": tmp_path / "cli.zip"}, tmp_path / "out") == {"cell": "5", "cli": "5"}


@pytest.fixture
def colab(monkeypatch):
    """``google.colab`` as stub modules: its editor holds NOTEBOOK; what it was asked and what it
    downloaded are recorded."""
    record = {"asked": [], "downloaded": []}
    package = types.ModuleType("google.colab")
    message = types.ModuleType("google.colab._message")
    files = types.ModuleType("google.colab.files")

    def blocking_request(request_type, request="", timeout_sec=5, parent=None):
        record["asked"].append(request_type)
        return {"ipynb": NOTEBOOK} if request_type == "get_ipynb" else None

    message.blocking_request = blocking_request
    files.download = record["downloaded"].append
    package._message, package.files = message, files
    for name, module in (("google.colab", package), ("google.colab._message", message),
                         ("google.colab.files", files)):
        monkeypatch.setitem(sys.modules, name, module)
    return record


def test_on_colab_the_zip_holds_the_editors_notebook_and_is_downloaded(work, colab, tmp_path, capsys):
    assert notebook.on_colab()
    dest = notebook.submit("labx", "vi")
    assert colab["asked"] == ["get_ipynb"] and colab["downloaded"] == [str(dest)]
    assert dest.parent == notebook._opened_in and "browser downloads labx_toy-submission.zip" in capsys.readouterr().out
    members = _members(dest)
    assert sorted(members) == ["MANIFEST.json", "labx_toy.vi.ipynb", predictions.FILE, "toy.py"]
    assert json.loads(members["labx_toy.vi.ipynb"]) == NOTEBOOK, "the editor's content, outputs and answers"
    assert _grade({"colab": dest}, tmp_path / "out") == {"colab": "5"}


def test_colab_that_sends_no_notebook_is_an_error(work, colab, monkeypatch):
    monkeypatch.setattr(sys.modules["google.colab._message"], "blocking_request", lambda *a, **k: None)
    with pytest.raises(RuntimeError, match="Colab did not send this notebook"):
        notebook.submit("labx", "en")
    assert not (notebook._opened_in / "labx_toy-submission.zip").exists()


def test_in_jupyter_a_notebook_that_could_not_be_saved_goes_in_as_last_saved(work, tmp_path, monkeypatch, capsys):
    """The front end named the notebook (Jupyter Server's $JPY_SESSION_NAME): a copy under another
    name, elsewhere; it goes into the zip under the lab's name, as saved, and the student is told."""
    copy = tmp_path / "elsewhere" / "Copy of labx_toy.ipynb"
    copy.parent.mkdir()
    copy.write_text(json.dumps(NOTEBOOK))
    monkeypatch.setenv("JPY_SESSION_NAME", str(copy))
    monkeypatch.setattr(notebook, "save", lambda path: False)
    dest = notebook.submit("labx", "en")
    assert "WARNING: could not make Jupyter save this notebook: the zip holds its last saved version" \
           in capsys.readouterr().out
    assert _members(dest)["labx_toy.ipynb"] == copy.read_bytes()


def test_a_notebook_file_that_cannot_be_found_says_how_to_name_it(work, monkeypatch):
    with pytest.raises(FileNotFoundError, match=r'notebook_file="<the path of this notebook>"'):
        notebook.submit("labx", "en")


def test_the_command_leaves_out_a_notebook_never_run_and_takes_the_one_named(work, tmp_path, capsys):
    (work / "labx_toy.ipynb").write_text(json.dumps({**NOTEBOOK, "cells": NOTEBOOK["cells"][:1]}))
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "a.zip")]) == 0
    assert "was never run: it is the one handed out" in capsys.readouterr().out.replace("\n", " ")
    assert "labx_toy.ipynb" not in _members(tmp_path / "a.zip")
    named = tmp_path / "mine.ipynb"
    named.write_text(json.dumps(NOTEBOOK))  # its metadata says Vietnamese
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "b.zip"),
                 "--notebook", str(named)]) == 0
    assert _members(tmp_path / "b.zip")["labx_toy.vi.ipynb"] == named.read_bytes()


def test_a_notebook_too_large_with_its_outputs_goes_in_without_them(work, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(handin, "MAX_FILE_BYTES", 300)
    big = {**NOTEBOOK, "cells": [*NOTEBOOK["cells"][:1], {**NOTEBOOK["cells"][1], "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "x" * 400}]}]}
    (work / "labx_toy.vi.ipynb").write_text(json.dumps(big))
    assert main(["submit", "labx", "--path", str(work), "--out", str(tmp_path / "a.zip")]) == 0
    assert "it is in the zip without its outputs" in capsys.readouterr().out.replace("\n", " ")
    kept = json.loads(_members(tmp_path / "a.zip")["labx_toy.vi.ipynb"])
    assert kept["cells"][0]["source"] == "My answer: *buy*." and kept["cells"][1]["outputs"] == []


# -- no test ran: an error, never a pass ------------------------------------------------------
def test_check_and_submit_fail_when_no_public_test_runs(toy_root, tmp_path, capsys):
    shutil.rmtree(toy_root / "assignments" / "labx_toy" / "tests")
    assert main(["check", "labx", "--path", str(toy_root.joinpath(*REF))]) == 2
    assert "The public tests of labx did not run (no public test was found)" in capsys.readouterr().out
    assert main(["submit", "labx", "--path", str(toy_root.joinpath(*REF)), "--out", str(tmp_path / "s.zip")]) == 2
    assert "did not run" in capsys.readouterr().out and not (tmp_path / "s.zip").exists()


def test_check_fails_when_pytest_refuses_to_run(toy_root, monkeypatch, capsys):
    """pytest stopped before any test (here: the plugin that knows --submission is not loaded)."""
    from autograder.grading import pytest_here

    monkeypatch.setattr(pytest_here, "plugins", lambda: [])
    assert main(["check", "labx", "--path", str(toy_root.joinpath(*REF))]) == 2
    assert "did not run (pytest stopped with exit status 4)" in capsys.readouterr().out


def test_grade_refuses_a_student_bundle(toy_root, tmp_path, capsys):
    assert main(["submit", "labx", "--path", str(toy_root.joinpath(*REF)), "--out", str(tmp_path / "s" / "a.zip")]) == 0
    shutil.rmtree(toy_root / "tests" / "labx_toy")  # what a bundle lacks: the hidden tests
    capsys.readouterr()
    assert main(["grade", "labx", str(tmp_path / "s"), "--out", str(tmp_path / "out")]) == 2
    assert "holds only the public tests of labx (a student bundle): it cannot grade" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_course_command_not_in_the_bundle_says_so(monkeypatch, capsys):
    from autograder import cli

    monkeypatch.setitem(cli.COMMANDS, "grade", "autograder.commands.not_shipped_here")
    assert main(["grade", "lab2", "x", "--out", "y"]) == 2
    assert "`autograder grade` is not in this student bundle" in capsys.readouterr().err


# -- Colab's temporary storage and Google Drive --------------------------------------------------
def _lab(folder: Path) -> Path:
    d = folder / "assignments" / "labx_toy"
    d.mkdir(parents=True)
    (d / "lab.toml").write_text("")
    (d / "mod.py").write_text("")
    return d


@pytest.fixture
def content(tmp_path, monkeypatch) -> Path:
    """Colab's /content and the Drive mounted in it, here."""
    root = tmp_path / "content"
    monkeypatch.setattr(notebook, "COLAB_CONTENT", root)
    monkeypatch.setattr(notebook, "DRIVE_MOUNT", root / "drive")
    monkeypatch.setattr(notebook, "DRIVE_BUNDLE", root / "drive" / "MyDrive" / notebook.BUNDLE_DIR)
    monkeypatch.setattr(notebook, "_opened_in", None)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("IRONLAW_ROOT", raising=False)
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def test_the_first_cell_warns_when_the_lab_is_in_colabs_temporary_storage(content, colab, capsys):
    lab = _lab(content / notebook.BUNDLE_DIR)
    assert notebook.locate_bundle("labx_toy", "mod") == lab.resolve()
    said = capsys.readouterr().out
    assert "is in Colab's temporary storage" in said
    mount = f'from google.colab import drive; drive.mount("{content / "drive"}")'
    drive = notebook.DRIVE_BUNDLE
    copy = f'!mkdir -p "{drive}" && cp -rn "{content / notebook.BUNDLE_DIR}/." "{drive}/"'
    assert f"\n  {mount}\n  {copy}\n" in said, said
    kept = _lab(notebook.DRIVE_BUNDLE)  # the student ran the two lines, then the cell again
    assert notebook.locate_bundle("labx_toy", "mod") == kept.resolve(), "the copy in Drive wins"
    assert "temporary storage" not in capsys.readouterr().out


def test_no_warning_off_colab_or_in_drive(content, capsys):
    lab = _lab(content / notebook.BUNDLE_DIR)
    assert notebook.locate_bundle("labx_toy", "mod") == lab.resolve()
    assert "temporary storage" not in capsys.readouterr().out


def test_a_bundle_unzipped_with_its_top_level_folder_is_found(tmp_path):
    lab = _lab(tmp_path / notebook.BUNDLE_DIR / "iron-law-labs-2026")
    assert notebook.find_lab_dir("labx_toy", "mod", cwd=tmp_path, environ={}) == lab.resolve()


def test_check_loads_no_plugin_but_the_engines(toy_root, tmp_path, monkeypatch, capsys):
    """A pytest plugin that the student's Python happens to have (here one installed as any package
    would be, with an entry point) never joins a run of the engine: ``check`` loads the engine's plugin
    by name and searches no entry point (``pytest_here.NO_AUTOLOAD``)."""
    site = tmp_path / "site"
    (site / "stray-1.0.dist-info").mkdir(parents=True)
    (site / "stray-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: stray\nVersion: 1.0\n")
    (site / "stray-1.0.dist-info" / "entry_points.txt").write_text("[pytest11]\nstray = stray_plugin\n")
    (site / "stray_plugin.py").write_text("def pytest_configure(config):\n    raise SystemExit('stray plugin loaded')\n")
    monkeypatch.syspath_prepend(str(site))
    from importlib.metadata import entry_points

    assert "stray" in {ep.name for ep in entry_points(group="pytest11")}, "the stray plugin is not installed"
    assert main(["check", "labx", "--path", str(toy_root.joinpath(*REF))]) == 0
    assert "stray_plugin" not in sys.modules
