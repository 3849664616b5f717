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


def markdown(rows: list[SubmissionResult], manifest: Manifest) -> str:
    scores = [r.score for r in rows]
    lines = [f"# {manifest.title}: batch summary", "",
             f"- submissions: {len(rows)}",
             f"- mean score: {statistics.fmean(scores):.2f} / {manifest.max_score:g}" if rows else "- mean score: -",
             f"- median score: {statistics.median(scores):g}" if rows else "- median score: -",
             f"- full marks: {sum(s >= manifest.max_score for s in scores)}",
             f"- with grading problems: {sum(bool(r.errors) for r in rows)}", "",
             "![scores and pass rates](summary.png)", "",
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
    ax1.hist([r.score for r in rows], bins=min(20, max(1, int(manifest.max_score) + 1)),
             range=(0, manifest.max_score), color="tab:blue", edgecolor="white")
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


def write(out: Path, rows: list[SubmissionResult], manifest: Manifest) -> None:
    atomic_write(out / "summary.md", markdown(rows, manifest))
    plot(rows, manifest, out / "summary.png")
