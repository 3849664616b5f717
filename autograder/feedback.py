"""The feedback a student reads: per question, what failed and where to look."""

from __future__ import annotations

from autograder import messages as M
from autograder import results
from autograder.manifest import Manifest


def markdown(res: results.SubmissionResult, manifest: Manifest) -> str:
    lines = [f"# {manifest.title}", "", f"**Score: {res.score:g} / {manifest.max_score:g}**", ""]
    for e in res.errors:
        lines.append(f"> Problem: {e.splitlines()[0]}")
    if res.errors:
        lines.append("")
    for q in res.questions(manifest):
        mark = "✅" if q.full else "❌"
        lines += [f"## {mark} {q.title}: {q.points:g} / {q.max_points:g}", ""]
        failed = [t for t in res.tests if t.question == q.id and t.status != results.PASSED
                  and t.visibility != "hidden"]
        for t in failed:
            kind = "public" if t.public else "hidden"
            first, *rest = (t.feedback or "failed").splitlines()
            lines.append(f"- `{t.name}` ({kind} test): {first}")
            if rest:
                lines += ["", "  ```", *[f"  {r}" for r in rest if r.strip()], "  ```"]
        if failed and q.section:
            lines += ["", M.SEE_SECTION.format(section=q.section, title=M.SECTIONS.get(q.section, ""))]
        if not q.total:
            lines.append("- no test result (the grader could not run this question's tests)")
        lines.append("")
    return "\n".join(lines)
