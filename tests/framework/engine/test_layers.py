"""The engine's folders are layers (docs/architecture.md): a module imports only from its own
folder or from a folder below it, and no two modules import each other, however indirectly.

Every import counts, a lazy one inside a function too: a lazy import still ties the two
modules together, and a student bundle that ships the lower one without the upper one breaks
only when that function runs.  Read from the source with ``ast``, so nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import autograder

PACKAGE = Path(autograder.__file__).parent

# Lowest first.  authoring/ makes the course's artefacts from the reference, and some of them
# carry batch/'s pieces (the Gradescope runner's scripts, the demo notebooks' filled answers).
LAYERS = {
    "core": 0,
    "calls": 1,
    "sandbox": 2,
    "labkit": 3,
    "grading": 4,
    "batch": 5,
    "authoring": 6,
    "commands": 7,
    "": 8,  # the modules at the package's top: cli.py, __main__.py
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The engine modules ``name`` imports, anywhere in its source (``from a import b`` counts
    ``a.b`` where that is a module, else ``a``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def layer(name: str) -> str | None:
    """The folder of ``autograder/`` that ``name`` is in: "" for a module at the top, None for
    the package itself."""
    parts = name.split(".")
    if len(parts) == 1:
        return None
    return parts[1] if (PACKAGE / parts[1]).is_dir() else ""


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


def test_every_folder_is_a_known_layer():
    folders = {layer(name) for name in modules()} - {None}
    assert folders <= set(LAYERS), f"a folder of autograder/ has no place in LAYERS: {sorted(folders - set(LAYERS))}"


def test_no_module_imports_a_higher_layer():
    upward = []
    for name, targets in graph().items():
        here = layer(name)
        for target in targets:
            there = layer(target)
            if here is None or there is None or there == here:
                continue
            if LAYERS[there] >= LAYERS[here]:
                upward.append(f"{name} -> {target}")
    assert not upward, "imports from a folder to one at its level or above:\n" + "\n".join(sorted(upward))


def test_no_import_circle():
    g = graph()
    # A package's __init__ importing its own modules is how Python packages work, not a circle
    # of logic: leave those edges out (the modules themselves never import their package's
    # __init__ for anything but what it re-exports, which the edge back would then show).
    edges = {a: {b for b in bs if not b.startswith(a + ".")} for a, bs in g.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:  # depth-first; the engine's graph is a few hundred nodes
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                circles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not circles, "modules that import each other:\n" + "\n".join(circles)
