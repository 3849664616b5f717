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
the place of the template's line ``LAB, MODULE = ...``.

``autograder notebooks`` writes ``<lab>.ipynb`` (English) and
``<lab>.vi.ipynb`` (Vietnamese), without outputs; a framework test fails
when the committed notebooks differ from what the source builds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import nbformat

LANGS = ("en", "vi")
SETUP_TAG, SETUP_FILE, SETUP_LINE = "setup", "notebook_setup.py", "LAB, MODULE = ...\n"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def source_path(lab_dir: Path, name: str) -> Path:
    return lab_dir / f"{name}.nb.py"


def notebook_path(lab_dir: Path, name: str, lang: str) -> Path:
    return lab_dir / (f"{name}.ipynb" if lang == "en" else f"{name}.{lang}.ipynb")


def build(source: Path, lang: str) -> nbformat.NotebookNode:
    """The notebook for ``lang``: shared cells plus that language's text cells."""
    import jupytext

    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; expected one of {LANGS}")
    src = jupytext.read(source, fmt="py:percent")
    cells = []
    for cell in src.cells:
        tags = list(cell.metadata.get("tags", []))
        langs = [t for t in tags if t in LANGS]
        if langs and lang not in langs:
            continue
        rest = [t for t in tags if t not in (*LANGS, SETUP_TAG)]
        meta = {k: v for k, v in cell.metadata.items() if k != "tags"}
        if rest:
            meta["tags"] = rest
        text = _setup_cell(source, cell.source) if SETUP_TAG in tags else cell.source
        make = nbformat.v4.new_code_cell if cell.cell_type == "code" else nbformat.v4.new_markdown_cell
        new = make(text, metadata=meta)
        # stable ids: the same source builds byte-identical notebooks
        new["id"] = hashlib.sha1(f"{len(cells)}:{text}".encode()).hexdigest()[:8]
        cells.append(new)
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": KERNELSPEC, "language_info": {"name": "python"}, "ironlaw": {"language": lang}})
    nbformat.validate(nb)
    return nb


def _setup_cell(source: Path, lab_line: str) -> str:
    """The course's setup cell (after its header comment) with this lab's line in it."""
    template = source.parent.parent / SETUP_FILE  # assignments/<lab>/<lab>.nb.py -> assignments/
    cell = template.read_text(encoding="utf-8").split("\n\n", 1)[1]
    if cell.count(SETUP_LINE) != 1 or not lab_line.startswith("LAB, MODULE = ") or "\n" in lab_line.strip():
        raise ValueError(f"{source}: a setup cell holds one line `LAB, MODULE = ...`, and {template} has it once")
    return cell.replace(SETUP_LINE, lab_line.strip() + "\n").rstrip("\n")


def render(source: Path, lang: str) -> str:
    return nbformat.writes(build(source, lang)) + "\n"


def code_cells(nb: nbformat.NotebookNode) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]
