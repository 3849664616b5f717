"""``autograder/core/chapter.py``: the outline file is strict, titles resolve
exactly, and pointers in text are checked by number and title."""

from __future__ import annotations

import pytest

from autograder.core import chapter

GOOD = {
    "book": "B", "title": "T", "repo": "o/r", "path": "p.qmd", "commit": "0" * 40,
    "sections": [
        {"number": "4", "title": "Pipeline Architecture", "anchor": "sec-a"},
        {"number": "4.2", "title": "Data pipeline", "anchor": "sec-b"},
        {"number": "6.2.2", "title": "Practical considerations", "anchor": "sec-c"},
        {"number": "6.5.4", "title": "Practical considerations", "anchor": "sec-d"},
    ],
}


def _with(**changes) -> dict:
    return {**GOOD, **changes}


@pytest.mark.parametrize(("data", "match"), [
    (_with(extra=1), "unknown key 'extra'"),
    (_with(commit="034a583"), "full 40-digit hash"),
    (_with(sections=[{"number": "4", "title": "X"}]), "needs exactly"),
    (_with(sections=[{"number": "four", "title": "X", "anchor": "a"}]), "is not like 4 or 4.2"),
    (_with(sections=[*GOOD["sections"], {"number": "4.2", "title": "Y", "anchor": "sec-e"}]), "duplicate section number"),
    (_with(sections=[*GOOD["sections"], {"number": "9", "title": "Y", "anchor": "sec-a"}]), "duplicate section anchor"),
])
def test_the_outline_refuses_what_it_does_not_know(data, match):
    with pytest.raises(chapter.ChapterError, match=match):
        chapter.parse(data, "chapter.toml")


def test_titles_resolve_exactly_and_a_repeated_title_needs_its_number():
    c = chapter.parse(GOOD, "chapter.toml")
    assert c.by_title("Data pipeline").number == "4.2"
    with pytest.raises(chapter.ChapterError, match="no section titled 'Data Pipeline'"):
        c.by_title("Data Pipeline")  # the chapter writes level-3 titles in sentence case
    with pytest.raises(chapter.ChapterError, match="§6.2.2 Practical considerations"):
        c.by_title("Practical considerations")
    assert c.by_title("§6.5.4 Practical considerations").anchor == "sec-d"
    with pytest.raises(chapter.ChapterError):
        c.by_title("§6.5.4 Data pipeline")


def test_a_pointer_is_the_number_and_the_title():
    c = chapter.parse(GOOD, "chapter.toml")
    assert chapter.pointer(c.by_title("Data pipeline")) == "§4.2 Data pipeline"
    assert chapter.pointer(c.by_title("Data pipeline"), lambda t: t) == "§4.2 Data pipeline"  # untranslated
    assert chapter.pointer(c.by_title("Data pipeline"), lambda t: "Quy trình dữ liệu") == \
        "§4.2 Quy trình dữ liệu (Data pipeline)"
    vi = {"Data pipeline": {"Quy trình dữ liệu"}}
    ok = "See §4.2 Data pipeline, then §6.5.4 Practical considerations; đọc §4.2 Quy trình dữ liệu (Data pipeline)."
    assert chapter.bad_pointers(ok, c, vi) == []
    bad = chapter.bad_pointers("See §4.3 Forward pass, §4.2 Preprocessing, §4 and §4.2Data pipeline.", c, vi)
    assert [b.split(" ")[0] for b in bad] == ["§4.3", "§4.2", "§4", "§4.2"]
