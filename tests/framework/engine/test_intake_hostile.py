"""Whatever an upload holds costs only its own grade (issue 27, section 1).

A batch of the toy lab, given a question marked by hand (so ``grade`` reads
each submission's notebook), holds a correct submission beside uploads that
once stopped the batch or its files: a notebook nested 100,000 deep (and one
whose cell metadata nests deep), one that is a JSON list, one that is a
200 MB string, one that is not UTF-8, a lone surrogate escaped in a
notebook's JSON and in the message of an exception the code raises, a
submission folder whose name is not UTF-8, and a toy.py of binary bytes.
``grade`` exits 0, every entry has its row, the correct one has full marks,
each hostile one names its problem in the gradebook, its feedback and the
summary, and every file written is valid UTF-8.  An exception in the phase
before grading (staging, reading a notebook) is that entry's row too.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from autograder.batch import bulk, gradebook, manual
from autograder.batch.feedback import inline
from autograder.cli import main
from autograder.core import files, results, untrusted
from autograder.grading import staging

WRITTEN = (Path(__file__).parents[1] / "fixtures" / "written_question.toml").read_text()  # the toy's written question
CONTROL = Path(__file__).resolve().parents[1] / "fixtures" / "hostile" / "control" / "toy.py"
NOT_READ = "was not read, so its written answers cannot be marked"


def _notebook(answer: str) -> dict:
    return {"cells": [{"cell_type": "markdown", "id": "c", "metadata": {"tags": ["answer:essay"]}, "source": [answer]}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def written_lab(toy_root):
    lab_dir = toy_root / "assignments" / "labx_toy"
    (lab_dir / "lab.toml").write_text((lab_dir / "lab.toml").read_text().replace("[[variants]]", WRITTEN + "\n[[variants]]", 1))
    (lab_dir / "labx_toy.ipynb").write_text(json.dumps(_notebook("*Your answer here.*")))
    return toy_root


def _entry(subs: Path, name: bytes, *, code: bytes | None = None, notebook: bytes | None = None) -> None:
    folder = os.path.join(os.fsencode(subs), name)
    os.makedirs(folder)
    with open(os.path.join(folder, b"toy.py"), "wb") as f:
        f.write(CONTROL.read_bytes() if code is None else code)
    if notebook is not None:
        with open(os.path.join(folder, b"labx_toy.ipynb"), "wb") as f:
            f.write(notebook)


def _hostile_batch(subs: Path) -> dict[str, str]:
    """The entries; returns id -> what its problem must say ("" for none)."""
    deep = '{"k": ' * 5000 + "1" + "}" * 5000  # json.dumps itself would recurse that deep
    deep_meta = json.dumps(_notebook("fine")).replace('"metadata": {"tags"', f'"metadata": {{"deep": {deep}, "tags"')
    _entry(subs, b"good", notebook=json.dumps(_notebook("Because it is a length.")).encode())
    _entry(subs, b"deep_notebook", notebook=b"[" * 100_000 + b"]" * 100_000)
    _entry(subs, b"deep_metadata", notebook=deep_meta.encode())
    _entry(subs, b"list_notebook", notebook=b"[1, 2, 3]")
    _entry(subs, b"latin1_notebook", notebook=b"\xff\xfe{}")
    _entry(subs, b"surrogate_answer", notebook=json.dumps(_notebook("half a pair: \ud800 here")).encode())
    _entry(subs, b"binary_py", code=bytes(range(256)) * 40)
    _entry(subs, b"surrogate_error", code=b'def add(a, b):\n    raise ValueError("odd \\ud800 text")\n\n'
                                         b'def norm(x):\n    raise ValueError("\\udcff")\n')
    _entry(subs, b"bad_name_\xff", notebook=json.dumps(_notebook("ok")).encode())
    huge = os.path.join(os.fsencode(subs), b"huge_notebook")  # 200 MB, sparse: its size is read, never its bytes
    _entry(subs, b"huge_notebook")
    with open(os.path.join(huge, b"labx_toy.ipynb"), "wb") as f:
        f.write(b'"')
        f.truncate(200 * 2**20)
    return {"good": "", "deep_notebook": "nested more than 100 levels deep",
            "deep_metadata": "nested more than 100 levels deep", "list_notebook": "no list of cells",
            "latin1_notebook": "UnicodeDecodeError", "surrogate_answer": "", "binary_py": "importing toy.py failed",
            "surrogate_error": "", staging.entry_id(os.fsdecode(b"bad_name_\xff")): "",
            "huge_notebook": "file labx_toy.ipynb is larger than 2 MiB"}


def _rows(out: Path) -> dict[str, dict]:
    return {r["submission"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text("utf-8-sig")))}


def test_hostile_uploads_cost_only_their_own_grade(written_lab, tmp_path, capsys):
    subs, out = tmp_path / "subs", tmp_path / "out"
    expected = _hostile_batch(subs)
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "2"]) == 0
    rows = _rows(out)
    assert set(rows) == set(expected), "every entry has its row"
    summary = (out / "summary.md").read_text("utf-8")
    for sub, problem in expected.items():
        fb = (out / "feedback" / f"{sub}.md").read_text("utf-8")
        if not problem:
            continue
        assert problem in rows[sub]["problems"], (sub, rows[sub]["problems"])
        assert inline(problem) in fb, sub  # the feedback and the summary escape Markdown: "\\_"
        assert inline(problem) in summary.split(f"| {inline(sub)} |")[1].splitlines()[0], sub
    for sub in ("good", "surrogate_answer", "huge_notebook", "deep_notebook"):  # the notebook is not the tests'
        assert rows[sub]["score"] == "5" and rows[sub]["essay"] == "", sub
    assert rows["good"]["problems"] == "" and rows["binary_py"]["score"] == "0"
    assert NOT_READ in rows["deep_notebook"]["problems"]
    # a lone surrogate is written as its escape, wherever it went
    essay = (out / "manual" / "essay.md").read_text("utf-8")
    assert "half a pair: \\ud800 here" in essay.split(f"## {inline('surrogate_answer')}")[1]
    assert "odd \\ud800 text" in (out / "feedback" / "surrogate_error.md").read_text("utf-8")  # the code's message
    assert rows["surrogate_error"]["score"] == "0"
    for p in out.rglob("*"):
        if p.is_file() and p.suffix in (".csv", ".md", ".json"):
            p.read_bytes().decode("utf-8")  # valid UTF-8, strictly
    capsys.readouterr()
    # a rerun grades nothing again: the problems are part of what is unchanged
    assert main(["grade", "labx", str(subs), "--out", str(out)]) == 0
    assert f"graded 0, unchanged {len(expected)}" in capsys.readouterr().err


@pytest.fixture(scope="module")
def failed_before_grading(tmp_path_factory):
    """One batch for both phases: ``boom_stage`` fails in staging, ``boom_extract`` in reading its
    notebook, ``control`` in neither (each test reads its own entry's row)."""
    import shutil

    base = tmp_path_factory.mktemp("before-grading")
    root = base / "toyroot"  # as written_lab, for the module
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "toyroot", root)
    lab_dir = root / "assignments" / "labx_toy"
    (lab_dir / "lab.toml").write_text((lab_dir / "lab.toml").read_text().replace("[[variants]]", WRITTEN + "\n[[variants]]", 1))
    (lab_dir / "labx_toy.ipynb").write_text(json.dumps(_notebook("*Your answer here.*")))
    subs, out = base / "subs", base / "out"
    for name in (b"boom_stage", b"boom_extract", b"control"):
        _entry(subs, name, notebook=json.dumps(_notebook("x")).encode())

    def flaky(where, real, error):
        def fail(*args, **kwargs):
            if f"boom_{where}" in repr(args):
                raise error("deep inside")
            return real(*args, **kwargs)
        return fail

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRONLAW_ROOT", str(root))
        mp.setenv("IRONLAW_LANG", "en")  # as english_unless_asked, which a module's fixture runs before
        mp.setattr(bulk.staging, "stage", flaky("stage", staging.stage, RecursionError))
        mp.setattr(bulk.manual, "extract", flaky("extract", manual.extract, MemoryError))
        assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1"]) == 0
    return out


@pytest.mark.parametrize("where", ["stage", "extract"])
def test_an_exception_before_grading_is_that_entrys_row(failed_before_grading, where):
    out, boom = failed_before_grading, f"boom_{where}"
    rows = _rows(out)
    assert rows["control"]["score"] == "5" and rows[boom]["score"] == "0"
    assert "the grader failed on this submission" in rows[boom]["problems"]
    assert (out / "feedback" / f"{boom}.md").exists() and (out / "summary.md").exists()
    assert not json.loads((out / "raw" / f"{boom}.json").read_text())["sha256"], "retried by the next run"


def test_text_is_encoded_in_one_place_and_never_fails(tmp_path, toy_lab):
    odd = "name \ud800 and \udcff"
    assert files.text_bytes(odd) == b"name \\ud800 and \\udcff"
    files.atomic_write(tmp_path / "a.md", odd)
    assert (tmp_path / "a.md").read_bytes() == files.text_bytes(odd)
    book = gradebook.Gradebook(tmp_path / "gradebook.csv", toy_lab.manifest)
    book.add(results.SubmissionResult(submission="first", lab="labx"))
    book.add(results.SubmissionResult(submission="second", lab="labx", errors=[odd]))  # appended, not rewritten
    assert "name \\ud800 and \\udcff" in (tmp_path / "gradebook.csv").read_bytes().decode("utf-8")
    # a result read back (a grader's report, raw/) holds valid text only
    back = results.SubmissionResult.from_json(json.dumps({"submission": odd, "lab": "labx", "errors": [odd]}))
    assert back.submission.encode("utf-8") and back.errors[0].encode("utf-8")
    assert staging.printable("x\ud800y") == "x\\ud800y" and staging.printable(os.fsdecode(b"a\xff")) == "a\\xff"


def test_notebook_nesting_is_bounded_before_parsing():
    assert untrusted.nesting(untrusted.structure(b'{"a": [1, {"b": "[[[[\\\\\\"["}]}'), 100) == 3  # no string's
    assert untrusted.nesting(untrusted.structure(b"[" * 900 + b"]" * 900), limit=5) == 6  # stops past the limit
    for bad, says in ((b"[" * 2000 + b"]" * 2000, "nested more than"), (b"[]", "no list of cells"),
                      (b'"a string"', "no list of cells"), (b"\xff", "UnicodeDecodeError"),
                      (b'{"cells": [], "n": ' + b"7" * 5000 + b"}", "ValueError")):
        with pytest.raises(ValueError, match=says):
            manual.answers(bad)
