"""Readable tracebacks: only the student's frames, their files by the names they know.

A failure's traceback shows the frames in the student's own files, each file by
its own name ("toy.py", not /tmp/ironlaw-work-abc/toy.py), with exact line
numbers, and nothing of importlib, the engine, a library or the tests. A
syntax error's is its place and caret. A hidden test's feedback rounds the
exception's text, never the frames' line numbers, even after a recursion's
"[Previous line repeated ...]". Details that many tests share are said once
(``messages.details_once``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder.calls import errors, loader
from autograder.cli import main
from autograder.labkit import messages as M, plugin

PAD = "# a comment line, so that the lines below are past 100 and would read rounded\n" * 100
SYNTAX_LINE = 101  # "def broken(:" after the pad
HELPER = PAD + '''

def add(a, b):
    return _helper(a)


def norm(x):
    return 1.0


def _helper(v):
    raise ValueError(f"bad input {list(v)!r}")
'''
ADD_LINE, RAISE_LINE = 104, 112  # "return _helper(a)" and the raise
assert HELPER.splitlines()[ADD_LINE - 1].strip() == "return _helper(a)"
assert HELPER.splitlines()[RAISE_LINE - 1].strip().startswith("raise ValueError")


def _write(folder: Path, text: str, name: str = "toy.py") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder


def _raised(code_dir: Path, fn: str, *args, hide=()) -> errors.StudentCodeError:
    modules, failed = loader.load_each(code_dir, ("toy.py",))
    assert not failed, failed
    with pytest.raises(errors.StudentCodeError) as info:
        loader.call(loader.find_function(modules, fn), args, {}, code_dir, hide)
    return info.value


# -- which frames are the student's -----------------------------------------------------------
def test_only_files_directly_in_the_code_folder_are_the_students(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # as in a worker: the code folder is the cwd
    assert loader.student_file(str(tmp_path / "toy.py"), tmp_path) == "toy.py"
    assert loader.student_file("toy.py", tmp_path) == "toy.py"  # a relative sys.path entry
    for other in ("<frozen importlib._bootstrap>", "<string>", str(tmp_path / "venv" / "lib" / "loader.py"),
                  str(tmp_path / "notes.txt"), str(tmp_path.parent / (tmp_path.name + "x") / "toy.py"), None):
        assert loader.student_file(other, tmp_path) is None, other
    assert loader.student_file(str(tmp_path / "models.py"), tmp_path, hide=("models.py",)) is None  # the lab's


def test_a_syntax_error_shows_its_place_by_file_name_and_nothing_of_importlib(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the worker's case: "<frozen ...>" resolved here passed for the student's
    _write(tmp_path, PAD + "def broken(:\n    pass\n")
    _modules, failed = loader.load_each(tmp_path, ("toy.py",))
    exc = failed["toy.py"]
    assert exc.kind == errors.IMPORT
    assert exc.message == "importing toy.py failed: SyntaxError: invalid syntax"  # the place is the traceback's
    assert exc.traceback == (f'  File "toy.py", line {SYNTAX_LINE}\n    def broken(:\n               ^\n'
                             "SyntaxError: invalid syntax\n")


def test_an_exception_at_import_shows_the_modules_frames_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, PAD + "def f():\n    raise RuntimeError('at import')\n\n\nf()\n")
    exc = loader.load_each(tmp_path, ("toy.py",))[1]["toy.py"]
    assert exc.traceback == ('  File "toy.py", line 105, in <module>\n    f()\n'
                             '  File "toy.py", line 102, in f\n    raise RuntimeError(\'at import\')\n'
                             "RuntimeError: at import\n")


def test_a_calls_traceback_has_the_students_frames_and_none_of_the_engine(tmp_path):
    exc = _raised(_write(tmp_path, HELPER), "add", [0.5], 0)
    frames = re.findall(r'^  File "([^"]*)", line (\d+), in (\S+)$', exc.traceback, re.MULTILINE)
    assert frames == [("toy.py", str(ADD_LINE), "add"), ("toy.py", str(RAISE_LINE), "_helper")]
    assert exc.traceback.endswith("ValueError: bad input [0.5]\n") and str(tmp_path) not in exc.traceback


def test_a_support_files_frames_are_the_labs_not_the_students(tmp_path):
    _write(tmp_path, "def boom(x):\n    raise KeyError(x)\n", "models.py")
    exc = _raised(_write(tmp_path, "import models\n\n\ndef add(a, b):\n    return models.boom(a)\n"), "add", 1, 2,
                  hide=("models.py",))
    assert "models.py" not in exc.traceback and 'File "toy.py", line 5, in add' in exc.traceback


def test_a_long_traceback_keeps_whole_frames_and_exact_line_numbers(tmp_path):
    # mutual recursion is never collapsed into "[Previous line repeated ...]": thousands of frames
    code = PAD + ("def add(a, b):\n    return _ping(a)\n\n\ndef _ping(n):\n    return _pong(n)\n\n\n"
                  "def _pong(n):\n    return _ping(n) + " + "0 + " * 400 + "0\n")
    tb = _raised(_write(tmp_path, code), "add", 1, 2).traceback
    assert len(tb) <= errors.TRACEBACK_LIMIT and tb.startswith('  File "toy.py", line 1')
    assert all(len(line) <= loader.LINE_LIMIT for line in tb.splitlines())
    assert tb.endswith("RecursionError: maximum recursion depth exceeded\n")
    # every frame is read as one, its number exact: nothing of it is taken for the message
    assert plugin.safe_traceback(tb) == tb.rstrip("\n")


# -- a hidden test's feedback ---------------------------------------------------------------------
def _excinfo(exc):
    return type("ExcInfo", (), {"value": exc, "typename": type(exc).__name__})()


def test_frames_after_a_recursion_keep_exact_line_numbers_in_a_hidden_tests_feedback(tmp_path):
    code = PAD + ("def add(a, b):\n    return _down(0)\n\n\ndef _down(n):\n    if n < 500:\n"
                  "        return _down(n + 1)\n    return _boom(n)\n\n\ndef _boom(n):\n"
                  "    raise ValueError(f'deep {n} 0.123456789')\n")
    exc = _raised(_write(tmp_path, code), "add", 1, 2)
    assert "  [Previous line repeated 497 more times]" in exc.traceback
    text = plugin.feedback_for(_excinfo(exc), "test_x", public=False)[0]
    assert "  [Previous line repeated 500 more times]" in text  # the code's own count: rounded
    assert 'File "toy.py", line 108, in _down\n    return _boom(n)' in text  # after it: exact
    assert 'File "toy.py", line 112, in _boom' in text
    assert text.endswith("\nValueError: deep 500 0.12")  # the message: rounded as ever


# -- each distinct traceback once -----------------------------------------------------------------
def test_details_shared_with_an_earlier_test_become_a_pointer():
    tb = "\n\nYour code's traceback:\n  File \"toy.py\", line 101\nSyntaxError: invalid syntax"
    shown = M.details_once([("test_a", "import failed" + tb), ("test_b", "import failed" + tb),
                            ("test_c", "other failure\n\nYour code's traceback:\nValueError"),
                            ("test_d", "too small"), ("test_e", "too small"), ("test_f", "later" + tb)])
    assert shown == ["import failed" + tb, "import failed (details as for test_a above)",
                     "other failure\n\nYour code's traceback:\nValueError", "too small", "too small",
                     "later (details as for test_a above)"]


# -- end to end, in the sandbox -------------------------------------------------------------------
@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One sandboxed batch of both submissions, read by the tests below (each its own submission's files)."""
    import shutil

    base = tmp_path_factory.mktemp("tracebacks")
    root = base / "toyroot"  # a private copy of the toy project, as the toy_root fixture's (for the module)
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "toyroot", root)
    subs = base / "subs"
    _write(subs / "syntax", PAD + "def broken(:\n")
    _write(subs / "raises", HELPER)
    out = base / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRONLAW_ROOT", str(root))
        mp.setenv("IRONLAW_LANG", "en")  # as english_unless_asked, which a module's fixture runs before
        assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1"]) == 0
    return out


def _student_texts(out: Path, sub: str) -> tuple[str, list[dict]]:
    md = (out / "feedback" / f"{sub}.md").read_text()
    tests = json.loads((out / "results" / f"{sub}.json").read_text())["tests"]
    raw = json.loads((out / "raw" / f"{sub}.json").read_text())["tests"]
    for text in [md, *(t["output"] for t in tests), *(t["feedback"] for t in raw)]:
        assert "<frozen" not in text and "&lt;frozen" not in text and "/tmp" not in text, text
        assert "ironlaw" not in text and "loader.py" not in text and "importlib" not in text, text
    return md, raw


def test_a_sandboxed_grade_shows_the_students_frames_by_file_name_with_exact_lines(graded):
    md, raw = _student_texts(graded, "raises")
    hidden = next(t["feedback"] for t in raw if t["name"] == "test_add_random")
    assert f'File "toy.py", line {ADD_LINE}, in add' in hidden and f'File "toy.py", line {RAISE_LINE}' in hidden
    assert f'File "toy.py", line {RAISE_LINE}, in _helper' in md


def test_a_sandboxed_syntax_errors_feedback_is_short(graded):
    md, raw = _student_texts(graded, "syntax")
    failed = [t for t in raw if t["status"] == "failed"]
    assert len(failed) == 5 and all(t["kind"] == errors.IMPORT for t in failed)
    for t in failed:
        assert t["feedback"].rstrip("\n") == ("importing toy.py failed: SyntaxError: invalid syntax\n\nYour code's traceback:\n"
                                 f'  File "toy.py", line {SYNTAX_LINE}\n    def broken(:\n               ^\n'
                                 "SyntaxError: invalid syntax"), t["name"]
    assert len(md.encode()) < 2000, len(md.encode())  # was 5.9 KB: eight importlib frames in each of 5 tests
    once = M.details_once([(t["name"], t["feedback"]) for t in failed])
    assert sum("Your code's traceback:" in f for f in once) == 1


def test_check_in_the_sandbox_shows_the_place_of_a_syntax_error(toy_root, tmp_path, capsys):
    folder = _write(tmp_path / "mine", PAD + "def broken(:\n")
    assert main(["check", "labx", "--sandbox", "--path", str(folder)]) == 1
    out = capsys.readouterr().out
    assert f'File "toy.py", line {SYNTAX_LINE}' in out
    assert "<frozen" not in out and str(folder) not in out and "/tmp/" not in out
