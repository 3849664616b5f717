"""Feedback that teaches without answering (docs/feedback.md).

Numbers at two significant figures and directions instead of exact errors;
student text neutralised in hidden tests' feedback; what a hidden test's
calls printed kept for instructors only; hidden inputs that follow the
submission; Markdown a student cannot inject into; hidden-test details after
the due date.
"""

from __future__ import annotations

import json
import re
import shutil
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from autograder.calls import errors
from autograder.batch import feedback, summary
from autograder.core import manifest, results
from autograder.labkit import messages as M, plugin
from autograder.grading import runner
from autograder.labkit.assertions import _fmt_ratio, assert_close, assert_equal, assert_keys, assert_scalar

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
pytest_plugins = ["pytester"]


def failure(fn) -> str:
    with pytest.raises(AssertionError) as info:
        fn()
    return str(info.value)


def sig_digits(token: str) -> int:
    """Significant digits of a decimal like "0.0012", "1.2" or "1.0e+05"."""
    return len(re.split("[eE]", token)[0].replace(".", "").lstrip("-0"))


# -- numbers: two significant figures, words near 1, directions for integers ----------
@pytest.mark.parametrize(("x", "text"), [(4.0, "4.0"), (0.5, "0.50"), (9.96, "10"), (1234.5, "1200"),
                                         (12345.0, "1.2e+04"), (0.000123, "1.2e-04"), (0.0123, "1.2e-02"),
                                         (0.1, "0.10"), (-2.54, "-2.5"),
                                         (0.0, "0"), (float("inf"), "inf")])
def test_sig2(x, text):
    assert M.sig2(x) == text


def test_ratio_two_significant_figures_or_words():
    assert _fmt_ratio(4.0) == "4.0" and _fmt_ratio(0.25) == "0.25" and _fmt_ratio(1.23456789) == "1.2"
    assert _fmt_ratio(1.0004) == "slightly too large (within 5%)"
    assert _fmt_ratio(0.97) == "slightly too small (within 5%)"
    msg = failure(lambda: assert_scalar(1.23456789, 1.0, what="x", case="c", rtol=1e-9))
    assert msg == "x (case: c): off by a factor of 1.2 (rtol=1e-09)"
    # within 5%: which way, not by how much (the old message gave 12 digits: expected = own value / R)
    assert failure(lambda: assert_scalar(100.0112, 100.0, what="x")) == "x: slightly too large (within 5%) (rtol=1e-06)"
    assert failure(lambda: assert_scalar(0.98, 1.0, what="x")) == "x: slightly too small (within 5%) (rtol=1e-06)"
    # the direction is by value: -1.02 is below -1
    assert "slightly too small" in failure(lambda: assert_scalar(-1.02, -1.0, what="x"))
    assert failure(lambda: assert_scalar(3.0, 0.0, what="z")) == "z: too large"


def test_one_number_is_not_pointed_at_by_an_empty_index():
    # a 0-d value has no index: "at index ()" said nothing a student could use
    for msg in (failure(lambda: assert_close(np.float64(2.0), np.float64(1.0), what="v")),
                failure(lambda: assert_close(np.int64(5), np.int64(4), what="n")),
                failure(lambda: assert_close(np.float64("nan"), np.float64(1.0), what="v")),
                failure(lambda: assert_scalar(float("inf"), 1.0, what="s"))):
        assert "index" not in msg and "()" not in msg, msg
    assert failure(lambda: assert_close(np.float64(2.0), np.float64(1.0), what="v")).startswith("v: too large, about 2.0×")
    assert failure(lambda: assert_close(np.int64(5), np.int64(4), what="n")) == "n: too large"  # no size: exact
    assert "NaN or inf where a finite number is expected" in failure(lambda: assert_scalar(float("inf"), 1.0, what="s"))


def test_ratio_symptom_prints_two_significant_figures():
    assert M.say(M.RATIO_SYMPTOM, what="g", case="", ratio=4.000123, reference_name="r") == "g: it is 4.0× r"
    # any float given to a plain placeholder: never in full
    assert M.say(M.RATIO_SYMPTOM, what="g", case="", ratio=np.float64(0.123456), reference_name="r") == "g: it is 0.12× r"


def test_a_measured_ratio_is_said_as_its_power_of_two():
    """Run to run, resident memory moves a measured ratio by a few percent: 1.3 and 1.4 read alike."""
    said = {r: M.say(M.RATIO_AT_LEAST, what="g", case="", ratio=M.at_least(r), reference_name="r")
            for r in (1.0, 1.3, 1.4, 2.0, 4.7, 4.8, 7.99, 8.0)}
    assert said[1.3] == said[1.4] == said[1.0] == "g: it is at least 1× r"
    assert said[4.7] == said[4.8] == said[7.99] == "g: it is at least 4× r"
    assert said[2.0] == "g: it is at least 2× r" and said[8.0] == "g: it is at least 8× r"
    assert M.at_least(float("nan")) == M.at_least(0.5) == 1


def test_close_on_exact_integers_says_only_the_direction():
    msg = failure(lambda: assert_close(np.array([1, 2, 100_112]), np.array([1, 2, 100_000]), what="bytes"))
    assert msg == "bytes: too large at index (2,)" and "112" not in msg
    assert failure(lambda: assert_close([5.0, 7.0], [5.0, 9.0], what="n", rtol=0, atol=0)) == "n: too small at index (1,)"
    msg = failure(lambda: assert_close([1.0, 2.0], [1.0, 2.123456789], what="v", rtol=1e-9))
    assert msg == "v: too small, about 0.94× the expected value at index (1,) (rtol=1e-09, atol=0)"
    msg = failure(lambda: assert_close([1.0, 2.0], [1.0, 2.0001], what="v", rtol=1e-9))
    assert msg == "v: slightly too small (within 5%) at index (1,) (rtol=1e-09, atol=0)"


def test_close_says_which_way_and_roughly_how_far():
    msg = failure(lambda: assert_close([1.0, 4.0], [1.0, 2.0], what="v"))
    assert msg == "v: too large, about 2.0× the expected value at index (1,) (rtol=1e-06, atol=0)"
    assert failure(lambda: assert_close([1.0, 0.6123], [1.0, 2.0], what="v")).startswith(
        "v: too small, about 0.31× the expected value")
    assert failure(lambda: assert_close([-1.0], [1.0], what="v")).startswith("v: wrong sign at index (0,)")
    assert failure(lambda: assert_close([0.5], [0.0], what="v", atol=1e-9)).startswith("v: too large at index (0,)")
    assert failure(lambda: assert_close([-3.0, -2.0], [-3.0, -1.0], what="v")).startswith(
        "v: too large, about 2.0× the expected value at index (1,)")


def test_equal_says_which_way_for_numbers_only():
    assert failure(lambda: assert_equal(8, 7, what="k", case="N=48")) == "k (case: N=48): too large"
    assert failure(lambda: assert_equal(6.5, 7, what="k")) == "k: too small"
    assert failure(lambda: assert_equal("adam", "sgd", what="name")) == "name: wrong value"
    assert failure(lambda: assert_equal(True, False, what="fits")) == "fits: wrong value"
    assert failure(lambda: assert_equal([1, 2], [1, 3], what="bounds")) == "bounds: wrong value"


# -- student text ------------------------------------------------------------------------
def test_student_text_rounds_truncates_and_strips():
    s = M.student_text("ValueError: (0.123456789, [1.5e9, 347, 12345678]) fc1.weight \x1b[31m", keep=("3072",))
    assert s == "ValueError: (0.12, [1.5e+09, 350, 1.2e+07]) fc1.weight [31m"
    assert M.student_text("at most 3072 MiB", keep=("3072",)) == "at most 3072 MiB"
    long = M.student_text("x" * 1000, limit=50)
    assert len(long) == 50 and long.endswith("…")
    for tok in re.findall(r"\d+\.\d+", M.student_text(repr(list(np.random.default_rng(0).normal(size=50))), 2000)):
        assert sig_digits(tok) <= 2, tok


def test_student_keys_and_type_names_are_student_text():
    msg = failure(lambda: assert_keys({"a": 1, repr((0.123456789, 2)): 1, 3: 2}, ["a"], what="d"))
    assert msg == "d: unexpected keys ['(0.12, 2)', 3]"
    Sneaky = type("Leak_0_123456789", (), {})
    msg = failure(lambda: assert_close(Sneaky(), 1.0, what="x"))
    assert "123456789" not in msg and "Leak_0_" in msg


def test_traceback_keeps_frames_and_neutralises_the_message():
    tb = ('  File "/w/toy.py", line 1234, in add\n    raise ValueError(repr(a))\n    ^^^^^^^^^^^^^^^^\n'
          'ValueError: [0.123456789, 2.718281828]\n  File "/w/toy.py", line 99999999, in fake\n')
    safe = plugin.safe_traceback(tb)
    assert safe.startswith('  File "/w/toy.py", line 1234, in add\n    raise ValueError(repr(a))\n')
    assert "ValueError: [0.12, 2.7]" in safe
    assert "0.123456789" not in safe and "99999999" not in safe  # a frame faked inside the message is text too


def _excinfo(exc):
    return SimpleNamespace(value=exc, typename=type(exc).__name__)


def test_hidden_feedback_hides_output_and_rounds_the_message():
    exc = errors.StudentCodeError(errors.EXCEPTION, "add() raised ValueError: [0.123456789]",
                                  '  File "/w/toy.py", line 3, in add\nValueError: [0.123456789]\n',
                                  output="a = [0.123456789, 0.987654321]\n")
    text, kind, note = plugin.feedback_for(_excinfo(exc), "test_x", public=False)
    assert kind == errors.EXCEPTION
    assert "0.123456789" not in text and "0.98765" not in text and "printed" not in text
    assert text.startswith("add() raised ValueError: [0.12]") and 'line 3, in add' in text
    assert "a = [0.123456789, 0.987654321]" in note and "add() raised ValueError: [0.123456789]" in note
    # a public test's inputs are public: its feedback shows the output, as before
    text, _kind, note = plugin.feedback_for(_excinfo(exc), "test_x", public=True)
    assert "Your code printed (last lines):\na = [0.123456789, 0.987654321]" in text and not note
    # the lab's limits stay exact: "the sandbox allows at most 3072 MiB" must not read 3100
    limits = manifest.Limits(memory_mb=3072)
    mem = errors.StudentCodeError(errors.EXCEPTION, "f() raised MemoryError:  (the sandbox allows at most 3072 MiB)")
    assert "3072 MiB" in plugin.feedback_for(_excinfo(mem), "t", public=False, limits=limits)[0]
    # a test's own exception on the student's result: the student's text again
    text, _kind, _note = plugin.feedback_for(_excinfo(ValueError("could not convert string to float: '0.31415926'")),
                                             "t", public=False)
    assert "0.31415926" not in text and "0.31" in text


def test_output_travels_in_its_own_field():
    exc = errors.StudentCodeError.from_worker({"kind": "exception", "message": "m", "traceback": "t",
                                               "output": "x" * 10_000})
    assert exc.traceback == "t" and len(exc.output) == errors.OUTPUT_LIMIT
    assert errors.StudentCodeError.from_worker(exc.to_dict()).output == exc.output
    assert errors.StudentCodeError.from_worker({"kind": "exception"}).output == ""


# -- Markdown a student cannot inject into ----------------------------------------------
HOSTILE = ("add() raised ValueError: <img src=x onerror=alert(1)> **bold** [link](http://x) & more\n"
           "```\n\n# ✅ 33/33\n<script>alert(1)</script>\n````` and ~~~\n## ✅ Add two arrays: 3 / 3")


def _result(tests, manifest_):
    return results.SubmissionResult(submission="s", lab=manifest_.name, tests=tests)


def _toy_manifest(details: str = "always") -> manifest.Manifest:
    return manifest.parse({"title": "Toy", "student_files": ["toy.py"], "questions": [
        {"id": "add", "title": "Add two arrays", "points": 2},
        {"id": "norm", "title": "Norm", "points": 1, "details": details}]}, "labx_toy")


def _test(name, question, *, public=False, feedback="", points=0.0, note=""):
    return results.TestResult(nodeid=f"t::{name}", name=name, question=question, max_points=1.0, points=points,
                              status=results.PASSED if points else results.FAILED, visibility="visible",
                              feedback=feedback, public=public, instructor_note=note)


def test_student_text_cannot_close_the_fence_or_add_markup():
    m = _toy_manifest()
    md = feedback.markdown(_result([_test("test_add_random", "add", feedback=HOSTILE)], m), m)
    assert "<img" not in md and "<script" not in md and "&lt;script&gt;" in md and "&amp; more" in md
    fence = next(line.strip() for line in md.splitlines() if line.strip().startswith("```"))
    assert len(fence) == 6  # longer than the five-backtick run inside
    outside, inside, after = md.split(fence)
    assert "`````" in inside and "# ✅ 33/33" in inside
    headings = [line for line in (outside + after).splitlines() if line.lstrip().startswith("#")]
    assert headings == ["# Toy", "## ❌ Add two arrays: 0 / 2", "## ❌ Norm: 0 / 1"], headings
    first = next(line for line in md.splitlines() if "test_add_random" in line)
    assert r"\*\*bold\*\*" in first and r"\[link\]" in first


def test_summary_escapes_submission_names():
    m = _toy_manifest()
    res = results.SubmissionResult(submission="<b>x</b> | # y", lab="labx_toy")
    text = summary.markdown([res], m)
    assert "<b>" not in text and "&lt;b&gt;x&lt;/b&gt; \\| # y" in text


# -- details after the due date -----------------------------------------------------------
def test_details_key_is_validated():
    assert _toy_manifest("after_due_date").question("norm").details == "after_due_date"
    assert _toy_manifest().question("add").details == "always"
    with pytest.raises(manifest.ManifestError, match=r"labx_toy/lab.toml: question 'norm': key 'details'"):
        _toy_manifest("tomorrow")


def test_after_due_date_visibility_and_feedback():
    m = _toy_manifest("after_due_date")
    tests = [_test("test_add_public", "add", public=True, feedback="add: wrong value"),
             _test("test_add_random", "add", feedback="a + b: max abs error 0.12"),
             _test("test_norm", "norm", feedback="norm: off by a factor of 2.0\n\ntraceback line"),
             _test("test_norm_ok", "norm", points=1.0)]
    gs = results.gradescope_json(_result(tests, m), m)
    vis = {t["name"].split(": ", 1)[1]: t["visibility"] for t in gs["tests"]}
    assert vis == {"test_add_public": "visible", "test_add_random": "visible",
                   "test_norm": "after_due_date", "test_norm_ok": "after_due_date"}
    before = feedback.markdown(_result(tests, m), m)
    assert "off by a factor" not in before and "traceback line" not in before
    assert "`test_norm` (hidden test): 0 / 1" in before
    assert "The details of this question's hidden tests come after the due date." in before
    assert "max abs error 0.12" in before  # other questions as always
    after = feedback.markdown(_result(tests, m), m, after_due=True)
    assert "norm: off by a factor of 2.0" in after and "come after the due date" not in after


def test_instructor_note_never_reaches_students():
    m = _toy_manifest()
    res = _result([_test("test_add_random", "add", feedback="add() raised ValueError: [0.12]",
                         note="output (last lines):\nSECRET 0.123456789")], m)
    assert "SECRET" not in json.dumps(results.gradescope_json(res, m))
    assert "SECRET" not in feedback.markdown(res, m)
    assert "SECRET" in json.dumps(res.to_dict())
    assert results.SubmissionResult.from_dict(res.to_dict()).tests[0].instructor_note.endswith("0.123456789")


# -- hidden inputs follow the submission --------------------------------------------------
def test_seed_for_without_salt_is_todays_seed():
    nodeid = "tests/lab1_iron_law/test_costs.py::test_mfu_matches_reference"
    assert plugin.seed_for(nodeid) == zlib.crc32(nodeid.encode()) & 0x7FFFFFFF
    assert plugin.seed_for(nodeid, "abc") == plugin.seed_for(nodeid, "abc") != plugin.seed_for(nodeid, "abd")


def test_grading_passes_the_salt(tmp_path):
    from autograder.core import labs

    lab = labs.get("lab1")
    args = runner.pytest_args(lab, tmp_path, tmp_path / "r.json", sandbox=True, public_only=False, seed_salt="f00d")
    assert args[args.index("--seed-salt") + 1] == "f00d"
    assert "--seed-salt" not in runner.pytest_args(lab, tmp_path, tmp_path / "r.json", sandbox=True, public_only=False)


PROBE_HIDDEN = """import pytest

@pytest.mark.question("add", points=0)
def test_probe_hidden(seed, rng):
    raise AssertionError(f"seed={seed} draw={int(rng.integers(1 << 30))}")

@pytest.mark.question("add", points=0)
@pytest.mark.fixed_seed
def test_probe_fixed(seed):
    raise AssertionError(f"seed={seed}")
"""
PROBE_PUBLIC = """import pytest

@pytest.mark.question("add", points=0)
def test_probe_public(seed):
    raise AssertionError(f"seed={seed}")
"""


def test_salt_changes_hidden_seeds_only(pytester, monkeypatch):
    shutil.copytree(FIXTURES / "toyroot", pytester.path, dirs_exist_ok=True)
    monkeypatch.setenv("IRONLAW_ROOT", str(pytester.path))
    (pytester.path / "tests" / "labx_toy" / "test_probe.py").write_text(PROBE_HIDDEN)
    (pytester.path / "assignments" / "labx_toy" / "tests" / "test_probe_public.py").write_text(PROBE_PUBLIC)

    def seeds(*args, env=None):
        if env is None:
            monkeypatch.delenv(plugin.SEED_SALT_ENV, raising=False)
        else:
            monkeypatch.setenv(plugin.SEED_SALT_ENV, env)
        out = pytester.path / "r.json"
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "--results-json", str(out),
                                      "tests/labx_toy/test_probe.py", "assignments/labx_toy/tests/test_probe_public.py",
                                      *args)
        return {t["name"]: (t["nodeid"], t["feedback"]) for t in json.loads(out.read_text())["tests"]}

    plain, abc, abc_again, xyz = seeds(), seeds("--seed-salt", "abc"), seeds("--seed-salt", "abc"), seeds(env="xyz")
    for name, (nodeid, fb) in plain.items():  # no salt: today's seeds, so snapshots and plain pytest stay valid
        assert fb.startswith(f"seed={zlib.crc32(nodeid.encode()) & 0x7FFFFFFF}"), (name, fb)
    assert abc == abc_again, "same submission, same salt, same cases"
    assert abc["test_probe_hidden"] != plain["test_probe_hidden"] != xyz["test_probe_hidden"] != abc["test_probe_hidden"]
    for name in ("test_probe_public", "test_probe_fixed"):
        assert abc[name] == xyz[name] == plain[name], name


# -- end to end: a submission that prints its inputs and raises them ----------------------------
LEAKY = '''import numpy as np


def add(a, b):
    a = np.asarray(a, dtype=np.float64)
    if a.shape == (3, 4):  # only the hidden test's random inputs
        print("SECRET", repr(a.ravel().tolist()))
        raise ValueError(f"inputs {a.ravel().tolist()!r}")
    return a + np.asarray(b, dtype=np.float64)


def norm(x):
    print("SECRET", list(x))
    return 1.0
'''


def test_grade_keeps_hidden_inputs_and_output_from_students(toy_root, tmp_path):
    from autograder.cli import main

    toml = toy_root / "assignments" / "labx_toy" / "lab.toml"
    toml.write_text(toml.read_text().replace('points = 2\n', 'points = 2\ndetails = "after_due_date"\n', 1))
    subs = tmp_path / "subs"
    (subs / "leaky").mkdir(parents=True)
    (subs / "leaky" / "toy.py").write_text(LEAKY)
    out = tmp_path / "out"
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1"]) == 0
    gs = json.loads((out / "results" / "leaky.json").read_text())
    md = (out / "feedback" / "leaky.md").read_text()
    raw = json.loads((out / "raw" / "leaky.json").read_text())
    assert "SECRET" not in json.dumps(gs) and "SECRET" not in md
    by_name = {t["name"].split(": ", 1)[1]: t for t in gs["tests"]}
    random_add = by_name["test_add_random"]["output"]
    assert random_add.startswith("add() raised ValueError: inputs [")
    for tok in re.findall(r"\d+\.\d+(?:e[-+]\d+)?", random_add):
        assert sig_digits(tok) <= 2, (tok, random_add)
    for t in gs["tests"]:
        assert "_public" in t["name"] or not re.search(r"\d\.\d{3,}", t["output"]), t
    notes = {t["name"]: t["instructor_note"] for t in raw["tests"]}
    assert "SECRET" in notes["test_add_random"] and "inputs [" in notes["test_add_random"]
    # norm's hidden tests wait for the due date: on Gradescope, and in the feedback
    assert by_name["test_norm"]["visibility"] == "after_due_date" == by_name["test_norm_known"]["visibility"]
    assert by_name["test_add_random"]["visibility"] == "visible"
    assert "come after the due date" in md and "off by a factor" not in md
    # the due date has passed: the unchanged submission is not regraded, its feedback is rewritten
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1", "--after-due",
                 "--change-settings"]) == 0  # the record kept the first run's settings (docs/record.md)
    md = (out / "feedback" / "leaky.md").read_text()
    # test_norm_known's case is fixed: its details say "wrong value", no direction (issue 27, docs/feedback.md)
    assert "norm (case: (3, 4)): wrong value" in md and "come after the due date" not in md and "SECRET" not in md
    # with --due instead: the details wait until that date, and show once it has passed
    fresh = tmp_path / "fresh"  # --after-due is in the record of out: a new record for the due dates
    assert main(["grade", "labx", str(subs), "--out", str(fresh), "--jobs", "1", "--due", "2099-01-01T00:00",
                 "--allow-unknown-times"]) == 0
    out = fresh
    assert "come after the due date" in (out / "feedback" / "leaky.md").read_text()
    assert main(["grade", "labx", str(subs), "--out", str(out), "--jobs", "1", "--due", "2001-01-01T00:00",
                 "--allow-unknown-times", "--change-settings"]) == 0
    assert "norm (case: (3, 4)): wrong value" in (out / "feedback" / "leaky.md").read_text()


def test_details_follow_each_students_own_due_date():
    from datetime import datetime, timezone

    from autograder.batch import bulk, gradebook, late, roster

    due = datetime(2026, 12, 20, 23, 59, tzinfo=timezone.utc)
    later = datetime(2026, 12, 27, 23, 59, tzinfo=timezone.utc)
    deadline = gradebook.Deadline(due, late.LatePolicy(10, 100, 0), extensions={"an@uni.edu": later})
    people = {"an": roster.Submitters(("An",), ("an@uni.edu",), ("1",))}
    now = datetime(2026, 12, 22, tzinfo=timezone.utc)
    shown = bulk.Shown(_toy_manifest("after_due_date"), deadline=deadline, people=people, now=now)
    assert shown.past_due("binh") and not shown.past_due("an")  # an's extension runs to the 27th
    assert bulk.Shown(_toy_manifest("after_due_date"), after_due=True, deadline=deadline, now=now).past_due("an")
    assert not bulk.Shown(_toy_manifest("after_due_date"), now=now).past_due("binh")  # no due date: only --after-due


def test_a_shared_traceback_is_shown_once():
    m = _toy_manifest()
    tb = "importing toy.py failed: SyntaxError: invalid syntax\n  File \"toy.py\", line 3\n    def add(\n           ^"
    tests = [_test("test_add_one", "add", feedback=tb), _test("test_add_two", "add", feedback=tb),
             _test("test_norm", "norm", feedback=tb)]
    md = feedback.markdown(_result(tests, m), m)
    assert md.count('File "toy.py", line 3') == 1, md
    assert md.count("(details as for `test_add_one` above)") == 0  # the name is ours, but said as text
    assert md.count("details as for test\\_add\\_one above") == 2, md


def test_numbers_in_feedback_follow_the_students_language():
    """One function writes a number for each language (Babel's CLDR separators): the feedback's
    ratios and scores read 2,3 and 3,5 in Vietnamese, 2.3 and 3.5 in English."""
    from autograder.core import i18n
    from autograder.grading.notebook_text import Local

    for lang, ratio, score in (("en", "2.3", "3.5 / 7"), ("vi", "2,3", "3,5 / 7")):
        with i18n.language(lang):
            assert ratio in M.say(M.SCALAR_OFF, what="x", case="", ratio=2.345, rtol=1e-6)
            assert M.sig2(0.5) == ("0.50" if lang == "en" else "0,50")
            assert _score(lang) == score
            assert f"{Local(1234.5):,.1f}" == ("1,234.5" if lang == "en" else "1.234,5")


def _score(lang: str) -> str:
    from autograder.core.i18n import _
    from autograder.grading.notebook_text import Local

    return _("{points:g} / {max_points:g}").format(points=Local(3.5), max_points=Local(7))
