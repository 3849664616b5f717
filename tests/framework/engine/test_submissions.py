"""Submissions are found by name anywhere inside a folder or zip; nothing else is taken."""

import zipfile

from autograder.grading import staging


def test_folder_and_zip_with_extra_top_folder(tmp_path):
    subs = tmp_path / "subs"
    (subs / "alice" / "deep" / "er").mkdir(parents=True)
    (subs / "alice" / "deep" / "er" / "toy.py").write_text("x = 1\n")
    (subs / "alice" / "conftest.py").write_text("raise SystemExit\n")
    with zipfile.ZipFile(subs / "bob.zip", "w") as z:
        z.writestr("bob-lab/toy.py", "x = 2\n")
        z.writestr("__MACOSX/bob-lab/toy.py", "junk")
        z.writestr("bob-lab/sitecustomize.py", "junk")
    (subs / ".DS_Store").write_text("")
    entries = staging.discover(subs)
    assert [e.id for e in entries] == ["alice", "bob"]
    a = staging.stage(entries[0].path, ("toy.py",), tmp_path / "a")
    b = staging.stage(entries[1].path, ("toy.py",), tmp_path / "b")
    assert (tmp_path / "a" / "toy.py").read_text() == "x = 1\n" and not a.problems
    assert (tmp_path / "b" / "toy.py").read_text() == "x = 2\n" and not b.problems
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["toy.py"]
    assert a.sha256 != b.sha256


def test_missing_file_and_bad_zip(tmp_path):
    (tmp_path / "empty").mkdir()
    st = staging.stage(tmp_path / "empty", ("toy.py",), tmp_path / "out1")
    assert st.problems == ["file toy.py is missing from the submission"]
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    st = staging.stage(tmp_path / "bad.zip", ("toy.py",), tmp_path / "out2")
    assert st.problems


def test_oversized_file_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "big.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("toy.py", b"#" * (staging.MAX_FILE_BYTES + 10))
    st = staging.stage(tmp_path / "big.zip", ("toy.py",), tmp_path / "out")
    assert "larger than" in st.problems[0] and not (tmp_path / "out" / "toy.py").exists()
