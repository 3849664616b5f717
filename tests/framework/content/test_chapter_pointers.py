"""Every pointer a student reads names a section of the chapter's outline
(``assignments/chapter.toml``, ``autograder/core/chapter.py``) by its number
and its title, in both languages; no text points by a bare number
("section 4", "mục 4"); every question names the sections that teach it;
and every notebook, the README and ``docs/`` name the pinned version.

Student-facing text: the notebook sources and the built notebooks (both
languages), the stub and reference modules and the lab's given modules
(their docstrings become the stubs'), the public and hidden tests (their
messages are feedback), ``lab.toml``, the catalogs (Vietnamese feedback),
``README.md`` and ``docs/``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from autograder.authoring import notebooks
from autograder.core import chapter, i18n, labs
from autograder.labkit import messages

REPO = Path(__file__).resolve().parents[3]
LABS = labs.all_labs(REPO)
OUTLINE = chapter.load(REPO)
# a pointer by number alone: "section 4", "Section 6.5", "sections 3, 4", "mục 4", "các mục 3"
BARE = re.compile(r"\b(?:[Ss]ections?|[Mm]ục|[Cc]hương \d+ mục)\s+\d", re.UNICODE)


def _vi_titles() -> dict[str, set[str]]:
    with (REPO / "autograder" / "core" / "locale" / "vi.po").open("rb") as f:
        cat = read_po(f)
    return {s.title: {cat[s.title].string} if s.title in cat and cat[s.title].string else set()
            for s in OUTLINE.sections}


def _flat(text: str) -> str:
    """One line: comment markers and line breaks gone, so a title wrapped over two
    lines of a source still reads as one."""
    text = re.sub(r"(?m)^\s*#+ ?", " ", text)
    return " ".join(text.split())


def _student_texts() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "assignments" / "course.toml"]
    for lab in LABS:
        for folder in (lab.assignment_dir, lab.solution_dir, lab.hidden_tests_dir):
            files += sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in
                            (".py", ".ipynb", ".toml", ".po", ".md") and "snapshots" not in p.parts)
        # the stubs by name: on a fresh clone they are written only when the session starts
        # (stubs_on_disk), after collection, and a glob would leave them out of CI unseen
        files += [lab.assignment_dir / f for f in lab.manifest.student_files]
    files.append(REPO / "autograder" / "core" / "locale" / "vi.po")
    return sorted(set(files), key=files.index)


TEXTS = _student_texts()


def test_outline_matches_the_pin():
    assert OUTLINE.repo == "harvard-edge/cs249r_book"
    assert OUTLINE.path == "book/quarto/contents/vol1/training/training.qmd"
    assert OUTLINE.commit == "034a583b9b80f2d7a66ffbd307c8901346ef5594"
    numbers = [s.number for s in OUTLINE.sections]
    assert "1" in numbers and OUTLINE.by_number("1").title != "Purpose"  # Purpose is unnumbered
    assert all(s.anchor.startswith("sec-model-training-") for s in OUTLINE.sections)


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_pointer_names_a_section_of_the_outline(path):
    text = _flat(path.read_text(encoding="utf-8"))
    bad = chapter.bad_pointers(text, OUTLINE, _vi_titles())
    assert not bad, f"{path.relative_to(REPO)}: pointers not in assignments/chapter.toml: {bad}"


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_pointer_by_number_alone(path):
    text = _flat(path.read_text(encoding="utf-8"))
    found = [text[max(m.start() - 30, 0):m.end() + 30] for m in BARE.finditer(text)]
    assert not found, f"{path.relative_to(REPO)}: write §N and the title instead of: {found}"


def test_every_question_names_its_sections():
    # the predictions' participation point is not taught by a section: it is for guessing before measuring
    missing = [f"{lab.short} {q.id}" for lab in LABS for q in lab.manifest.questions
               if not q.sections and not q.participation]
    assert not missing, f"questions without a section in lab.toml: {missing}"


def test_an_unknown_title_in_lab_toml_is_an_error(tmp_path):
    import shutil
    lab = LABS[0]
    root = tmp_path / "proj"
    shutil.copytree(REPO / "assignments", root / "assignments", ignore=shutil.ignore_patterns("*.ipynb"))
    toml = root / "assignments" / lab.name / "lab.toml"
    title = lab.manifest.questions[0].sections[0]
    toml.write_text(toml.read_text(encoding="utf-8").replace(f'"{title}"', '"Training Pipeline Architecture"', 1),
                    encoding="utf-8")
    with pytest.raises(ValueError, match="Training Pipeline Architecture"):
        labs.Lab(root, lab.name).manifest


@pytest.mark.parametrize("lang", ["en", "vi"])
def test_feedback_hints_point_by_title(lang):
    vi = _vi_titles()
    for lab in LABS:
        for q in lab.manifest.questions:
            with i18n.language(lang):
                hint = messages.section_hint(q.sections)
            assert not chapter.bad_pointers(hint, OUTLINE, vi), hint
            for s in map(OUTLINE.by_title, q.sections):
                assert f"§{s.number} " in hint and s.title in hint  # the English heading too: the chapter is English
                if lang == "vi":
                    assert vi[s.title], f"no Vietnamese title for {s.title!r} in the engine catalog"


@pytest.mark.parametrize("lang", notebooks.LANGS)
def test_every_notebook_names_the_pinned_version_first(lang):
    for lab in LABS:
        nb = notebooks.build(notebooks.source_path(lab.assignment_dir, lab.name), lang, bundle_url="")
        first = next(c for c in nb.cells if c.cell_type == "markdown")
        assert OUTLINE.commit in first.source and OUTLINE.path in first.source


def test_readme_and_docs_name_the_pinned_version():
    for path in (REPO / "README.md", REPO / "docs" / "chapter.md"):
        assert OUTLINE.commit in path.read_text(encoding="utf-8"), path
