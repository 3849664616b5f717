"""``autograder verify [LAB]``: prove the tests have power (``autograder.authoring.verify``).

Prints one row per candidate (reference, stub, variants, alternatives) and,
under the table, each unexpected failure's first line of feedback.
``--mutants`` then reports each lab's mutation score (``autograder mutants``).
"""

from __future__ import annotations


import click
from rich.console import Console
from rich.table import Table

from autograder.authoring import candidates
from autograder.authoring.verify import explain, grade_batch, judge
from autograder.commands import default_jobs, jobs_option, sandbox_option
from autograder.core import labs


@click.command("verify")
@click.argument("lab", required=False)
@jobs_option
@sandbox_option("grade in-process (faster, for lab authors)")
@click.option("--mutants", is_flag=True, help="also report each lab's mutation score (slow: one grading per mutant)")
@click.option("--mutant-limit", type=int, default=None, help="with --mutants: grade only N mutants per lab, evenly spread")
def command(**options) -> int:
    """prove reference = full marks, stub = 0, variants lose their questions"""
    return main(**options)


def main(*, lab: str | None = None, jobs: int | None = None, sandbox: bool = True, mutants: bool = False,
         mutant_limit: int | None = None) -> int:
    console = Console()
    targets = [labs.get(lab)] if lab else labs.all_labs()
    work = [(l, c) for l in targets for c in candidates.verify_candidates(l)]
    jobs = jobs or default_jobs(targets)
    graded = grade_batch([(l, c.id, candidates.sources(l, c)) for l, c in work], jobs=jobs, sandbox=sandbox)
    table = Table(title="autograder verify" + ("" if sandbox else " (in-process)"))
    for col in ("lab", "candidate", "score", "lost questions", "expected to lose", "result"):
        table.add_column(col)
    failures, details = 0, []
    for (l, c), res in zip(work, graded):
        qs = res.questions(l.manifest)
        lost = sorted(q.id for q in qs if not q.full and not q.manual)  # a manual one waits for its marker
        problems = judge(l, c, res)
        failures += bool(problems)
        if problems:
            details += [f"{l.short} {c.id}: {line}" for line in explain(l, c, res)]
        table.add_row(l.short, c.id, f"{res.score:g}/{sum(q.points for q in l.manifest.tested):g}", ", ".join(lost) or "-",
                      ", ".join(sorted(c.expect_lost)) or "-",
                      "[green]ok" if not problems else "[red]" + "; ".join(problems))
    console.print(table)
    for line in details:  # under the table: its cells are too narrow for feedback
        console.print(line, markup=False, highlight=False)
    if failures:
        console.print(f"[red]{failures} candidate(s) not as expected")
    else:
        console.print(f"[green]all {len(work)} candidates as expected")
    status = 1 if failures else 0
    if mutants:  # the mutation score of each lab's suite (autograder mutants)
        from autograder.commands import mutants as mutation

        for l in targets:
            status |= mutation.main(lab=l.name, limit=mutant_limit, jobs=jobs, sandbox=sandbox)
    return status
