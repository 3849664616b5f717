"""Round 5: the defences of issues 35 and 37, attacked as a hostile student (and a careless
instructor) would (``docs/security.md``, "Round 5").

Every attack of issue 35's "What succeeded" is rebuilt from its description, beside new
variants of the same classes, in **one** sandboxed batch (the default sandbox, through the
CLI), shared by the module: a Canvas download (a reference and a stub as controls, three
display names that claim another's id, one of them with ``_LATE_``) with plain folders and
zips dropped beside it (escaped quotes as predictions and as the notebook, an oversize and a
forged ``predictions.json``, one enormous in width, a notebook of many tiny cells and one of
thousands of answers, a zip bomb, a zip of 100,001 members, a name of HTML, newlines and a
formula, two names equal after Unicode normalisation).  For each: the batch finishes with a
gradebook, the controls are right, no other student's grade, row, feedback or file is
touched, and the attacker's row says what happened.  The rest (the Moodle worksheet, the
marking page, marks files, ``--only``, histories, CSV cells) are direct calls: CPU time,
never the wall clock, for anything timed.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import time
import unicodedata
import zipfile
from pathlib import Path

import pytest

from autograder.batch import gradebook, manual, platforms, record
from autograder.batch import predictions_report as report
from autograder.cli import main
from autograder.core import labs, stubs
from autograder.grading import predictions as P
from autograder.grading import staging

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MIB2 = 2 * 2**20
CPU_LIMIT_S = 1.0
BOB, ANN, ZED = "123457", "123458", "123459"  # Canvas user ids of the honest students
MALLORY, MALLORY2, MALLORY3 = "9000001", "9000002", "9000003"
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the default sandbox needs root (as on CI)")

WRITTEN = (Path(__file__).parents[1] / "fixtures" / "written_question.toml").read_text()  # the toy's written question
NFC, NFD = unicodedata.normalize("NFC", "Ánh"), unicodedata.normalize("NFD", "Ánh")
EVIL_NAME = "evil\n## forged heading\n| reference | 0 |<img src=x onerror=alert(1)>"
FORMULA_NAME = "=HYPERLINK(\"x.invalid\"&A1)+cmd|' -C calc'!A0"


def _at(second: int) -> str:
    return f"2026-05-01T12:00:{second:02d}.000000Z"


def _notebook_cells(cells: list[dict]) -> bytes:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      separators=(",", ":")).encode()


def _answer(text: str, i: int = 0) -> dict:
    return {"cell_type": "markdown", "id": f"a{i}", "metadata": {"tags": ["answer:essay"]}, "source": text}


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _rows(out: Path) -> dict[str, dict[str, str]]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


def _csv(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text("utf-8-sig"), newline="")))


def _lab_root(root: Path) -> Path:
    """The toy lab with a question marked by hand and participation points for predictions."""
    shutil.copytree(FIXTURES / "toyroot", root)
    lab_dir = root / "assignments" / "labx_toy"
    text = (lab_dir / "lab.toml").read_text().replace("[[variants]]", WRITTEN + "\n[[variants]]", 1)
    (lab_dir / "lab.toml").write_text(text + "\n[predictions_policy]\npoints = 1\n")
    (lab_dir / "labx_toy.ipynb").write_bytes(_notebook_cells([_answer("*Your answer here.*")]))
    stubs.write(labs.get("labx", root))
    return root


# -- the one sandboxed batch ---------------------------------------------------------------
PLAIN = ("quoted_predictions", "quoted_notebook", "oversize_predictions", "forged_history", "wide_predictions",
         "long_history", "tiny_cells", "many_cells", "many_answers", "bomb", "many_members", "long_names",
         f"{NFC}~2", NFD)  # NFD sorts first; the NFC folder, equal to it after normalisation, is told apart


def _build(root: Path, subs: Path, roster: Path) -> None:
    ref = stubs.unmarked((root / "solutions" / "labx_toy" / "toy.py").read_text()).encode()
    stub = stubs.texts(labs.get("labx", root))["toy.py"].encode()
    subs.mkdir()
    # Canvas's download: the controls, and three display names that claim another student's id
    (subs / f"bob_{BOB}_5001_toy.py").write_bytes(ref)
    (subs / f"ann_{ANN}_5002_toy.py").write_bytes(stub)
    (subs / f"zed_{ZED}_5009_toy.py").write_bytes(ref)
    (subs / f"zed_{ZED}_5010_labx_toy.ipynb").write_bytes(_notebook_cells([_answer("Because it is a length.")]))
    (subs / f"bob_{BOB}_{MALLORY}_5003_lab.zip").write_bytes(_zip({"lab/toy.py": stub}))  # HIGH, round 4
    (subs / f"bobby_{BOB}_{MALLORY2}_5004_lab.zip").write_bytes(_zip({"lab/toy.py": stub}))  # MEDIUM, round 4
    (subs / f"ann_LATE_{ANN}_{MALLORY3}_5005_toy.py").write_bytes(stub)  # new: "_LATE_" in the display name
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(
        [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Toy lab (8)"],
         ["    Points Possible", "", "", "", "", "8"]]
        + [[n, u, "", "", "S1", ""] for n, u in (("Bob", BOB), ("Ann", ANN), ("Zed", ZED), (FORMULA_NAME, MALLORY),
                                                 ("Mallory 2", MALLORY2), ("Mallory 3", MALLORY3))])
    roster.write_text(buf.getvalue(), "utf-8")  # Mallory's display name in Canvas: a formula

    def plain(name: str, code: bytes = ref, **files: bytes) -> None:
        (subs / name).mkdir()
        (subs / name / "toy.py").write_bytes(code)
        for file, data in files.items():
            (subs / name / file.replace("__", ".")).write_bytes(data)

    quotes = b'"' + b'\\"' * ((MIB2 - 16) // 2)
    plain("quoted_predictions", predictions__json=quotes)  # HIGH, round 4
    plain("quoted_notebook", labx_toy__ipynb=quotes)  # HIGH, round 4
    plain("oversize_predictions", predictions__json=b" " * (MIB2 + MIB2 // 4))  # LOW, round 4
    forged = {"norm_of_ones": {"value": 2.0, "at": _at(1), "changes": [{"value": 10.0, "at": _at(0)}],
                               "locked_at": _at(5), "measured": 10.0}}
    plain("forged_history", predictions__json=json.dumps({"format": 1, "predictions": forged}).encode())  # MEDIUM
    # new: enormous in width, not depth: an object of 170,000 keys; a history far longer than allowed
    wide = b'{"format":1,"predictions":{' + b",".join(b'"k%d":1' % i for i in range(170_000)) + b"}}"
    plain("wide_predictions", predictions__json=wide)
    changes = [{"value": 2.0, "at": _at(i % 60)} for i in range(30_000)]
    plain("long_history", predictions__json=json.dumps({"format": 1, "predictions": {"norm_of_ones": {
        "value": 1.0, "at": _at(0), "changes": changes, "locked_at": _at(59), "measured": 10.0}}}).encode())
    # new: a notebook of 100,000 tiny cells (over the item limit); 60,000 (under it); 18,000 answers to one question
    plain("tiny_cells", labx_toy__ipynb=_notebook_cells([{}] * 100_000))
    plain("many_cells", labx_toy__ipynb=_notebook_cells([{"cell_type": "raw", "source": ""}] * 60_000
                                                        + [_answer("Because it is a length.")]))
    plain("many_answers", labx_toy__ipynb=_notebook_cells([_answer("x", i) for i in range(18_000)]))
    # new: a zip bomb (the notebook: 512 MiB of spaces in 0.5 MB) and a zip of 100,001 members
    with zipfile.ZipFile(subs / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("toy.py", ref)
        with z.open("labx_toy.ipynb", "w", force_zip64=True) as f:
            chunk = b" " * (1 << 20)
            for _ in range(512):
                f.write(chunk)
    with zipfile.ZipFile(subs / "many_members.zip", "w") as z:
        z.writestr("toy.py", ref)
        for i in range(staging.MAX_ZIP_MEMBERS):
            z.writestr(f"m/{i}", b"")
    with zipfile.ZipFile(subs / "long_names.zip", "w") as z:  # names of 60 KiB (the format allows 64)
        for i, shape in enumerate(("a/" * 30_000 + "toy.py", "\\" * 60_000 + "toy.py", "." * 60_000 + "/toy.py")):
            z.writestr(f"{i}/{shape}", stub)
        z.writestr("toy.py", ref)
    # new: a name of newlines, Markdown and HTML, a formula; two names equal once normalised
    plain(EVIL_NAME, stub)
    plain(FORMULA_NAME, stub)
    plain(NFC, ref)
    plain(NFD, stub)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """(rows, out, stderr, exit status) of the one sandboxed batch."""
    from autograder.core import i18n

    tmp = tmp_path_factory.mktemp("round5")
    root = _lab_root(tmp / "toyroot")
    subs, out = tmp / "subs", tmp / "out"
    _build(root, subs, tmp / "roster.csv")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRONLAW_ROOT", str(root))
        mp.setenv("COLUMNS", "250")
        mp.setenv(i18n.ENV, "en")
        err = io.StringIO()
        mp.setattr("sys.stderr", err)
        start = time.process_time()
        rc = main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2", "--platform", "canvas",
                   "--gradebook", str(tmp / "roster.csv")])
        cpu = time.process_time() - start
    return {"rows": _rows(out), "out": out, "err": err.getvalue(), "rc": rc, "cpu": cpu, "root": root}


def test_the_batch_finishes_with_every_row_and_the_controls_right(batch):
    rows = batch["rows"]
    assert batch["rc"] == 0, batch["err"][-3000:]
    assert batch["cpu"] < 120  # the main process's CPU, all reading included
    for sub in (f"bob_{BOB}", f"zed_{ZED}"):
        assert (rows[sub]["add"], rows[sub]["norm"]) == ("3", "2"), rows[sub]
    assert rows[f"bob_{BOB}"]["problems"] == "" and rows[f"zed_{ZED}"]["problems"] == ""
    assert (rows[f"ann_{ANN}"]["add"], rows[f"ann_{ANN}"]["norm"]) == ("0", "0")
    assert rows[f"ann_{ANN}"]["problems"] == ""
    assert set(rows) == {f"bob_{BOB}", f"ann_{ANN}", f"zed_{ZED}", f"bob_{BOB}_{MALLORY}_5003_lab.zip",
                         f"bobby_{BOB}_{MALLORY2}_5004_lab.zip", f"ann_LATE_{ANN}_{MALLORY3}_5005_toy.py",
                         staging.entry_id(EVIL_NAME), gradebook.text_cell(FORMULA_NAME), *PLAIN}
    assert len(rows) == 22  # NFC and NFD: two rows


# -- identity: a display name never takes another's place ----------------------------------
@pytest.mark.parametrize("attacker", [f"bob_{BOB}_{MALLORY}_5003_lab.zip", f"bobby_{BOB}_{MALLORY2}_5004_lab.zip",
                                      f"ann_LATE_{ANN}_{MALLORY3}_5005_toy.py"])
def test_a_display_name_claiming_another_id_costs_only_its_own_file(batch, attacker):
    """Round 4's HIGH (``bob_123457``) and MEDIUM (``bobby_123457``), and a display name holding
    ``_LATE_`` before the victim's id: no one's file, flagged, nothing of it goes back to Canvas."""
    rows, out = batch["rows"], batch["out"]
    victim = ANN if "ann" in attacker else BOB
    said = rows[attacker]["problems"]
    assert rows[attacker]["score"] == "0"
    assert "reads as the upload of more than one student" in said and f"holds the id {victim} of another" in said
    feedback = (out / "feedback" / f"{attacker}.md").read_text()
    assert "reads as the upload of more than one student" in feedback
    assert f"canvas.csv leaves out {attacker}" in " ".join(batch["err"].split())


def test_the_victims_keep_their_grade_row_feedback_and_lateness(batch):
    out, err = batch["out"], " ".join(batch["err"].split())
    canvas_rows = {r[1]: (r[0], r[-1]) for r in _csv(out / "canvas.csv")[2:]}
    assert canvas_rows == {BOB: ("Bob", "5"), ANN: ("Ann", "0"), ZED: ("Zed", "5"),
                           MALLORY: (gradebook.text_cell(FORMULA_NAME), "0"), MALLORY2: ("Mallory 2", "0"),
                           MALLORY3: ("Mallory 3", "0")}  # a formula in a display name: escaped
    with zipfile.ZipFile(out / "canvas-feedback.zip") as z:
        assert sorted(z.namelist()) == [f"ann_{ANN}_5002_labx-feedback.md", f"bob_{BOB}_5001_labx-feedback.md",
                                        f"zed_{ZED}_5010_labx-feedback.md"]  # trusted ids only
        assert "**Score: 5 / 8**" in z.read(f"bob_{BOB}_5001_labx-feedback.md").decode()
    for honest in (f"bob_{BOB}", f"ann_{ANN}"):
        assert "lab.zip" not in (out / "feedback" / f"{honest}.md").read_text()
    # "_LATE_" in Mallory's display name marks her own file LATE, never Ann's
    assert f"ann_LATE_{ANN}_{MALLORY3}_5005_toy.py: the platform marked this submission LATE" in err
    assert f"ann_{ANN}: the platform marked" not in err


# -- bounded reads: each attack costs its own file ------------------------------------------
def test_round_4_reads_cost_only_their_own_file(batch):
    rows, out = batch["rows"], batch["out"]
    fb = lambda s: (out / "feedback" / f"{s}.md").read_text()  # noqa: E731
    for sub in ("quoted_predictions", "quoted_notebook", "oversize_predictions", "forged_history", "wide_predictions",
                "long_history", "tiny_cells", "many_cells", "many_answers", "bomb", f"{NFC}~2"):
        assert (rows[sub]["add"], rows[sub]["norm"]) == ("3", "2"), sub  # the code's points, all of them
    assert rows["quoted_predictions"]["problems"] == "" and "could not be read (not JSON" in fb("quoted_predictions")
    assert "labx_toy.ipynb was not read" in rows["quoted_notebook"]["problems"]
    assert rows["oversize_predictions"]["problems"] == ""
    assert "predictions.json could not be read (larger than 2 MiB)" in fb("oversize_predictions")
    m = labs.get("labx", batch["root"]).manifest
    forged = report.kept(out, "forged_history", m).records["norm_of_ones"]
    assert forged.in_force()[0] == 2.0 and not forged.consistent
    assert "of those, an inconsistent history (a time goes back, or is later than the hand-in): 1" in (
        out / "summary.md").read_text()


def test_wide_rather_than_deep_inputs_cost_only_their_own_file(batch):
    """Valid JSON enormous in count and width: 170,000 keys, a history of 30,000 changes, a notebook
    of 100,000 tiny cells, 60,000 cells and an answer, 18,000 answers to one question."""
    rows, out = batch["rows"], batch["out"]
    fb = lambda s: (out / "feedback" / f"{s}.md").read_text()  # noqa: E731
    assert rows["wide_predictions"]["problems"] == "" and "0 of 2 predictions were made" in fb("wide_predictions")
    assert rows["long_history"]["problems"] == ""
    assert "predictions.json could not be read (changes must be a list of at most 200" in fb("long_history")
    assert "more than 100000 lists and objects" in rows["tiny_cells"]["problems"]
    assert rows["many_cells"]["problems"] == ""
    assert "Because it is a length." in json.dumps(manual._record(out, "many_cells"))
    assert rows["many_answers"]["problems"] == ""


def test_archives_cost_only_their_own_grade(batch):
    rows = batch["rows"]
    assert rows["bomb"]["problems"] == "file labx_toy.ipynb is larger than 2 MiB"  # read no further
    said = rows["many_members"]["problems"]
    assert "it lists 100001 files, more than the 100000 a zip handed in may hold, so it was not opened" in said
    assert rows["many_members"]["score"] == "0"
    assert (rows["long_names"]["add"], rows["long_names"]["norm"]) == ("3", "2")  # the top-level toy.py
    assert len(rows["long_names"]["problems"]) < 2000


# -- names: markup, newlines, formulas, Unicode --------------------------------------------
def test_a_name_of_markup_newlines_and_a_formula_stays_text(batch):
    out, rows = batch["out"], batch["rows"]
    evil = staging.entry_id(EVIL_NAME)
    assert "\n" not in evil and rows[evil]["score"] == "0"
    assert gradebook.text_cell(FORMULA_NAME) in rows and FORMULA_NAME not in rows
    summary = (out / "summary.md").read_text()
    assert not any(line.startswith(("## forged", "| reference | 0 |")) for line in summary.splitlines())
    assert "<img" not in summary
    for line in (out / "record" / "history.jsonl").read_text().splitlines():
        json.loads(line)  # one JSON object a line, whatever the names
    names = sorted(p.name for p in (out / "feedback").iterdir())
    assert len(names) == 22 and all("/" not in n and "\n" not in n for n in names)
    for path in (p for p in out.rglob("*.csv") if "files" not in p.parts):  # record/files: the roster given
        for row in _csv(path):  # the formula (a folder's name, a display name): text in every CSV written
            assert not any(c.startswith(("=", "+", "@")) for c in row), (path, row)


def test_two_names_equal_after_normalisation_keep_their_own_grades(batch):
    """NFD sorts first and keeps its name; the NFC folder, which a person cannot tell from it, is ``~2``."""
    out, rows = batch["out"], batch["rows"]
    assert (rows[f"{NFC}~2"]["score"], rows[NFD]["score"]) == ("5", "0")
    assert "**Score: 5 / 8**" in (out / "feedback" / f"{NFC}~2.md").read_text()
    assert "**Score: 0 / 8**" in (out / "feedback" / f"{NFD}.md").read_text()


def test_ids_equal_after_normalisation_are_told_apart(tmp_path):
    """Two folders equal after NFC (or case folding) get ids a person and a file system can tell apart."""
    for name in (NFC, NFD, "Alice", "alice"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "toy.py").write_text("x")
    ids = [e.id for e in platforms.read(tmp_path).entries]
    assert len({unicodedata.normalize("NFC", i).casefold() for i in ids}) == 4, ids


# -- the marking page, on the batch's own output ------------------------------------------
@pytest.fixture(scope="module")
def page(batch):
    """A Flask test client of ``autograder mark`` over the batch's output, and the page's token."""
    import re

    from autograder.batch.marking.app import create_app

    app = create_app(labs.get("labx", batch["root"]), batch["out"])
    client = app.test_client()
    first = client.get(f"/q/essay/zed_{ZED}", base_url="http://127.0.0.1:8765")
    token = re.search(r'data-token="([^"]+)"', first.get_data(as_text=True))[1]
    return client, token


LOCAL = "http://127.0.0.1:8765"


def _save(client, headers, base=LOCAL, **body):
    body = {"submission": f"zed_{ZED}", "question": "essay", "points": 2, "marker": "TA", **body}
    return client.post("/api/mark", json=body, headers=headers, base_url=base)


def test_a_save_from_another_origin_is_refused(page, batch):
    """CSRF: a POST without the page's token, and a form's text/plain POST (what another origin
    may send without a preflight), change no mark."""
    client, token = page
    assert _save(client, {}).status_code == 403
    form = client.post("/api/mark", data='{"submission": "zed_123459", "question": "essay", "points": 2, '
                       '"marker": "x"}', content_type="text/plain", base_url=LOCAL)
    assert form.status_code == 403
    with_token = client.post("/api/mark", data='{"submission": "zed_123459", "question": "essay", "points": 2, '
                             '"marker": "x"}', content_type="text/plain", headers={"X-Marking-Token": token},
                             base_url=LOCAL)
    assert with_token.status_code == 400  # not JSON as JSON is sent: nothing taken
    assert (f"zed_{ZED}", "essay") not in record.read_marks(batch["out"])


def test_emptying_the_box_never_takes_a_mark_saved_after_the_page_looked(page, batch, monkeypatch):
    """Minh empties the box just as Lan's save lands: the record's lock decides, so Lan's mark
    is a conflict shown to Minh (409) and kept, never removed unseen; removing it again is on purpose."""
    client, token = page
    key, real_locked = (f"zed_{ZED}", "essay"), record.locked

    @contextlib.contextmanager
    def lan_saves_first(out):  # Lan's save takes the lock first, after Minh's page looked
        monkeypatch.setattr(record, "locked", real_locked)
        record.merge_marks(out, {key: record.Entry(2.0, "", "Lan", record.now())})
        with real_locked(out):
            yield

    monkeypatch.setattr(record, "locked", lan_saves_first)
    got = _save(client, {"X-Marking-Token": token}, points=None, marker="Minh")
    assert got.status_code == 409 and got.get_json()["conflict"]["marker"] == "Lan"
    assert record.read_marks(batch["out"])[key].marker == "Lan"
    got = _save(client, {"X-Marking-Token": token}, points=None, marker="Minh", replace=True)
    assert got.status_code == 200 and key not in record.read_marks(batch["out"])


def test_a_page_reached_by_another_host_name_gives_no_token(page, batch):
    """DNS rebinding: a page of ``evil.example`` whose name is made to resolve to 127.0.0.1 reaches
    the server on its default port as the same origin as itself: it may read the page (and its
    token) and save with it.  Only the names of this machine are served."""
    client, token = page
    for host in ("http://evil.example:8765", "http://127.0.0.1.nip.io:8765"):
        got = client.get(f"/q/essay/zed_{ZED}", base_url=host)
        assert got.status_code == 400 and token not in got.get_data(as_text=True), host
        assert _save(client, {"X-Marking-Token": token}, base=host).status_code == 400
    assert (f"zed_{ZED}", "essay") not in record.read_marks(batch["out"])
    assert client.get(f"/q/essay/zed_{ZED}", base_url="http://localhost:8765").status_code == 200


def test_paths_outside_the_answers_are_not_served(page):
    client, _token = page
    for path in ("/q/essay/..%2F..%2Frecord%2Fmarks", "/q/essay/../../record/marks.json", "/q/..%2Fx/zed_123459",
                 "/static/..%2F..%2F..%2Frecord%2Fmarks.json", "/q/essay/%2e%2e", "/q/add/zed_123459",
                 "/q/essay/" + "x" * 5000):
        got = client.get(path, base_url=LOCAL)
        assert got.status_code in (404, 400), path
        assert b"marker" not in got.data or got.status_code == 404


def test_hostile_names_and_many_answers_render_as_text_in_bounded_cpu(page, batch):
    client, _token = page
    evil = staging.entry_id(EVIL_NAME)
    from urllib.parse import quote

    for sub in (evil, gradebook.text_cell(FORMULA_NAME).lstrip("'"), "many_answers", "many_cells", "tiny_cells"):
        start = time.process_time()
        got = client.get("/q/essay/" + quote(sub, safe=""), base_url=LOCAL)
        assert time.process_time() - start < CPU_LIMIT_S * 3, sub
        assert got.status_code == 200, (sub, got.status_code)
        text = got.get_data(as_text=True)
        assert "<img src=x" not in text and "<script" not in text.replace('<script src="/static/', "")


# -- marks: another lab's question, a submission that does not exist, a second TA -------------
def _marks_file(path: Path, rows: list[list[str]]) -> Path:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([["submission", "question", "points", "comment"], *rows])
    path.write_text(buf.getvalue(), "utf-8")
    return path


def test_a_marks_file_can_mark_only_this_labs_questions_by_hand(batch, tmp_path):
    m = labs.get("labx", batch["root"]).manifest
    for qid, says in (("gil_thread", "no question 'gil_thread'"), ("add", "scored by its tests"),
                      ("predictions", "participation points"), ("essay\tsecond", "no question")):
        with pytest.raises(ValueError, match=says):
            manual.read_marks(_marks_file(tmp_path / "m.csv", [[f"zed_{ZED}", qid, "1", ""]]), m)
    for points in ("nan", "inf", "-0.5", "2.5", "1e309", "=2"):
        with pytest.raises(ValueError, match="not a number|outside"):
            manual.read_marks(_marks_file(tmp_path / "m.csv", [[f"zed_{ZED}", "essay", points, ""]]), m)
    ghost = manual.read_marks(_marks_file(tmp_path / "m.csv", [["no_such_student", "essay", "2", ""]]), m)
    assert manual.unknown(ghost, set(batch["rows"])) == [
        "the manual marks name 'no_such_student', which is not a submission of this batch: its marks are not used"]


def test_a_second_tas_marks_never_silently_replace_the_firsts(tmp_path):
    first = record.Entry(2.0, "Good.", "Lan", record.now())
    assert record.merge_marks(tmp_path, {("s1", "essay"): first}).added == [("s1", "essay")]
    for marker in ("Minh", ""):  # another TA, or a file with no marker at all
        merge = record.merge_marks(tmp_path, {("s1", "essay"): record.Entry(1.0, "", marker, record.now()),
                                              ("s2", "essay"): record.Entry(1.0, "", marker, record.now())})
        assert [c[:2] for c in merge.conflicts] == [("s1", "essay")]
        assert record.read_marks(tmp_path) == {("s1", "essay"): first}  # nothing written, s2 neither


def test_history_prints_a_students_name_as_one_line_of_text(batch, capsys):
    """A display name (Canvas's export, Moodle's worksheet) holding a newline and a terminal's escape
    sequence: ``autograder history --only`` prints it as text, on its one line, never a forged run."""
    from autograder.commands import history

    out = batch["out"]
    grades = record.read_grades(out)
    grades[f"bob_{BOB}"] = record.Grade(5, 5, 0, None, {}, names=("Bob\n2026-01-01  autograder grade --forged\x1b[2J",))
    record.write_grades(out, grades)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRONLAW_ROOT", str(batch["root"]))
        assert history.main(lab="labx", out=str(out), only=f"bob_{BOB}") == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and not any(line.startswith("2026-01-01  autograder grade --forged")
                                              for line in printed.splitlines())
    assert f"now: bob_{BOB} (Bob\\n2026-01-01" in printed


def test_the_moodle_worksheet_escapes_every_name_a_student_chose(toy_root, tmp_path):
    """Round 4's MEDIUM (a full name ``=1+1 ...`` in moodle-worksheet.csv, no --gradebook given), and
    the other characters a spreadsheet starts a formula with; a folder that claims another's id in
    two places (its name and a second suffix) joins no one's submission."""
    ref = stubs.unmarked((toy_root / "solutions" / "labx_toy" / "toy.py").read_text())
    subs = tmp_path / "subs"
    names = {"12": "Bo Tran", "14": "=1+1 Eve", "15": "@SUM(A1) Eve", "16": "\t=1+1 Eve", "17": "+1 Eve",
             "18": "Bo Tran 12"}
    for pid, name in names.items():
        folder = subs / f"{name}_{pid}_assignsubmission_file"
        folder.mkdir(parents=True)
        (folder / "toy.py").write_text(ref if pid == "12" else "def add(a, b):\n    return 0\n")
    claim = subs / "Bo Tran_12_assignsubmission_file_19_assignsubmission_file"
    claim.mkdir()
    (claim / "toy.py").write_text("def add(a, b):\n    return 0\n")
    # flat (no "Download submissions in folders"): the other's prefix inside her own file's name
    (subs / "Eve_20_assignsubmission_file_Bo Tran_12_assignsubmission_file_toy.py").write_text("x = 1\n")
    out = tmp_path / "out"
    assert main(["grade", "labx", str(subs), "--out", str(out), "--no-sandbox", "--jobs", "1"]) == 0
    sheet = _csv(out / "moodle-worksheet.csv")
    assert not any(c.startswith(("=", "+", "@", "\t")) for row in sheet[1:] for c in row[1:2]), sheet
    by_pid = {r[0]: r for r in sheet[1:]}
    assert by_pid["Participant 12"][1:3] == ["Bo Tran", "5"]
    rows = _rows(out)
    assert rows["Bo Tran_12"]["score"] == "5" and rows["Bo Tran_12"]["problems"] == ""
    assert "holds the id 12 of another student" in rows["Bo Tran 12_18"]["problems"]
    assert "holds the id 12 of another student" in rows["Bo Tran_12_assignsubmission_file_19"]["problems"]
    assert "file toy.py is missing" in rows["Eve_20"]["problems"] and rows["Eve_20"]["score"] == "0"
    with zipfile.ZipFile(out / "moodle-feedback.zip") as z:  # Moodle's importer: the second "_" part is the id
        assert sorted(n.split("/")[0].split("_")[1] for n in z.namelist()) == sorted([*names, "19", "20"])


def test_what_a_hand_edited_prediction_history_can_and_cannot_fake():
    """docs/predictions.md, both lists: the lock taken away or moved is a consistent history (can
    fake, documented); a time with an offset, a leap second, or a change with no first value makes the
    file unreadable (cannot)."""
    moved = P.Record(value=2.0, at=_at(1), changes=[(10.0, _at(6))], locked_at=_at(7), measured=10.0)
    gone = P.Record(value=2.0, at=_at(1), changes=[(10.0, _at(6))], locked_at=None, measured=10.0)
    assert moved.in_force()[0] == gone.in_force()[0] == 10.0 and moved.consistent and gone.consistent
    for at in ("2026-05-01T19:00:00+07:00", "2026-05-01T19:00:00+07:00Z", "2026-05-01T23:59:60Z",
               "2026-05-01t12:00:00z"):
        with pytest.raises(ValueError):
            P._record({"value": 2.0, "at": at}, None)
    with pytest.raises(ValueError, match="without a first value"):
        P._record({"changes": [{"value": 2.0, "at": _at(1)}]}, None)


# -- more variants, by direct calls -------------------------------------------------------
def test_a_zip_can_write_nothing_outside_its_own_staging_folder(tmp_path):
    """Members named ``../victim/toy.py``, ``/etc/...``, a link, and zips nested 40 deep: staging
    writes only its own folder, takes one ``toy.py``, and stays within the CPU limit."""
    ref = (FIXTURES / "toyroot" / "solutions" / "labx_toy" / "toy.py").read_bytes()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "toy.py").write_bytes(b"# the victim's own\n")
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../victim/toy.py", b"# overwritten\n")
        z.writestr("/tmp/../" + str(victim.relative_to("/")) + "/notes.txt", b"x")
        link = zipfile.ZipInfo("lab/link.py")
        link.external_attr = (0o120777 << 16)
        z.writestr(link, str(victim / "toy.py"))
        z.writestr("lab/toy.py", ref)
    st = staging.stage(evil, ("toy.py",), tmp_path / "staged")
    assert (victim / "toy.py").read_bytes() == b"# the victim's own\n" and sorted(os.listdir(victim)) == ["toy.py"]
    assert st.found == ["toy.py"] and (tmp_path / "staged" / "toy.py").read_bytes() in (ref, b"# overwritten\n")
    assert sorted(os.listdir(tmp_path / "staged")) == ["toy.py"]
    inner = _zip({"toy.py": ref})
    for i in range(40):
        inner = _zip({f"level{i}.zip": inner})
    (tmp_path / "nested.zip").write_bytes(inner)
    start = time.process_time()
    nested = staging.stage(tmp_path / "nested.zip", ("toy.py",), tmp_path / "staged2")
    assert time.process_time() - start < CPU_LIMIT_S
    assert nested.found == [] and "is an archive inside a zip, which the grader does not open" in nested.problems[0]


def test_ids_never_hold_the_records_separators():
    """The record keys a mark ``<submission>\\t<question>``: an id is one printable line, so no
    folder name can end up marking another student's question."""
    for name in ("s1_an\tessay", "s1\n", "a\rb", "x\x00y"):
        ident = staging.entry_id(name)
        assert not any(c in ident for c in "\t\n\r\x00"), ident


def test_canvas_names_of_other_scripts_never_take_a_place(toy_root, tmp_path):
    """A display name in Arabic-Indic digits equal to Bob's id (``bob_١٢٣٤٥٧``), and one in fullwidth
    letters (``ｂｏｂ``): Mallory's file is never Bob's; ``--only bob`` names both students."""
    ref = stubs.unmarked((toy_root / "solutions" / "labx_toy" / "toy.py").read_text())
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / f"bob_{BOB}_5001_toy.py").write_text(ref)
    (subs / f"bob_\u0661\u0662\u0663\u0664\u0665\u0667_{MALLORY}_5003_toy.py").write_text("x = 1\n")
    (subs / f"\uff42\uff4f\uff42_{MALLORY2}_5004_toy.py").write_text("x = 1\n")
    intake = platforms.read(subs, "canvas")
    users = intake.state["users"]
    assert users[f"bob_{BOB}"] == BOB and list(users.values()).count(BOB) == 1
    assert not any(e.id != f"bob_{BOB}" and BOB in (intake.people[e.id].ids or ()) for e in intake.entries)
    from autograder.commands import grade

    assert isinstance(grade.chosen(intake, "bob"), str)  # ambiguous: listed, never picked


def test_the_page_refuses_points_that_are_no_mark(page, batch):
    client, token = page
    for points in ("nan", "inf", "1e309", "-0", "-1", "3", "2,5.1"):
        got = _save(client, {"X-Marking-Token": token}, points=points, marker="TA")
        assert got.status_code == 400 or (points == "-0" and got.status_code == 200), points
    record.merge_marks(batch["out"], {}, remove=frozenset({(f"zed_{ZED}", "essay")}))


def test_an_id_that_looks_escaped_never_reads_as_another(tmp_path):
    """A folder named ``'=bob`` beside one named ``=bob``: gradebook.csv once showed both as
    ``'=bob``, and a marks file written from the template gave the second's mark to the first.
    An id that already starts with the quote before a formula character is quoted again."""
    m = labs.get("labx", _lab_root(tmp_path / "root")).manifest
    ids = ["=bob", "'=bob", "''=bob", "-", "'-", "'hello", "@x"]
    cells = [gradebook.text_cell(i) for i in ids]
    assert len(set(cells)) == len(ids), cells
    assert [manual._text(c) for c in cells] == ids
    marks = {i: manual.Mark(float(n % 3), f"c{n}", "") for n, i in enumerate(ids)}
    (tmp_path / "m.csv").write_text(manual.marks_csv([(i, "essay", marks[i]) for i in ids]), "utf-8")
    read = manual.read_marks(tmp_path / "m.csv", m)
    assert {s: (k.points, k.comment) for (s, _q), k in read.items()} == {i: (k.points, k.comment)
                                                                          for i, k in marks.items()}


def test_wide_inputs_read_in_well_under_a_second_of_cpu(tmp_path):
    """The batch's wide inputs, timed by themselves: each reader under a second of CPU."""
    m = labs.get("labx", _lab_root(tmp_path / "root")).manifest
    wide = b'{"format":1,"predictions":{' + b",".join(b'"k%d":1' % i for i in range(170_000)) + b"}}"
    cells = _notebook_cells([{"cell_type": "raw", "source": ""}] * 60_000 + [_answer("Because.")])
    answers = _notebook_cells([_answer("x", i) for i in range(18_000)])
    tiny = _notebook_cells([{}] * 100_000)
    assert max(map(len, (wide, cells, answers, tiny))) <= MIB2
    for what, fn in {"wide predictions": lambda: report.read(wide, m),
                     "60,000 cells": lambda: manual.answer_cells(cells),
                     "18,000 answers": lambda: manual.answer_cells(answers),
                     "100,000 tiny cells": lambda: manual.answer_cells(tiny)}.items():
        start = time.process_time()
        try:
            fn()
        except ValueError:  # refused (the tiny cells): what matters is how long it took to say so
            pass
        assert time.process_time() - start < CPU_LIMIT_S, what


def test_only_with_the_exact_name_of_one_and_the_start_of_another_lists_both(tmp_path):
    """Round 4's LOW, rebuilt: "Tran Thi" and "Tran Thi Binh" on Moodle, ``--only "tran thi"``; and the
    same with case and accents changed (``TRẦN THỊ``)."""
    from autograder.commands import grade

    subs = tmp_path / "subs"
    for name, pid in (("Trần Thị", "1"), ("Trần Thị Bình", "2"), ("Lê Chi", "3")):
        (subs / f"{name}_{pid}_assignsubmission_file").mkdir(parents=True)
        (subs / f"{name}_{pid}_assignsubmission_file" / "toy.py").write_text("x = 1\n")
    intake = platforms.read(subs)
    for term in ("tran thi", "TRẦN THỊ", "Trần Thị", "tranthi"):
        said = grade.chosen(intake, term)
        assert isinstance(said, str) and "names 2 submissions" in said and "Trần Thị Bình_2" in said, term
    assert grade.chosen(intake, "Trần Thị_1") == frozenset({"Trần Thị_1"})
