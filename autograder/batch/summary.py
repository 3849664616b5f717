"""The batch summary an instructor reads: summary.md and summary.png.

Score histogram, the pass rate of each question (share of submissions with
full marks on it), and the slowest submissions.  The only student text here
is a submission's name, escaped like the students' feedback (``feedback.inline``).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from autograder.batch.feedback import inline
from autograder.core.files import atomic_write
from autograder.core.manifest import Manifest
from autograder.core.results import SubmissionResult

SLOWEST = 5


def pass_rates(rows: list[SubmissionResult], manifest: Manifest) -> dict[str, float]:
    if not rows:
        return {q.id: 0.0 for q in manifest.questions}
    full = {q.id: 0 for q in manifest.questions}
    for r in rows:
        for q in r.questions(manifest):
            full[q.id] += q.full and q.total > 0
    return {qid: n / len(rows) for qid, n in full.items()}


def markdown(rows: list[SubmissionResult], manifest: Manifest, warnings: list[str] = ()) -> str:
    """``warnings``: what the intake noticed about the batch (two entries with one name, ...)."""
    scores = [r.score for r in rows]
    lines = [f"# {manifest.title}: batch summary", "",
             f"- submissions: {len(rows)}",
             f"- mean score: {statistics.fmean(scores):.2f} / {manifest.max_score:g}" if rows else "- mean score: -",
             f"- median score: {statistics.median(scores):g}" if rows else "- median score: -",
             f"- full marks: {sum(s >= manifest.max_score for s in scores)}",
             f"- with grading problems: {sum(bool(r.errors) for r in rows)}",
             f"- grader failures (scores pending, regraded on the next run): {sum(bool(r.grader_error) for r in rows)}",
             *([f"- questions marked by hand still to mark: {sum(q.pending for r in rows for q in r.questions(manifest))}"
                f" (see manual/)"] if manifest.manual else []),
             ""]
    if warnings:
        lines += ["## Warnings", "", *(f"- {inline(w)}" for w in warnings), ""]
    problems = sorted((r for r in rows if r.errors), key=lambda r: r.submission)
    if problems:  # every one by name: "6 with grading problems" alone sends the instructor looking
        lines += ["## Submissions with problems", "", "| submission | score | problem |", "|---|---|---|"]
        lines += [f"| {inline(r.submission)} | {r.score:g} | {inline((r.errors[0].splitlines() or [''])[0][:200])}"
                  + (f" (+{len(r.errors) - 1} more)" if len(r.errors) > 1 else "") + " |" for r in problems]
        lines.append("")
    lines += ["![scores and pass rates](summary.png)", "",
             "| question | points | pass rate | mean points |", "|---|---|---|---|"]
    rates = pass_rates(rows, manifest)
    for q in manifest.questions:
        pts = [qs.points for r in rows for qs in r.questions(manifest) if qs.id == q.id]
        mean = statistics.fmean(pts) if pts else 0.0
        lines.append(f"| {q.title} (`{q.id}`) | {q.points:g} | {rates[q.id]:.0%} | {mean:.2f} |")
    lines += ["", f"## Slowest {SLOWEST}", "", "| submission | seconds | score |", "|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r.duration_s)[:SLOWEST]:
        # a submission's name is the student's (a folder or zip name): no Markdown, HTML or "|" of its own
        lines.append(f"| {inline(r.submission)} | {r.duration_s:.1f} | {r.score:g} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[SubmissionResult], manifest: Manifest, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # headless, whatever the caller's backend
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    top = int(manifest.max_score)
    # one bar per whole score, centred on it, while that stays readable; else 20 equal bins
    bins = [k - 0.5 for k in range(top + 2)] if top <= 60 else 20
    ax1.hist([r.score for r in rows], bins=bins, range=None if top <= 60 else (0, manifest.max_score),
             color="tab:blue", edgecolor="white")
    if top <= 60:
        ax1.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax1.set(title="Scores", xlabel=f"score (of {manifest.max_score:g})", ylabel="submissions")
    ax1.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    rates = pass_rates(rows, manifest)
    ax2.barh([q.id for q in manifest.questions][::-1], [rates[q.id] * 100 for q in manifest.questions][::-1],
             color="tab:green")
    ax2.set(title="Full marks per question", xlabel="% of submissions", xlim=(0, 100))
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)


def write(out: Path, rows: list[SubmissionResult], manifest: Manifest, warnings: list[str] = ()) -> None:
    atomic_write(out / "summary.md", markdown(rows, manifest, list(warnings)))
    plot(rows, manifest, out / "summary.png")
