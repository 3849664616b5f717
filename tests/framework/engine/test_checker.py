"""``grader`` in a notebook: otter's results, with otter's English frame said in the notebook's language."""

from __future__ import annotations

from types import SimpleNamespace

from autograder.core import i18n
from autograder.grading import checker

FAILED = ("❌ Test case failed\nError at line 18 in test q1:\n      check('labx_toy', 'q1')\n"
          "AssertionError: 1 of 1 public tests of 'q1' failed.")


def _result(passed: bool, message: str = FAILED):
    case = SimpleNamespace(test_case=SimpleNamespace(name="public tests"), message=message, passed=passed)
    return SimpleNamespace(name="q1", passed_all=passed, test_case_results=[case], score=1 if passed else 0)


def test_the_frame_is_in_the_notebook_language():
    with i18n.language("vi"):
        assert repr(checker.Result(_result(True))) == "q1: kết quả: mọi trường hợp kiểm thử đều đạt!"
        failed = repr(checker.Result(_result(False)))
        assert failed.startswith("q1: kết quả:\n    bài kiểm thử công khai: kết quả:\n"
                                 "        ❌ Trường hợp kiểm thử không đạt")
        assert "Test case failed" not in failed and "results:" not in failed
        assert "đạt!" in checker.Result(_result(True))._repr_html_()
    with i18n.language("en"):
        assert repr(checker.Result(_result(True))) == "q1 results: All test cases passed!"  # otter's own words


def test_otters_pointer_into_its_generated_file_is_left_out_and_html_escaped():
    with i18n.language("en"):
        text = repr(checker.Result(_result(False)))
        assert "Error at line 18" not in text and "check('labx_toy'" not in text
        assert "AssertionError: 1 of 1 public tests of 'q1' failed." in text
        html = checker.Result(_result(False, "❌ Test case failed\n<script>x</script>"))._repr_html_()
        assert "<script>" not in html and "&lt;script&gt;" in html


def test_check_gives_otter_the_notebooks_globals_and_keeps_its_result():
    seen = {}

    class Otter:
        def check(self, question, global_env=None):
            seen["env"] = global_env
            return _result(True)

    grader = checker.Grader(Otter())
    marker = object()
    globals()["MARKER"] = marker
    res = grader.check("q1")
    assert seen["env"]["MARKER"] is marker  # the caller's globals, as otter would have read them
    assert res.score == 1 and res.passed_all


def test_check_all_checks_every_question_in_the_notebook_language(tmp_path, monkeypatch):
    """check_all: each of otter's questions through check, with the notebook's globals, its frame
    in the notebook's language (otter's own check_all would say it in English)."""
    (tmp_path / "q1.py").write_text("OK_TEST = {}\n")
    (tmp_path / "q2.py").write_text("OK_TEST = {}\n")
    asked = []

    class Otter:
        _tests_dir, _nbmeta_config = str(tmp_path), None

        def check(self, question, global_env=None):
            asked.append((question, global_env["MARKER"]))
            return SimpleNamespace(**{**vars(_result(question == "q1")), "name": question})

    globals()["MARKER"] = "the notebook's"
    with i18n.language("vi"):
        results = checker.Grader(Otter()).check_all()
        text = repr(results)
    assert asked == [("q1", "the notebook's"), ("q2", "the notebook's")] and not results.passed_all
    assert text.startswith("q1: kết quả: mọi trường hợp kiểm thử đều đạt!\n\nq2: kết quả:")
    assert "Test case failed" not in text and "Trường hợp kiểm thử không đạt" in text
