"""Each lab's stubs, generated from its reference: one source per contract.

A contract file (a ``student_files`` entry of ``lab.toml``) is written once,
as the reference ``solutions/<lab>/<file>.py``, with everything the student
sees: the module docstring (its "Your task" paragraph included: it stays in
the reference, written by hand, because each lab words it for its own
files), the English docstrings with their Vietnamese summaries, the
imports, constants and signatures.  The code the student must write is
marked, nbgrader-style, with comment lines (so the reference runs as it is)::

        ### BEGIN SOLUTION
        ...the reference's body...
        ### END SOLUTION

becomes ``raise NotImplementedError`` at the markers' indentation in
``assignments/<lab>/<file>.py``.  A private helper the stub must not ship
is wrapped at module level in ``### BEGIN SOLUTION NO PROMPT`` (otter-assign's
spelling) ... ``### END SOLUTION``; that block and the blank lines after it
are dropped.  Nothing else changes, so docstrings, line order and
everything outside the markers are byte for byte the reference's.

The markers are strict (:class:`MarkerError`, naming file and line): no
nesting, no unclosed or unopened block, an END at its BEGIN's indentation,
no solution line left of its marker, no empty block, no raising block at
module level, at least one block in every contract file, and none in any
other file of the lab.  The stubs are build outputs, never committed (``.gitignore`` lists them; a
content test checks that list against every ``lab.toml``), so a stub cannot
drift from its reference.  What ships reads them from :func:`generate`, not
from the disk: the release bundle, the verify and example candidates, the
leak scan.  Files on disk are only for working in the course repository
(running a notebook or ``autograder check`` in place): ``autograder stubs``
writes them, and so does the test session.  ``autograder stubs --check``
lists the stubs on disk that are missing or differ (edited by hand: edits
belong in the reference).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from autograder.core import labs

BEGIN, BEGIN_NO_PROMPT, END = "### BEGIN SOLUTION", "### BEGIN SOLUTION NO PROMPT", "### END SOLUTION"
STUB_BODY = "raise NotImplementedError"
_LOOKS_LIKE_A_MARKER = re.compile(r"#+\s*(BEGIN|END)\s+SOLUTION", re.IGNORECASE)


class MarkerError(ValueError):
    """A solution marker is misplaced; the message starts with ``file:line``."""


def _comment_lines(text: str, path) -> dict[int, str]:
    """Line number -> comment, for comments that are a whole line (tokenize: not inside a string)."""
    lines = text.splitlines()
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and lines[tok.start[0] - 1].strip() == tok.string.strip():
                out[tok.start[0]] = tok.string.strip()
    except (tokenize.TokenError, SyntaxError) as exc:
        raise MarkerError(f"{path}: not valid Python: {exc}") from None
    return out


def stub_text(reference_text: str, path) -> str:
    """The stub of one contract file: every marked block replaced (see the module docstring)."""
    lines = reference_text.splitlines(keepends=True)
    markers = {}
    for n, comment in _comment_lines(reference_text, path).items():
        if comment in (BEGIN, BEGIN_NO_PROMPT, END):
            markers[n] = comment
        elif _LOOKS_LIKE_A_MARKER.match(comment):
            raise MarkerError(f"{path}:{n}: malformed marker {comment!r} "
                              f"(write {BEGIN!r}, {BEGIN_NO_PROMPT!r} or {END!r})")
    if not markers:
        raise MarkerError(f"{path}:1: a contract file with no {BEGIN!r} marker: nothing is left for the student")
    out: list[str] = []
    opened = None  # (line, indent, marker) of the open block
    skip_blank = False
    for n, line in enumerate(lines, 1):
        indent = line[: len(line) - len(line.lstrip())]
        marker = markers.get(n)
        if marker in (BEGIN, BEGIN_NO_PROMPT):
            if opened:
                raise MarkerError(f"{path}:{n}: {marker!r} inside the block opened at line {opened[0]} (no nesting)")
            if marker == BEGIN and not indent:
                raise MarkerError(f"{path}:{n}: {BEGIN!r} at module level would raise on import; "
                                  f"use {BEGIN_NO_PROMPT!r} to drop module-level code")
            opened, body = (n, indent, marker), 0
        elif marker == END:
            if not opened:
                raise MarkerError(f"{path}:{n}: {END!r} without a {BEGIN!r} before it")
            if indent != opened[1]:
                raise MarkerError(f"{path}:{n}: {END!r} is not at the indentation of its BEGIN (line {opened[0]})")
            if not body:
                raise MarkerError(f"{path}:{n}: empty solution block (opened at line {opened[0]})")
            if opened[2] == BEGIN:
                out.append(f"{indent}{STUB_BODY}\n")
            skip_blank, opened = opened[2] == BEGIN_NO_PROMPT, None
        elif opened:
            if line.strip():
                body += 1
                if not line.startswith(opened[1]):
                    raise MarkerError(f"{path}:{n}: a line left of the {opened[2]!r} at line {opened[0]} "
                                      f"(close the block before it)")
        elif skip_blank and not line.strip():
            continue
        else:
            skip_blank = False
            out.append(line)
    if opened:
        raise MarkerError(f"{path}:{opened[0]}: {opened[2]!r} is never closed with {END!r}")
    text = "".join(out)
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise MarkerError(f"{path}:{exc.lineno}: the generated stub does not parse: {exc.msg}") from None
    return text


def unmarked(text: str) -> str:
    """``text`` without its marker lines: the reference's code as an alternative would write it."""
    lines = text.splitlines(keepends=True)
    markers = {n for n, c in _comment_lines(text, "<text>").items() if c in (BEGIN, BEGIN_NO_PROMPT, END)}
    return "".join(line for n, line in enumerate(lines, 1) if n not in markers)


def _check_no_markers_elsewhere(lab: labs.Lab) -> None:
    contracts = {lab.solution_dir / f for f in lab.manifest.student_files}
    for folder in (lab.solution_dir, lab.assignment_dir, lab.hidden_tests_dir):
        for p in sorted(folder.rglob("*.py")) if folder.is_dir() else ():
            if p in contracts or "__pycache__" in p.parts:
                continue
            text = p.read_text(encoding="utf-8")
            try:
                comments = _comment_lines(text, p)
            except MarkerError:  # not Python: every line counts
                comments = dict(enumerate(text.splitlines(), 1))
            for n, line in comments.items():
                if _LOOKS_LIKE_A_MARKER.match(line.strip()):
                    raise MarkerError(f"{p.relative_to(lab.root)}:{n}: a solution marker in a file that is "
                                      f"not a contract (lab.toml student_files: {', '.join(lab.manifest.student_files)})")


def generate(lab: labs.Lab) -> dict[Path, str]:
    """assignments/<lab>/<file> -> its stub text, for every student file (none without a reference)."""
    if not lab.has_solutions:
        return {}
    _check_no_markers_elsewhere(lab)
    out = {}
    for f in lab.manifest.student_files:
        ref = lab.solution_dir / f
        out[lab.assignment_dir / f] = stub_text(ref.read_text(encoding="utf-8"), ref.relative_to(lab.root))
    return out


def texts(lab: labs.Lab) -> dict[str, str]:
    """Student file name -> its stub text (see :func:`generate`)."""
    return {p.name: text for p, text in generate(lab).items()}


def drift(lab: labs.Lab) -> list[str]:
    """The stubs on disk (paths relative to the root) that are missing or differ from their reference's."""
    return [str(p.relative_to(lab.root)) for p, text in generate(lab).items()
            if not p.is_file() or p.read_text(encoding="utf-8") != text]


def write(lab: labs.Lab) -> list[Path]:
    """Write the stubs that are missing or differ from their reference's; return the paths written."""
    written = []
    for p, text in generate(lab).items():
        if not p.is_file() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
            written.append(p)
    return written
