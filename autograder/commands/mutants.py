"""``autograder mutants LAB [--limit N] [--jobs N]``: the suite's mutation score.

Grades every mutant of the reference (``autograder.authoring.mutants``, where
the operators and the equivalents file are described) in one batch and
prints the score, the survivors and any mark that is wrong.
"""

from __future__ import annotations


import click

from autograder.authoring import verify
from autograder.authoring.mutants import (EQUIVALENTS_FILE, EquivalentsError, Report, toml_str, all_mutants,
                                      load_equivalents, spread, survived)
from autograder.commands import default_jobs, jobs_option, sandbox_option
from autograder.core import labs
from autograder.core.results import PASSED


@click.command("mutants")
@click.argument("lab")
@click.option("--limit", type=int, default=None, help="grade only N mutants, evenly spread over all of them")
@jobs_option
@sandbox_option("grade in-process (for lab authors)")
def command(**options) -> int:
    """mutation score: grade small AST mutants of the reference, list survivors"""
    return main(**options)


def main(*, lab: str, limit: int | None = None, jobs: int | None = None, sandbox: bool = True) -> int:
    lab_ = labs.get(lab)
    m = lab_.manifest
    everything = all_mutants(lab_)
    try:
        equivalents = load_equivalents(lab_, everything)
    except EquivalentsError as exc:
        print(f"autograder mutants: {exc}")
        return 2
    chosen = spread(everything, limit)
    jobs = jobs or default_jobs([lab_])
    reference = {f: (lab_.solution_dir / f).read_text() for f in m.student_files}
    batch = [reference] + [{**reference, mu.file: mu.source} for mu in chosen]
    print(f"autograder mutants {lab_.short}: {len(chosen)} of {len(everything)} mutants of "
          f"{', '.join(m.student_files)}; grading them and the reference "
          f"({'sandboxed' if sandbox else 'in-process'}, {jobs} jobs)", flush=True)
    base, *graded = verify.grade_batch([(lab_, f"mutant-{i}", src) for i, src in enumerate(batch)],
                                       jobs=jobs, sandbox=sandbox)
    n_tests = len(base.tests)
    if not survived(base, n_tests) or not n_tests:
        print(f"the reference does not get full marks ({base.score:g}/{m.max_score:g}); fix that first")
        for e in base.errors:
            print(f"  {e}")
        for t in base.tests:
            if t.status != PASSED:
                print(f"  {t.name}: {next(iter(t.feedback.strip().splitlines()), t.status)}")
        return 1
    rep = Report(len(chosen), [], [], [], [])
    for mu, res in zip(chosen, graded):
        marked = mu.key() in equivalents
        if survived(res, n_tests):
            (rep.equivalent if marked else rep.survivors).append(mu)
        else:
            rep.killed.append(mu)
            if marked:
                rep.not_equivalent.append(mu)
    print(f"killed {len(rep.killed)} / {rep.total} mutants, {len(rep.equivalent)} equivalent: "
          f"mutation score {len(rep.killed)}/{rep.total - len(rep.equivalent)} = {100 * rep.score:.1f}%")
    for title, group in (("survivors", rep.survivors), ("equivalent (marked, survived)", rep.equivalent),
                         (f"marked equivalent in {EQUIVALENTS_FILE} but killed", rep.not_equivalent)):
        if not group:
            continue
        print(f"{title} ({len(group)}):")
        for mu in group:
            print(f"  {mu.file}:{mu.line} {mu.operator}: original = {toml_str(mu.original)}, "
                  f"mutated = {toml_str(mu.mutated)}")
            print(f"      {mu.source_line()}")
    return 1 if rep.not_equivalent or rep.survivors else 0
