"""No answer before its question: in every lab notebook, in both languages, nothing
before a prediction's ``predict`` cell states the prediction's truth or the rule
that gives it (``autograder.authoring.asked_first``; the rules: its docstring and
``docs/predictions.md``).

These tests read the built notebooks without running them: their text cells and
what their code cells will print or plot (comments and string literals).  What the
cells do print is read from the one headless run of each notebook in
``test_notebooks.py``, with the same function."""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring import asked_first, notebooks
from autograder.core import labs
from autograder.core.manifest import Manifest, Prediction

LABS = labs.all_labs()
LAB_LANGS = [(lab, lang) for lab in LABS for lang in notebooks.LANGS]


def _notebook(lab, lang) -> nbformat.NotebookNode:
    return nbformat.read(notebooks.notebook_path(lab.assignment_dir, lab.name, lang), as_version=4)


@pytest.mark.parametrize(("lab", "lang"), LAB_LANGS, ids=lambda x: getattr(x, "short", x))
def test_no_prediction_is_answered_before_it_is_asked(lab, lang):
    found = asked_first.revealed(_notebook(lab, lang), lab.manifest, lang)
    assert not found, (f"{lab.name} ({lang}) states a prediction's truth before its predict cell; move the prediction "
                       "up, or the text after it:\n" + "\n".join(map(str, found)))


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_every_prediction_with_a_truth_is_looked_for(lab):
    """A truth the digits cannot find (a choice, a small whole multiple) lists its rules, or nothing is checked."""
    unchecked = [p.id for p in lab.manifest.predictions if p.truth is not None
                 and asked_first.truth_pattern(p, "en") is None and not p.reveals]
    assert not unchecked, f"{lab.name}: give these predictions `reveals` in lab.toml: {unchecked}"


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_every_prediction_with_a_truth_is_asked_in_each_notebook(lab):
    for lang in notebooks.LANGS:
        nb = _notebook(lab, lang)
        missing = [p.id for p in lab.manifest.predictions if p.truth is not None
                   and asked_first.predict_cell(nb, p.id) is None]
        assert not missing, f"{lab.name} ({lang}) has no predict cell for {missing}"


# -- the rules, on small notebooks -----------------------------------------------------------------
def _lab(*predictions: Prediction) -> Manifest:
    return Manifest(name="labx", title="x", student_files=(), questions=(), predictions=predictions)


NOISE = Prediction(id="noise", prompt="?", kind="number", unit="x", low=0.01, high=4, truth=0.5,
                   reveals=(r"1 ?/ ?√ ?B",))
BYTES = Prediction(id="bytes", prompt="?", kind="number", unit="B/param", low=1, high=40, truth=12)
GRAD = Prediction(id="grad", prompt="?", kind="number", unit="x", low=0.1, high=20, truth=4,
                  reveals=(r"\bk ?(×|x|times) the gradient", r"gradient[^.;]{0,20}gấp k lần"))
TERM = Prediction(id="term", prompt="?", kind="choice", choices=("weights", "activations"), truth="activations",
                  reveals=(r"71[.,]7 ?GB",))


def notebook(*cells, ask=("noise", "bytes", "grad", "term")) -> nbformat.NotebookNode:
    """Markdown cells (a str) and code cells (a (source, printed) pair), then a predict cell per id."""
    made = []
    for cell in cells:
        if isinstance(cell, str):
            made.append(nbformat.v4.new_markdown_cell(cell))
        else:
            code = nbformat.v4.new_code_cell(cell[0])
            if cell[1]:
                code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=cell[1])]
            made.append(code)
    made += [nbformat.v4.new_code_cell(f'guess = None\npredict("{pid}", guess)') for pid in ask]
    return nbformat.v4.new_notebook(cells=made)


def said(nb, lang="en") -> list[str]:
    return sorted({f.prediction for f in asked_first.revealed(nb, _lab(NOISE, BYTES, GRAD, TERM), lang)})


@pytest.mark.parametrize(("cell", "lang", "expected"), [
    ("The noise falls as 1/√B.", "en", ["noise"]),  # a rule of the table
    ("At 4 times the batch the noise is 0.5x today's.", "en", ["noise"]),  # the truth with its unit
    ("Nhiễu còn 0,5× so với hôm nay.", "vi", ["noise"]),  # as Vietnamese writes it
    ("Nhiễu còn 0.5× so với hôm nay.", "vi", []),  # not how a Vietnamese notebook writes 0.5
    ("Your answer: a number from 0.5 to 10 x.", "en", []),  # another prediction's allowed range
    ("Câu trả lời của bạn: một số từ 0,5 đến 10 x.", "vi", []),
    ("each total assumes 16, 12 or 10 B/param", "en", ["bytes"]),  # one of a list that shares the unit
    ("16, 12 hay 10 B/tham số", "vi", ["bytes"]),
    ("12 layers of 10 B/param", "en", []),  # 12 is not followed by the unit, nor a list of it
    ("112 B/param, 1.12 B/param", "en", []),  # a piece of another number
    ("summing without the 1/k gives k times the gradient", "en", ["grad"]),
    ("Cộng mà không chia cho k thì gradient lớn gấp k lần.", "vi", ["grad"]),
    ("the noise at 4x the batch; a 4 x 3 matrix; 4× the learning rate", "en", []),  # 4x: not distinctive alone
    ("Its total, **71.7 GB**, is a library estimate", "en", ["term"]),  # a choice: its rules only
    ("the activations of a batch", "en", []),
])
def test_the_rules(cell, lang, expected):
    assert said(notebook(cell), lang) == expected


def test_code_cells_are_read_for_what_they_print_and_say():
    printing = ('print(tr("the chapter\'s total, 71.7 GB"))', "")  # before it runs: its string literal
    comment = ("x = 1  # the noise falls as 1/√B", "")
    assert said(notebook(printing)) == ["term"]
    assert said(notebook(comment)) == ["noise"]
    assert said(notebook(("print(total)", "activations: 71.7 GB\n"))) == ["term"]  # what it printed, once run
    assert said(notebook(("y = 12  # layers", ""), ("n = 0.5 * 4", ""))) == []  # code itself is not text


def test_what_a_measured_predictions_reveal_printed_is_the_machines_never_a_truth():
    """A cell that reveals a prediction with no fixed truth prints this machine's measurement: a result
    that happens to equal another prediction's truth (12 B/param here; 11 % beside lab 1's 11.49 %
    made CI fail once) states nothing.  The same output from any other cell does; its code's text still counts."""
    timed = Prediction(id="timed", prompt="?", kind="number", unit="B/param", low=0, high=100)
    lab = _lab(timed, BYTES)
    reveal = 'reveal("timed", measured)'
    nb = notebook((reveal, "You made no prediction before this measurement. The result: 12 B/param.\n"), ask=("bytes",))
    assert asked_first.revealed(nb, lab, "en") == []
    nb = notebook(("print(total)", "The result: 12 B/param.\n"), ask=("bytes",))
    assert [f.prediction for f in asked_first.revealed(nb, lab, "en")] == ["bytes"]
    nb = notebook((reveal + "  # 12 B/param, the lab's count", ""), ask=("bytes",))
    assert [f.where for f in asked_first.revealed(nb, lab, "en")] == ["code"]


def test_only_what_comes_before_the_predict_cell_counts():
    nb = notebook(ask=("noise",))
    nb.cells.append(nbformat.v4.new_markdown_cell("The noise falls as 1/√B: 4x the batch, 0.5x the noise."))
    assert said(nb) == []
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("Why it falls as 1/√B"))
    assert said(nb) == ["noise"]
    assert [f.cell for f in asked_first.revealed(nb, _lab(NOISE), "en")] == [0]


def test_the_check_fails_on_a_lab_notebook_that_reveals_a_prediction():
    """The committed lab 2 notebook, with the sentence its introduction used to have (issue 38)."""
    lab = labs.get("lab2")
    nb = _notebook(lab, "en")
    assert asked_first.revealed(nb, lab.manifest, "en") == []
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("5. **gradient noise**: why the mini-batch gradient's noise "
                                                     "falls as 1/√B;"))
    found = asked_first.revealed(nb, lab.manifest, "en")
    assert [(f.prediction, f.cell, f.where) for f in found] == [("noise_4x", 1, "text")]
    assert "1/√B" in str(found[0])
