"""The leak scan: no reference code and no hidden test may reach students.

``autograder release`` builds the student bundle in a temporary folder and
runs :func:`scan` on it before anything is written in place.  The secrets
are every file under ``solutions/`` and under ``tests/<lab>/``.  Two checks,
on every text file of the bundle:

(a) whole files: a bundle file whose bytes equal a secret file's;
(b) lines: a *significant* line of a secret file is a line of a bundle file
    (whitespace collapsed, with or without a trailing comment; in a
    notebook, a line of any cell).

Significant means it could give something away: not blank, a comment, an
import, a decorator, a docstring, a bare ``pass`` or ``return``, nor shorter
than ``MIN_CHARS``; and not public by design.  Public by design are only:

- the stubs' skeleton: the lines a stub shares with its reference outside the
  bodies the student must write (module constants, signatures, docstrings,
  given helpers).  A body to write is a stub function whose body differs from
  the reference's function of the same name, so a reference line planted in
  it is caught.  A whole reference function pasted into a stub looks like a
  given helper; ``autograder verify`` catches that (the stub must score 0);
- for hidden tests, also the lines the lab's public tests share with them
  (the same inputs and helper calls);
- the engine's own lines (the engine ships; tests reuse its idioms);
- the lab's reviewed list, ``solutions/<lab>/public_lines.txt``: lines the
  public material shows on purpose, each with a comment saying why.

:func:`scan` is pure: findings are data, in bundle-file order.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from autograder.core import stubs
from autograder.core import labs

MIN_CHARS = 25  # shorter lines (``x = x + 1``, ``return out``) are too common to mean a leak
TRIVIAL = {"pass", "return", "continue", "break", "else:", "try:", "finally:", "...", "raise NotImplementedError"}
TRIVIAL_PREFIXES = ("#", "import ", "from ", "@")
ALLOW_FILE = "public_lines.txt"  # solutions/<lab>/: reviewed lines the public material shows on purpose
_TRAILING_COMMENT = re.compile(r"\s+#.*$")


@dataclass(frozen=True)
class Finding:
    where: str  # bundle file and location, e.g. "assignments/labx/toy.py:7"
    source: str  # the secret it leaks, e.g. "solutions/labx/toy.py:7"
    text: str  # the leaked line ("" for a whole file)

    def __str__(self) -> str:
        if not self.text:
            return f"{self.where}: identical to {self.source}"
        return f"{self.where}: line of {self.source} leaks: {self.text[:100]}"


@dataclass(frozen=True)
class Secrets:
    """What must never ship: whole files (bytes -> source) and significant lines (-> 'file:line')."""

    files: dict[bytes, str]
    lines: dict[str, str]


def normalise(line: str) -> str:
    return " ".join(line.split())


# -- what a Python file says: docstring lines, function bodies ---------------
def _docstring_lines(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out.update(range(node.lineno, node.end_lineno + 1))
    return out


def _comment_free(text: str) -> list[str]:
    """The file's lines with comments removed (tokenize knows a '#' inside a string)."""
    lines = text.splitlines()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                lines[row - 1] = lines[row - 1][:col]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        lines = [_TRAILING_COMMENT.sub("", l) for l in lines]
    return lines


def _bodies(tree: ast.AST) -> dict[str, range]:
    """Qualified function name -> line range of its body after the docstring."""
    out: dict[str, range] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    body = child.body[1:] if ast.get_docstring(child) is not None and len(child.body) > 1 else child.body
                    out[name] = range(body[0].lineno, child.end_lineno + 1)
                visit(child, name + ".")

    visit(tree, "")
    return out


def _parse(text: str) -> ast.AST | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def significant_lines(text: str) -> dict[str, int]:
    """Normalised significant line -> its first line number."""
    tree = _parse(text)
    docs = _docstring_lines(tree) if tree is not None else set()
    out: dict[str, int] = {}
    for n, raw in enumerate(_comment_free(text), 1):
        line = normalise(raw)
        if (n in docs or len(line) < MIN_CHARS or line in TRIVIAL
                or line.startswith(TRIVIAL_PREFIXES)):
            continue
        out.setdefault(line, n)
    return out


def public_by_design(stub: str, reference: str) -> set[str]:
    """Lines of a stub that are not inside a body the student must write."""
    s_tree, r_tree = _parse(stub), _parse(reference)
    if s_tree is None:
        return set()  # fail safe: nothing is public, so more is flagged
    s_lines, r_lines = _comment_free(stub), _comment_free(reference)
    r_bodies = _bodies(r_tree) if r_tree is not None else {}

    def body_text(lines, rng):
        return [normalise(lines[i - 1]) for i in rng]

    to_write: set[int] = set()
    for name, rng in _bodies(s_tree).items():
        ref = r_bodies.get(name)
        if ref is None or body_text(s_lines, rng) != body_text(r_lines, ref):
            to_write.update(rng)
    return {normalise(l) for n, l in enumerate(s_lines, 1) if n not in to_write}


# -- the secrets of a project ------------------------------------------------
def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _keys(line: str) -> set[str]:
    """The forms a line is matched in: as is, and without a trailing comment."""
    return {normalise(line), normalise(_TRAILING_COMMENT.sub("", line))}


def _lines_of(path: Path) -> set[str]:
    text = _text(path) if path.is_file() else None
    return {k for l in text.splitlines() for k in _keys(l)} if text is not None else set()


def allowed(lab: labs.Lab) -> set[str]:
    """The lab's reviewed list of lines its public material shows on purpose."""
    path = lab.solution_dir / ALLOW_FILE
    return {l for l in _lines_of(path) if l and not l.startswith("#")}


def public_lines(lab: labs.Lab, engine: Path) -> dict[str, set[str]]:
    """Lines of this lab's secrets that are public by design: for solutions/ and for tests/."""
    common = allowed(lab) | {l for p in sorted(engine.rglob("*.py")) for l in _lines_of(p)}
    skeleton: set[str] = set()
    for name, stub in stubs.texts(lab).items():
        skeleton |= public_by_design(stub, (lab.solution_dir / name).read_text())
    public_tests = {l for p in sorted(lab.public_tests_dir.glob("*.py")) for l in _lines_of(p)}
    return {"solutions": common | skeleton, "tests": common | skeleton | public_tests}


def collect_secrets(root: Path, engine: Path | None = None) -> Secrets:
    """Every file under solutions/ and tests/<lab>/, and their significant lines.

    ``engine``: the autograder package that ships (default: this one).
    """
    engine = engine or Path(__file__).resolve().parents[1]  # the autograder package
    all_labs = labs.all_labs(root)
    public_of = {lab.name: public_lines(lab, engine) for lab in all_labs}
    paths = _files(root / "solutions") + [p for lab in all_labs for p in _files(lab.hidden_tests_dir)]
    files: dict[bytes, str] = {}
    lines: dict[str, str] = {}
    for path in paths:
        rel = path.relative_to(root).as_posix()
        kind, lab_name = rel.split("/")[:2]
        if path.name == ALLOW_FILE:
            continue  # it lists only lines the bundle shows anyway
        public = public_of.get(lab_name, {}).get(kind, set())  # a file of no lab: nothing public
        data = path.read_bytes()
        text = _text(path)
        if len(data.strip()) >= MIN_CHARS:  # an empty __init__.py gives nothing away
            files.setdefault(data, rel)
            if text is not None and path.suffix == ".py" and stubs.BEGIN in text:  # the reference, markers dropped
                files.setdefault(stubs.unmarked(text).encode(), rel)
        for line, n in (significant_lines(text) if text is not None else {}).items():
            if line not in public:
                lines.setdefault(line, f"{rel}:{n}")
    return Secrets(files, lines)


# -- the scan ----------------------------------------------------------------
def _located_lines(name: str, text: str):
    """(location, line) pairs of a bundle file; a notebook by cell."""
    if name.endswith(".ipynb"):
        try:
            cells = json.loads(text).get("cells", [])
        except (ValueError, AttributeError):
            cells = None
        if cells is not None:
            for c, cell in enumerate(cells, 1):
                src = cell.get("source", "")
                src = "".join(src) if isinstance(src, list) else str(src)
                for n, line in enumerate(src.splitlines(), 1):
                    yield f"{name}: cell {c}, line {n}", line
            return
    for n, line in enumerate(text.splitlines(), 1):
        yield f"{name}:{n}", line


def scan(bundle: dict[str, bytes], secrets: Secrets) -> list[Finding]:
    """Leaks in a bundle given as relative path -> bytes; empty when clean."""
    found: list[Finding] = []
    for name in sorted(bundle):
        data = bundle[name]
        if data in secrets.files:
            found.append(Finding(name, secrets.files[data], ""))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # binary (snapshots): no source code to leak
        for where, raw in _located_lines(name, text):
            for key in sorted(_keys(raw)):
                if key in secrets.lines:
                    found.append(Finding(where, secrets.lines[key], key))
                    break
    return found


def read_tree(folder: Path) -> dict[str, bytes]:
    """A folder as relative path -> bytes, the input :func:`scan` takes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in _files(folder)}
