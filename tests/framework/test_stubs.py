"""Each stub is its reference's contract: same signatures, same English docstrings.

The stub (what a student edits) and the reference (what grades it) each
spell out the contract, so both must stand alone; this test keeps the two
copies from drifting apart.  A stub's docstring may add only its Vietnamese
summary (``test_i18n``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder.core import labs

REPO = Path(__file__).resolve().parents[2]
SUMMARY = "Tóm tắt (tiếng Việt):"


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("lab", labs.all_labs(REPO), ids=lambda l: l.short)
def test_stub_contract_matches_the_reference(lab):
    drift = []
    for f in lab.manifest.student_files:
        stub, ref = _functions(lab.assignment_dir / f), _functions(lab.solution_dir / f)
        assert set(stub) <= set(ref), f"{f}: functions missing from the reference: {set(stub) - set(ref)}"
        for name, node in stub.items():
            english = (ast.get_docstring(node) or "").split(SUMMARY)[0].strip()
            if english != (ast.get_docstring(ref[name]) or "").strip():
                drift.append(f"{f}:{name}() docstring")
            if ast.unparse(node.args) != ast.unparse(ref[name].args) or \
                    ast.unparse(node.returns or ast.Constant(None)) != ast.unparse(ref[name].returns or ast.Constant(None)):
                drift.append(f"{f}:{name}() signature")
    assert not drift, f"stub and reference disagree on the contract: {drift}"
