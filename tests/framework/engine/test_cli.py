"""check, verify and grade on the toy lab; gradebook columns and results schema."""

from __future__ import annotations

import csv
import json
import shutil
import zipfile

from autograder.core import stubs
from autograder.cli import main
from autograder.batch.gradebook import FIXED_COLUMNS
from autograder.core.results import gradescope_json  # noqa: F401  (schema built by one function)

GRADESCOPE_TEST_KEYS = {"score", "max_score", "status", "name", "number", "output", "visibility"}


def test_check_stub_and_reference(toy_root, capsys):
    assert main(["check", "labx"]) == 1
    out = capsys.readouterr().out
    assert "add() is not implemented yet" in out and "4 hidden tests run at grading" in out
    assert main(["check", "labx", "--path", str(toy_root / "solutions" / "labx_toy")]) == 0
    assert "public tests passed; 4 hidden tests run at grading" in capsys.readouterr().out.replace("\n", " ")


def test_check_sandboxed_matches(toy_root, capsys):
    assert main(["check", "labx", "--sandbox", "--path", str(toy_root / "solutions" / "labx_toy")]) == 0
    # counted by collecting them only: the same count as in-process, no hidden test run
    assert "public tests passed; 4 hidden tests run at grading" in capsys.readouterr().out.replace("\n", " ")
    assert main(["check", "labx", "--sandbox"]) == 1


def test_sandbox_work_dir_inside_a_hidden_folder(toy_root, tmp_path, monkeypatch, capsys):
    """Workers' dirs live where the zygote's read-only namespace shows an
    empty cover (CI's /tmp, when the venv is elsewhere): they must still start.
    The folder is deep, as pytest-xdist's are: the zygote's socket would overrun
    a Unix socket's 107-byte path there (backend.socket_dir)."""
    import os
    import tempfile

    from autograder.sandbox import backend

    if os.geteuid() != 0:
        import pytest

        pytest.skip("mount namespaces need root (as on CI)")
    covered = tmp_path / ("deep" * 16) / "covered"
    covered.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(covered))  # this process and the graders it starts
    monkeypatch.setenv("TMPDIR", str(covered))
    monkeypatch.setenv(backend.HIDE_ENV, str(covered))
    assert main(["check", "labx", "--sandbox", "--path", str(toy_root / "solutions" / "labx_toy")]) == 0, \
        capsys.readouterr().out


def test_verify_toy(toy_root, capsys):
    assert main(["verify", "labx"]) == 0
    out = capsys.readouterr().out
    assert "all 4 candidates as expected" in out  # reference, stub, double_norm, alternatives/pure_python
    assert "alternatives/pure_python" in out


def test_verify_requires_full_marks_of_every_alternative(toy_root, capsys):
    alt = toy_root / "solutions" / "labx_toy" / "alternatives"
    (alt / "rounds").mkdir()
    text = stubs.unmarked((toy_root / "solutions" / "labx_toy" / "toy.py").read_text())  # markers: the reference's only
    (alt / "rounds" / "toy.py").write_text(text.replace("** 2)))", "** 2)), 6)").replace("float(np.", "round(np."))
    (alt / "half").mkdir()  # an alternative is a full copy: a missing file is the author's mistake
    (alt / "same").mkdir()
    (alt / "same" / "toy.py").write_text(text)
    assert main(["verify", "labx", "--no-sandbox"]) == 1
    out = capsys.readouterr().out
    assert "should keep norm but lost it" in out and "labx alternatives/rounds: test_norm" in out
    assert "lacks toy.py" in out and "is the reference itself" in out
    assert "3 candidate(s) not as expected" in out


def test_verify_catches_a_weak_suite(toy_root, capsys):
    # a variant that claims to lose a question the tests do not catch must fail verify
    text = (toy_root / "assignments" / "labx_toy" / "lab.toml").read_text()
    (toy_root / "assignments" / "labx_toy" / "lab.toml").write_text(text.replace('loses = ["norm"]', 'loses = ["add"]'))
    assert main(["verify", "labx", "--no-sandbox"]) == 1
    out = capsys.readouterr().out
    assert "should lose add but kept it" in out and "should keep norm but lost it" in out
    # and says which test failed, and why, so a flaky case can be told from a regression
    assert "labx double_norm: test_norm" in out


def test_grade_outputs(toy_root, tmp_path):
    subs = tmp_path / "subs"
    (subs / "ref").mkdir(parents=True)
    shutil.copy(toy_root / "solutions" / "labx_toy" / "toy.py", subs / "ref" / "toy.py")
    with zipfile.ZipFile(subs / "stub.zip", "w") as z:
        z.write(toy_root / "assignments" / "labx_toy" / "toy.py", "my-lab/toy.py")
    (subs / "empty").mkdir()
    out = tmp_path / "out"
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2"]) == 0
    rows = list(csv.reader(open(out / "gradebook.csv", encoding="utf-8-sig")))
    assert rows[0] == FIXED_COLUMNS + ["add", "norm", "problems"]
    scores = {r[0]: r[1:] for r in rows[1:]}
    assert scores == {"empty": ["0", "5", "0", "0", "file toy.py is missing from the submission"],
                      "ref": ["5", "5", "3", "2", ""], "stub": ["0", "5", "0", "0", ""]}
    res = json.loads((out / "results" / "ref.json").read_text())
    assert res["score"] == 5 and len(res["tests"]) == 5
    assert all(GRADESCOPE_TEST_KEYS <= set(t) for t in res["tests"])
    assert {t["visibility"] for t in res["tests"]} <= {"hidden", "after_due_date", "after_published", "visible"}
    assert "file toy.py is missing" in (out / "feedback" / "empty.md").read_text()
    assert "not implemented yet" in (out / "feedback" / "stub.md").read_text()
    # a rerun skips unchanged submissions and keeps the gradebook identical
    before = (out / "gradebook.csv").read_text()
    assert main(["grade", "labx", str(subs), "--out", str(out)]) == 0
    assert (out / "gradebook.csv").read_text() == before


def test_grade_gradescope_export(toy_root, tmp_path):
    """Gradescope's "Export Submissions" layout: names and emails reach the gradebook."""
    subs = tmp_path / "export"
    for folder, src in (("submission_101", "solutions"), ("submission_102", "assignments")):
        (subs / folder).mkdir(parents=True)
        shutil.copy(toy_root / src / "labx_toy" / "toy.py", subs / folder / "toy.py")
    (subs / "submission_metadata.yml").write_text(
        "submission_101:\n  :submitters:\n  - :name: Nguyễn Văn An\n    :email: an@example.edu\n    :sid: '1'\n"
        "  :created_at: 2026-11-30 10:00:00\n"
        "submission_102:\n  :submitters:\n  - :name: Trần Thị Bình\n    :email: binh@example.edu\n"
        "  - :name: Lê Chi\n    :email: chi@example.edu\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2"]) == 0
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig"))}
    assert list(rows["submission_101"])[-3:] == ["name", "email", "sid"]
    assert rows["submission_101"]["name"] == "Nguyễn Văn An" and rows["submission_101"]["score"] == "5"
    assert rows["submission_102"]["email"] == "binh@example.edu; chi@example.edu"
    assert (out / "summary.md").exists() and (out / "summary.png").stat().st_size > 1000


def test_killed_batch_loses_nothing(toy_copies, tmp_path):
    """SIGKILL mid-batch: what was graded stays graded, a rerun grades only the rest."""
    import os
    import signal
    import subprocess
    import sys
    import time

    subs = toy_copies(tmp_path / "subs", 5, fast=2)  # killed with 7.5 s of sleeping left: part-way at any load
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade", "labx", str(subs), "--out", str(out),
                             "--jobs", "1"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600  # a hang guard: two toy submissions take seconds, minutes at worst
    while time.monotonic() < deadline and len(list((out / "raw").glob("*.json")) if (out / "raw").exists() else []) < 2:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    graded = {p.stem for p in (out / "raw").glob("*.json")}
    assert 2 <= len(graded) < 5, "the batch should have been killed part-way"
    rows = list(csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig")))
    in_book = {r["submission"] for r in rows}
    # rebuilt after each submission: at most the one being written at the kill is missing
    assert in_book <= graded and len(in_book) >= len(graded) - 1
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1"]) == 0
    rows = list(csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig")))
    assert sorted(r["submission"] for r in rows) == [f"s{i}" for i in range(5)]
    assert all(r["score"] == "5" for r in rows)
