"""The feedback a student reads: per question, what failed and where to look.

Student text (an exception message, a traceback, a submission's file name)
can hold Markdown and HTML of its own: a fence to close, a "✅ 5/5" heading,
an ``<img>`` or a ``<script>``.  So every piece of it goes through
:func:`inline` (on a line after our own prefix, HTML escaped, Markdown
punctuation escaped) or :func:`fenced` (in a fence longer than any backtick
run in it, HTML escaped): none can start a line of Markdown of its own.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from autograder.batch import late
from autograder.labkit import messages as M
from autograder.core import results
from autograder.core.i18n import N_, _
from autograder.core.manifest import Manifest
from autograder.grading.notebook_text import Local

_MARKDOWN_PUNCT = re.compile(r"([\\`*_\[\]~|])")
_BACKTICKS = re.compile(r"`+")


def escape_html(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities (quotes need none outside attributes)."""
    return html.escape(text, quote=False)


def inline(text: str) -> str:
    """One line of student text inside a line of ours: no line break, no HTML, no Markdown."""
    one_line = " ".join(str(text).splitlines())
    return escape_html(_MARKDOWN_PUNCT.sub(r"\\\1", one_line))


def code(text: str) -> str:
    """Inline code that the text cannot close (a backtick run longer than any in it)."""
    text = escape_html(" ".join(str(text).splitlines()))
    ticks = "`" * (1 + max((len(m) for m in _BACKTICKS.findall(text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(lines: list[str], indent: str = "") -> list[str]:
    """A fenced block of student text that no line of it can close."""
    body = [escape_html(line) for line in lines]
    longest = max((len(m) for line in body for m in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [indent + fence, *[indent + line for line in body], indent + fence]


LATE = N_("Handed in {days} day(s) late: the late policy took off {percent:g}%, from {raw:g} points.")
ABSENT = N_("{points:g} points marked by hand: {why}.")  # batch.manual.absent's reasons
GRADED = N_("Graded on {when}.")


def score_lines(res: results.SubmissionResult, manifest: Manifest, lateness: late.Lateness | None = None, *,
                scale: float = 1.0, absent: Mapping[str, str] | None = None) -> list[str]:
    """What a student reads first: the score (after the late penalty), how late it was handed in
    and what that took, and the points marked by hand that are pending (never lost).  ``scale``:
    the points on another maximum (a Moodle assignment out of 100).  ``absent``: the questions
    marked by hand the student handed in nothing for, and why (``manual.absent``): said as such,
    never "pending, not lost"."""
    final = lateness.final_score(res.score) if lateness else res.score
    lines = [_("Score: {score:g} / {max_score:g}").format(score=Local(round(final * scale, 6)),
                                                           max_score=Local(round(manifest.max_score * scale, 6)))]
    if lateness and lateness.late_days:
        lines.append(_(LATE).format(days=lateness.late_days, percent=Local(lateness.penalty_percent),
                                    raw=Local(round(res.score * scale, 6))))
    waiting = {q.id: q.max_points for q in res.questions(manifest) if q.pending}
    absent = {qid: why for qid, why in (absent or {}).items() if qid in waiting}
    pending = round(sum(p for qid, p in waiting.items() if qid not in absent), 6)
    if pending:
        lines.append(_(results.NOT_MARKED).format(points=Local(round(pending * scale, 6))))
    for why in sorted(set(absent.values())):
        points = sum(waiting[qid] for qid, w in absent.items() if w == why)
        lines.append(_(ABSENT).format(points=Local(round(points * scale, 6)), why=_(why)))
    return lines


def markdown(res: results.SubmissionResult, manifest: Manifest, *, after_due: bool = False,
             lateness: late.Lateness | None = None, absent: Mapping[str, str] | None = None,
             graded_at: str = "") -> str:
    """The student's feedback.  The hidden tests of a question whose ``details``
    come after the due date show only their points, unless ``after_due``.
    ``lateness``: the late policy's verdict (the score shown is after its penalty).
    ``absent``: see :func:`score_lines`; ``graded_at``: when its tests ran (the record's)."""
    absent = absent or {}
    first, *rest = score_lines(res, manifest, lateness, absent=absent)
    lines = [f"# {_(manifest.title)}", "", f"**{first}**", ""]
    if rest:
        lines += [*rest, ""]
    if res.grader_error:
        lines += ["> **" + _(results.PENDING) + "**", ""]
    told = []  # a sentence once per file: a problem staging and the grader both report, a note given twice
    for e in res.errors:
        first = e.splitlines()[0] if e.strip() else e
        told.append("> " + _("Problem: {problem}").format(problem=inline(first)))
    for n in res.notes:
        told.append("> " + _("Note: {note}").format(note=inline(n)))
    lines += list(dict.fromkeys(told))
    if res.errors or res.notes:
        lines.append("")
    questions = res.questions(manifest)
    held = {t.nodeid for t in res.tests if not after_due and results.details_withheld(t, manifest)}
    # each distinct traceback once (a file that does not import fails every test that needs it alike),
    # pointing back to the test above that shows it: so only among what is shown, in reading order
    shown = [t for q in questions if not q.manual for t in _failed(res, q) if t.nodeid not in held]
    said = dict(zip((t.nodeid for t in shown), M.details_once([(t.name, t.feedback or _("failed")) for t in shown])))
    for q in questions:
        if q.manual:
            lines += _manual(q, [t for t in res.tests if t.question == q.id], manifest.question(q.id).participation,
                             absent.get(q.id, ""))
            continue
        mark = "✅" if q.full else "❌"
        lines += [f"## {mark} {_(q.title)}: {Local(q.points):g} / {Local(q.max_points):g}", ""]
        failed = _failed(res, q)
        withheld = False
        for t in failed:
            kind = _("public test") if t.public else _("hidden test")
            if t.nodeid in held:
                withheld = True
                lines.append(f"- {code(t.name)} ({kind}): " + _("{points:g} / {max_points:g}").format(
                    points=Local(t.points), max_points=Local(t.max_points)))
                continue
            first, *rest = said[t.nodeid].splitlines() or [_("failed")]
            lines.append(f"- {code(t.name)} ({kind}): {inline(first)}")
            rest = [r for r in rest if r.strip()]
            if rest:
                lines += ["", *fenced(rest, indent="  ")]
        if withheld:
            lines += ["", _("The details of this question's hidden tests come after the due date.")]
        if failed and q.sections:
            lines += ["", M.section_hint(q.sections)]
        if not q.total:
            lines.append("- " + _("no test result (the grader could not run this question's tests)"))
        lines.append("")
    if graded_at:
        lines += [f"_{_(GRADED).format(when=graded_at)}_", ""]
    return "\n".join(lines)


def _failed(res: results.SubmissionResult, q: results.QuestionScore) -> list[results.TestResult]:
    """The question's failed tests a student may see (a ``hidden`` visibility is not shown at all)."""
    return [t for t in res.tests if t.question == q.id and t.status != results.PASSED and t.visibility != "hidden"]


def _manual(q: results.QuestionScore, marks: list[results.TestResult], participation: bool = False,
            absent: str = "") -> list[str]:
    """A question marked by hand: its mark and the marker's comment, or that it waits for one
    (``absent``: nothing was handed in for it, and why).
    The predictions' participation points (``participation``): what the batch gave, and why."""
    if q.pending and absent:
        return [f"## ⏳ {_(q.title)}: {_(absent)} / {Local(q.max_points):g}", ""]
    if q.pending:
        return [f"## ⏳ {_(q.title)}: " + _("marked by hand, not marked yet") + f" / {Local(q.max_points):g}", ""]
    lines = [f"## {'✅' if q.full else '❌'} {_(q.title)}: {Local(q.points):g} / {Local(q.max_points):g}", ""]
    if participation:  # our own words (batch.predictions_report), one line
        return lines + [f"- {inline(t.feedback)}" for t in marks if t.feedback.strip()] + [""]
    for t in marks:
        if t.feedback.strip():  # the marker's words, which may hold anything: one fenced block
            lines += ["- " + _("marked by hand:"), "", *fenced(t.feedback.splitlines(), indent="  ")]
    lines.append("")
    return lines
