"""Nothing a student hands in can stall a batch (issue 35, items 1, 3 and 6).

Round 4's attacks, rebuilt: a 2 MiB ``predictions.json`` of escaped quotes, and the same bytes
as the handed-in notebook, once took the grader's main process hours (a string pattern that
restarted at every escaped quote).  Every reader of a student's bytes in the instructor's
process is now linear with a size and depth limit (``core/untrusted.py``) and runs inside a
per-entry CPU budget; a test per reader feeds it 2 MiB of the worst input we can build and
measures CPU time (``time.process_time``: a loaded machine does not change it), never the wall
clock.  Names the file system gives (at most 255 bytes) are fed at that size.  Also: a forged
prediction history is counted as changed after the measurement, and an oversize
``predictions.json`` is counted as not readable, as docs/predictions.md says.
"""

from __future__ import annotations

import csv
import io
import json
import re
import signal
import threading
import time
import zipfile
from pathlib import Path

import pytest

from autograder.batch import feedback, gradebook, late, manual, predictions_report as report
from autograder.batch.platforms import canvas, moodle
from autograder.cli import main
from autograder.core import labs, untrusted
from autograder.core.limits import MAX_FILE_BYTES
from autograder.core.manifest import PARTICIPATION, parse
from autograder.grading import predictions as P
from autograder.grading import staging

TOY = Path(__file__).resolve().parents[1] / "fixtures" / "toyroot"
REF = TOY / "solutions" / "labx_toy" / "toy.py"
CPU_LIMIT_S = 1.0  # each read below takes at most about 0.1 s of CPU here; the old string pattern, hours
MIB2 = 2 * 2**20
AT = "2026-05-01T12:00:00.000000Z"

WRITTEN = (Path(__file__).parents[1] / "fixtures" / "written_question.toml").read_text()  # the toy's written question


def _cpu(fn) -> float:
    start = time.process_time()
    try:
        fn()
    except ValueError:  # refused: what matters here is how long it took to say so
        pass
    return time.process_time() - start


def _worst_json() -> dict[str, bytes]:
    """The worst JSON-ish inputs we know, each just under 2 MiB (a handed-in file's limit)."""
    n = MIB2 - 16
    return {
        "escaped quotes, unterminated": b'"' + b'\\"' * (n // 2),
        "escaped quotes, terminated": b'"' + b'\\"' * (n // 2) + b'"',
        "escaped backslashes and quotes": b'["' + b'\\\\\\"' * (n // 4),
        "quotes and brackets": b'["[' * (n // 3),
        "opening brackets": b"[" * n,
        "nesting just under the interpreter's limit": b"[" + (b"[" * 800 + b"]" * 800 + b",") * (n // 1601) + b"[]]",
        "many empty lists": b"[" + b"[]," * (n // 3) + b"[]]",
        "many small objects": b"[" + b'{"a":{}},' * (n // 9) + b"{}]",
        "as many lists as allowed, the rest numbers": b"[" + b"[0,0,0,0,0,0,0,0,0,0]," * 90_000 + b"0]",
        "many short strings": b"[" + b'"a",' * (n // 4) + b'""]',
        "many numbers": b"[" + b"0.5," * (n // 4) + b"0]",
        "an object of many keys": b"{" + b"".join(b'"%d":0,' % i for i in range(n // 12)) + b'"":0}',
        "one long integer": b"1" * n,
        "lone surrogates": b'"' + b"\\ud800" * (n // 6) + b'"',
        "not UTF-8": b"\xff\xfe" * (n // 2),
    }


@pytest.mark.parametrize("name", list(_worst_json()))
def test_json_readers_take_well_under_a_second_of_cpu_on_2_mib(name):
    data = _worst_json()[name]
    m = parse(_lab_data(), "labx_toy")
    assert len(data) <= MAX_FILE_BYTES
    handed = []
    took = {
        "load_json": _cpu(lambda: untrusted.load_json(data, max_depth=100)),
        "the notebook's answers": _cpu(lambda: manual.answer_cells(data)),
        "predictions.json": _cpu(lambda: handed.append(report.read(data, m))),
    }
    assert max(took.values()) < CPU_LIMIT_S, took
    assert handed[0].records is None and handed[0].problem  # none is a predictions file: counted, never raised


def test_a_refusal_says_why_in_one_line():
    for data, says in ((b"[" * MIB2, "nested more than 100 levels deep"), (b"[" * 101 + b"]" * 101, "nested more"),
                       (b" " * (MIB2 + 1), "larger than 2 MiB"), (b"\xff", "UnicodeDecodeError"),
                       (b'{"a": "', "JSONDecodeError"), (b"[" + b"[]," * 100_000 + b"[]]", "more than 100000 lists")):
        with pytest.raises(untrusted.Unreadable, match=says):
            untrusted.load_json(data, max_depth=100)
    assert untrusted.load_json(b'{"a": [1, {"b": "[[[["}]}', max_depth=3) == {"a": [1, {"b": "[[[["}]}
    with pytest.raises(untrusted.Unreadable, match="nested more than 2"):
        untrusted.load_json(b'{"a": [1, {"b": "[[[["}]}', max_depth=2)


def test_the_structure_read_before_parsing_is_exact_for_valid_json():
    """Depth and count, from the text's brackets outside its strings, against the parsed value, on
    random JSON whose strings hold brackets, quotes, backslashes and lone surrogates."""
    import random

    def depth(o):
        items = list(o.values()) if isinstance(o, dict) else o if isinstance(o, list) else None
        return 0 if items is None else 1 + max(map(depth, items), default=0)

    def count(o):
        items = list(o.values()) if isinstance(o, dict) else o if isinstance(o, list) else None
        return 0 if items is None else 1 + sum(map(count, items))

    r, chars = random.Random(35), '[]{}"\\/,:ab \n\u00e9\ud800'

    def text():
        return "".join(r.choice(chars) for _ in range(r.randint(0, 8)))

    def value(d=0):
        k = r.random()
        if d > 6 or k < 0.3:
            return text() if r.random() < 0.6 else r.choice([1, 2.5, None, True])
        if k < 0.65:
            return [value(d + 1) for _ in range(r.randint(0, 4))]
        return {text(): value(d + 1) for _ in range(r.randint(0, 4))}

    for _ in range(2000):
        o = value()
        for ascii_only in (True, False):
            brackets = untrusted.structure(json.dumps(o, ensure_ascii=ascii_only))
            assert (untrusted.nesting(brackets, 50), brackets.count(b"[")) == (depth(o), count(o))


def test_a_large_valid_predictions_file_reads_within_the_limit():
    """2 MiB of entries the lab does not declare, and the longest history a declared one may have."""
    m = parse(_lab_data(), "labx_toy")
    changes = [{"value": float(i % 7), "at": f"2026-05-01T12:00:{i % 60:02d}.{i:06d}Z"} for i in range(P.MAX_CHANGES)]
    declared = {"value": 1.0, "at": AT, "changes": changes, "locked_at": None, "measured": None}
    filler = {f"x{i}": {"value": "y" * 40} for i in range(MIB2 // 70)}
    data = json.dumps({"format": 1, "predictions": {**filler, "norm_of_ones": declared}}).encode()
    assert MIB2 * 0.8 < len(data) <= MAX_FILE_BYTES
    assert _cpu(lambda: report.read(data, m)) < CPU_LIMIT_S
    assert list(report.read(data, m).records) == ["norm_of_ones"]


def test_archive_member_names_are_read_in_linear_time(tmp_path):
    """A student's zip holds names up to 64 KiB (the format's limit, no file system's): long names
    of folders, backslashes, draft words and dots, 2 MiB of them in all; staging reads them without
    a pattern, and the feedback and the CSV cells that may show them are linear too."""
    zpath = tmp_path / "alice.zip"
    shapes = ["a/" * 30_000 + "toy.py", "\\" * 60_000 + "toy.py", "draft-old_copy " * 4_000 + "/toy.py",
              "." * 60_000 + "/toy.py", "x" * 60_000 + ".zip", "\u00e9\u0301" * 15_000 + "/toy.py"]
    with zipfile.ZipFile(zpath, "w") as z:
        for i in range(33):
            z.writestr(f"{i}/" + shapes[i % len(shapes)], b"def add(a, b):\n    return a + b\n")
    assert zpath.stat().st_size > 2 * 2**20 - 200_000
    took = _cpu(lambda: staging.stage(zpath, ("toy.py",), tmp_path / "staged", optional=("labx_toy.ipynb",)))
    assert took < CPU_LIMIT_S
    text = "".join(shapes) * 6  # about 2 MiB of what a student names
    readers = {"printable": lambda: staging.printable(text, limit=10**7), "entry_id": lambda: staging.entry_id(text),
               "inline": lambda: feedback.inline(text), "text_cell": lambda: gradebook.text_cell("=" + text)}
    for what, fn in readers.items():
        assert _cpu(fn) < CPU_LIMIT_S, what


def test_a_zip_listing_too_many_members_is_not_opened(tmp_path, monkeypatch):
    """zipfile reads a zip's whole listing before anything else (a 26 MB zip of 300,000 empty
    members: 1.8 s and 300 MB): the count in its end record is read first."""
    monkeypatch.setattr(staging, "MAX_ZIP_MEMBERS", 50)
    zpath = tmp_path / "many.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr("toy.py", REF.read_bytes())
        for i in range(60):
            z.writestr(f"x/{i}", b"")
    st = staging.stage(zpath, ("toy.py",), tmp_path / "staged")
    assert "it lists 61 files, more than the 50 a zip handed in may hold, so it was not opened" in st.problems[0]
    assert "file toy.py was not found in the part of the submission that could be read" in st.problems
    monkeypatch.setattr(staging, "MAX_ZIP_MEMBERS", 61)
    assert staging.stage(zpath, ("toy.py",), tmp_path / "staged2").found == ["toy.py"]


def _patterns() -> dict[str, re.Pattern]:
    """Every pattern the platforms match on a file or folder name of theirs."""
    return {f"{mod.__name__}.{k}": v for mod in (canvas, moodle) for k, v in vars(mod).items()
            if isinstance(v, re.Pattern)}


def _name_shapes(n: int) -> list[str]:
    """Names built to make a backtracking pattern retry: runs of separators, digits, the words the
    platforms look for, a newline where ``.`` stops."""
    units = ["_1", "_1_1_x", "a_", "-1", " (1)", "_LATE_1", "anon_a_1_", "_1_assignsubmission_",
             "_1_assignsubmission_a", "_1_text", "_", "1", ".", " "]
    out = []
    for u in units:
        body = (u * (n // len(u) + 1))[:n - 1]
        out += [body + "\n", body + "x", "_" + body, body]
    return out


def test_platform_name_patterns_are_linear_on_the_longest_names_a_file_system_allows():
    """Names come from an unpacked download (``platforms.unpacked``): a file system's names, at
    most 255 bytes each.  Every pattern gets the worst shapes at that size, many times over."""
    names = _name_shapes(255)
    for key, pattern in _patterns().items():
        took = _cpu(lambda: [pattern.fullmatch(s) or pattern.match(s) for s in names * 20])
        assert took < CPU_LIMIT_S, key


def test_csv_cells_are_read_in_linear_time():
    """A worksheet's identifier cell and a times file's cell, 2 MiB long (the csv module's own
    field limit is lower: this is the worst a pattern could see)."""
    for cell in ("1" * MIB2 + "x", "x" + "1" * MIB2 + "y", "1x" * (MIB2 // 2), "Participant " + "1" * MIB2):
        assert _cpu(lambda: moodle.PARTICIPANT.fullmatch(cell)) < CPU_LIMIT_S
    assert moodle.PARTICIPANT.fullmatch("Participant 123 ")[1] == "123"
    assert moodle.PARTICIPANT.fullmatch("Người tham gia 45")[1] == "45"
    assert moodle.PARTICIPANT.fullmatch("Participant 12a") is None
    for cell in ("2026-05-01T12:00" + " " * MIB2 + "x", "2026-05-01T12:00:00." + "1" * MIB2, "1" * MIB2):
        assert _cpu(lambda: late.parse_time(cell, "UTC")) < CPU_LIMIT_S


def test_grader_side_patterns_are_linear_on_2_mib(tmp_path):
    """The patterns that read a student's source, tracebacks and messages in the grader (each call
    has the sandbox's limits too): linear on the worst 2 MiB, and a 400-digit number in a message
    is said by its size, never an error of the grader's."""
    from autograder.calls import loader
    from autograder.grading import checker
    from autograder.labkit import messages, plugin

    for i, text in enumerate(["def" + "\n" * MIB2, "def \n" * (MIB2 // 5), "async" + " " * MIB2 + "x",
                              ("toy" + " " * 100 + "\n") * (MIB2 // 105)]):
        (tmp_path / f"s{i}.py").write_text(text)
        assert _cpu(lambda: loader._defines(tmp_path / f"s{i}.py", "toy")) < CPU_LIMIT_S
    for tb in ('  File "' + "x" * MIB2 + '"', '  [Previous line repeated ' + "1" * MIB2 + ' more times]',
               '  File "a", line 1\n' * (MIB2 // 18)):
        assert _cpu(lambda: plugin.safe_traceback(tb)) < CPU_LIMIT_S
    for text in ("Error at line 1 in test " + ":" * MIB2, "Error at line 1 in test x:\n \n" * (MIB2 // 30)):
        assert _cpu(lambda: checker.case_message(text)) < CPU_LIMIT_S
    for text in ("1." * MIB2, "9" * MIB2, "1e" * MIB2):
        assert _cpu(lambda: messages.student_text(text)) < CPU_LIMIT_S
    assert messages.student_text("9" * 400) == "9.9e+399"


# -- the per-entry budget ------------------------------------------------------------------
def test_the_budget_stops_a_python_loop_and_leaves_no_timer_behind():
    before = signal.getsignal(signal.SIGPROF)
    start = time.process_time()
    with pytest.raises(untrusted.OverBudget, match="after 0.2 s of its CPU time"):
        with untrusted.budget(0.2) as spent:
            n = 0
            while n >= 0:  # no check() in it: the CPU timer stops it
                n += 1
    assert spent.exceeded and time.process_time() - start < 0.2 + CPU_LIMIT_S
    assert signal.getsignal(signal.SIGPROF) == before and signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    with untrusted.budget(5) as spent:  # a read within it: nothing happens
        untrusted.load_json(b"[1, 2]", max_depth=2)
    assert not spent.exceeded


def test_the_budget_stops_a_backtracking_pattern():
    """The regular expression engine checks for signals: the timer stops it where a check() cannot."""
    start = time.process_time()
    with pytest.raises(untrusted.OverBudget):
        with untrusted.budget(0.2):
            re.search(r"(\d+)\s*$", "1" * 200_000 + "x")  # the old worksheet pattern: minutes on this cell
    assert time.process_time() - start < 0.2 + CPU_LIMIT_S


def test_outside_the_main_thread_the_loops_check_the_budget():
    caught = []

    def read():
        try:
            with untrusted.budget(0.05):
                while True:
                    untrusted.check()  # what every loop over a student-controlled count does
        except untrusted.OverBudget as exc:
            caught.append(exc)

    t = threading.Thread(target=read)
    t.start()
    t.join(timeout=60)
    assert caught and signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


# -- prediction histories ------------------------------------------------------------------
def _at(second: int) -> str:
    return f"2026-05-01T12:00:{second:02d}.000000Z"


def test_a_history_whose_times_go_back_counts_as_changed_after_the_measurement():
    """The round-4 forgery: a value changed after the reveal, its time moved before the first value."""
    honest = P.Record(value=2.0, at=_at(1), changes=[(3.0, _at(2))], locked_at=_at(5), measured=10.0)
    assert honest.consistent and honest.in_force() == (3.0, _at(2)) and not honest.changed_after_lock
    forged = P.Record(value=2.0, at=_at(1), changes=[(9.0, _at(0))], locked_at=_at(5), measured=10.0)
    assert not forged.consistent and forged.changed_after_lock
    assert forged.in_force() == (2.0, _at(1))  # the value before the time that goes back: never the forged one
    first = P.Record(value=9.0, at=_at(9), changes=[(9.5, _at(3))], locked_at=_at(5), measured=10.0)
    assert first.in_force() == (None, None) and not first.answered  # given after the lock: no prediction
    line = report.said(parse(_lab_data(), "labx_toy").prediction("norm_of_ones"), forged)
    assert "`2` before the measurement" in line and "the history was inconsistent" in line


def test_times_later_than_the_hand_in_count_as_changed_after_the_measurement(tmp_path):
    from datetime import datetime, timezone

    m = parse(_lab_data(), "labx_toy")
    entry = {"value": 2.0, "at": _at(1), "changes": [{"value": 3.0, "at": "2026-05-03T12:00:00.000000Z"}],
             "locked_at": _at(5), "measured": 10.0}
    data = json.dumps({"format": 1, "predictions": {"norm_of_ones": entry}}).encode()
    assert P.parse(data, m)["norm_of_ones"].consistent  # without a hand-in time, in order is all that is known
    handed_in = datetime(2026, 5, 2, tzinfo=timezone.utc)
    r = P.parse(data, m, handed_in)["norm_of_ones"]
    assert not r.consistent and r.changed_after_lock and r.in_force() == (2.0, _at(1))
    within = dict(entry, changes=[{"value": 3.0, "at": "2026-05-02T00:30:00.000000Z"}])  # the clocks' difference
    assert P.parse(json.dumps({"format": 1, "predictions": {"norm_of_ones": within}}), m, handed_in)[
        "norm_of_ones"].consistent
    # what the batch keeps is checked again when read back, against the time kept with it
    report.extract(tmp_path, m, {"alice": {P.FILE: data}}, times={"alice": handed_in})
    kept = report.kept(tmp_path, "alice", m)
    assert kept.handed_in == handed_in and not kept.records["norm_of_ones"].consistent
    text = report.section(m, {"alice": kept})
    assert "changed after the measurement (recorded, not counted): 1" in text
    assert "of those, an inconsistent history (a time goes back, or is later than the hand-in): 1" in text


# -- an oversize predictions.json: counted not readable, never a problem (docs/predictions.md) --
def test_an_oversize_predictions_file_is_counted_not_readable_never_a_problem(tmp_path):
    sub = tmp_path / "alice"
    sub.mkdir()
    (sub / "toy.py").write_bytes(REF.read_bytes())
    (sub / P.FILE).write_bytes(b" " * (MIB2 + MIB2 // 4))  # 2.5 MiB
    st = staging.stage(sub, ("toy.py",), tmp_path / "staged", data=(P.FILE,))
    assert not st.problems and P.FILE not in st.extra and st.unread == {P.FILE: "larger than 2 MiB"}
    assert st.sha256 == staging.stage(sub, ("toy.py",), tmp_path / "staged2").sha256  # an edit regrades nothing
    m = parse(_lab_data("\n[predictions_policy]\npoints = 1\n"), "labx_toy")
    handed = report.read(None, m, unread=st.unread[P.FILE])
    assert handed.records is None and handed.problem == "larger than 2 MiB"
    assert "not readable: 1" in report.section(m, {"alice": handed})


# -- the attacks in a batch ----------------------------------------------------------------
def _lab_data(extra: str = "") -> dict:
    import tomllib

    return tomllib.loads((TOY / "assignments" / "labx_toy" / "lab.toml").read_text() + extra)


def _notebook(answer: str) -> bytes:
    return json.dumps({"cells": [{"cell_type": "markdown", "id": "c", "metadata": {"tags": ["answer:essay"]},
                                  "source": [answer]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


@pytest.fixture
def hostile_lab(toy_root):
    """The toy lab with a question marked by hand (grade reads each notebook) and participation
    points for the predictions (grade reads each predictions.json)."""
    lab_dir = toy_root / "assignments" / "labx_toy"
    text = (lab_dir / "lab.toml").read_text().replace("[[variants]]", WRITTEN + "\n[[variants]]", 1)
    (lab_dir / "lab.toml").write_text(text + "\n[predictions_policy]\npoints = 1\n")
    (lab_dir / "labx_toy.ipynb").write_bytes(_notebook("*Your answer here.*"))
    return toy_root


def _rows(out: Path) -> dict[str, dict]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


def _entry(subs: Path, name: str, code: bytes, **files: bytes) -> None:
    (subs / name).mkdir(parents=True)
    (subs / name / "toy.py").write_bytes(code)
    for file, data in files.items():
        (subs / name / file.replace("__", ".")).write_bytes(data)


def test_round_4_attacks_cost_only_their_own_grade(hostile_lab, tmp_path, monkeypatch):
    """Escaped quotes as predictions.json and as the notebook, an oversize predictions.json and a
    forged history, beside a reference and a stub control; one entry whose reading is made slow
    runs out of its CPU budget.  The batch finishes, the controls are right, each attack costs
    only what it says."""
    m = labs.get("labx", hostile_lab).manifest
    subs, out = tmp_path / "subs", tmp_path / "out"
    ref, stub = REF.read_bytes(), (hostile_lab / "assignments" / "labx_toy" / "toy.py").read_bytes()
    quotes = b'"' + b'\\"' * ((MIB2 - 16) // 2)
    _entry(subs, "reference", ref, labx_toy__ipynb=_notebook("Because it is a length."))
    _entry(subs, "stub", stub)
    _entry(subs, "quoted_predictions", ref, predictions__json=quotes)
    _entry(subs, "quoted_notebook", ref, labx_toy__ipynb=quotes)
    _entry(subs, "oversize_predictions", ref, predictions__json=b" " * (MIB2 + MIB2 // 4))
    forged = {"norm_of_ones": {"value": 2.0, "at": _at(1), "changes": [{"value": 10.0, "at": _at(0)}],
                               "locked_at": _at(5), "measured": 10.0},
              "sum_dtype": {"value": "float64", "at": _at(2), "changes": [], "locked_at": _at(6),
                            "measured": "float64"}}
    _entry(subs, "forged_history", ref, predictions__json=json.dumps({"format": 1, "predictions": forged}).encode())
    _entry(subs, "slow", ref, predictions__json=json.dumps({"format": 1, "predictions": {}, "forged": 1}).encode())
    real_parse = P.parse

    def parse_slowly(data, manifest, handed_in=None):  # a reader that would never end, for "slow" alone
        if isinstance(data, bytes) and b'"forged"' in data:
            while True:
                untrusted.check()
        return real_parse(data, manifest, handed_in)

    monkeypatch.setattr(P, "parse", parse_slowly)
    monkeypatch.setattr(untrusted, "READ_CPU_S", 1.0)

    start = time.process_time()
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2"]) == 0
    assert time.process_time() - start < 60  # the main process's own CPU, the batch's grading included

    rows = _rows(out)
    assert set(rows) == {"reference", "stub", "quoted_predictions", "quoted_notebook", "oversize_predictions",
                         "forged_history", "slow"}
    assert (rows["reference"]["score"], rows["reference"]["problems"]) == ("5", "")
    assert rows["stub"]["score"] == "0"
    for sub in ("quoted_predictions", "quoted_notebook", "oversize_predictions", "forged_history", "slow"):
        assert rows[sub]["add"] == "3" and rows[sub]["norm"] == "2", sub  # the code's points, all of them
        assert rows[sub][PARTICIPATION] == ("1" if sub == "forged_history" else "0"), sub
    fb = {s: (out / "feedback" / f"{s}.md").read_text() for s in rows}
    # escaped quotes: not JSON, said; a predictions file is never a problem of the row, a notebook is
    assert rows["quoted_predictions"]["problems"] == ""
    assert "predictions.json could not be read (not JSON (JSONDecodeError))" in fb["quoted_predictions"]
    assert "labx_toy.ipynb was not read, so its written answers cannot be marked" in rows["quoted_notebook"]["problems"]
    # oversize: counted not readable, never a problem (docs/predictions.md)
    assert rows["oversize_predictions"]["problems"] == ""
    assert "predictions.json could not be read (larger than 2 MiB)" in fb["oversize_predictions"]
    # the forged history: the value in force is the one given before the time that goes back (2, made
    # before the measurement), never the forged 10; the summary counts it apart
    records = report.kept(out, "forged_history", m).records
    assert records["norm_of_ones"].in_force()[0] == 2.0 and not records["norm_of_ones"].consistent
    summary = (out / "summary.md").read_text()
    assert "of those, an inconsistent history (a time goes back, or is later than the hand-in): 1" in summary
    assert "not readable: 3" in summary  # quoted, oversize, slow
    # the slow one: stopped by its budget, said in its row and its feedback; the batch went on
    said = "the grader stopped reading this submission's files after 1 s of its CPU time"
    assert said in rows["slow"]["problems"] and feedback.inline(said) in fb["slow"]
    assert rows["forged_history"]["problems"] == ""
