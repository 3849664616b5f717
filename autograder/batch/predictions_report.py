"""The class's predictions: each submission's ``predictions.json`` read as data, the
participation points of a complete set, and the instructor's picture of the class.

``grade`` stages a submission's ``predictions.json`` beside its notebooks (an
optional file: never given to the grader, never hashed into its sha256, never
imported or run) and :func:`extract` keeps what it says, checked against the
lab's ``[[predictions]]`` (``grading.predictions.parse``), in
``predictions/<id>.json`` (per submission, so ``--only`` leaves the others').
A file that is missing or cannot be read (not JSON, out of shape, larger than
a handed-in file may be) is counted, never a failure nor a problem of the
submission: it costs at most the participation points, and the feedback's
line for them says why.  A history whose times go back, or pass the
platform's hand-in time, is counted as changed after the measurement and
named on the marking sheet (``grading.predictions.Record.consistent``).

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
import textwrap
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from autograder.core import results
from autograder.core.files import atomic_write
from autograder.core.i18n import N_, _
from autograder.core.manifest import Manifest, Prediction
from autograder.grading import predictions as P

FOLDER = "predictions"  # out/predictions/<id>.json: each submission's predictions, as read
FIGURE = "predictions.png"
KIND = "predictions"  # a TestResult's kind when it is the participation points, not a test
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
    """What one submission handed in: its records (None: no file, or one not read) and why not;
    ``handed_in``: when, as its platform says (None: unknown), which its history is checked against."""
    records: dict[str, P.Record] | None
    problem: str = ""
    handed_in: datetime | None = None

    def to_json(self) -> str:
        return json.dumps({"records": None if self.records is None else
                           {k: r.to_dict() for k, r in self.records.items()}, "problem": self.problem,
                           "handed_in": self.handed_in.isoformat() if self.handed_in else None},
                          ensure_ascii=False)


def read(data: bytes | None, manifest: Manifest, *, unread: str = "", handed_in: datetime | None = None) -> Handed:
    """A submission's ``predictions.json`` (None: none handed in, or staging could not take it:
    ``unread`` says why) as data: bounded (``core.untrusted``), every value checked against its
    declaration, its history against ``handed_in``; never raises."""
    if data is None:
        return Handed(None, unread, handed_in)
    try:
        return Handed(P.parse(data, manifest, handed_in), handed_in=handed_in)
    except Exception as exc:  # noqa: BLE001  (the student's data: whatever it holds costs at most these points)
        return Handed(None, str(exc)[:200] or type(exc).__name__, handed_in)


def extract(out: Path, manifest: Manifest, extras: dict[str, dict[str, bytes]], *,
            unread: dict[str, dict[str, str]] | None = None, times: dict[str, datetime] | None = None) -> None:
    """``predictions/<id>.json`` for each submission staged now (``extras``: its optional files;
    ``unread``: why staging could not take one, ``staging.Staged.unread``; ``times``: when each
    was handed in, as its platform says)."""
    unread, times = unread or {}, times or {}
    for sub, files in extras.items():
        handed = read(files.get(P.FILE), manifest, unread=unread.get(sub, {}).get(P.FILE, ""),
                      handed_in=times.get(sub))
        atomic_write(out / FOLDER / f"{sub}.json", handed.to_json())


def kept(out: Path, sub: str, manifest: Manifest) -> Handed:
    """What :func:`extract` kept of ``sub`` (none: graded before the lab had predictions)."""
    try:
        d = json.loads((out / FOLDER / f"{sub}.json").read_text(encoding="utf-8"))
        at = datetime.fromisoformat(d["handed_in"]) if d.get("handed_in") else None
        if d.get("records") is None:
            return Handed(None, str(d.get("problem", "")), at)
        wrapped = json.dumps({"format": P.FORMAT, "predictions": d["records"]})
        return Handed(P.parse(wrapped, manifest, at), handed_in=at)
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
    if not r.consistent:
        return line + (" (the history was inconsistent: a time goes back, or is later than the hand-in; "
                       "from there on it counts as changed after the measurement)")
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
    inconsistent: int = 0  # of those, histories whose times go back or pass the hand-in (Record.consistent)

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
            tally.inconsistent += not r.consistent
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
             *([f"- changed after the measurement (recorded, not counted): {t.after_lock}"] if t.after_lock else []),
             *([f"- of those, an inconsistent history (a time goes back, or is later than the hand-in): "
                f"{t.inconsistent}"] if t.inconsistent else [])]
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


# The figure's words, in the batch's language (the prompts through the lab's catalog)
ANSWERED_OF = N_("{answered} answered of {total}")
TRUTH_FIXED = N_("the truth: {value}")
TRUTH_OWN = N_("the truth: each student's own measurement")
RATIO_AXIS = N_("prediction / truth (log scale)")
COUNT_AXIS = N_("submissions")
WITHIN_2X = N_("within 2x")
RIGHT_FOR = N_("right for that student")
WRONG_FOR = N_("wrong for that student")
TITLE_WIDTH = 78  # characters a panel's title line holds at its font size and the panel's width


@dataclass(frozen=True)
class Panel:
    """What one panel of ``predictions.png`` says: ``title`` (the question and its unit, wrapped),
    ``count`` ("n answered of N"), ``truth`` (the truth marker's label) and ``xlabel``."""
    title: str
    count: str
    truth: str
    xlabel: str


def panel(t: Tally, total: int) -> Panel:
    """The texts of ``t``'s panel, in the current language; ``total``: the students of the batch
    (the roster's, when it is known), N of "n answered of N"."""
    p = t.prediction
    question = _(p.prompt) + (f" [{p.unit}]" if p.unit else "")
    title = textwrap.fill(f"{p.id}: {question}", TITLE_WIDTH)
    if p.truth is None:
        truth = _(TRUTH_OWN)
    else:
        value = _num(p.truth) if isinstance(p.truth, float) else _(p.truth)
        truth = _(TRUTH_FIXED).format(value=value + (f" {p.unit}" if p.unit and p.kind == "number" else ""))
    return Panel(title, _(ANSWERED_OF).format(answered=len(t.answers), total=total), truth,
                 _(RATIO_AXIS) if p.kind == "number" else "")


def plot(manifest: Manifest, handed: dict[str, Handed], path: Path, total: int | None = None) -> None:
    """``predictions.png``: per prediction, a panel titled with its question and unit, "n answered
    of N" on it (``total``: N, the roster's size when known, else the submissions'), and the truth
    marked: a number's answers over prediction / truth (log scale; the truth a labelled line at 1,
    the band within 2x shaded), a choice's per option (the fixed answer's bar green and labelled;
    where each student's measurement is the truth, each bar split into right and wrong for them)."""
    import matplotlib

    matplotlib.use("Agg")  # headless, whatever the caller's backend
    import matplotlib.pyplot as plt

    ts = tallies(manifest, handed)
    total = len(handed) if total is None else total
    cols = min(2, len(ts))  # two wide panels a row: a question's title stays on two or three lines
    rows = math.ceil(len(ts) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 3.9 * rows), squeeze=False)
    for ax in axes.flat[len(ts):]:
        ax.set_visible(False)
    for ax, t in zip(axes.flat, ts):
        p, texts = t.prediction, panel(t, total)
        ax.set_title(texts.title, fontsize=9, loc="left")
        if p.kind == "number":
            logs = [max(-4.0, min(4.0, math.log2(r))) for g, tr in t.judged if (r := ratio(g, tr)) is not None]
            ax.axvspan(-1, 1, color="tab:green", alpha=0.12, label=_(WITHIN_2X))
            # bins centred on whole and half powers of 2: a prediction right on the truth stands on its line
            ax.hist(logs, bins=[x / 2 - 0.25 for x in range(-8, 10)], color="tab:blue", edgecolor="white")
            ax.axvline(0, color="tab:red", lw=1.5, label=texts.truth)
            ax.set_xticks([-4, -2, 0, 2, 4], ["≤1/16", "1/4", "1", "4", "≥16"])
            ax.set_xlim(-4.5, 4.5)
            ax.set_xlabel(texts.xlabel, fontsize=8)
        else:
            chosen = collections.Counter(g for g, _t in t.answers)
            at = range(len(p.choices))
            if p.truth is not None:  # one answer for all: its bar is the truth
                bars = ax.bar(at, [chosen.get(c, 0) for c in p.choices],
                              color=["tab:green" if c == p.truth else "tab:blue" for c in p.choices])
                if p.truth in p.choices:  # the legend names the green bar
                    bars[p.choices.index(p.truth)].set_label(texts.truth)
            else:  # each student's own measurement: right and wrong for them, per option
                right = collections.Counter(g for g, tr in t.judged if g == tr)
                ax.bar(at, [right.get(c, 0) for c in p.choices], color="tab:green", label=_(RIGHT_FOR))
                ax.bar(at, [chosen.get(c, 0) - right.get(c, 0) for c in p.choices],
                       bottom=[right.get(c, 0) for c in p.choices], color="tab:blue", label=_(WRONG_FOR))
            ax.set_xticks(at, [textwrap.fill(_(c), 18) for c in p.choices], fontsize=7)
        top = max([1, *(patch.get_height() + patch.get_y() for patch in ax.patches if patch.get_height())])
        ax.set_ylim(0, top * 1.45)  # room above the bars for the count and the legend
        ax.text(0.01, 0.97, texts.count, transform=ax.transAxes, fontsize=8, va="top", ha="left",
                bbox={"facecolor": "white", "edgecolor": "0.7", "boxstyle": "round,pad=0.25"})
        ax.legend(fontsize=7, loc="upper right", framealpha=0.9)
        ax.set_ylabel(_(COUNT_AXIS), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    tmp.replace(path)


def write(out: Path, manifest: Manifest, submissions: list[str], total: int | None = None) -> str:
    """``predictions.png`` in ``out``; returns the summary's predictions section (both nothing for a
    lab without predictions).  ``total``: the students of the batch as the roster knows them (those
    who handed in nothing too), N of each panel's "n answered of N"; None: the submissions."""
    if not manifest.predictions:
        return ""
    handed = {s: kept(out, s, manifest) for s in submissions}
    plot(manifest, handed, out / FIGURE, total)
    return section(manifest, handed)
