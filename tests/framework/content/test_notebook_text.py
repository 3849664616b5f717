"""What a notebook's code cells print and plot comes in the notebook's language
(``autograder.grading.notebook_text``): text through ``tr`` from the lab's
catalog, numbers through ``num`` with the language's separators.  The sources
use them for every plot text and printed line, the catalogs hold their
strings, and the student bundle's catalogs keep them.

The executed notebooks themselves are checked in ``test_notebooks.py``
(Vietnamese number formatting in the printed output, plots that differ
between the languages)."""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from babel.messages.extract import extract_python
from babel.messages.pofile import read_po

from autograder.authoring import catalogs, notebooks
from autograder.core import i18n, labs
from autograder.grading.notebook_text import num, nums, tr

REPO = Path(__file__).resolve().parents[3]
LABS = labs.all_labs(REPO)


# -- tr, num, nums --------------------------------------------------------------------
@pytest.mark.parametrize(("args", "en", "vi"), [
    ((31784,), "31,784", "31.784"),  # the chapter's energy bill: 31.784 kWh in Vietnamese, never "31,784"
    ((1.42, 2), "1.42", "1,42"),
    ((1.4251, 2), "1.43", "1,43"),
    ((1_720_320.0,), "1,720,320", "1.720.320"),  # an integral float is written as an integer
    ((2.5e-4,), "0.00025", "0,00025"),
    ((8.4e23, ".2e"), "8.40e+23", "8,40e+23"),
    ((0.2, ".0%"), "20%", "20%"),
    ((0.683, "6.1%"), " 68.3%", " 68,3%"),
    ((31784.4, "9,.0f"), "   31,784", "   31.784"),
    ((65504.0, ".3g"), "6.55e+04", "6,55e+04"),
    ((np.int64(512), "4d"), " 512", " 512"),
    ((np.float64(0.115), 3), "0.115", "0,115"),
])
def test_num_writes_the_languages_separators(args, en, vi, monkeypatch):
    for lang, expected in (("en", en), ("vi", vi)):
        monkeypatch.setenv(i18n.ENV, lang)
        assert num(*args) == expected, (lang, args)
        assert num(*args, lang=lang) == expected


def test_nums_separates_with_a_semicolon_where_the_comma_is_the_decimal_mark(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "vi")
    assert nums(np.array([0.6, 0.8]), "g") == "[0,6; 0,8]"
    assert nums((0.9, 0.999), brackets="()") == "(0,9; 0,999)"
    assert nums([64, 64, 64]) == "[64; 64; 64]"
    monkeypatch.setenv(i18n.ENV, "en")
    assert nums(np.array([0.6, 0.8]), "g") == "[0.6, 0.8]"
    assert nums([25_250, 50_000]) == "[25250, 50000]"  # no group separator inside a list


@pytest.mark.parametrize("bad", ["3", True, None, [1, 2]])
def test_num_refuses_what_is_not_a_number(bad):
    with pytest.raises(TypeError):
        num(bad)


def test_tr_reads_the_lab_catalog_at_call_time(monkeypatch):
    """A plot title of lab 1 is the catalog's Vietnamese in Vietnamese and the
    English itself otherwise; text no catalog has stays English."""
    lab = labs.get("lab1", REPO)
    with open(lab.assignment_dir / i18n.LAB_LOCALE / "vi.po", "rb") as f:
        vi = {m.id: m.string for m in read_po(f) if m.id}
    title = "Training time of Llama 2 70B by the iron law"
    assert vi[title] == "Thời gian huấn luyện Llama 2 70B theo định luật sắt"
    monkeypatch.setenv(labs.ROOT_ENV, str(REPO))
    monkeypatch.setenv(i18n.ENV, "vi")
    assert tr(title) == vi[title]
    assert tr("cumulative cost ($M)") == vi["cumulative cost ($M)"] != "cumulative cost ($M)"
    assert tr("a text no catalog holds") == "a text no catalog holds"
    monkeypatch.setenv(i18n.ENV, "en")  # the same process, another language: read at every call
    assert tr(title) == title


# -- the sources use them -------------------------------------------------------------
TEXT_CALLS = {"title", "set_title", "suptitle", "xlabel", "ylabel", "set_xlabel", "set_ylabel", "text", "print"}
TEXT_KEYWORDS = {"label", "title"}
ENGLISH_WORD = re.compile(r"(?<![\w.'\"=])[a-z]{3,}\b")  # a lowercase word, not an identifier's piece (x.attr, k=)
NUMBER_SPEC = re.compile(r"[,_]|\.\d|[eEfFgGdn%]$")  # a format spec that writes a number


def _literal(node) -> str | None:
    """The text of a string literal or an f-string (its fields as {})."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def bare_text(source: str) -> list[str]:
    """Plot text and printed text written as plain English literals, and numbers
    formatted by an f-string's spec instead of ``num``: what would stay English."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            args = list(node.args) if name in TEXT_CALLS else []
            args += [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
            for arg in args:
                text = _literal(arg)
                if text and ENGLISH_WORD.search(re.sub(r"\{[^}]*\}", "", text)):
                    found.append(f"line {arg.lineno}: {text!r} (use tr)")
        elif isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant))
            if NUMBER_SPEC.search(spec):
                found.append(f"line {node.lineno}: {{{ast.unparse(node.value)}:{spec}}} (use num)")
    return found


def test_the_lint_finds_bare_text():
    source = ('plt.xlabel("sequence length S")\n'
              'print(f"MFU of the 7B example: {mfu:.3f}")\n'
              'ax.plot(x, y, label=f"fit: slope {s}")\n'
              'plt.xlabel(tr("sequence length S")); plt.ylabel("GB"); print(f"{name:>9}: {num(v, 2)} GFLOP")\n')
    found = bare_text(source)
    assert sorted(f.split(":")[0] for f in found) == ["line 1", "line 2", "line 2", "line 3"], found


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_notebook_text_goes_through_tr_and_num(lab):
    src = notebooks.source_path(lab.assignment_dir, lab.name)
    found = bare_text(src.read_text(encoding="utf-8"))
    assert not found, f"{src.name}: text that stays English in the Vietnamese notebook:\n" + "\n".join(found)


# -- the catalogs hold their strings, in the repository and in the bundle -------------------
def notebook_messages(lab) -> set[str]:
    """The ``tr("...")`` literals of a lab's notebook source."""
    src = notebooks.source_path(lab.assignment_dir, lab.name)
    with open(src, "rb") as f:
        return {msg for _line, _func, msg, _comments in extract_python(f, {"tr": None}, [], {}) if msg}


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_the_lab_catalog_translates_the_notebook(lab):
    msgs = notebook_messages(lab)
    assert len(msgs) > 10, "the notebook prints and plots through tr()"
    with open(i18n.ENGINE_LOCALE / "vi.po", "rb") as f:
        engine = {m.id: m.string for m in read_po(f) if m.id}
    with open(lab.assignment_dir / i18n.LAB_LOCALE / "vi.po", "rb") as f:
        own = {m.id: m.string for m in read_po(f) if m.id}
    missing = sorted(m for m in msgs if not (own.get(m) or engine.get(m)))
    assert not missing, missing


def test_extract_notebook_reads_code_cells_only(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": 'tr("not code")'},
                    {"cell_type": "code", "source": ["%autoreload 2\n", "x = 1\n", 'plt.title(tr("a title"))']},
                    {"cell_type": "code", "source": '!pip list\nprint(tr("two {n}").format(n=num(2)))'}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "x.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    with open(tmp_path / "x.ipynb", "rb") as f:
        found = [(line, msg) for line, _func, msg, _c in catalogs.extract_notebook(f, catalogs.KEYWORDS, [], {})]
    assert found == [(4, "a title"), (6, "two {n}")]


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_bundle_catalog_keeps_the_notebook_strings(lab, tmp_path):
    """The bundle ships the built notebooks, not their source: the lab's catalog
    there keeps the strings their code cells translate."""
    shipped = tmp_path / lab.name
    shutil.copytree(lab.assignment_dir, shipped,
                    ignore=shutil.ignore_patterns("*.nb.py", "__pycache__", i18n.LAB_LOCALE))
    po = lab.assignment_dir / i18n.LAB_LOCALE / "vi.po"
    kept = {m.id for m in read_po(io.BytesIO(catalogs.student_subset(po, lab, shipped))) if m.id}
    with open(po, "rb") as f:
        own = {m.id for m in read_po(f) if m.id}
    lost = sorted((notebook_messages(lab) & own) - kept)
    assert not lost, f"the bundle's catalog drops notebook strings: {lost[:5]}"


# -- tick labels --------------------------------------------------------------------------
def tick_texts(lang, monkeypatch):
    """A linear and a log axis drawn with localize, as a Vietnamese or English reader sees them."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from autograder.grading.notebook_text import localize

    monkeypatch.setenv(i18n.ENV, lang)
    fig, (lin, log) = plt.subplots(1, 2)
    lin.plot([0, 0.5, 1.5], [1e6, 2.5e6, 3e6])
    log.plot([1, 10, 1000], [0.01, 0.5, 2])
    log.set_yscale("log")
    log.set_xticks([1, 10, 1000], ["1 GB/s", "10 GB/s", "1.000 GB/s"])  # labels a cell gives: kept as given
    localize(fig)
    localize(fig)  # twice is once
    fig.canvas.draw()
    texts = ([t.get_text() for t in lin.get_xticklabels()], [t.get_text() for t in log.get_xticklabels()],
             [t.get_text() for t in log.get_yticklabels()])
    plt.close(fig)
    return texts


def test_localize_gives_tick_labels_the_languages_decimal_mark(monkeypatch):
    en_lin, en_fixed, en_log = tick_texts("en", monkeypatch)
    vi_lin, vi_fixed, vi_log = tick_texts("vi", monkeypatch)
    assert "0.5" in en_lin and "0,5" in vi_lin and not any("." in t for t in vi_lin)
    assert en_fixed == vi_fixed == ["1 GB/s", "10 GB/s", "1.000 GB/s"]
    assert en_log == vi_log and any("10^{-1}" in t for t in vi_log)  # powers of ten have no decimal mark


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_every_figure_is_shown_through_show(lab):
    """A cell that draws a figure ends with notebook_text.show(), never plt.show() or an implicit display,
    so its ticks are written in the notebook's language."""
    src = notebooks.source_path(lab.assignment_dir, lab.name).read_text(encoding="utf-8")
    cells = [c for c in re.split(r"(?m)^# %%.*\n", src) if re.search(r"\bplt\.(subplots|figure)\(", c)]
    assert cells, "the notebook draws figures"
    assert "plt.show(" not in src, "use show() from autograder.grading.notebook_text"
    unshown = [c.strip().splitlines()[0] for c in cells if not re.search(r"(^|;\s*)show\(\)\s*$", c.strip(), re.M)]
    assert not unshown, f"figure cells without show(): {unshown}"


# -- comments in code cells: "# tr: <English>", read in the notebook's language --------------------
_COMMENT = re.compile(r"(?<!\S)#(?![!%])\s*(.*)$")


def _code_comments(source: Path) -> list[str]:
    import jupytext

    nb = jupytext.read(source, fmt="py:percent")
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for line in cell.source.split("\n"):
            stripped = re.sub(r"'[^']*'|\"[^\"]*\"", "''", line)  # a '#' inside a string is not a comment
            m = _COMMENT.search(stripped)
            if m and m.group(1):
                out.append(m.group(0))
    return out


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_every_code_comment_is_written_for_translation(lab):
    """A Vietnamese reader reads no English comment: each comment of a shared code cell is
    "# tr: <English>", which the build writes in the notebook's language (authoring/notebooks.py)."""
    source = notebooks.source_path(lab.assignment_dir, lab.name)
    plain = [c for c in _code_comments(source) if not c.startswith("# tr: ")]
    assert not plain, f"{source.name}: comments not marked '# tr: ': {plain[:5]}"


def test_tr_comments_are_translated_per_notebook():
    code = "x = 1  # tr: pip: what this Python lacks (on Colab otter-grader and a few more, under a minute)\ny = '# tr: kept'"
    en, vi = notebooks.translate_comments(code, "en"), notebooks.translate_comments(code, "vi")
    assert en.startswith("x = 1  # pip: what this Python lacks") and "tr:" not in en.split("\n")[0]
    assert vi.startswith("x = 1  # pip: những gì Python này còn thiếu")
    assert notebooks.comment_messages(code)[0].startswith("pip: what this Python lacks")
    for lab in LABS:  # the setup cell of every Vietnamese notebook: no English comment left
        nb = notebooks.build(notebooks.source_path(lab.assignment_dir, lab.name), "vi", bundle_url="")
        setup = next(c.source for c in nb.cells if c.cell_type == "code" and "notebook.checker()" in c.source)
        assert "# tr:" not in setup and "# otter's grader.check" not in setup


# -- answer cells: each right after the prompt that says what to write ----------------------
MARKED_BY_HAND = {"en": "marked by hand", "vi": "chấm tay"}


def prompts_of_answer_cells(source: Path) -> list[tuple[str, str, str | None]]:
    """(answer tag, language, the text cell just before it in its language, or None) for every
    answer cell of a notebook source: the cells between them may only be the other language's
    text cells and other answer cells (no code cell, no other text)."""
    import jupytext

    cells = jupytext.read(source, fmt="py:percent").cells
    out = []
    for i, cell in enumerate(cells):
        tags = cell.metadata.get("tags", [])
        answer = next((t for t in tags if t.startswith("answer:")), None)
        if answer is None:
            continue
        lang = "vi" if "vi" in tags else "en"
        prompt = None
        for before in reversed(cells[:i]):
            btags = before.metadata.get("tags", [])
            if before.cell_type == "markdown" and (any(t.startswith("answer:") for t in btags) or lang not in btags):
                continue  # the other language's cell, or another answer cell
            prompt = before.source if before.cell_type == "markdown" else None
            break
        out.append((answer, lang, prompt))
    return out


def test_the_answer_prompt_check_finds_a_bare_answer_cell(tmp_path):
    src = tmp_path / "x.nb.py"
    src.write_text('# %% [markdown] tags=["en"]\n# **Reflect** (one line, marked by hand): why?\n\n'
                   '# %% [markdown] tags=["vi"]\n# **Suy ngẫm** (một dòng, chấm tay): vì sao?\n\n'
                   '# %% [markdown] tags=["en", "answer:r/a"]\n# *One line here.*\n\n'
                   '# %% [markdown] tags=["vi", "answer:r/a"]\n# *Một dòng ở đây.*\n\n'
                   '# %%\nx = 1\n\n'
                   '# %% [markdown] tags=["en", "answer:r/b"]\n# *One line here.*\n')
    found = {(tag, lang): prompt for tag, lang, prompt in prompts_of_answer_cells(src)}
    assert "marked by hand" in found[("answer:r/a", "en")] and "chấm tay" in found[("answer:r/a", "vi")]
    assert found[("answer:r/b", "en")] is None  # a code cell before it: no prompt


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_every_answer_cell_follows_a_prompt_that_says_what_to_write(lab):
    """A graded answer cell (``answer:<question>[/<part>]``, marked by hand) comes right after a text
    cell of its language that asks what to write and says it is marked by hand (issue 38: lab 4's
    reflections were bare "One line here." cells, with no question before them)."""
    source = notebooks.source_path(lab.assignment_dir, lab.name)
    bad = [f"{tag} ({lang})" for tag, lang, prompt in prompts_of_answer_cells(source)
           if prompt is None or MARKED_BY_HAND[lang] not in prompt or "?" not in prompt]
    assert not bad, f"{source.name}: answer cells without a prompt right before them: {bad}"
