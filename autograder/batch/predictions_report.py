"""The class's predictions: each submission's ``predictions.json`` read as data, the
participation points of a complete set, and the instructor's picture of the class.

``grade`` stages a submission's ``predictions.json`` beside its notebooks (an
optional file: never given to the grader, never hashed into its sha256, never
imported or run) and :func:`extract` keeps what it says, checked against the
lab's ``[[predictions]]`` (``grading.predictions.parse``), in
``predictions/<id>.json`` (per submission, so ``--only`` leaves the others').
A file that is missing or cannot be read is counted, never a failure.

Nothing here grades a prediction for being right.  A lab whose
``[predictions_policy]`` gives points has a question ``predictions``
(``manifest.PARTICIPATION``): :func:`apply` gives all of them to a complete set
(every declared prediction answered before its measurement ran), none
otherwise, with a line saying which; like a mark given by hand, it is applied
on every run, never kept in raw/.

:func:`section` is the ``summary.md`` part (per prediction: answered,
unanswered and missing counts, the distribution against the truth, the share
within 2x for a number, the most common wrong choice), :func:`plot` the
figure ``predictions.png`` (one small panel per prediction).  The truth is
``truth`` from lab.toml where it fixes one, else each student's own
measurement (``measured`` in the file).
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from autograder.batch.manual import nesting
from autograder.core import results
from autograder.core.files import atomic_write
from autograder.core.i18n import N_, _
from autograder.core.manifest import Manifest, Prediction
from autograder.grading import predictions as P

FOLDER = "predictions"  # out/predictions/<id>.json: each submission's predictions, as read
FIGURE = "predictions.png"
KIND = "predictions"  # a TestResult's kind when it is the participation points, not a test
MAX_NESTING = 8  # a predictions file nests 5 deep; json.loads recurses, so deeper is refused before it
# the ratio bands of a number's distribution (prediction / truth), by their upper edges
BANDS = ((0.25, "below 1/4"), (0.5, "1/4 to 1/2"), (2.0, "1/2 to 2 (within 2x)"), (4.0, "2 to 4"),
         (math.inf, "above 4"))

COMPLETE = N_("All {total} predictions were made before their measurement.")
INCOMPLETE = N_("{answered} of {total} predictions were made before their measurement: these points are for "
                "a complete set.")
NONE_HANDED_IN = N_("No {file} was handed in: these points are for a complete set of predictions (the notebook "
                    "writes {file} in the lab's folder).")
UNREAD = N_("{file} could not be read ({problem}): these points are for a complete set of predictions.")


@dataclass(frozen=True)
class Handed:
    """What one submission handed in: its records (None: no file, or one not read) and why not."""
    records: dict[str, P.Record] | None
    problem: str = ""

    def to_json(self) -> str:
        return json.dumps({"records": None if self.records is None else
                           {k: r.to_dict() for k, r in self.records.items()}, "problem": self.problem},
                          ensure_ascii=False)


def read(data: bytes | None, manifest: Manifest) -> Handed:
    """A submission's ``predictions.json`` (None: none handed in) as data: nesting bounded
    before parsing, every value checked against its declaration; never raises."""
    if data is None:
        return Handed(None)
    try:
        if nesting(data, MAX_NESTING) > MAX_NESTING:
            raise ValueError(f"nested more than {MAX_NESTING} levels deep")
        return Handed(P.parse(data, manifest))
    except Exception as exc:  # noqa: BLE001  (the student's data: whatever it holds costs at most these points)
        return Handed(None, str(exc)[:200] or type(exc).__name__)


def extract(out: Path, manifest: Manifest, extras: dict[str, dict[str, bytes]]) -> None:
    """``predictions/<id>.json`` for each submission staged now (``extras``: its optional files)."""
    for sub, files in extras.items():
        atomic_write(out / FOLDER / f"{sub}.json", read(files.get(P.FILE), manifest).to_json())


def kept(out: Path, sub: str, manifest: Manifest) -> Handed:
    """What :func:`extract` kept of ``sub`` (none: graded before the lab had predictions)."""
    try:
        d = json.loads((out / FOLDER / f"{sub}.json").read_text(encoding="utf-8"))
        if d.get("records") is None:
            return Handed(None, str(d.get("problem", "")))
        wrapped = json.dumps({"format": P.FORMAT, "predictions": d["records"]})
        return Handed(P.parse(wrapped, manifest))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Handed(None)


def answered(handed: Handed, manifest: Manifest) -> int:
    """How many declared predictions were answered before their measurement."""
    records = handed.records or {}
    return sum(1 for p in manifest.predictions if p.id in records and records[p.id].answered)


def apply(res: results.SubmissionResult, manifest: Manifest, handed: Handed) -> results.SubmissionResult:
    """``res`` with the participation points' result (any earlier one replaced), where the lab gives any."""
    q = manifest.participation
    if q is None:
        return res
    total = len(manifest.predictions)
    n = answered(handed, manifest)
    if handed.records is None:
        why = _(UNREAD).format(file=P.FILE, problem=handed.problem) if handed.problem else \
            _(NONE_HANDED_IN).format(file=P.FILE)
    else:
        why = _(COMPLETE).format(total=total) if n == total else _(INCOMPLETE).format(answered=n, total=total)
    full = handed.records is not None and n == total
    given = results.TestResult(
        nodeid=f"{KIND}::{q.id}", name=_("a complete set of predictions"), question=q.id, max_points=q.points,
        points=q.points if full else 0.0, status=results.PASSED if full else results.FAILED, visibility="visible",
        feedback=why, kind=KIND)
    return dataclasses.replace(res, tests=[t for t in res.tests if t.kind != KIND] + [given])


def context(out: Path, manifest: Manifest, qid: str, submissions: list[str]) -> dict[tuple[str, str], str]:
    """(submission, prediction id) -> a line for the marker of manual question ``qid``, above each
    reflection it collects (``reflection = "<qid>"``): the student's prediction and result."""
    asked = [p for p in manifest.predictions if p.reflection == qid]
    lines = {}
    for s in submissions if asked else ():
        records = kept(out, s, manifest).records or {}
        for p in asked:
            lines[(s, p.id)] = said(p, records.get(p.id))
    return lines


def said(p: Prediction, r: P.Record | None) -> str:
    """A prediction against its result, for the marker of its reflection (the values are checked
    against lab.toml: numbers, or one of its choices)."""
    if r is None:
        return f"> prediction `{p.id}`: not in the predictions handed in"
    guess = r.in_force()[0]
    truth = p.truth if p.truth is not None else r.measured
    text = lambda v: "-" if v is None else (v if isinstance(v, str) else _num(v))  # noqa: E731
    line = f"> prediction `{p.id}`: `{text(guess)}` before the measurement; result `{text(truth)}`"
    if guess is not None and truth is not None:
        if p.kind == "choice":
            line += ": right" if guess == truth else ": wrong"
        elif (q := ratio(guess, truth)) is not None:
            line += f": prediction / result {_num(q)}"
    return line + (" (changed after the measurement; not counted)" if r.changed_after_lock else "")


def participation(out: Path, res: results.SubmissionResult, manifest: Manifest) -> results.SubmissionResult:
    """:func:`apply` with what :func:`extract` kept of ``res``'s submission in ``out``."""
    return apply(res, manifest, kept(out, res.submission, manifest)) if manifest.participation else res


# -- the instructor's summary ------------------------------------------------------------
@dataclass
class Tally:
    """One prediction over the class."""
    prediction: Prediction
    answers: list[tuple[float | str, float | str | None]] = dataclasses.field(default_factory=list)  # (guess, truth)
    unanswered: int = 0
    missing: int = 0
    after_lock: int = 0  # submissions that changed it after its measurement (recorded, never counted)

    @property
    def judged(self) -> list[tuple[float | str, float | str]]:
        """The answers with a truth to compare with."""
        return [(g, t) for g, t in self.answers if t is not None]


def tallies(manifest: Manifest, handed: dict[str, Handed]) -> list[Tally]:
    out = []
    for p in manifest.predictions:
        tally = Tally(p)
        for h in handed.values():
            r = (h.records or {}).get(p.id)
            if r is None:
                tally.missing += 1
                continue
            guess, _at = r.in_force()
            if guess is None:
                tally.unanswered += 1
            else:
                tally.answers.append((guess, p.truth if p.truth is not None else r.measured))
            tally.after_lock += r.changed_after_lock
        out.append(tally)
    return out


def ratio(guess: float, truth: float) -> float | None:
    """guess / truth, where both have one sign (None: a truth of 0, signs that differ, or a
    quotient beyond what a float holds)."""
    if truth == 0 or guess == 0 or (guess > 0) != (truth > 0):
        return None
    q = guess / truth
    return q if 0 < q < math.inf else None


def within_2x(tally: Tally) -> tuple[int, int]:
    """(within a factor of 2 of the truth, answers with a truth)."""
    judged = tally.judged
    return sum(1 for g, t in judged if (r := ratio(g, t)) is not None and 0.5 <= r <= 2), len(judged)


def wrong_choices(tally: Tally) -> collections.Counter:
    return collections.Counter(g for g, t in tally.judged if g != t)


def _pct(n: int, d: int) -> str:
    return f"{n} of {d} ({n / d:.0%})" if d else "-"


def _num(v: float) -> str:
    return f"{v:.3g}"


def _lines(t: Tally) -> list[str]:
    p = t.prediction
    truth = f"`{_num(p.truth) if isinstance(p.truth, float) else p.truth}` (fixed in lab.toml)" \
        if p.truth is not None else "each student's own measurement"
    lines = [f"### `{p.id}`: {p.prompt}", "",
             f"- answered before the measurement: {len(t.answers)}; unanswered: {t.unanswered}; "
             f"missing (no file, or not in it): {t.missing}",
             f"- the truth: {truth}" + ("" if p.question == "" else f"; question `{p.question}`"),
             *([f"- answers without a measurement to compare with: {len(t.answers) - len(t.judged)}"]
               if len(t.judged) < len(t.answers) else []),
             *([f"- changed after the measurement (recorded, not counted): {t.after_lock}"] if t.after_lock else [])]
    if p.kind == "number":
        near, judged = within_2x(t)
        ratios = sorted(r for g, tr in t.judged if (r := ratio(g, tr)) is not None)
        lines.append(f"- within 2x of the truth: {_pct(near, judged)}")
        if ratios:
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            lines.append(f"- prediction / truth: median {_num(statistics.median(ratios))}, "
                         f"quartiles {_num(q[0])} to {_num(q[2])}")
        counts = collections.Counter(_band(r) for r in ratios)
        lines += ["", "| prediction / truth | submissions |", "|---|---|"]
        lines += [f"| {label} | {counts.get(label, 0)} |" for _edge, label in BANDS]
        if len(ratios) < judged:
            lines.append(f"| of the other sign, or a truth of 0 | {judged - len(ratios)} |")
    else:
        chosen = collections.Counter(g for g, _t in t.answers)
        right = collections.Counter(g for g, tr in t.judged if g == tr)
        lines += ["", "| choice | chosen | right for that student |", "|---|---|---|"]
        lines += [f"| {c}{' (the answer)' if c == p.truth else ''} | {chosen.get(c, 0)} | {right.get(c, 0)} |"
                  for c in p.choices]
        wrong = wrong_choices(t).most_common(1)
        lines.append("")
        lines.append(f"- most common wrong choice: `{wrong[0][0]}` ({_pct(wrong[0][1], len(t.judged))})"
                     if wrong else "- most common wrong choice: none")
    return lines + [""]


def _band(r: float) -> str:
    return next(label for edge, label in BANDS if r < edge or (edge == 2.0 and r == 2.0))


def section(manifest: Manifest, handed: dict[str, Handed]) -> str:
    """The predictions part of summary.md (empty for a lab without predictions)."""
    if not manifest.predictions:
        return ""
    files = sum(h.records is not None for h in handed.values())
    unread = sum(h.records is None and bool(h.problem) for h in handed.values())
    complete = sum(answered(h, manifest) == len(manifest.predictions) for h in handed.values())
    lines = ["## Predictions", "",
             "Never graded for being right: what the class believed before measuring "
             "(docs/predictions.md).", "",
             f"- submissions with {P.FILE}: {files} of {len(handed)} (none: {len(handed) - files - unread}; "
             f"not readable: {unread})",
             f"- a complete set (every prediction answered before its measurement): {complete}",
             "", f"![predictions]({FIGURE})", ""]
    for t in tallies(manifest, handed):
        lines += _lines(t)
    return "\n".join(lines) + "\n"


def plot(manifest: Manifest, handed: dict[str, Handed], path: Path) -> None:
    """``predictions.png``: per prediction, a number's answers over prediction / truth (log scale,
    the band within 2x shaded) or a choice's answers per option (the fixed answer in green)."""
    import matplotlib

    matplotlib.use("Agg")  # headless, whatever the caller's backend
    import matplotlib.pyplot as plt

    ts = tallies(manifest, handed)
    cols = min(3, len(ts))
    rows = math.ceil(len(ts) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax in axes.flat[len(ts):]:
        ax.set_visible(False)
    for ax, t in zip(axes.flat, ts):
        p = t.prediction
        ax.set_title(f"{p.id} ({len(t.answers)} answered)", fontsize=9)
        if p.kind == "number":
            logs = [max(-4.0, min(4.0, math.log2(r))) for g, tr in t.judged if (r := ratio(g, tr)) is not None]
            ax.axvspan(-1, 1, color="tab:green", alpha=0.15, label="within 2x")
            ax.axvline(0, color="tab:green", lw=1)
            ax.hist(logs, bins=[x / 2 for x in range(-8, 9)], color="tab:blue", edgecolor="white")
            ax.set_xticks([-4, -2, 0, 2, 4], ["1/16", "1/4", "1", "4", "16"])
            ax.set_xlabel("prediction / truth", fontsize=8)
        else:
            chosen = collections.Counter(g for g, _t in t.answers)
            ax.bar(range(len(p.choices)), [chosen.get(c, 0) for c in p.choices],
                   color=["tab:green" if c == p.truth else "tab:blue" for c in p.choices])
            ax.set_xticks(range(len(p.choices)), list(p.choices), rotation=20, fontsize=7)
        ax.set_ylabel("submissions", fontsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    tmp.replace(path)


def write(out: Path, manifest: Manifest, submissions: list[str]) -> str:
    """``predictions.png`` in ``out``; returns the summary's predictions section (both nothing for a
    lab without predictions)."""
    if not manifest.predictions:
        return ""
    handed = {s: kept(out, s, manifest) for s in submissions}
    plot(manifest, handed, out / FIGURE)
    return section(manifest, handed)
