"""Each lab notebook, in each language, runs headless against the reference in
under 60 s, without stored outputs, and every one of its ``grader.check`` cells
(otter) passes there.  Both languages are built from one source and share
every code cell."""

from __future__ import annotations

import shutil
import time

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.core import i18n, labs
from autograder.build import notebooks

BUDGET_S = 60.0
LABS = labs.all_labs()
LAB_LANGS = [(lab, lang) for lab in LABS for lang in notebooks.LANGS]


def nb_path(lab, lang, folder=None):
    return notebooks.notebook_path(folder or lab.assignment_dir, lab.name, lang)
PASSED = "All test cases passed!"  # otter's summary of a passing check (TestFile.summary)


def check_cells(nb) -> dict[str, str]:
    """question -> the text a ``grader.check("question")`` cell printed."""
    out = {}
    for c in nb.cells:
        if c.cell_type == "code" and c.source.startswith("grader.check("):
            q = c.source.split('"')[1]
            out[q] = "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in c.outputs)
    return out


def student_copy(lab, tmp_path, code_dir) -> "Path":
    """The lab's folder as a student has it (lab.toml, otter tests, public tests), with ``code_dir``'s modules."""
    work = tmp_path / "assignments" / lab.name
    shutil.copytree(lab.assignment_dir, work, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    for f in lab.manifest.student_files:
        shutil.copy(code_dir / f, work / f)
    return work


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_notebook_stored_without_outputs(lab, lang):
    nb = nbformat.read(nb_path(lab, lang), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "store notebooks without outputs"


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_every_question_has_a_check_cell(lab, lang):
    nb = nbformat.read(nb_path(lab, lang), as_version=4)
    assert list(check_cells(nb)) == [q.id for q in lab.manifest.questions], "one grader.check per question, in order"


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_notebooks_built_from_their_source(lab):
    """Committed notebooks are what the source builds; the languages differ only in text."""
    src = notebooks.source_path(lab.assignment_dir, lab.name)
    for lang in notebooks.LANGS:
        assert nb_path(lab, lang).read_text(encoding="utf-8") == notebooks.render(src, lang), \
            f"{nb_path(lab, lang).name} is stale: run `autograder notebooks {lab.short}`"
    en, vi = (nbformat.read(nb_path(lab, lang), as_version=4) for lang in ("en", "vi"))
    assert notebooks.code_cells(en) == notebooks.code_cells(vi), "code cells must be identical in both languages"
    en_text = [c.source for c in en.cells if c.cell_type == "markdown"]
    vi_text = [c.source for c in vi.cells if c.cell_type == "markdown"]
    assert len(en_text) == len(vi_text), "every English text cell needs its Vietnamese twin"
    untranslated = [t.splitlines()[0] for t, v in zip(en_text, vi_text) if t == v]
    assert not untranslated, f"text cells left in English in the Vietnamese notebook: {untranslated}"


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_notebook_runs_headless_under_budget(lab, lang, tmp_path, monkeypatch):
    monkeypatch.setenv(i18n.ENV, lang)  # the kernel inherits it: grader.check speaks the notebook's language
    work = student_copy(lab, tmp_path, lab.solution_dir)
    nb = nbformat.read(nb_path(lab, lang, work), as_version=4)
    client = NotebookClient(nb, timeout=int(BUDGET_S * 2), kernel_name="python3",
                            resources={"metadata": {"path": str(work)}})
    t0 = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - t0
    assert elapsed < BUDGET_S, f"{nb_path(lab, lang).name} took {elapsed:.1f} s (budget {BUDGET_S:.0f} s)"
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert images >= 2, "each notebook draws its plots"
    failing = {q: text for q, text in check_cells(nb).items() if PASSED not in text}
    assert not failing, f"grader.check fails on the reference: {failing}"
