"""One source per lab notebook, one notebook per language built from it.

The source ``assignments/<lab>/<lab>.nb.py`` is in jupytext's percent
format.  Each piece of text is a pair of markdown cells, one tagged ``en``
and one tagged ``vi``; code cells carry no language tag and are shared, so
the built notebooks cannot drift apart in what they run:

    # %% [markdown] tags=["en"]
    # ## Part 1: update rules
    # %% [markdown] tags=["vi"]
    # ## Phần 1: quy tắc cập nhật
    # %%
    import numpy as np

The setup cell, the same in every lab, is written once for the course in
``assignments/notebook_setup.py``: a source's code cell tagged ``setup``
holds only its lab's line ``LAB, MODULE = "<lab>", "<module>"``, which takes
the place of the template's line ``LAB, MODULE = ...``.  The build writes two
more of its lines per notebook: ``LANG, BUNDLE_URL = "<lang>", "<url>"`` (the
notebook's language, so that it and its ``grader.check`` speak it with no
setting, and where the cell downloads the lab bundle from when it is not
there: ``[bundle] url`` in ``assignments/course.toml``), and ``NO_BUNDLE``, what
to do when it cannot get the bundle, in that language.  Apart from those two
lines the code cells of both languages are the same (:func:`code_cells` with
``shared=True``).

A comment in a shared code cell is read in the notebook's language when it is
written ``# tr: <English>`` (a whole line, or after the code): the build writes
``# <English>`` into the English notebook and ``# <its translation>`` into the
Vietnamese one, from the catalogs (``autograder translations`` collects these
comments: a lab's into the lab's catalog, the setup and hand-in templates'
into the engine's).  So a Vietnamese reader meets no English comment, and the
code the two notebooks run stays the same (:func:`code_cells` compares the
cells without their comments).

The first text cell of each notebook ends with one line naming the version of
the chapter the labs follow (:data:`PIN`, from ``assignments/chapter.toml``).

Every notebook ends with the same hand-in cells, written once for the course
in ``assignments/notebook_handin.py`` (:data:`HANDIN_FILE`, the same percent
format: a text cell per language and a code cell that calls
``notebook.submit``), with the lab's names written into the text
(:func:`_handin_cells`); no lab's source repeats them.

``autograder notebooks`` writes ``<lab>.ipynb`` (English) and
``<lab>.vi.ipynb`` (Vietnamese), without outputs; a framework test fails
when the committed notebooks differ from what the source builds.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import textwrap
from pathlib import Path

import nbformat

from autograder.core import chapter, course, i18n, labs
from autograder.core.i18n import N_, _
from autograder.grading.notebook import BUNDLE_DIR

LANGS = ("en", "vi")
SETUP_TAG, SETUP_FILE, SETUP_LINE = "setup", "notebook_setup.py", "LAB, MODULE = ...\n"
LANG_LINE, NO_BUNDLE_LINE = "LANG, BUNDLE_URL = ...\n", "NO_BUNDLE = ...\n"  # written per notebook
NO_BUNDLE = N_("Cannot get the lab bundle. Unzip the one your course gave you into a folder {bundle} next "
               "to this notebook (on Colab: upload iron-law-labs.zip into the Files panel, then run "
               "!unzip -q iron-law-labs.zip -d {bundle} in a cell), or give the address of the bundle zip "
               "in a cell: %env IRONLAW_BUNDLE_URL=<its address>. Then run this cell again.")
PIN = N_("This lab follows one version of the chapter: {book}, \"{title}\", file `{path}` of "
         "[{repo}]({url}) at commit `{commit}`. A pointer (§, a number and a title) names one of its sections.")
HANDIN_FILE = "notebook_handin.py"  # the hand-in cells every notebook ends with (assignments/)
# a comment written for the reader: "# tr: <English>", on its own line or after code (not inside a string)
TR_COMMENT = re.compile(r"(?<!\S)# tr: ([^\n]+)")
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def source_path(lab_dir: Path, name: str) -> Path:
    return lab_dir / f"{name}.nb.py"


def notebook_path(lab_dir: Path, name: str, lang: str) -> Path:
    return lab_dir / (f"{name}.ipynb" if lang == "en" else f"{name}.{lang}.ipynb")


def default_bundle_url(source: Path) -> str:
    """``[bundle] url`` of the course file of the project holding ``source``."""
    return course.load(source.resolve().parents[2]).bundle_url  # assignments/<lab>/<lab>.nb.py -> the project


def student_copy(lab: labs.Lab, where: Path, code_dir: Path | None = None, assignments: Path | None = None) -> Path:
    """The lab's folder as a student has it, under ``where/assignments/`` (lab.toml, otter tests, public
    tests, and beside it the chapter's outline, as the bundle has them), with ``code_dir``'s modules
    (default: the reference's): where the notebook tests and benchmarks run a notebook.
    ``assignments``: the folder of labs to copy from (default: the course's; a released bundle's)."""
    source = assignments or lab.root / "assignments"
    work = where / "assignments" / lab.name
    shutil.copytree(source / lab.name, work, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    shutil.copy(source / chapter.FILE, work.parent / chapter.FILE)
    for f in lab.manifest.student_files:
        shutil.copy((code_dir or lab.solution_dir) / f, work / f)
    return work


def build(source: Path, lang: str, bundle_url: str | None = None) -> nbformat.NotebookNode:
    """The notebook for ``lang``: shared cells plus that language's text cells.
    ``bundle_url``: where its first cell downloads the bundle (default: the course file's)."""
    import jupytext

    if bundle_url is None:
        bundle_url = default_bundle_url(source)
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; expected one of {LANGS}")
    src = jupytext.read(source, fmt="py:percent")
    cells = []
    for cell in [*src.cells, *_handin_cells(source)]:
        tags = list(cell.metadata.get("tags", []))
        langs = [t for t in tags if t in LANGS]
        if langs and lang not in langs:
            continue
        rest = [t for t in tags if t not in (*LANGS, SETUP_TAG)]
        meta = {k: v for k, v in cell.metadata.items() if k != "tags"}
        if rest:
            meta["tags"] = rest
        text = _setup_cell(source, cell.source, lang, bundle_url) if SETUP_TAG in tags else cell.source
        if cell.cell_type == "markdown" and not any(c.cell_type == "markdown" for c in cells):
            text = text.rstrip("\n") + "\n\n" + _pin(source, lang)
        if cell.cell_type == "code":
            text = translate_comments(text, lang)
        make = nbformat.v4.new_code_cell if cell.cell_type == "code" else nbformat.v4.new_markdown_cell
        new = make(text, metadata=meta)
        # stable ids: the same source builds byte-identical notebooks
        new["id"] = hashlib.sha1(f"{len(cells)}:{text}".encode()).hexdigest()[:8]
        cells.append(new)
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": KERNELSPEC, "language_info": {"name": "python"}, "ironlaw": {"language": lang}})
    nbformat.validate(nb)
    return nb


def translate_comments(code: str, lang: str) -> str:
    """``code`` with each ``# tr: <English>`` comment written ``# <English>`` in ``lang``."""
    with i18n.language(lang):
        return TR_COMMENT.sub(lambda m: "# " + _(m.group(1).strip()), code)


def comment_messages(code: str) -> list[str]:
    """The English of each ``# tr:`` comment of ``code``: messages for the catalogs."""
    return [m.group(1).strip() for m in TR_COMMENT.finditer(code)]


def _handin_cells(source: Path) -> list:
    """The course's hand-in cells (after the template's header comment), ``{lab}`` and ``{short}``
    in their text written as this lab's names."""
    import jupytext

    template = source.parent.parent / HANDIN_FILE  # assignments/<lab>/<lab>.nb.py -> assignments/
    lab = labs.Lab(source.resolve().parents[2], source.name.removesuffix(".nb.py"))
    text = template.read_text(encoding="utf-8").split("\n\n", 1)[1]
    cells = jupytext.reads(text.replace("{lab}", lab.name).replace("{short}", lab.short), fmt="py:percent").cells
    if [c.cell_type for c in cells].count("code") != 1 or any(SETUP_TAG in c.metadata.get("tags", []) for c in cells):
        raise ValueError(f"{template}: the hand-in cells are text cells per language and one code cell")
    return cells


def _pin(source: Path, lang: str) -> str:
    c = chapter.load(source.resolve().parents[2])
    with i18n.language(lang):
        return "*" + _(PIN).format(book=c.book, title=c.title, path=c.path, repo=c.repo, url=c.url,
                                   commit=c.commit) + "*"


def _setup_cell(source: Path, lab_line: str, lang: str, bundle_url: str) -> str:
    """The course's setup cell (after its header comment) with this lab's line in it, and
    this notebook's language, bundle address and NO_BUNDLE message."""
    template = source.parent.parent / SETUP_FILE  # assignments/<lab>/<lab>.nb.py -> assignments/
    cell = template.read_text(encoding="utf-8").split("\n\n", 1)[1]
    if any(cell.count(line) != 1 for line in (SETUP_LINE, LANG_LINE, NO_BUNDLE_LINE)) \
            or not lab_line.startswith("LAB, MODULE = ") or "\n" in lab_line.strip():
        raise ValueError(f"{source}: a setup cell holds one line `LAB, MODULE = ...`, and {template} has it "
                         f"once, and `{LANG_LINE.strip()}` and `{NO_BUNDLE_LINE.strip()}` once each")
    with i18n.language(lang):
        message = _(NO_BUNDLE).format(bundle=BUNDLE_DIR)
    cell = cell.replace(SETUP_LINE, lab_line.strip() + "\n")
    cell = cell.replace(LANG_LINE, f"LANG, BUNDLE_URL = {json.dumps(lang)}, {json.dumps(bundle_url)}\n")
    cell = cell.replace(NO_BUNDLE_LINE, _literal("NO_BUNDLE = ", message) + "\n")
    return cell.rstrip("\n")


def _literal(prefix: str, text: str, width: int = 112) -> str:
    """``prefix`` and ``text`` as a Python string literal, over several lines when long."""
    if len(prefix) + len(text) + 2 <= width:
        return prefix + json.dumps(text, ensure_ascii=False)
    chunks = textwrap.wrap(text, width - len(prefix) - 4, break_long_words=False, break_on_hyphens=False)
    if " ".join(chunks) != text:  # not single spaces: one line
        return prefix + json.dumps(text, ensure_ascii=False)
    parts = [json.dumps(c + (" " if i < len(chunks) - 1 else ""), ensure_ascii=False) for i, c in enumerate(chunks)]
    pad = "\n" + " " * (len(prefix) + 1)
    return f"{prefix}({pad.join(parts)})"


def render(source: Path, lang: str, bundle_url: str | None = None) -> str:
    return nbformat.writes(build(source, lang, bundle_url)) + "\n"


def code_cells(nb: nbformat.NotebookNode, shared: bool = False) -> list[str]:
    """The code cells' sources; ``shared``: without the setup cell's lines written per language."""
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    if not shared:
        return cells
    return [_without_lang_lines(c) for c in cells]


def _without_comments(cell: str) -> str:
    """``cell`` with each comment's text gone (a ``#`` stays): Python's tokenizer tells a comment
    from a ``#`` inside a string.  A cell it cannot read is returned as it is."""
    import io
    import tokenize

    lines = cell.split("\n")
    try:
        comments = [t.start for t in tokenize.generate_tokens(io.StringIO(cell).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return cell
    for row, col in comments:
        lines[row - 1] = lines[row - 1][:col] + "#"
    return "\n".join(lines)


def _without_lang_lines(cell: str) -> str:
    """The cell without the lines written per language: the setup cell's, and the comments."""
    out, skipping = [], False
    for line in _without_comments(cell).split("\n"):
        if line.startswith(LANG_LINE[:-4]) or line.startswith(NO_BUNDLE_LINE[:-4]):
            out.append(line.split("=", 1)[0] + "= ...")
            skipping = line.rstrip().endswith("(") or (line.split("=", 1)[1].strip().startswith("(")
                                                       and not line.rstrip().endswith(")"))
        elif skipping:
            skipping = not line.rstrip().endswith(")")
        else:
            out.append(line)
    return "\n".join(out)
