"""Issue 27, section 3: a fixed case's messages never say which way a value is off.

A hidden test whose inputs are the same on every submission (it uses neither
``seed`` nor ``rng``, or is marked ``fixed_case``/``fixed_seed``), and any
``with fixed_case():`` block, say "wrong value" and a hint where the helpers
said "too large" or "off by a factor of 4.0".  Drawn cases and public tests keep
their direction.  Run on the toy lab, through the plugin (``pytester``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_close, assert_equal, assert_scalar

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
pytest_plugins = ["pytester"]

DIRECTION = ("too large", "too small", "factor", "×", "slightly", "wrong sign")

HIDDEN = '''import numpy as np
import pytest

from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_close, assert_equal, assert_scalar

BIG = M.sized("{what}{case}: max abs error {err} after step {step}")  # a lab's own template with a size


@pytest.mark.question("add", points=0)
def test_chapter_case(student):
    assert_scalar(4.0, 1.0, what="x", case="chapter", rtol=1e-9)


@pytest.mark.question("add", points=0)
def test_chapter_ints(student):
    assert_equal(5, 3, what="n", case="chapter")


@pytest.mark.question("add", points=0)
def test_chapter_array(student):
    assert_close(np.array([1.0, 9.0, 3.5]), np.array([1.0, 2.0, 3.0]), what="v", case="chapter", rtol=1e-9)


@pytest.mark.question("add", points=0)
def test_drawn_case(student, rng):
    assert_scalar(4.0, 1.0, what="x", case="random", rtol=1e-9)


@pytest.mark.question("add", points=0)
def test_drawn_with_a_fixed_block(student, rng):
    with M.fixed_case():
        assert_scalar(4.0, 1.0, what="x", case="worked", rtol=1e-9)


@pytest.mark.question("add", points=0)
@pytest.mark.fixed_case
def test_marked(student, rng):
    assert_scalar(4.0, 1.0, what="x", case="marked", rtol=1e-9)


@pytest.mark.question("add", points=0)
@pytest.mark.fixed_seed
def test_fixed_seed(student, rng):
    assert_scalar(4.0, 1.0, what="x", case="fixed seed", rtol=1e-9)


@pytest.mark.question("add", points=0)
def test_shared_ratio_template(student):
    raise AssertionError(M.say(M.RATIO_SYMPTOM, what="g", case="", ratio=4.0, reference_name="the big-batch one"))


@pytest.mark.question("add", points=0)
def test_lab_template(student):
    raise AssertionError(M.say(BIG, what="path", case="", err="3.1e-02", step=4))
'''
PUBLIC = '''import pytest

from autograder.labkit.assertions import assert_scalar


@pytest.mark.question("add", points=0)
def test_public_case(student):
    assert_scalar(4.0, 1.0, what="x", case="public", rtol=1e-9)
'''


@pytest.fixture(scope="module")
def feedback(tmp_path_factory):
    """{test name: feedback} of the probes above, graded by a real pytest run on the toy lab."""
    import os
    import subprocess
    import sys

    root = tmp_path_factory.mktemp("toy")
    shutil.copytree(FIXTURES / "toyroot", root, dirs_exist_ok=True)
    (root / "tests" / "labx_toy" / "test_fixed.py").write_text(HIDDEN)
    (root / "assignments" / "labx_toy" / "tests" / "test_fixed_public.py").write_text(PUBLIC)
    out = root / "r.json"
    env = {**os.environ, "IRONLAW_ROOT": str(root), "IRONLAW_LANG": "en"}
    subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--results-json", str(out),
                    "--seed-salt", "s", "tests/labx_toy/test_fixed.py", "assignments/labx_toy/tests/test_fixed_public.py"],
                   cwd=root, env=env, capture_output=True, text=True, timeout=300)
    return {t["name"]: t["feedback"] for t in json.loads(out.read_text())["tests"]}


@pytest.mark.parametrize("name", ["test_chapter_case", "test_chapter_ints", "test_chapter_array",
                                  "test_drawn_with_a_fixed_block", "test_marked", "test_fixed_seed",
                                  "test_shared_ratio_template", "test_lab_template"])
def test_fixed_cases_say_no_direction(feedback, name):
    fb = feedback[name]
    assert "wrong value" in fb and "same on every submission" in fb, fb
    assert not any(word in fb for word in DIRECTION) and "3.1e-02" not in fb, fb


def test_a_fixed_array_names_its_first_wrong_element_not_its_worst(feedback):
    assert "wrong value at index (1,)" in feedback["test_chapter_array"]  # (2,) is off too, by less


@pytest.mark.parametrize("name", ["test_drawn_case", "test_public_case"])
def test_drawn_and_public_cases_keep_their_direction(feedback, name):
    assert "off by a factor of 4.0" in feedback[name], feedback[name]


def test_outside_a_test_the_helpers_say_which_way():
    with pytest.raises(AssertionError, match="factor of 4.0"):
        assert_scalar(4.0, 1.0, what="x", rtol=1e-9)
    with M.fixed_case():
        with pytest.raises(AssertionError) as exc:
            assert_close(np.array([2.0, 9.0]), np.array([1.0, 1.0]), what="v", rtol=1e-9)
        assert "wrong value at index (0,)" in str(exc.value)
        with pytest.raises(AssertionError, match=r"^n: wrong value \("):
            assert_equal(5, 3, what="n")
        with M.fixed_case(False):  # changes nothing: still fixed
            with pytest.raises(AssertionError, match="wrong value"):
                assert_scalar(4.0, 1.0, what="x", rtol=1e-9)
    with pytest.raises(AssertionError, match="too large"):
        assert_equal(5, 3, what="n")


def test_fixed_case_marker_takes_no_arguments(pytester, monkeypatch):
    shutil.copytree(FIXTURES / "toyroot", pytester.path, dirs_exist_ok=True)
    monkeypatch.setenv("IRONLAW_ROOT", str(pytester.path))
    (pytester.path / "tests" / "labx_toy" / "test_bad.py").write_text(
        "import pytest\n@pytest.mark.fixed_case(True)\n@pytest.mark.question('add')\ndef test_x(student):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "tests/labx_toy/test_bad.py")
    result.stderr.fnmatch_lines(["*test_x: @pytest.mark.fixed_case: takes no arguments, not True*"])
    assert result.ret != 0
