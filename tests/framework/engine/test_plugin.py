"""The pytest plugin: questions, points, visibility, fixtures, feedback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPO = Path(__file__).resolve().parents[3]

pytest_plugins = ["pytester"]


@pytest.fixture
def toy(pytester, monkeypatch):
    shutil.copytree(FIXTURES / "toyroot", pytester.path, dirs_exist_ok=True)
    monkeypatch.setenv("IRONLAW_ROOT", str(pytester.path))
    return pytester


def run(toy, *args):
    out = toy.path / "r.json"
    toy.runpytest_subprocess("-p", "no:cacheprovider", "--results-json", str(out), *args)
    return {t["name"]: t for t in json.loads(out.read_text())["tests"]}


EXTRA = "tests/labx_toy/test_extra.py"


def extra_test(toy, source: str) -> str:
    """Add ``source`` to the toy lab's hidden tests, as EXTRA; returns that path (for ``run``)."""
    (toy.path / EXTRA).write_text(source)
    return EXTRA


def test_reference_by_default_and_points(toy):
    res = run(toy, "tests", "assignments")
    assert all(t["status"] == "passed" for t in res.values())
    assert res["test_add_random"]["max_points"] == 1 and res["test_add_public"]["public"]
    assert res["test_add_public"]["visibility"] == "visible"


def test_submission_option_and_feedback(toy):
    res = run(toy, "tests", "--submission", "assignments/labx_toy")
    assert all(t["status"] == "failed" and t["points"] == 0 for t in res.values())
    assert res["test_norm"]["feedback"] == "norm() is not implemented yet"
    assert res["test_norm"]["kind"] == "not_implemented"


def test_question_marker_required(toy):
    extra_test(toy, "def test_orphan(student):\n    pass\n")
    result = toy.runpytest_subprocess("-p", "no:cacheprovider", "tests")
    result.stderr.fnmatch_lines(["*test_orphan: no @pytest.mark.question*"])
    assert result.ret != 0


def test_unknown_question_and_visibility(toy):
    res = run(toy, extra_test(toy, "import pytest\n"
                                   "@pytest.mark.question('add', points=0.5, visibility='after_published')\n"
                                   "def test_vis(student):\n    pass\n"))
    assert res["test_vis"]["visibility"] == "after_published" and res["test_vis"]["max_points"] == 0.5
    extra_test(toy, "import pytest\n@pytest.mark.question('nope')\ndef test_x(student):\n    pass\n")
    result = toy.runpytest_subprocess("-p", "no:cacheprovider", "tests")
    result.stderr.fnmatch_lines(["*unknown question 'nope'*"])


def test_bare_assert_does_not_leak_values(toy):
    res = run(toy, extra_test(toy, "import pytest\n@pytest.mark.question('add')\n"
                                   "def test_leak(student, reference):\n"
                                   "    assert student.norm(x=[1.0]) == 123456.789\n"))
    assert "123456" not in res["test_leak"]["feedback"]
    assert res["test_leak"]["feedback"] == "a check in test_leak failed"


def test_public_tests_cannot_use_reference(toy):
    (toy.path / "assignments" / "labx_toy" / "tests" / "test_bad.py").write_text(
        "import pytest\n@pytest.mark.question('add')\ndef test_peek(reference):\n    pass\n")
    res = run(toy, "assignments/labx_toy/tests/test_bad.py")
    assert res["test_peek"]["status"] == "failed"


def test_snapshot_detects_missing_and_wrong(toy):
    snap = toy.path / "assignments" / "labx_toy" / "tests" / "snapshots" / "add_small.npz"
    snap.unlink()
    res = run(toy, "assignments")
    assert "autograder snapshots labx" in res["test_add_public"]["feedback"]


def test_bad_markers_are_usage_errors_naming_test_marker_and_keyword(toy):
    """As pytest-timeout checks its marker: nothing the plugin does not know is ignored."""
    extra_test(toy, (
        "import pytest\n"
        "@pytest.mark.question('add', visibility='hiden')\ndef test_typo_value(student):\n    pass\n"
        "@pytest.mark.question('add', visiblity='hidden')\ndef test_typo_keyword(student):\n    pass\n"
        "@pytest.mark.question('add', 2)\ndef test_two_positionals(student):\n    pass\n"
        "@pytest.mark.question()\ndef test_no_id(student):\n    pass\n"
        "@pytest.mark.question(3)\ndef test_int_id(student):\n    pass\n"
        "@pytest.mark.question('add', points='2')\ndef test_text_points(student):\n    pass\n"
        "@pytest.mark.question('add', points=-1)\ndef test_negative_points(student):\n    pass\n"
        "@pytest.mark.fixed_seed(True)\n@pytest.mark.question('add')\ndef test_seed_arg(student):\n    pass\n"
        "@pytest.mark.fixed_seed(salt='x')\n@pytest.mark.question('add')\ndef test_seed_kw(student):\n    pass\n"
        "@pytest.mark.fixed_seed\n@pytest.mark.question('add', points=0.5, visibility='hidden')\n"
        "def test_fine(student):\n    pass\n"))
    result = toy.runpytest_subprocess("-p", "no:cacheprovider", EXTRA)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    node = f"{EXTRA}::"
    expected = [
        f"*{node}test_typo_value: @pytest.mark.question: keyword 'visibility' must be one of hidden, "
        "after_due_date, after_published, visible, not 'hiden'",
        f"*{node}test_typo_keyword: @pytest.mark.question: unknown keyword 'visiblity' (known: points, visibility)",
        f"*{node}test_two_positionals: @pytest.mark.question: takes one positional argument, the question id, not 2",
        f"*{node}test_no_id: @pytest.mark.question: takes one positional argument, the question id, not 0",
        f"*{node}test_int_id: @pytest.mark.question: the question id must be a string, not int 3",
        f"*{node}test_text_points: @pytest.mark.question: keyword 'points' must be a number of at least 0, not '2'",
        f"*{node}test_negative_points: @pytest.mark.question: keyword 'points' must be a number of at least 0, not -1",
        f"*{node}test_seed_arg: @pytest.mark.fixed_seed: takes no arguments, not True",
        f"*{node}test_seed_kw: @pytest.mark.fixed_seed: takes no arguments, not salt='x'",
    ]
    for line in expected:
        result.stderr.fnmatch_lines([line])
    assert "test_fine" not in result.stderr.str()


@pytest.mark.parametrize("how", ["python -m pytest", "pytest"])
def test_the_suite_spreads_over_xdist_however_pytest_is_started(how):
    """``autograder_suite_workers`` applies whichever plugin pytest loaded first. From the
    project's root, ``python -m pytest`` finds this project's own metadata first (the current
    folder leads sys.path), so it loads this plugin before xdist; the ``pytest`` script loads
    it after. Run on one small test file of the suite that imports no torch (each xdist worker collects it:
    with test_wire.py each imported torch, most of these runs' time)."""
    import subprocess

    cmd = [sys.executable, "-m", "pytest"] if how == "python -m pytest" else [
        str(Path(sys.executable).with_name("pytest"))]
    args = ["-p", "no:cacheprovider", "-o", "autograder_suite_workers=2", "tests/framework/engine/test_chapter.py"]
    out = subprocess.run([*cmd, *args], cwd=REPO, capture_output=True, text=True, timeout=600).stdout
    assert "2 workers" in out and " passed" in out and "failed" not in out, out[-2000:]
    if how == "pytest":  # -n 0 is the command line's: whichever plugin came first, once is enough
        single = subprocess.run([*cmd, *args, "-n", "0"], cwd=REPO, capture_output=True, text=True, timeout=600).stdout
        assert "workers" not in single and " passed" in single, single[-2000:]
