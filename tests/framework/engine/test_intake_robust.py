"""Intake never stops a batch, and the gradebook runs no formulas (issue 12, findings 7 and 13).

Every broken upload is built here at test time: a zip with corrupt deflate
data, a CRC error, a truncated zip, an encrypted member, names that are not
UTF-8, a folder nested 1,100 deep, a FIFO, a device or a link where toy.py
should be, more files than a walk looks at.  Each becomes that entry's
problem (score 0, one clear line in its feedback and in ``grade``'s summary);
the correct entry beside them keeps full marks and the gradebook is written.

:func:`make_hostile_intake_entries` writes the broken entries into any folder
(the main hostile suite adds them to its batch); :func:`remove_tree` deletes
a folder holding them (``shutil.rmtree`` recurses, and 1,100 levels exceed
Python's recursion limit).
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.batch import gradebook, platforms, roster
from autograder.batch.platforms import gradescope
from autograder.core import i18n, results
from autograder.grading import staging
from autograder.commands import grade

CONTROL = Path(__file__).resolve().parents[1] / "fixtures" / "hostile" / "control" / "toy.py"
DEEP = 1100

# id -> what its problem message must say (English)
EXPECTED = {
    "corrupt_deflate": "the zip file is damaged",
    "crc_error": "the zip file is damaged",
    "truncated_zip": "the zip file is damaged",
    "encrypted_zip": "it is encrypted with a password",
    "bad_utf8_zip": "not valid UTF-8",
    "deep_nesting": f"folders nested more than {staging.MAX_DEPTH} levels deep were not searched",
    "fifo_toy": "not a regular file",
    "link_toy": "not a regular file",
    "device_toy": "not a regular file",
    "too_many_files": f"more than {staging.MAX_ENTRIES} files and folders",
    "unreadable_folder": "permission denied",
    staging.entry_id(os.fsdecode(b"bad_name_\xff\xfe")): "file toy.py is missing",
}


def _zip_bytes(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _data_span(raw: bytes) -> tuple[int, int]:
    """Where the first member's stored data lies in a zip's bytes."""
    info = zipfile.ZipFile(io.BytesIO(raw)).infolist()[0]
    name_len, extra_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    return start, start + info.compress_size


def make_hostile_intake_entries(folder: Path) -> list[str]:
    """Write the broken uploads into ``folder``; return their submission ids.

    Every one must score 0 (none gives the grader a readable toy.py), whether
    or not this process is root.  An entry this machine cannot make (a
    device without CAP_MKNOD; an unreadable folder as root, who reads
    anything) is left out.  Delete ``folder`` with :func:`remove_tree`.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    code = CONTROL.read_bytes()  # where a file is found at all, it is correct: only intake can lose it
    ids = []

    raw = bytearray(_zip_bytes({"lab/toy.py": code}))  # corrupt deflate data: zlib.error
    start, end = _data_span(bytes(raw))
    for k in range(start + 2, end - 2, 5):
        raw[k] ^= 0xA5
    (folder / "corrupt_deflate.zip").write_bytes(raw)
    ids.append("corrupt_deflate")

    raw = bytearray(_zip_bytes({"toy.py": code}, zipfile.ZIP_STORED))  # stored data changed: Bad CRC-32
    start, _ = _data_span(bytes(raw))
    raw[start + 10] ^= 0x01
    (folder / "crc_error.zip").write_bytes(raw)
    ids.append("crc_error")

    raw = _zip_bytes({"toy.py": code})  # cut short: no central directory
    (folder / "truncated_zip.zip").write_bytes(raw[:len(raw) // 2])
    ids.append("truncated_zip")

    raw = bytearray(_zip_bytes({"toy.py": code}))  # the "encrypted" flag, in both headers
    info = zipfile.ZipFile(io.BytesIO(bytes(raw))).infolist()[0]
    raw[info.header_offset + 6] |= 0x01
    cd = bytes(raw).rindex(b"PK\x01\x02")
    raw[cd + 8] |= 0x01
    (folder / "encrypted_zip.zip").write_bytes(raw)
    ids.append("encrypted_zip")

    raw = _zip_bytes({"lab/toyé.py": b"", "lab/toy.py": code})  # UTF-8 flag, then bytes that are not UTF-8
    (folder / "bad_utf8_zip.zip").write_bytes(raw.replace("toyé".encode(), b"toy\xff\xfe"))
    ids.append("bad_utf8_zip")

    fd = os.open(os.fspath(folder), os.O_RDONLY)  # 1,100 folders deep (by fd: no path is that long)
    os.mkdir("deep_nesting", dir_fd=fd)
    for i in range(DEEP + 1):
        nfd = os.open("deep_nesting" if i == 0 else "d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
        if i < DEEP:
            os.mkdir("d", dir_fd=fd)
    with open(os.open("toy.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f:
        f.write(code)
    os.close(fd)
    ids.append("deep_nesting")

    (folder / "fifo_toy").mkdir()  # a read would block forever
    os.mkfifo(folder / "fifo_toy" / "toy.py")
    ids.append("fifo_toy")

    (folder / "link_toy").mkdir()  # a link out of the submission
    (folder / "link_toy" / "toy.py").symlink_to(CONTROL.resolve())
    ids.append("link_toy")

    (folder / "device_toy").mkdir()  # /dev/zero's numbers: a read never ends
    try:
        os.mknod(folder / "device_toy" / "toy.py", stat.S_IFCHR | 0o644, os.makedev(1, 5))
        ids.append("device_toy")
    except OSError:
        remove_tree(folder / "device_toy")

    many = folder / "too_many_files"  # more entries than a walk looks at, toy.py past them
    (many / "zzz").mkdir(parents=True)
    (many / "zzz" / "toy.py").write_bytes(code)
    for i in range(staging.MAX_ENTRIES + 1):
        (many / f"f{i:05d}").touch()
    ids.append("too_many_files")

    if os.geteuid() != 0:  # root reads a mode-000 folder all the same
        (folder / "unreadable_folder" / "inner").mkdir(parents=True)
        (folder / "unreadable_folder" / "inner" / "toy.py").write_bytes(code)
        (folder / "unreadable_folder" / "inner").chmod(0)
        ids.append("unreadable_folder")

    bad = os.path.join(os.fsencode(folder), b"bad_name_\xff\xfe")  # not UTF-8: the entry, and its toy.py
    os.mkdir(bad)
    with open(os.path.join(bad, b"toy\xff.py"), "wb") as f:
        f.write(code)
    ids.append(staging.entry_id(os.fsdecode(b"bad_name_\xff\xfe")))
    return ids


def remove_tree(path: Path) -> None:
    """Delete ``path`` without recursion, whatever its depth or modes."""
    path = os.fsencode(path)
    if not os.path.lexists(path):
        return
    order, todo = [], [path]
    while todo:
        d = todo.pop()
        os.chmod(d, 0o700)
        order.append(d)
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    todo.append(e.path)
                else:
                    os.unlink(e.path)
    for d in reversed(order):
        os.rmdir(d)


@pytest.fixture
def hostile_dir(tmp_path):
    subs = tmp_path / "subs"
    yield subs
    remove_tree(subs)


def _raw(out: Path, sub_id: str) -> dict:
    return json.loads((out / "raw" / f"{sub_id}.json").read_text())


def test_a_batch_of_broken_uploads_is_graded(toy_root, hostile_dir, tmp_path, capsys):
    ids = make_hostile_intake_entries(hostile_dir)
    (hostile_dir / "control").mkdir()
    (hostile_dir / "control" / "toy.py").write_bytes(CONTROL.read_bytes())
    good_odd = os.path.join(os.fsencode(hostile_dir), b"good_\xff")  # an odd name, correct code: full marks
    os.mkdir(good_odd)
    with open(os.path.join(good_odd, b"toy.py"), "wb") as f:
        f.write(CONTROL.read_bytes())
    (hostile_dir / "=1+1").mkdir()  # a formula for a name: graded, and escaped in the gradebook
    (hostile_dir / "=1+1" / "toy.py").write_bytes(CONTROL.read_bytes())
    out = tmp_path / "out"

    assert grade.main(lab="labx", submissions_dir=str(hostile_dir), out=str(out), jobs=2, sandbox=False) == 0

    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig"))}
    assert set(rows) == {*ids, "control", "good_\\xff", "'=1+1"}
    for full in ("control", "good_\\xff", "'=1+1"):
        assert float(rows[full]["score"]) == 5.0, full
    console = capsys.readouterr().err
    for sub_id in ids:
        assert float(rows[sub_id]["score"]) == 0.0, sub_id
        first = _raw(out, sub_id)["errors"][0]
        assert EXPECTED[sub_id] in first and "\n" not in first, (sub_id, first)
        assert EXPECTED[sub_id] in (out / "feedback" / f"{sub_id}.md").read_text(), sub_id
        line = next(l for l in console.splitlines() if l.strip().startswith(sub_id + " "))
        assert EXPECTED[sub_id] in line, line
    assert (out / "summary.md").exists()


def test_an_exception_while_grading_is_that_entrys_error(toy_root, tmp_path, monkeypatch):
    subs = tmp_path / "subs"
    for name in ("boom", "control"):
        (subs / name).mkdir(parents=True)
        (subs / name / "toy.py").write_bytes(CONTROL.read_bytes())
    real = grade.runner.grade_staged

    def flaky(lab, staged, submission_id, **kw):
        if submission_id == "boom":
            raise MemoryError("out of memory in the grader")
        return real(lab, staged, submission_id, **kw)

    monkeypatch.setattr(grade.runner, "grade_staged", flaky)
    out = tmp_path / "out"
    assert grade.main(lab="labx", submissions_dir=str(subs), out=str(out), jobs=1, sandbox=False, quiet=True) == 0
    rows = {r["submission"]: r for r in csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig"))}
    assert rows["control"]["score"] == "5" and rows["boom"]["score"] == "0"
    boom = _raw(out, "boom")
    assert boom["errors"] == ["the grader failed on this submission: MemoryError: out of memory in the grader"]
    assert not boom["sha256"], "a grader failure must be retried by the next run, not kept"


def test_a_damaged_roster_does_not_stop_the_batch(toy_root, tmp_path):
    subs = tmp_path / "subs"
    (subs / "submission_1").mkdir(parents=True)
    (subs / "submission_1" / "toy.py").write_bytes(CONTROL.read_bytes())
    (subs / gradescope.METADATA).write_text("submission_1: [unclosed\n")
    out = tmp_path / "out"
    assert grade.main(lab="labx", submissions_dir=str(subs), out=str(out), jobs=1, sandbox=False, quiet=True) == 0
    assert next(csv.DictReader(open(out / "gradebook.csv", encoding="utf-8-sig")))["score"] == "5"
    (subs / gradescope.METADATA).write_text("submission_1:\n  :submitters: [7, {':name': null}]\nother: 3\n")
    assert platforms.read(subs).people["submission_1"].names == ("",)


# -- staging one entry ------------------------------------------------------------------
def test_each_broken_entry_stages_with_one_clear_problem(hostile_dir, tmp_path):
    ids = make_hostile_intake_entries(hostile_dir)
    entries = {e.id: e for e in staging.discover(hostile_dir)}
    assert set(entries) == set(ids)
    for sub_id in ids:
        st = staging.stage(entries[sub_id].path, ("toy.py",), tmp_path / "staged" / sub_id)
        assert st.problems and EXPECTED[sub_id] in st.problems[0], (sub_id, st.problems)
        assert not (tmp_path / "staged" / sub_id / "toy.py").exists()
        assert all("\n" not in p for p in st.problems)
        json.dumps(st.problems).encode("utf-8")  # writable anywhere


def test_an_unreadable_folder(tmp_path, monkeypatch):
    (tmp_path / "sub" / "inner").mkdir(parents=True)
    (tmp_path / "sub" / "inner" / "toy.py").write_text("x = 1\n")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("inner"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    if os.geteuid() == 0:  # root is never refused: refuse it here
        monkeypatch.setattr(staging.os, "scandir", scandir)
    else:
        (tmp_path / "sub" / "inner").chmod(0)
    try:
        st = staging.stage(tmp_path / "sub", ("toy.py",), tmp_path / "out")
    finally:
        (tmp_path / "sub" / "inner").chmod(0o755)
    assert st.problems == ["could not read folder inner: permission denied",
                           "file toy.py is missing from the submission"]
    assert str(tmp_path) not in " ".join(st.problems), "no grader paths in a student's feedback"


def test_walk_is_bounded_and_follows_no_links(tmp_path):
    root = tmp_path / "w"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("x")
    (root / "a" / "loop").symlink_to(root)  # a link loop is listed, never entered
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "toy.py").write_text("junk")
    tree = staging.walk(root)
    assert tree.files == {"a/b/f.txt": 1} and tree.other == {"a/loop"} and not tree.problems
    assert staging.walk(root, max_depth=1).problems == [
        "folders nested more than 1 levels deep were not searched"]
    assert set(staging.walk(root, max_depth=2).files) == {"a/b/f.txt"}
    assert "more than 2 files and folders" in staging.walk(root, max_entries=2).problems[0]


def test_zip_limits_and_a_found_file_keeps_quiet(tmp_path, monkeypatch):
    monkeypatch.setattr(staging, "MAX_ENTRIES", 3)
    members = {f"x/{i}.txt": b"" for i in range(5)} | {"x/toy.py": b"x = 1\n"}
    (tmp_path / "many.zip").write_bytes(_zip_bytes(members))
    st = staging.stage(tmp_path / "many.zip", ("toy.py",), tmp_path / "o1")
    assert st.problems[0].startswith("the submission holds more than 3 files and folders")
    assert st.problems[1] == "file toy.py is missing from the submission"
    members = {"toy.py": b"x = 1\n"} | {f"x/{i}.txt": b"" for i in range(5)}
    (tmp_path / "first.zip").write_bytes(_zip_bytes(members))  # found before the limit: no problem at all
    st = staging.stage(tmp_path / "first.zip", ("toy.py",), tmp_path / "o2")
    assert not st.problems and (tmp_path / "o2" / "toy.py").read_bytes() == b"x = 1\n"
    deep = "/".join(["d"] * (staging.MAX_DEPTH + 1)) + "/toy.py"
    ok = "/".join(["d"] * staging.MAX_DEPTH) + "/toy.py"
    (tmp_path / "deep.zip").write_bytes(_zip_bytes({deep: b"x = 1\n"}))
    assert "nested more than" in staging.stage(tmp_path / "deep.zip", ("toy.py",), tmp_path / "o3").problems[0]
    (tmp_path / "ok.zip").write_bytes(_zip_bytes({ok: b"x = 1\n"}))
    assert not staging.stage(tmp_path / "ok.zip", ("toy.py",), tmp_path / "o4").problems


def test_a_zip_bomb_is_still_refused(tmp_path):
    raw = bytearray(_zip_bytes({"toy.py": b"#" * (3 * staging.MAX_FILE_BYTES)}))
    info = zipfile.ZipFile(io.BytesIO(bytes(raw))).infolist()[0]
    cd = bytes(raw).rindex(b"PK\x01\x02")  # the directory lies about the size: the bounded read still stops
    raw[cd + 24:cd + 28] = (100).to_bytes(4, "little")
    raw[info.header_offset + 22:info.header_offset + 26] = (100).to_bytes(4, "little")
    (tmp_path / "bomb.zip").write_bytes(raw)
    st = staging.stage(tmp_path / "bomb.zip", ("toy.py",), tmp_path / "out")
    assert st.problems and not (tmp_path / "out" / "toy.py").exists()


def test_ids_are_text_and_unique(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice.zip").write_bytes(_zip_bytes({"toy.py": b""}))
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"b\xffd"))
    (tmp_path / "b\\xffd").mkdir()
    (tmp_path / "line\nbreak").mkdir()
    (tmp_path / ("é" * 120)).mkdir()  # 240 bytes: its results file name must still fit
    (tmp_path / "notes.txt").write_text("")
    ids = [e.id for e in staging.discover(tmp_path)]
    assert ids[:5] == ["alice", "alice~2", "b\\xffd", "b\\xffd~2", "line\\nbreak"]
    assert len(ids) == 6 and len(ids[5].encode()) <= staging.MAX_ID_BYTES and ids[5].startswith("éé")
    for i in ids:
        i.encode("utf-8")


def test_intake_problems_are_translated(tmp_path):
    (tmp_path / "t.zip").write_bytes(b"PK\x03\x04 cut short")
    with i18n.language("vi"):
        st = staging.stage(tmp_path / "t.zip", ("toy.py",), tmp_path / "out")
    assert st.problems[0].startswith("không đọc được t.zip: tệp zip bị hỏng")


# -- the gradebook ------------------------------------------------------------------------
def test_gradebook_cells_run_no_formulas(toy_lab):
    hostile = ["=1+1", "+1", "-2", "@SUM(A1:A9)", "\tx", "\rx", '=HYPERLINK("http://evil.example","x")']
    plain = ["alice", "Nguyễn Văn An", "a=b", "3"]
    rows = [results.SubmissionResult(submission=s, lab="labx") for s in hostile + plain]
    people = {s: roster.Submitters((s,), (f"{s}@x",), ("-7",)) for s in hostile + plain}
    people["alice"] = roster.Submitters(("=cmd|' /C calc'!A0",), ("@evil",), ("42",))
    text = gradebook.csv_text(rows, toy_lab.manifest, people)
    assert text.startswith(gradebook.BOM)  # Excel reads UTF-8 only with it
    text = text[len(gradebook.BOM):]
    book = {r["submission"]: r for r in csv.DictReader(io.StringIO(text))}
    assert len(list(csv.reader(io.StringIO(text)))) == 1 + len(rows), "a CR must not end a row"
    shown = {s: "'" + s.replace("\r", "\n") for s in hostile}  # a CR is a LF (quoted) in the file
    assert set(book) == set(shown.values()) | set(plain)
    for s in hostile:
        r = book[shown[s]]
        assert r["name"] == shown[s] and r["email"] == shown[s] + "@x" and r["sid"] == "'-7"
        assert r["score"] == "0" and r["max_score"] == "5" and r["add"] == "0"  # numbers stay numbers
    assert book["alice"]["name"] == "'=cmd|' /C calc'!A0" and book["alice"]["email"] == "'@evil"
    assert book["alice"]["sid"] == "42" and book["Nguyễn Văn An"]["name"] == "Nguyễn Văn An"
    assert book["a=b"]["submission"] == "a=b" and book["3"]["sid"] == "'-7"
    # the problems column holds the students' file names and messages: escaped too
    odd = results.SubmissionResult(submission="p", lab="labx", errors=['=HYPERLINK("http://evil.example")\nmore'])
    cell = next(csv.DictReader(io.StringIO(gradebook.csv_text([odd], toy_lab.manifest)[1:])))["problems"]
    assert cell == "'=HYPERLINK(\"http://evil.example\")"
