"""``autograder release --out DIR``: the student bundle.

What ships: each lab's assignment folder (lab.toml, stubs, support files,
notebook, public tests and their snapshots), ``environment.yml``,
``requirements.lock``, a ``pyproject.toml`` and a README for the bundle, and
the student half of the engine.  That half is found by following imports
from the student commands, the pytest plugin and the lab files, so a module
only the grader needs never ships, and a new helper of ``check`` always does.
Nothing from ``solutions/``, ``tests/``, ``examples/`` or ``benchmarks/``.

The bundle is built in a temporary folder beside DIR, scanned by
:mod:`autograder.build.leakscan`, and moved into place only when clean: a refused
release leaves nothing behind.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

import autograder
from autograder.build import catalogs, leakscan
from autograder import cli
from autograder.core import i18n, labs

PACKAGE = "autograder"
STUDENT_COMMANDS = ("check", "submit")
ENTRY_MODULES = (
    "autograder.__main__",  # python -m autograder
    "autograder.labkit.plugin",  # the pytest11 entry point the lab tests run under
    "autograder.sandbox.zygote",  # started as `python -m`, never imported
)
SKIP_PARTS = {"__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".OTTER_LOG"}  # .OTTER_LOG: otter's local log
TOP_FILES = ("environment.yml", "requirements.lock")
NOTEBOOK_SOURCE = ".nb.py"  # the notebooks ship built, one per language (autograder.build.notebooks)

STUDENT_README = """\
# Iron Law Labs: student copy

Labs for the **Model Training** chapter of *Machine Learning Systems*
(MLSysBook, Vol. I, Ch. 8). Everything runs on a CPU.

| lab | folder | title | you hand in |
|---|---|---|---|
{rows}

## Install (Python 3.11)

```bash
python3 -m venv .venv
.venv/bin/pip install -c requirements.lock -e ".[dev]"
```

The first command makes a virtual environment, the second installs the
pinned dependencies (`[dev]` adds the Jupyter kernel for the notebooks) and
the `autograder` command. (With conda: `conda env create -f environment.yml`, then
`pip install --no-deps -e .` inside it.)

## Work on a lab

Open the notebook in `assignments/<lab>/` and fill in the functions of the
stub modules that raise `NotImplementedError`. Their docstrings state every
convention the tests rely on.

```bash
.venv/bin/autograder check lab2                  # public tests on assignments/lab2_...
.venv/bin/autograder check lab2 --path ~/mywork  # ... on another folder
.venv/bin/autograder submit lab2                 # writes lab2_...-submission.zip here
```

`check` prints a table of questions with points, then what failed and the
part of the traceback that is in your own code.

`submit` runs the public tests first and warns if some fail. It then writes a
zip that holds exactly your declared files and a `MANIFEST.json` with their
sizes and SHA-256 hashes. Upload that zip.

The public tests are a sample: hidden tests run at grading. They check your
code on fresh inputs, and each question's points come from both.

Each lab has its notebook in English (`<lab>.ipynb`) and in Vietnamese
(`<lab>.vi.ipynb`). `check` and `submit` speak Vietnamese with `--lang vi`,
or with `IRONLAW_LANG=vi` set (the locale decides otherwise).

## Tiếng Việt

Các bài lab cho chương **Huấn luyện mô hình** của *Machine Learning Systems*
(MLSysBook, Tập I, Chương 8). Mọi thứ chạy trên CPU, không cần GPU.

Cài đặt (Python 3.11), hai lệnh:

```bash
python3 -m venv .venv
.venv/bin/pip install -c requirements.lock -e ".[dev]"
```

Mỗi bài lab có sổ tay thực hành tiếng Việt `assignments/<lab>/<lab>.vi.ipynb`.
Hãy cài đặt các hàm đang báo `NotImplementedError` trong các tệp khung; docstring
của chúng (tiếng Anh, kèm phần "Tóm tắt (tiếng Việt)") ghi mọi quy ước mà bài
kiểm thử dựa vào.

```bash
.venv/bin/autograder check lab2 --lang vi    # chạy bài kiểm thử công khai, thông báo bằng tiếng Việt
.venv/bin/autograder submit lab2 --lang vi   # tạo tệp zip để nộp
```

Đặt `IRONLAW_LANG=vi` để mọi thông báo (kể cả `grader.check` trong sổ tay) là
tiếng Việt. Bài kiểm thử công khai chỉ là một phần: các bài kiểm thử ẩn sẽ chạy
khi chấm điểm.
"""


# -- the student half of the engine ----------------------------------------------
def _code(path: Path) -> list[str]:
    """The Python source of a module, or of each code cell of a notebook (magics dropped)."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix != ".ipynb":
            return [text]
        cells = json.loads(text).get("cells", [])
    except (UnicodeDecodeError, ValueError, AttributeError):
        return []
    sources = ("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")
    return ["\n".join(l for l in src.splitlines() if not l.lstrip().startswith(("%", "!"))) for src in sources]


def _imports(path: Path) -> set[str]:
    """Dotted names of the autograder modules (or attributes) a file imports, lazily too."""
    names: set[str] = set()
    for code in _code(path):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {n for n in names if n.split(".")[0] == PACKAGE}


def _source(package_dir: Path, name: str) -> Path | None:
    """The file that defines module ``name``; None for an attribute (``from m import fn``)."""
    parts = name.split(".")[1:]
    for path in (package_dir.joinpath(*parts, "__init__.py"),
                 package_dir.joinpath(*parts[:-1], f"{parts[-1]}.py") if parts else None):
        if path is not None and path.is_file():
            return path
    return None


def student_modules(package_dir: Path, lab_files: list[Path]) -> list[Path]:
    """The engine's files that the student commands, the plugin and the lab files
    (modules, tests and notebooks) import, following their imports in turn."""
    todo = [*ENTRY_MODULES, *(cli.COMMANDS[c][0] for c in STUDENT_COMMANDS)]
    todo += sorted({n for f in lab_files for n in _imports(f)})
    seen: set[str] = set()
    files: set[Path] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _source(package_dir, name)
        if path is None:
            continue
        files.add(path)
        parents = [name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)]  # their __init__ runs first
        todo += parents + sorted(_imports(path))
    return sorted(files)


# -- the bundle --------------------------------------------------------------------
def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def student_manifest(text: str) -> str:
    """lab.toml without its [[variants]] tables: their descriptions name the
    mistakes the hidden tests look for.  Checked by parsing both."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        header = line.strip()
        if header.startswith("["):
            skipping = header.startswith("[[variants]]")
        if not skipping:
            out.append(line)
    stripped = "".join(out)
    original = tomllib.loads(text)
    original.pop("variants", None)
    assert tomllib.loads(stripped) == original, "stripping [[variants]] changed other keys"
    return stripped


def _pyproject(root: Path) -> str:
    """The bundle's pyproject: the project's dependencies, the student CLI and plugin."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    deps = ",\n".join(f"    {json.dumps(d)}" for d in project["dependencies"])
    extras = "".join(f"{name} = {json.dumps(reqs)}\n" for name, reqs in project.get("optional-dependencies", {}).items())
    return f"""\
# Iron Law Labs, student copy (written by `autograder release`).
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "iron-law-labs-student"
version = "{autograder.__version__}"
requires-python = {json.dumps(project["requires-python"])}
dependencies = [
{deps},
]

[project.optional-dependencies]
{extras}
[project.scripts]
autograder = "autograder.cli:main"

[project.entry-points.pytest11]
autograder = "autograder.labkit.plugin"

[tool.setuptools.packages.find]
include = ["autograder*"]

[tool.setuptools.package-data]
autograder = ["locale/*.po"]

[tool.pytest.ini_options]
testpaths = ["assignments"]
addopts = "-ra --strict-markers --import-mode=importlib"
"""


def _readme(all_labs: list[labs.Lab]) -> str:
    rows = "\n".join(f"| {l.short} | `assignments/{l.name}` | {l.manifest.title} | "
                     f"{', '.join(f'`{f}`' for f in l.manifest.student_files)} |" for l in all_labs)
    return STUDENT_README.format(rows=rows)


def build(root: Path, dest: Path) -> list[str]:
    """Write the bundle into ``dest`` (an empty folder); returns its files, sorted."""
    all_labs = labs.all_labs(root)
    lab_files: list[Path] = []
    for lab in all_labs:
        for src in sorted(lab.assignment_dir.rglob("*")):
            rel = src.relative_to(root)
            if src.is_file() and not src.is_symlink() and not SKIP_PARTS.intersection(rel.parts) \
                    and not src.name.endswith(NOTEBOOK_SOURCE):
                _copy(src, dest / rel)
                if src.name == "lab.toml":
                    (dest / rel).write_text(student_manifest(src.read_text()), encoding="utf-8")
                if src.suffix in (".py", ".ipynb"):
                    lab_files.append(src)
        for po in sorted((lab.assignment_dir / i18n.LAB_LOCALE).glob("*.po")):  # after the tests are in place
            (dest / po.relative_to(root)).write_bytes(
                catalogs.student_subset(po, lab, dest / lab.assignment_dir.relative_to(root)))
    package_dir = Path(autograder.__file__).resolve().parent
    for src in student_modules(package_dir, lab_files):
        _copy(src, dest / PACKAGE / src.relative_to(package_dir))
    for po in sorted(i18n.ENGINE_LOCALE.glob("*.po")):  # data, not imports: the engine's messages
        _copy(po, dest / PACKAGE / po.relative_to(package_dir))
    for name in TOP_FILES:
        _copy(root / name, dest / name)
    (dest / "pyproject.toml").write_text(_pyproject(root), encoding="utf-8")
    (dest / "README.md").write_text(_readme(all_labs), encoding="utf-8")
    return sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())


def _refuse(message: str, code: int) -> int:
    print(f"autograder release: {message}", file=sys.stderr)
    return code


def main(*, out: str) -> int:
    root = labs.find_root()
    target = Path(out).resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        return _refuse(f"{target} exists and is not an empty folder; remove it or choose another", 2)
    missing = [f for f in (*TOP_FILES, "pyproject.toml") if not (root / f).is_file()]
    if missing:
        return _refuse(f"{root} has no {', '.join(missing)}; the bundle needs them", 2)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))  # same disk: the move is a rename
    try:
        files = build(root, tmp)
        findings = leakscan.scan(leakscan.read_tree(tmp), leakscan.collect_secrets(root))
        if findings:
            return _refuse("\n  ".join([
                f"REFUSED, {len(findings)} leak(s) of reference code or hidden tests; nothing written:",
                *map(str, findings),
                f"A line public on purpose goes in solutions/<lab>/{leakscan.ALLOW_FILE}, with a comment saying why."]), 1)
        if target.exists():
            target.rmdir()
        tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{target}: {len(files)} files for {len(labs.all_labs(root))} labs; leak scan clean")
    return 0
