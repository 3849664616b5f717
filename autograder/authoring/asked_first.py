"""No answer before its question: what a notebook shows before a prediction's
``predict`` cell must not state the prediction's truth (``docs/predictions.md``).

A prediction teaches only if the student has not just read the answer.  For
every ``[[predictions]]`` table of ``lab.toml`` with a fixed ``truth``, this
module reads the notebook of one language up to the code cell that calls
``predict("<id>", ...)`` and looks for the truth in

* the text cells of that language;
* the code cells' comments and string literals (what a ``print`` or a plot
  will say, before it runs);
* the outputs, when the notebook has been run (stream text and
  ``text/plain``/``text/markdown`` results; plots are pictures and are not
  read).

What counts as stating the truth, so that a "4" elsewhere in the text is not
taken for the answer to a prediction whose truth is 4:

1. **the truth with its unit** (a number prediction): the truth as the notebook
   writes numbers in that language (``notebook_text.num``: ``0.5``/``0,5``,
   ``4``/``4.0``, and rounded to 2 and 3 significant figures), written right
   before its unit (``x`` or ``×`` for a multiple, ``%``/``percent``/``phần
   trăm``, ``B/param``/``bytes per parameter``, ...).  Also as one item of a
   list that shares the unit: "16, 12 or 10 B/param" states 12 B/param (a
   range "from 0.5 to 10 x", as every predict cell prints its own, does not).  A
   multiple followed by a number ("4 x 3", a shape) is a product, not a
   multiple.  Only a distinctive truth is looked for this way: a small whole
   multiple (a truth of 0 to 10 with unit ``x``) is everywhere in a lab ("4x
   the batch" is no answer to "the gradient is what multiple?"), so such a
   prediction lists what states it in its rules instead ("k times the
   gradient", "1×/2×/2×/3×").  Numbers written in words ("four times") are
   too common to be read as the truth: a lab lists them as rules where they
   matter.
2. **the rules that give it**: ``reveals`` of the table, regular expressions
   (case-insensitive, whitespace already collapsed) for the formula or sentence
   that gives the truth away ("1/√B", "2(N-1)/N", "k times the gradient").
   They are matched in both languages' notebooks, so a rule a language writes
   otherwise lists that language's form too.  A choice prediction ("which term
   dominates?") has no number: only its rules are looked for.

What a cell that reveals a *measured* prediction printed (one without a fixed
truth: the student's own measurement is its truth, ``reveal("<id>", ...)``) is
not read: its numbers come from this machine, and one that happens to equal
another prediction's truth ("The result: 11 %" beside a truth of 11.49 %) says
nothing of it.  Its code's comments and strings still are.

The framework test ``tests/framework/content/test_predictions_asked_first.py``
reads the built notebooks without running them; ``test_notebooks.py`` reads
the outputs of its one headless run of each notebook with the same function.
"""

from __future__ import annotations

import io
import math
import re
import tokenize
from dataclasses import dataclass

from autograder.core.manifest import Manifest, Prediction
from autograder.grading.notebook_text import num

# how each unit of lab.toml is written, in either language, after a number
UNIT_FORMS: dict[str, tuple[str, ...]] = {
    "x": ("x", "×"),
    "%": ("%", "percent", "per cent", "phần trăm"),
    "B/param": ("B/param", "B/tham số", "bytes per parameter", "bytes/param", "byte mỗi tham số", "byte/tham số"),
    "× M": ("× M", "x M", "×M", "xM"),
}
SPACE = r"[ \u00a0\u202f]?"  # none, a space, a no-break or a narrow no-break space
# "16, 12 or 10", "1×/2×/3×", "12–16": not "from 0.5 to 10 x", the allowed range every predict cell prints
LIST_JOIN = r"(?:\s*(?:,|;|/|–|-|\bor\b|\band\b|\bhoặc\b|\bhay\b|\bvà\b)\s*)"
NUMBER = r"\d+(?:[.,]\d+)*"
SMALL_MULTIPLE = 10  # a whole multiple up to this is too common to be read as a truth from its digits alone


@dataclass(frozen=True)
class Finding:
    """One place before a ``predict`` cell that states its prediction's truth."""

    prediction: str
    cell: int  # the cell's index in the notebook
    where: str  # "text", "code" or "output"
    found: str  # the text that matched, with a little context

    def __str__(self) -> str:
        return f"{self.prediction}: cell {self.cell} ({self.where}) says {self.found!r}"


def truth_texts(truth: float, lang: str) -> list[str]:
    """The ways a notebook of ``lang`` writes ``truth``: as ``num`` does, and rounded."""
    forms = {num(truth, lang=lang)}
    if float(truth).is_integer():
        forms.add(num(float(truth), 1, lang=lang))
    for spec in (".2f", ".1f", ".3g", ".2g"):
        text = num(float(truth), spec, lang=lang)
        if "e" not in text and math.isclose(float(text.replace(",", ".")), truth, rel_tol=0.05):
            forms.add(text)
    return sorted(forms, key=len, reverse=True)


def truth_pattern(prediction: Prediction, lang: str) -> re.Pattern | None:
    """Rule 1: the truth with its unit, in ``lang``; None for a choice or a prediction without a truth."""
    if prediction.kind != "number" or prediction.truth is None:
        return None
    if prediction.unit == "x" and float(prediction.truth).is_integer() and 0 <= prediction.truth <= SMALL_MULTIPLE:
        return None  # not distinctive: its rules say what states it
    numbers = "|".join(re.escape(t) for t in truth_texts(float(prediction.truth), lang))
    units = UNIT_FORMS.get(prediction.unit, (prediction.unit,) if prediction.unit else ())
    if not units:
        return None
    unit = "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True))
    multiple = prediction.unit in ("x",)
    after = r"(?![\w(])" + (r"(?!\s*\d)" if multiple else "")  # "4 x 3" is a product, not a multiple
    return re.compile(
        rf"(?<![\w.,])(?:{numbers})(?![.,]?\d)"  # the truth, not a piece of another number
        rf"(?:{LIST_JOIN}{NUMBER}(?:{SPACE}(?:{unit}))?)*"  # "12 or 10", "2×/3×": a list sharing the unit
        rf"{SPACE}(?:{unit}){after}",
        re.IGNORECASE)


def rule_patterns(prediction: Prediction) -> list[re.Pattern]:
    """Rule 2: the prediction's ``reveals`` (checked by ``core.manifest``)."""
    return [re.compile(rule, re.IGNORECASE) for rule in prediction.reveals]


def code_text(source: str) -> str:
    """What a code cell tells its reader before it runs: its comments and string literals."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    return "\n".join(t.string.lstrip("#") for t in tokens if t.type in (tokenize.COMMENT, tokenize.STRING))


def output_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", ()):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        for mime in ("text/plain", "text/markdown"):
            data = out.get("data", {}).get(mime)
            if data:
                parts.append(data if isinstance(data, str) else "".join(data))
    return "\n".join(parts)


def _call(function: str, ids) -> re.Pattern:
    """A call of the notebook's ``function`` (``predict``, ``reveal``) naming one of ``ids``."""
    return re.compile(rf"""\b{function}\(\s*["'](?:{"|".join(map(re.escape, ids))})["']""")


def predict_cell(nb, pid: str) -> int | None:
    """The index of the code cell that asks prediction ``pid`` (calls ``predict("<pid>", ...)``), or None."""
    call = _call("predict", [pid])
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and call.search(cell.source):
            return i
    return None


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def revealed(nb, manifest: Manifest, lang: str) -> list[Finding]:
    """Every place of ``nb`` (a notebook in ``lang``, run or not) that states a prediction's truth
    before the prediction is asked.  Predictions without a truth, or not asked in ``nb``, have none."""
    findings = []
    measured = [p.id for p in manifest.predictions if p.truth is None]
    measures = _call("reveal", measured) if measured else None
    for prediction in manifest.predictions:
        if prediction.truth is None:
            continue
        asked = predict_cell(nb, prediction.id)
        if asked is None:
            continue
        patterns = [p for p in (truth_pattern(prediction, lang), *rule_patterns(prediction)) if p is not None]
        for i, cell in enumerate(nb.cells[:asked]):
            if cell.cell_type == "markdown":
                texts = [("text", cell.source)]
            elif cell.cell_type == "code":
                texts = [("code", code_text(cell.source))]
                if not (measures and measures.search(cell.source)):  # its output: this machine's measurements
                    texts.append(("output", output_text(cell)))
            else:
                continue
            for where, text in texts:
                flat = _flat(text)
                end = -1
                for match in sorted((m for p in patterns for m in p.finditer(flat)), key=lambda m: m.start()):
                    if match.start() < end:
                        continue  # one finding per place, however many patterns say it
                    end = match.end()
                    context = flat[max(0, match.start() - 30): match.end() + 10].strip()
                    findings.append(Finding(prediction.id, i, where, context))
    return findings
