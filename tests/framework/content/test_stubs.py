"""The real labs' stubs: generated from the marked reference, never committed.

A stub is what the reference generates (``autograder.core.stubs``), so it
cannot drift from its reference; what is left to check is that the stub a
student gets is the reference's contract, name for name and docstring for
docstring, with every marked body gone, and that git never tracks one (a
committed stub would be a second copy of the contract that could drift).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.core import stubs
from autograder.core import labs

REPO = Path(__file__).resolve().parents[3]
LABS = labs.all_labs(REPO)


def _contract(body: list[ast.stmt], prefix: str = "") -> dict[str, tuple]:
    """Module-level (and class-level) name -> (kind, signature, docstring); constants by their text."""
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[prefix + node.name] = ("def", ast.dump(node.args), ast.get_docstring(node, clean=False))
        elif isinstance(node, ast.ClassDef):
            out[prefix + node.name] = ("class", "", ast.get_docstring(node, clean=False))
            out.update(_contract(node.body, f"{prefix}{node.name}."))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            out[prefix + ast.unparse(node)] = ("constant", "", None)
    return out


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_a_stub_is_its_references_contract_with_the_bodies_gone(lab):
    assert lab.has_solutions
    for name, stub in stubs.texts(lab).items():
        ref_tree, stub_tree = ast.parse((lab.solution_dir / name).read_text()), ast.parse(stub)
        assert ast.get_docstring(stub_tree, clean=False) == ast.get_docstring(ref_tree, clean=False), name
        ref, got = _contract(ref_tree.body), _contract(stub_tree.body)
        public = {k: v for k, v in ref.items() if not k.startswith("_") or k in got}
        assert got == public, f"{name}: the stub's names, signatures or docstrings differ from the reference's"
        raising = [n for n in ast.walk(stub_tree) if isinstance(n, ast.Raise)
                   and isinstance(n.exc, ast.Name) and n.exc.id == "NotImplementedError"]
        assert raising, f"{name}: nothing left for the student"


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
def test_git_ignores_every_stub_and_tracks_none():
    paths = [str((lab.assignment_dir / f).relative_to(REPO)) for lab in LABS for f in lab.manifest.student_files]
    toy = labs.all_labs(REPO / "tests" / "framework" / "fixtures" / "toyroot")
    paths += [str((lab.assignment_dir / f).relative_to(REPO)) for lab in toy for f in lab.manifest.student_files]
    git = ["git", "-C", str(REPO)]
    ignored = subprocess.run([*git, "check-ignore", "--no-index", *paths], capture_output=True, text=True).stdout.split()
    assert sorted(ignored) == sorted(paths), f"not in .gitignore: {sorted(set(paths) - set(ignored))}"
    tracked = subprocess.run([*git, "ls-files", "--", *paths], capture_output=True, text=True, check=True).stdout.split()
    assert tracked == [], f"committed stubs (git rm --cached them): {tracked}"
