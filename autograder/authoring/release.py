"""The student bundle: what ``autograder release`` writes.

What ships: each lab's assignment folder (lab.toml without its variants,
stubs, support files, notebooks, public tests and their snapshots), the
course file, ``environment.yml``, ``requirements.lock``, a ``pyproject.toml``
and a README for the bundle (its text is in the course file), and the
student-side folders of the engine: ``core/``, ``calls/``, ``sandbox/``
(``check --sandbox``), ``labkit/`` and ``grading/``, with the CLI and the two
student commands.  Never ``batch/``, ``authoring/`` or another command, and
nothing from ``solutions/``, ``tests/``, ``examples/`` or ``benchmarks/``.

The notebooks are built from their sources as the bundle is (never copied
from disk), with the bundle's address written into their first cell: the
course file's ``[bundle] url`` unless ``bundle_url`` says otherwise
(:mod:`autograder.authoring.notebooks`).  :func:`write_zip` packs a bundle folder
into the zip that address serves: its files at the zip's root, so that it
unpacks into ``iron-law-labs/`` as the notebooks' first cell does it.

The bundle is built in a temporary folder beside its target, scanned by
:mod:`autograder.authoring.leakscan`, and moved into place only when clean.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import tomllib
from pathlib import Path

import autograder
from autograder.authoring import catalogs, leakscan, notebooks
from autograder.core import chapter, course, files as core_files, i18n, labs, stubs
from autograder.core.files import shipped_files

PACKAGE = "autograder"
STUDENT_FOLDERS = ("core", "calls", "sandbox", "labkit", "grading")
STUDENT_MODULES = ("__init__.py", "__main__.py", "cli.py",
                   "commands/__init__.py", "commands/check.py", "commands/submit.py")
TOP_FILES = ("environment.yml", "requirements.lock", f"assignments/{course.FILE}", f"assignments/{chapter.FILE}")
LICENSE = "LICENSE"  # the project's, where it has one: the bundle is a copy of its files
NOTEBOOK_SOURCE = ".nb.py"  # the notebooks ship built, one per language (autograder.authoring.notebooks)


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def student_manifest(text: str) -> str:
    """lab.toml without its [[variants]] tables and their sub-tables ([[variants.edits]]):
    they name the mistakes the hidden tests look for.  Checked by parsing both."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        header = line.strip()
        if header.startswith("["):
            name = header.split("#", 1)[0].strip().strip("[]").strip()
            skipping = name == "variants" or name.startswith("variants.")
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
autograder = "autograder.cli:run"

[project.entry-points.pytest11]
autograder = "autograder.labkit.plugin"

[tool.setuptools.packages.find]
include = ["autograder*"]

[tool.setuptools.package-data]
autograder = ["core/locale/*.po"]

[tool.pytest.ini_options]
testpaths = ["assignments"]
addopts = "-ra --strict-markers --import-mode=importlib"
"""


def _readme(root: Path, all_labs: list[labs.Lab]) -> str:
    rows = "\n".join(f"| {l.short} | `assignments/{l.name}` | {l.manifest.title} | "
                     f"{', '.join(f'`{f}`' for f in l.manifest.student_files)} |" for l in all_labs)
    return course.load(root).readme.format(rows=rows)


def engine_files(package_dir: Path) -> dict[str, Path]:
    """The student half of the engine, by folder: bundle name -> file."""
    files = {}
    for folder in STUDENT_FOLDERS:
        files.update(shipped_files(package_dir / folder, package_dir.parent))
    for name in STUDENT_MODULES:
        files[f"{PACKAGE}/{name}"] = package_dir / name
    return files


def _built_notebooks(lab: labs.Lab, bundle_url: str | None) -> dict[Path, str]:
    """The lab's notebooks (where it has a source), built now with ``bundle_url`` in their first cell."""
    source = notebooks.source_path(lab.assignment_dir, lab.name)
    if not source.is_file():
        return {}
    return {notebooks.notebook_path(lab.assignment_dir, lab.name, lang): notebooks.render(source, lang, bundle_url)
            for lang in notebooks.LANGS}


def build(root: Path, dest: Path, bundle_url: str | None = None, only: list[str] | None = None) -> list[str]:
    """Write the bundle into ``dest`` (an empty folder); returns its files, sorted.
    ``bundle_url``: where its notebooks download it from (default: the course file's).
    ``only``: the labs to ship (names as ``labs.get`` takes them: a course that hands out one
    lab at a time); every lab when None."""
    all_labs = [labs.get(name, root) for name in only] if only else labs.all_labs(root)
    for lab in all_labs:
        generated = stubs.generate(lab)  # the stubs from their reference, never a file on disk that may be stale
        generated.update(_built_notebooks(lab, bundle_url))  # so are the notebooks, from their source
        for rel, src in shipped_files(lab.assignment_dir, root).items():
            if src.name.endswith(NOTEBOOK_SOURCE) or src in generated:
                continue
            _copy(src, dest / rel)
            if src.name == "lab.toml":
                (dest / rel).write_text(student_manifest(src.read_text()), encoding="utf-8")
        for src, text in generated.items():
            (dest / src.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
            (dest / src.relative_to(root)).write_text(text, encoding="utf-8")
        for po in sorted((lab.assignment_dir / i18n.LAB_LOCALE).glob("*.po")):  # after the tests are in place
            (dest / po.relative_to(root)).write_bytes(
                catalogs.student_subset(po, lab, dest / lab.assignment_dir.relative_to(root)))
    for name, src in engine_files(Path(autograder.__file__).resolve().parent).items():
        _copy(src, dest / name)
    for name in TOP_FILES:
        _copy(root / name, dest / name)
    if (root / LICENSE).is_file():
        _copy(root / LICENSE, dest / LICENSE)
    (dest / "pyproject.toml").write_text(_pyproject(root), encoding="utf-8")
    (dest / "README.md").write_text(_readme(root, all_labs), encoding="utf-8")
    return sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())


def write_zip(folder: Path, dest: Path) -> Path:
    """The bundle in ``folder`` as one reproducible zip, its files at the root (no top folder):
    what the notebooks' first cell downloads and unpacks into ``iron-law-labs/``."""
    names = sorted(p for p in folder.rglob("*") if p.is_file())
    return core_files.write_zip(dest, {p.relative_to(folder).as_posix(): p.read_bytes() for p in names})


def release(root: Path, target: Path, bundle_url: str | None = None, only: list[str] | None = None) -> list:
    """Build the bundle beside ``target``, scan it and move it into place when
    clean.  Returns the leak findings (empty: released); a refused release
    leaves nothing behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))  # same disk: the move is a rename
    try:
        build(root, tmp, bundle_url, only)
        findings = leakscan.scan(leakscan.read_tree(tmp), leakscan.collect_secrets(root))
        if not findings:
            if target.exists():
                target.rmdir()
            tmp.rename(target)
        return findings
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
