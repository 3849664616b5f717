"""Each lab notebook, in each language, runs headless on the untouched stubs
to the end, then on the reference to the end, and every one of its
``grader.check`` cells (otter) passes there; every run shares one kernel,
emptied between runs (``RESET``) (how long a first run takes, against the
chapter's minute, is measured by ``benchmarks/notebooks.py``: no wall clock
decides a test).  Both languages are built from one source and share
every code cell; what those cells print and plot follows the language
(``autograder.grading.notebook_text``): Vietnamese numbers in the Vietnamese
notebook's output, and plots that differ from the English ones."""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.core import i18n, labs
from autograder.authoring import asked_first, notebooks

CELL_TIMEOUT_S = 600  # nbclient's per-cell limit: a hang guard, far over any cell's need at any load
LABS = labs.all_labs()
LAB_LANGS = [(lab, lang) for lab in LABS for lang in notebooks.LANGS]
# test_handin_notebook.py runs this notebook with the reference, hands it in and grades the zip
# (conftest.py's ``hand_in``, once per session): its run is the one checked here, not run again
HANDED_IN = ("lab2", "en")
# the kernel of this notebook's run on the stubs then checks that a cell runs the student's latest code
LATEST_CODE = ("lab1", "en")
DEMO = ("import flops\ntry:\n    print('GOT', flops.matmul_flops(m=2, k=3, n=4))\n"
        "except NotImplementedError:\n    print('GOT the stub')")


# a number only English writes: a decimal point after a leading 0 or before one or two digits, or
# commas between millions and thousands (Vietnamese writes 0,017, 65,5, 1.720.320; "1,960" is either)
ENGLISH_NUMBER = re.compile(r"(?<![\d.,])0\.\d|\d\.\d{1,2}(?![\d.])|\d,\d{3},\d{3}")
VIETNAMESE_DECIMAL = re.compile(r"\d,\d")
PLOTS: dict[tuple[str, str], list[str]] = {}  # (lab, lang) -> the sha1 of each PNG the headless run drew


def nb_path(lab, lang, folder=None):
    return notebooks.notebook_path(folder or lab.assignment_dir, lab.name, lang)


def check_cells(nb) -> dict[str, str]:
    """question -> the text a ``grader.check("question")`` cell printed."""
    out = {}
    for c in nb.cells:
        if c.cell_type == "code" and c.source.startswith("grader.check("):
            q = c.source.split('"')[1]
            out[q] = "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in c.outputs)
    return out


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_notebook_stored_without_outputs(lab, lang):
    nb = nbformat.read(nb_path(lab, lang), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "store notebooks without outputs"


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_every_question_has_a_check_cell(lab, lang):
    nb = nbformat.read(nb_path(lab, lang), as_version=4)
    assert list(check_cells(nb)) == [q.id for q in lab.manifest.tested], "one grader.check per question, in order"
    # a question marked by hand has no check: its answer cell, tagged answer:<id>, one per language
    # (a question of several parts has one cell per part, tagged answer:<id>/<part>: docs/manual.md)
    answers = [t.split("/")[0] for c in nb.cells for t in c.metadata.get("tags", []) if t.startswith("answer:")]
    assert sorted(set(answers)) == sorted(f"answer:{q.id}" for q in lab.manifest.manual)


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_notebooks_built_from_their_source(lab):
    """Committed notebooks are what the source builds; the languages differ only in text."""
    src = notebooks.source_path(lab.assignment_dir, lab.name)
    for lang in notebooks.LANGS:
        assert nb_path(lab, lang).read_text(encoding="utf-8") == notebooks.render(src, lang), \
            f"{nb_path(lab, lang).name} is stale: run `autograder notebooks {lab.short}`"
    en, vi = (nbformat.read(nb_path(lab, lang), as_version=4) for lang in ("en", "vi"))
    assert notebooks.code_cells(en, shared=True) == notebooks.code_cells(vi, shared=True), \
        "code cells must be identical in both languages (but the setup cell's language lines)"
    setup = {lang: next(c for c in notebooks.code_cells(nb) if "LANG, BUNDLE_URL = " in c) for lang, nb in
             (("en", en), ("vi", vi))}
    for lang, cell in setup.items():  # each notebook says its own language in its first cell
        assert f'LANG, BUNDLE_URL = "{lang}", ' in cell, cell[:600]
    en_text = [c.source for c in en.cells if c.cell_type == "markdown"]
    vi_text = [c.source for c in vi.cells if c.cell_type == "markdown"]
    assert len(en_text) == len(vi_text), "every English text cell needs its Vietnamese twin"
    untranslated = [t.splitlines()[0] for t, v in zip(en_text, vi_text) if t == v]
    assert not untranslated, f"text cells left in English in the Vietnamese notebook: {untranslated}"


class Runs(NamedTuple):
    stubs: nbformat.NotebookNode  # "Run all" on the untouched stubs (errors allowed)
    demo: list[str]  # what the DEMO cells printed (LATEST_CODE only)
    reference: nbformat.NotebookNode  # "Run all" with the reference filled in


# Between two runs in one kernel: it goes to the lab's folder (a kernel opened there: the engine's
# notebook module forgets where the last run was opened, which is where ``submit`` writes its zip),
# the folder becomes a fresh copy of ``source`` (the stubs or the reference; written now, so
# autoreload sees the modules change), the language the last run's first cell set is dropped, and
# the namespace is emptied.  Each run then starts as a student's "Restart and run all" would, on a
# folder as handed out, but with the imports already loaded (torch, torch._dynamo, otter,
# matplotlib: a kernel's start, issue 36) and nothing of the runs before it
# (predictions.json, the language, variables).  The labs' modules have different names, so one
# lab's stay imported beside the next one's and are never what its cells call.
RESET = """import os, shutil
os.chdir({folder!r})
import autograder.grading.notebook
autograder.grading.notebook._opened_in = None
for name in os.listdir("."):
    shutil.rmtree(name) if os.path.isdir(name) and not os.path.islink(name) else os.remove(name)
shutil.copytree({source!r}, ".", dirs_exist_ok=True, copy_function=shutil.copy)
os.environ.pop({env!r}, None)
get_ipython().run_line_magic("reset", "-f")"""


@pytest.fixture(scope="module")
def notebook_runs(tmp_path_factory, request):
    """``notebook_runs(lab, lang)``: :class:`Runs`, made for the whole lab at once, in the module's
    one kernel: for each language the notebook on the untouched stubs, then on the reference, each
    after :data:`RESET` but the kernel's first.  After the stubs of :data:`LATEST_CODE` three cells
    run (``demo``: what each printed): :data:`DEMO`, the reference's flops.py saved over the stub
    (the student implements it), :data:`DEMO` again.  The reference run of :data:`HANDED_IN` is the
    one ``hand_in`` made from the bundle in the student's venv: it is read, not repeated."""
    runs = {}
    kernel: list[NotebookClient] = []  # the client that started the kernel, which every lab's run uses

    def run_lab(lab):
        where = tmp_path_factory.mktemp(f"nb-{lab.short}")
        source = {"stubs": notebooks.student_copy(lab, where / "stubs", lab.assignment_dir),  # as handed out
                  "reference": notebooks.student_copy(lab, where / "reference", lab.solution_dir)}
        work = notebooks.student_copy(lab, where / "work", lab.assignment_dir)
        cells, parts, demo_at = [], {}, None
        for lang in notebooks.LANGS:
            for which in ("stubs", "reference"):
                if (lab.short, lang) == HANDED_IN and which == "reference":
                    continue
                if cells or kernel:
                    cells.append(nbformat.v4.new_code_cell(RESET.format(folder=str(work), source=str(source[which]),
                                                                        env=i18n.ENV)))
                first = len(cells)
                cells += nbformat.read(nb_path(lab, lang, source["stubs"]), as_version=4).cells  # unrun
                parts[lang, which] = (first, len(cells))
                if which == "stubs" and (lab.short, lang) == LATEST_CODE:
                    save = f"import shutil\nshutil.copy({str(source['reference'] / 'flops.py')!r}, {str(work / 'flops.py')!r})"
                    demo_at = len(cells)
                    cells += [nbformat.v4.new_code_cell(c) for c in (DEMO, save, DEMO)]
        nb = nbformat.read(nb_path(lab, notebooks.LANGS[0], source["stubs"]), as_version=4)
        nb.cells = cells
        with pytest.MonkeyPatch.context() as mp:
            mp.delenv(i18n.ENV, raising=False)  # as on Colab: the first cell says the notebook's language
            client = NotebookClient(nb, km=kernel[0].km if kernel else None, timeout=CELL_TIMEOUT_S,
                                    kernel_name="python3", allow_errors=True,
                                    # killed at the end, not left 1-3 s to tear torch down (docs/performance.md)
                                    shutdown_kernel="immediate", resources={"metadata": {"path": str(work)}})
            if kernel:
                client.kc = kernel[0].kc
            else:
                kernel.append(client)
            client.execute(cleanup_kc=False)  # kept for the next lab: shut down at the module's end

        def part(lang, which):
            out = nbformat.from_dict(nb)
            first, last = parts[lang, which]
            out.cells = nb.cells[first:last]
            return out

        for lang in notebooks.LANGS:
            demo = ["".join(o.get("text", "") for o in c.outputs) for c in nb.cells[demo_at:demo_at + 3]] \
                if (lab.short, lang) == LATEST_CODE else []
            if (lab.short, lang) == HANDED_IN:
                reference = {f: (lab.solution_dir / f).read_text() for f in lab.manifest.student_files}
                handed_in = request.getfixturevalue("hand_in")(lab.short, reference, "all")
                second = nbformat.read(nb_path(lab, lang, handed_in.parent), as_version=4)
            else:
                second = part(lang, "reference")
            runs[lab.short, lang] = Runs(part(lang, "stubs"), demo, second)

    def run(lab, lang):
        if (lab.short, lang) not in runs:
            run_lab(lab)
        return runs[lab.short, lang]

    yield run
    if kernel:
        with kernel[0].setup_kernel():  # the kernel is running: this only shuts it down on leaving
            pass


def errors_in(nb) -> list[tuple[int, str, str]]:
    return [(i, o.get("ename"), o.get("evalue", "")[:120]) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.outputs if o.get("output_type") == "error"]


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_notebook_runs_headless(lab, lang, passed_check, notebook_runs):
    nb = notebook_runs(lab, lang).reference
    errors = errors_in(nb)
    assert not errors, f"{nb_path(lab, lang).name} stops on the reference at cell(s) {errors}"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    images = [hashlib.sha1(o["data"]["image/png"].encode()).hexdigest() for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 2, "each notebook draws its plots"
    PLOTS[lab.name, lang] = images
    failing = {q: text for q, text in check_cells(nb).items() if passed_check(lang) not in text}
    assert not failing, f"grader.check fails on the reference: {failing}"
    # what the cells printed, read as test_predictions_asked_first.py reads their text (no second run)
    early = asked_first.revealed(nb, lab.manifest, lang)
    assert not early, "printed before its prediction is asked:\n" + "\n".join(map(str, early))
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    if lang == "vi":  # numbers printed for a Vietnamese reader: 31.784 kWh, MFU 0,5
        english = sorted({line.strip() for line in printed.splitlines() if ENGLISH_NUMBER.search(line)})
        assert not english, f"numbers written the English way in {nb_path(lab, lang).name}: {english[:5]}"
        assert VIETNAMESE_DECIMAL.search(printed), "the Vietnamese notebook prints its decimals with a comma"
    if lab.short == "lab1":  # the chapter's energy bill, as each reader writes it
        assert {"en": "31,784 kWh", "vi": "31.784 kWh"}[lang] in printed


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_run_all_reaches_the_end_on_the_untouched_stubs(lab, lang, notebook_runs):
    """"Run all" on a fresh notebook: every cell that calls a function not written yet says which
    one and goes on (``grading/unwritten.py``), so no cell stops the run, and every ``grader.check``
    cell still shows its verdict."""
    nb = notebook_runs(lab, lang).stubs
    errors = errors_in(nb)
    assert not errors, f"{nb_path(lab, lang).name} stops on the stubs at cell(s) {errors}"
    silent = [q for q, text in check_cells(nb).items() if not text.strip()]
    assert not silent, f"grader.check cells with no verdict on the stubs: {silent}"


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_plots_are_drawn_in_each_language(lab):
    """Every plot has text in the notebook's language, so no Vietnamese PNG is the English one
    (read from the headless runs above; skipped when they did not both run)."""
    if (lab.name, "en") not in PLOTS or (lab.name, "vi") not in PLOTS:
        pytest.skip("needs test_notebook_runs_headless in both languages first")
    en, vi = PLOTS[lab.name, "en"], PLOTS[lab.name, "vi"]
    assert len(en) == len(vi), "both languages draw the same plots"
    same = [i + 1 for i, (a, b) in enumerate(zip(en, vi)) if a == b]
    assert not same, f"plot(s) {same} of {lab.name} are identical in English and Vietnamese"


def test_a_cell_runs_the_students_latest_code(notebook_runs):
    """The setup cell turns IPython's autoreload on: after a student saves a module, the next
    run of a cell calls the new code, with no kernel restart (lab 1's stub, then its reference,
    in the kernel of lab 1's run on the stubs)."""
    lab = labs.get(LATEST_CODE[0])
    stub, _save, saved = notebook_runs(lab, LATEST_CODE[1]).demo
    assert "GOT the stub" in stub
    assert "GOT 48" in saved, "the edited module was not reloaded"  # 2 m k n FLOPs
