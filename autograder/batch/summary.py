"""The batch summary an instructor reads: summary.md and summary.png.

Score histogram (scores after the late penalty), the submissions handed in
late and what the penalty took, the pass rate of each question (share of
submissions with full marks on it; a question marked by hand counts only the
answers marked, the rest are pending, never 0%), and the slowest submissions.
The only student text here is a submission's name, escaped like the students'
feedback (``feedback.inline``).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from autograder.batch import late as late_policy
from autograder.batch import manual, predictions_report
from autograder.batch.feedback import inline
from autograder.core.files import atomic_write
from autograder.core.manifest import Manifest
from autograder.core.results import SubmissionResult

SLOWEST = 5


Late = dict[str, late_policy.Lateness]  # submission id -> the late policy's verdict


def pass_rates(rows: list[SubmissionResult], manifest: Manifest) -> dict[str, float | None]:
    """Each question's share of full marks, among the submissions it has a score for (a question
    marked by hand: the answers marked so far); None when it has none yet (all pending)."""
    full = {q.id: 0 for q in manifest.questions}
    scored = {q.id: 0 for q in manifest.questions}
    for r in rows:
        for q in r.questions(manifest):
            if not q.pending:
                scored[q.id] += 1
                full[q.id] += q.full and q.total > 0
    return {qid: full[qid] / scored[qid] if scored[qid] else (None if rows else 0.0) for qid in full}


def final_scores(rows: list[SubmissionResult], late: Late | None = None) -> dict[str, float]:
    """Each submission's score after the late penalty (as in the gradebook)."""
    late = late or {}
    return {r.submission: late[r.submission].final_score(r.score) if r.submission in late else r.score for r in rows}


def unknown_times(late: Late | None) -> list[str]:
    """The submissions whose time is unknown (no late penalty could be decided), by id."""
    return sorted(i for i, v in (late or {}).items() if v.late_days is None)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word's end, with "…" where it was cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def full_tested(r: SubmissionResult, manifest: Manifest) -> bool:
    """Every point the tests give (the questions marked by hand left out): what "full marks" counts."""
    tested = [q for q in r.questions(manifest) if not q.manual]
    return bool(tested) and all(q.full and q.total > 0 for q in tested)


def markdown(rows: list[SubmissionResult], manifest: Manifest, warnings: list[str] = (), late: Late | None = None,
             nothing: list[str] = ()) -> str:
    """``warnings``: what the intake noticed about the batch (two entries with one name, ...);
    ``late``: the late policy's verdicts (scores are after the penalty); ``nothing``: the roster's
    students who handed in nothing (the platform's gradebook names them)."""
    late = late or {}
    finals = final_scores(rows, late)
    scores = list(finals.values())
    penalised = sorted((r for r in rows if r.submission in late and late[r.submission].late_days),
                       key=lambda r: r.submission)
    unknown = unknown_times(late)
    lines = [f"# {manifest.title}: batch summary", "",
             f"- submissions: {len(rows)}",
             f"- mean score: {statistics.fmean(scores):.2f} / {manifest.max_score:g}" if rows else "- mean score: -",
             f"- median score: {statistics.median(scores):g}" if rows else "- median score: -",
             f"- full marks (every tested point, {sum(q.points for q in manifest.tested):g}): "
             f"{sum(full_tested(r, manifest) for r in rows)}",
             *([f"- handed in nothing (in the platform's gradebook): {len(nothing)}"] if nothing else []),
             f"- with grading problems: {sum(bool(r.errors) for r in rows)}",
             f"- grader failures (scores pending, regraded on the next run): {sum(bool(r.grader_error) for r in rows)}",
             *([f"- questions marked by hand still to mark: {sum(q.pending for r in rows for q in r.questions(manifest))}"
                f" (see manual/)"] if manifest.manual else []),
             *([f"- handed in late: {len(penalised)} (scores here are after the late penalty)"] if late else []),
             *([f"- submission time unknown: {len(unknown)}, so no late penalty was applied: "
                f"{', '.join(inline(s) for s in unknown)}"] if unknown else []),
             ""]
    if warnings:
        lines += ["## Warnings", "", *(f"- {inline(w)}" for w in warnings), ""]
    if nothing:  # every roster student appears: the ones with no row are named here
        lines += ["## Handed in nothing", "", *(f"- {inline(n)}" for n in sorted(nothing)), ""]
    problems = sorted((r for r in rows if r.errors), key=lambda r: r.submission)
    if problems:  # every one by name: "6 with grading problems" alone sends the instructor looking
        lines += ["## Submissions with problems", "", "| submission | score | problem |", "|---|---|---|"]
        lines += [f"| {inline(r.submission)} | {finals[r.submission]:g} "
                  f"| {inline(clip((r.errors[0].splitlines() or [''])[0], 200))}"
                  + (f" (+{len(r.errors) - 1} more)" if len(r.errors) > 1 else "") + " |" for r in problems]
        lines.append("")
    if penalised:
        lines += ["## Late submissions", "", "| submission | days late | penalty | score before | score |",
                  "|---|---|---|---|---|"]
        lines += [f"| {inline(r.submission)} | {late[r.submission].late_days} "
                  f"| {late[r.submission].penalty_percent:g}% | {r.score:g} | {finals[r.submission]:g} |"
                  for r in penalised]
        lines.append("")
    lines += ["![scores and pass rates](summary.png)", "",
             "| question | points | pass rate | mean points |", "|---|---|---|---|"]
    rates = pass_rates(rows, manifest)
    for q in manifest.questions:
        marks = [qs for r in rows for qs in r.questions(manifest) if qs.id == q.id]
        pts = [qs.points for qs in marks if not qs.pending]
        waiting = len(marks) - len(pts)
        rate = "pending" if rates[q.id] is None else f"{rates[q.id]:.0%}"
        mean = f"{statistics.fmean(pts):.2f}" if pts else "-" if waiting else "0.00"
        rest = f" ({waiting} pending)" if waiting and pts else f" ({waiting})" if waiting else ""
        lines.append(f"| {q.title} (`{q.id}`) | {q.points:g} | {rate}{rest} | {mean} |")
    lines += ["", f"## Slowest {SLOWEST}", "", "| submission | seconds | score |", "|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r.duration_s)[:SLOWEST]:
        # a submission's name is the student's (a folder or zip name): no Markdown, HTML or "|" of its own
        lines.append(f"| {inline(r.submission)} | {r.duration_s:.1f} | {finals[r.submission]:g} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[SubmissionResult], manifest: Manifest, path: Path, late: Late | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")  # headless, whatever the caller's backend
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    top = int(manifest.max_score)
    # one bar per whole score, centred on it, while that stays readable; else 20 equal bins
    bins = [k - 0.5 for k in range(top + 2)] if top <= 60 else 20
    finals = final_scores(rows, late)
    ax1.hist(list(finals.values()), bins=bins, range=None if top <= 60 else (0, manifest.max_score),
             color="tab:blue", edgecolor="white", label="score")
    lost = [r.score for r in rows if finals[r.submission] < r.score]
    if lost:  # where the late submissions would have stood: the penalty seen as a shift
        ax1.hist(lost, bins=bins, range=None if top <= 60 else (0, manifest.max_score), histtype="step",
                 color="tab:red", linestyle="--", label=f"before the late penalty ({len(lost)} late)")
        ax1.legend(fontsize=8)
    if top <= 60:
        ax1.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax1.set(title="Scores (after the late penalty)" if lost else "Scores", xlabel=f"score (of {manifest.max_score:g})",
            ylabel="submissions")
    ax1.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    rates = pass_rates(rows, manifest)
    labels = [q.id + (" (pending)" if rates[q.id] is None else "") for q in manifest.questions]
    ax2.barh(labels[::-1], [(rates[q.id] or 0.0) * 100 for q in manifest.questions][::-1], color="tab:green")
    ax2.set(title="Full marks per question", xlabel="% of submissions", xlim=(0, 100))
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)


def write(out: Path, rows: list[SubmissionResult], manifest: Manifest, warnings: list[str] = (),
          late: Late | None = None, nothing: list[str] = ()) -> None:
    """summary.md and summary.png, with the written answers left empty and the class's
    predictions (and predictions.png) where the lab has them; ``late``: the late policy's verdicts."""
    subs = [r.submission for r in rows]
    text = markdown(rows, manifest, list(warnings), late, nothing) + manual.summary(out, manifest, subs)
    # N of the predictions' "n answered of N": the roster's students, those who handed in nothing too
    atomic_write(out / "summary.md", text + predictions_report.write(out, manifest, subs, len(subs) + len(nothing)))
    plot(rows, manifest, out / "summary.png", late)
