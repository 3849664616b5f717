"""The feedback a student reads: per question, what failed and where to look."""

from __future__ import annotations

from autograder import messages as M
from autograder import results
from autograder.i18n import _
from autograder.manifest import Manifest


def markdown(res: results.SubmissionResult, manifest: Manifest) -> str:
    lines = [f"# {_(manifest.title)}", "",
             "**" + _("Score: {score:g} / {max_score:g}").format(score=res.score, max_score=manifest.max_score) + "**", ""]
    for e in res.errors:
        lines.append("> " + _("Problem: {problem}").format(problem=e.splitlines()[0]))
    if res.errors:
        lines.append("")
    for q in res.questions(manifest):
        mark = "✅" if q.full else "❌"
        lines += [f"## {mark} {_(q.title)}: {q.points:g} / {q.max_points:g}", ""]
        failed = [t for t in res.tests if t.question == q.id and t.status != results.PASSED
                  and t.visibility != "hidden"]
        for t in failed:
            kind = _("public test") if t.public else _("hidden test")
            first, *rest = (t.feedback or _("failed")).splitlines()
            lines.append(f"- `{t.name}` ({kind}): {first}")
            if rest:
                lines += ["", "  ```", *[f"  {r}" for r in rest if r.strip()], "  ```"]
        if failed and q.section:
            lines += ["", M.section_hint(q.section)]
        if not q.total:
            lines.append("- " + _("no test result (the grader could not run this question's tests)"))
        lines.append("")
    return "\n".join(lines)
