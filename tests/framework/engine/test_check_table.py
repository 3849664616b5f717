"""`autograder check`'s table says points as points: what the public tests that ran earned of what
they can earn, which public tests ran (each one by name, passed or failed), and the question's
points at grading; in English and in Vietnamese."""

from __future__ import annotations

import re

import pytest

from autograder.cli import main

# per language: the headers, the first question's points earned (reference, stub), a question without public
# tests, the note under the table
WORDS = {
    "en": ("public tests that ran", "points earned", "points at grading", "1 of 1 possible", "0 of 1 possible",
           "none: the hidden tests check it at grading", "Points earned: what the public tests"),
    "vi": ("bài kiểm thử công khai đã chạy", "điểm đạt được", "điểm khi chấm", "1 trên 1 điểm có thể đạt",
           "0 trên 1 điểm có thể đạt", "không có: các bài kiểm thử ẩn kiểm tra câu này khi chấm",
           "Điểm đạt được: số điểm các bài kiểm thử công khai đã chạy"),
}


def _table(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("│", " ").replace("┃", " "))


@pytest.mark.parametrize("lang", WORDS)
def test_the_table_names_the_tests_that_ran_and_says_points_earned_of_possible(toy_root, capsys, lang):
    header, earned, at_grading, full, none, no_public, note = WORDS[lang]
    assert main(["check", "labx", "--lang", lang, "--path", str(toy_root / "solutions" / "labx_toy")]) == 0
    text = _table(capsys.readouterr().out)
    assert header in text and earned in text and at_grading in text, text
    assert f"✓ test_add_public {full} 3 " in text, text  # the question's 3 points at grading
    assert f"{no_public} - 2 " in text and note in text
    assert " of 3" not in text, "never the question's points as if the public tests could earn them"
    assert main(["check", "labx", "--lang", lang]) == 1  # the stub
    text = _table(capsys.readouterr().out)
    assert f"✗ test_add_public {none} 3 " in text, text
