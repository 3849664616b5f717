"""`autograder submit` on the toy lab: exactly the declared files plus MANIFEST.json, and grade accepts it."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import zipfile

from autograder.cli import main

REF = ("solutions", "labx_toy")


def test_reference_zip_holds_declared_files_and_hashes(toy_root, tmp_path, capsys):
    ref = toy_root.joinpath(*REF)
    out = tmp_path / "sub.zip"
    assert main(["submit", "labx", "--path", str(ref), "--out", str(out)]) == 0
    assert "public tests: all 1 passed" in capsys.readouterr().out
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == ["MANIFEST.json", "toy.py"], "sorted, flat, nothing undeclared"
        manifest = json.loads(z.read("MANIFEST.json"))
        assert z.read("toy.py") == (ref / "toy.py").read_bytes()
    data = (ref / "toy.py").read_bytes()
    assert manifest["lab"] == "labx_toy"
    assert manifest["files"] == [{"name": "toy.py", "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", manifest["created_utc"])
    assert manifest["public_tests"] == {"passed": 1, "total": 1}


def test_default_name_and_reproducible(toy_root, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert main(["submit", "labx"]) == 0
    first = (tmp_path / "labx_toy-submission.zip").read_bytes()
    assert main(["submit", "labx", "--out", "again.zip"]) == 0
    assert (tmp_path / "again.zip").read_bytes() == first
    with zipfile.ZipFile(tmp_path / "again.zip") as z:
        assert json.loads(z.read("MANIFEST.json"))["created_utc"] == "2026-01-01T00:00:00Z"


def test_stub_warns_but_submits(toy_root, tmp_path, capsys):
    assert main(["submit", "labx", "--out", str(tmp_path / "stub.zip")]) == 0
    out = capsys.readouterr().out
    assert "WARNING: 1 of 1 public tests fail" in out and "autograder check labx" in out
    assert (tmp_path / "stub.zip").exists()


def test_missing_file_is_an_error(toy_root, tmp_path, capsys):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.py").write_text("x = 1\n")
    assert main(["submit", "labx", "--path", str(tmp_path / "work"), "--out", str(tmp_path / "s.zip")]) == 2
    assert "toy.py missing" in capsys.readouterr().out
    assert not (tmp_path / "s.zip").exists()


def test_grade_accepts_the_zips(toy_root, tmp_path):
    subs = tmp_path / "subs"
    assert main(["submit", "labx", "--path", str(toy_root.joinpath(*REF)), "--out", str(subs / "ref.zip")]) == 0
    assert main(["submit", "labx", "--out", str(subs / "stub.zip")]) == 0
    assert main(["grade", "labx", str(subs), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    rows = {r["submission"]: r for r in csv.DictReader(open(tmp_path / "out" / "gradebook.csv", encoding="utf-8-sig"))}
    assert (rows["ref"]["score"], rows["stub"]["score"]) == ("5", "0")
