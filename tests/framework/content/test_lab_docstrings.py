"""A time limit a stub's docstring promises is the limit the grader applies.

Docstrings tell students how long one call may take ("every call has the
lab's 20 s limit", "giới hạn 20 s"), and ``lab.toml``'s ``[limits]
timeout_s`` is what the sandbox enforces. When one changes without the
other, students are told a wrong limit. This test finds every such mention
in the docstrings of each lab's student files and compares it with the
manifest. It reads the reference, the one source of each contract (the stub
is generated from it, docstrings unchanged: ``test_stubs``), or the stub
where there is no reference.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autograder.core import labs

REPO = Path(__file__).resolve().parents[3]
_N = r"(\d+(?:\.\d+)?)\s*s"  # "20 s", "20s", "2.5 s"
# A number of seconds is a time limit only in these phrasings; "1.2 s per step" or "well under
# 1 s in total" are examples, not limits.
LIMIT_PATTERNS = [
    re.compile(_N + r"\s+(?:time\s+)?limit\b", re.IGNORECASE),  # "the lab's 20 s limit", "20 s time limit"
    re.compile(r"\blimit\s+(?:is\s+|of\s+)?" + _N + r"\b", re.IGNORECASE),  # "a limit of 20 s"
    re.compile(_N + r"\s+(?:per|each|every|a)\s+call\b", re.IGNORECASE),  # "20 s per call"
    re.compile(r"\btimeout(?:_s)?\s*(?:of|is|=)?\s*" + _N + r"\b", re.IGNORECASE),  # "timeout of 20 s"
    re.compile(r"giới\s+hạn\s+(?:là\s+)?(?:thời\s+gian\s+)?" + _N + r"\b", re.IGNORECASE),  # "giới hạn 20 s"
    re.compile(_N + r"\s+(?:cho\s+)?mỗi\s+lần\s+gọi\b", re.IGNORECASE),  # "20 s mỗi lần gọi"
]


def limits_in(text: str) -> list[tuple[float, str]]:
    """Every time limit mentioned in ``text``: (seconds, the phrase), line breaks collapsed."""
    flat = " ".join(text.split())
    found: dict[int, tuple[float, str]] = {}
    for pattern in LIMIT_PATTERNS:
        for m in pattern.finditer(flat):
            found.setdefault(m.start(1), (float(m.group(1)), m.group(0)))
    return [found[k] for k in sorted(found)]


def docstrings(path: Path) -> list[tuple[str, str]]:
    """(where, docstring) for the module and each function and class of a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = [(f"{path.name} (module)", ast.get_docstring(tree) or "")]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((f"{path.name}:{node.name}()", ast.get_docstring(node) or ""))
    return out


def mentions(lab: labs.Lab) -> list[tuple[str, float, str]]:
    """(where, seconds, phrase) for every limit in the lab's contracts (the reference, else the stub)."""
    out = []
    for name in lab.manifest.student_files:
        label = "solutions" if (lab.solution_dir / name).is_file() else "assignments"
        path = lab.root / label / lab.name / name
        for where, doc in docstrings(path):
            out += [(f"{label}/{lab.name}/{where}", s, phrase) for s, phrase in limits_in(doc)]
    return out


@pytest.mark.parametrize("lab", labs.all_labs(REPO), ids=lambda l: l.short)
def test_docstring_time_limits_match_lab_toml(lab):
    timeout = labs.get(lab.name, REPO).manifest.limits.timeout_s
    wrong = [f"{where}: {phrase!r}" for where, s, phrase in mentions(lab) if s != float(timeout)]
    assert not wrong, (f"{lab.name}: lab.toml [limits] timeout_s = {timeout:g}, but docstrings state another "
                       f"limit (change them together): {wrong}")


def test_lab4_states_its_limit_where_the_docs_say():
    # docs/lab4.md: run_loader's and tiled_attention's docstrings state the per-call limit. If the
    # patterns stopped matching them, the test above would pass vacuously.
    found = {where.split("/", 2)[2] for where, _s, _phrase in mentions(labs.get("lab4", REPO))}
    assert {"pipeline.py:run_loader()", "attention.py:tiled_attention()"} <= found, found


@pytest.mark.parametrize("text, expected", [
    ("Time: every call has the lab's 20 s\n    limit, on a grading machine", [20.0]),
    ("Each call has the lab's 20 s time limit; the cases sleep for well under 1 s in total.", [20.0]),
    ("at most 30 s per call", [30.0]),
    ("Mỗi lần gọi có giới hạn 20 s: hãy vector hoá", [20.0]),
    ("a timeout of 10 s", [10.0]),
    ("Example: a 7B model, 1.2 s per step on one A100", []),
    ("7e9 params, FP16, 8 GPUs, 12.5 GB/s, 1 s: 14 GB of gradients, 1.96 s of communication", []),
    ("1 hour = 3600 s, 1 day = 86400 s.", []),
    ("the queue limits how far it runs ahead", []),
])
def test_limit_phrases(text, expected):
    assert [s for s, _phrase in limits_in(text)] == expected
