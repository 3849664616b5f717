"""``autograder history LAB OUT [--only WHO]``: the record's story, run by run (``docs/record.md``).

Every ``grade`` appends a line to ``OUT/record/history.jsonl``; this prints them for an
instructor, or, with ``--only``, one student's: each run that changed their score, late
penalty or marks, old -> new and why, and the grade they have now (for a dispute).
"""

from __future__ import annotations

from pathlib import Path

import click

from autograder.commands import usage_error
from autograder.core import labs


@click.command("history")
@click.argument("lab")
@click.argument("out")
@click.option("--only", help="one student: a submission id, or a student's name (or the start of one)")
def command(**options) -> int:
    """print the grading history kept in OUT (every run, or one student's story with --only)"""
    return main(**options)


def main(*, lab: str, out: str, only: str | None = None) -> int:
    from autograder.batch import record
    from autograder.batch.platforms import _fold
    from autograder.grading.staging import printable

    try:
        the_lab = labs.get(lab)
    except KeyError as exc:
        return usage_error("history", exc.args[0])
    runs = record.history(Path(out))
    if not runs:
        return usage_error("history", f"{out} has no grading history ({record.FOLDER}/{record.HISTORY})")
    if any(r.get("lab") not in (None, the_lab.short) for r in runs):
        return usage_error("history", f"{out} is the record of {runs[-1].get('lab')}, not {the_lab.short}")
    grades = record.read_grades(Path(out))
    who = None
    if only is not None:
        want = _fold(only)
        keys = {i: (i, *g.names) for i, g in grades.items()}
        exact = [i for i, ks in keys.items() if only == i or any(_fold(k) == want for k in ks)]
        found = exact or [i for i, ks in keys.items() if want and any(_fold(k).startswith(want) for k in ks)]
        if len(found) != 1:
            return usage_error("history", f"--only {only!r} names {len(found)} students of the record"
                                          + (f": {', '.join(sorted(found)[:10])}" if found else ""))
        who = found[0]
    for run in runs:
        changes = [c for c in run.get("changes", []) if who is None or c.get("submission") == who]
        if who is not None and not changes and who not in run.get("graded", []):
            continue
        print(f"{run.get('at', '?')}  autograder {run.get('command', '?')}  (engine {run.get('engine', '?')})")
        if who is not None and not changes:
            print("  regraded: no change")
        for c in changes:
            print(f"  {c.get('submission') if who is None else ''}{' ' if who is None else ''}{_said(c)}".rstrip())
    if who is not None:
        g = grades[who]
        late = f", {g.late_days} day(s) late, -{g.penalty_percent:g}%" if g.late_days else ""
        marks = "".join(f", {q} {p:g}" for q, p in sorted(g.marks.items()))
        # a name is the student's own (a display name, a worksheet's full name): one line of text, never a
        # newline that forges a run or a terminal's escape sequence
        names = "; ".join(printable(n) for n in g.names)
        print(f"now: {who}{' (' + names + ')' if names else ''}: {g.score:g} / "
              f"{the_lab.manifest.max_score:g}{late}{marks}; tests last run {g.graded_at or '?'}")
    return 0


def _said(change: dict) -> str:
    """One change, as a line: what moved, old -> new, and why."""
    parts = []
    num = lambda v: "-" if v is None else f"{v:g}" if isinstance(v, (int, float)) else str(v)  # noqa: E731
    if "score" in change:
        parts.append(f"score {num(change['score'][0])} -> {num(change['score'][1])}")
    if "late" in change:
        late = lambda d, p: "time unknown" if d is None else f"{d} day(s) late -{num(p)}%"  # noqa: E731
        (od, op), (nd, np_) = change["late"]
        parts.append(f"{late(od, op)} -> {late(nd, np_)}")
    for q, (o, n) in sorted((change.get("marks") or {}).items()):
        parts.append(f"mark {q} {num(o)} -> {num(n)}")
    return f"{'; '.join(parts)}  (why: {'; '.join(change.get('why', []))})"
