"""Mutation testing of a lab's suite: mutants of the reference, and its equivalents file.

``verify`` proves the tests catch the negative variants an author thought
of; this counts how many small, mechanical faults they catch. Each mutant is
the reference's student files with one change, made with Python's ``ast``
and spliced into the source text (the rest of the file stays as it is):

====================  =====================================================
operator              change
====================  =====================================================
``arithmetic``        ``+`` ↔ ``-``, ``*`` ↔ ``/``, ``//`` ↔ ``/``, ``**`` → ``*``
                      (also in augmented assignments: ``+=`` → ``-=``, ...)
``comparison``        ``<`` ↔ ``<=``, ``>`` ↔ ``>=``, ``==`` ↔ ``!=``,
                      ``is`` ↔ ``is not``, ``in`` ↔ ``not in``
``constant``          a number: 0 → 1, 1 → 0, any other n → n + 1
``boolean``           ``and`` ↔ ``or``; ``not x`` → ``x``
``negation``          ``-x`` → ``x``
``return``            ``return value`` → ``return None``
====================  =====================================================

Nothing inside annotations, f-strings or docstrings is mutated. Every mutant
is graded as a submission, with the lab's hidden and public tests, in one
batch (sandboxed and through the warm grader pool by default). A mutant is
*killed* when any test fails; it *survives* with full marks. A survivor the
author has shown cannot change behaviour is listed in
``solutions/<lab>/equivalent_mutants.toml``::

    [[mutant]]
    file = "toy.py"
    line = 12
    original = "x ** 2"       # as `autograder mutants` prints it
    mutated = "x * 2"
    why = "x is 0 or 2 here, where x ** 2 == x * 2"

and the score is killed / (total − equivalent). The exit status is 1 while a
mutant that is not marked equivalent survives, or a marked one is killed.
``--limit N`` grades N mutants evenly spread over all of them (the file is
still checked against all of them). ``autograder verify --mutants`` runs this
after its table. Not run in CI: it grades one submission per mutant.
"""

from __future__ import annotations

import ast
import copy
import tomllib
from dataclasses import dataclass

from autograder.core import labs
from autograder.core.results import PASSED, SubmissionResult

EQUIVALENTS_FILE = "equivalent_mutants.toml"
EQUIVALENT_KEYS = ("file", "line", "original", "mutated", "why")

_ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.FloorDiv: ast.Div, ast.Pow: ast.Mult}
_DIV = (ast.Mult, ast.FloorDiv)  # `/` has two mutants: `*` and `//`
_COMPARISON = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
               ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


@dataclass(frozen=True)
class Mutant:
    file: str
    line: int
    operator: str
    original: str  # the changed node before, as ast.unparse writes it
    mutated: str  # ... and after
    source: str  # the whole mutated file

    def key(self) -> tuple[str, int, str, str]:
        return self.file, self.line, self.original, self.mutated

    def source_line(self) -> str:
        return self.source.splitlines()[self.line - 1].strip()


# -- making mutants ------------------------------------------------------------------
def _skipped(tree: ast.AST) -> set[int]:
    """ids of nodes never mutated: annotations, f-strings, docstrings and what they hold."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots += [a.annotation for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                                              node.args.vararg, node.args.kwarg) if a is not None and a.annotation]
            roots += [node.returns] if node.returns else []
        if isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        if isinstance(node, ast.JoinedStr):
            roots.append(node)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                roots.append(first)
    return {id(n) for r in roots for n in ast.walk(r)}


def _replacements(node: ast.AST):
    """(operator, new node) for each mutant of ``node`` itself."""
    if isinstance(node, ast.BinOp):
        ops = list(_DIV) if isinstance(node.op, ast.Div) else (
            [_ARITHMETIC[type(node.op)]] if type(node.op) in _ARITHMETIC else [])
        for op in ops:
            yield "arithmetic", ast.BinOp(node.left, op(), node.right)
    elif isinstance(node, ast.AugAssign):
        ops = list(_DIV) if isinstance(node.op, ast.Div) else (
            [_ARITHMETIC[type(node.op)]] if type(node.op) in _ARITHMETIC else [])
        for op in ops:
            yield "arithmetic", ast.AugAssign(node.target, op(), node.value)
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _COMPARISON:
                ops = list(node.ops)
                ops[i] = _COMPARISON[type(op)]()
                yield "comparison", ast.Compare(node.left, ops, node.comparators)
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        v = node.value
        yield "constant", ast.Constant(type(v)(1) if v == 0 else type(v)(0) if v == 1 else v + 1)
    elif isinstance(node, ast.BoolOp):
        yield "boolean", ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "boolean", node.operand
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield "negation", node.operand
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield "return", ast.Return(ast.Constant(None))


def _offsets(data: bytes) -> list[int]:
    """Byte offset of the start of each line (ast's columns count UTF-8 bytes)."""
    starts, pos = [0], 0
    for line in data.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def mutants_of(file: str, text: str) -> list[Mutant]:
    """Every mutant of one source file, in source order; those that do not compile are dropped."""
    tree = ast.parse(text)
    skipped = _skipped(tree)
    data = text.encode()
    starts = _offsets(data)
    out, seen = [], set()
    for node in ast.walk(tree):
        if id(node) in skipped or not hasattr(node, "end_col_offset") or node.end_lineno is None:
            continue
        for operator, new in _replacements(node):
            new = ast.fix_missing_locations(ast.copy_location(copy.copy(new), node))
            replacement = ast.unparse(new)
            if isinstance(node, ast.expr):
                replacement = f"({replacement})"  # whatever the precedence around it
            lo = starts[node.lineno - 1] + node.col_offset
            hi = starts[node.end_lineno - 1] + node.end_col_offset
            source = (data[:lo] + replacement.encode() + data[hi:]).decode()
            if source in seen:
                continue
            try:
                compile(source, file, "exec")
            except SyntaxError:
                continue
            seen.add(source)
            out.append(Mutant(file, node.lineno, operator, ast.unparse(node), ast.unparse(new), source))
    out.sort(key=lambda m: (m.line, m.operator, m.original, m.mutated))
    return out


def all_mutants(lab: labs.Lab) -> list[Mutant]:
    out: list[Mutant] = []
    for f in lab.manifest.student_files:
        out += mutants_of(f, (lab.solution_dir / f).read_text())
    return out


def spread(items: list, limit: int | None) -> list:
    """``limit`` items evenly spread over ``items`` (all of them without a limit)."""
    if limit is None or limit >= len(items):
        return list(items)
    return [items[i * len(items) // limit] for i in range(max(0, limit))]


# -- the author's equivalent mutants -------------------------------------------------
class EquivalentsError(ValueError):
    """``equivalent_mutants.toml`` is malformed or names a mutant that does not exist."""


def load_equivalents(lab: labs.Lab, mutants: list[Mutant] | None = None) -> dict[tuple, str]:
    """(file, line, original, mutated) -> why, from ``solutions/<lab>/equivalent_mutants.toml``.
    Strict: an unknown or missing key, a wrong type, an unknown file, or (given ``mutants``,
    all of them) an entry that matches no mutant is an error naming the file."""
    path = lab.solution_dir / EQUIVALENTS_FILE
    if not path.is_file():
        return {}
    where = f"{path.relative_to(lab.root)}"
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise EquivalentsError(f"{where}: {exc}") from None
    for key in data:
        if key != "mutant":
            raise EquivalentsError(f"{where}: unknown key {key!r} (only [[mutant]] tables)")
    entries = data.get("mutant", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise EquivalentsError(f"{where}: 'mutant' must be a list of [[mutant]] tables")
    known = {m.key() for m in mutants} if mutants is not None else None
    out: dict[tuple, str] = {}
    for n, e in enumerate(entries, 1):
        at = f"{where}: [[mutant]] {n}"
        for key in e:
            if key not in EQUIVALENT_KEYS:
                raise EquivalentsError(f"{at}: unknown key {key!r} (allowed: {', '.join(EQUIVALENT_KEYS)})")
        for key in EQUIVALENT_KEYS:
            if key not in e:
                raise EquivalentsError(f"{at}: missing key {key!r}")
        if type(e["line"]) is not int or not all(type(e[k]) is str for k in ("file", "original", "mutated", "why")):
            raise EquivalentsError(f"{at}: line must be an integer; file, original, mutated and why strings")
        if not e["why"].strip():
            raise EquivalentsError(f"{at}: 'why' is empty: say why the mutant cannot change behaviour")
        if e["file"] not in lab.manifest.student_files:
            raise EquivalentsError(f"{at}: file {e['file']!r} is not one of the lab's student files")
        key = (e["file"], e["line"], e["original"], e["mutated"])
        if known is not None and key not in known:
            raise EquivalentsError(f"{at}: no mutant {e['file']}:{e['line']} {e['original']!r} -> "
                                   f"{e['mutated']!r} (the reference changed? run `autograder mutants` to list them)")
        if key in out:
            raise EquivalentsError(f"{at}: listed twice")
        out[key] = e["why"]
    return out


# -- grading -------------------------------------------------------------------------
def survived(res: SubmissionResult, n_tests: int) -> bool:
    return not res.errors and len(res.tests) == n_tests and all(t.status == PASSED for t in res.tests)


@dataclass
class Report:
    total: int
    killed: list[Mutant]
    survivors: list[Mutant]
    equivalent: list[Mutant]  # marked equivalent, and survived
    not_equivalent: list[Mutant]  # marked equivalent, yet killed: the mark is wrong

    @property
    def score(self) -> float:
        return len(self.killed) / max(1, self.total - len(self.equivalent))


def toml_str(s: str) -> str:
    """A TOML basic string: what equivalent_mutants.toml takes as it is."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
