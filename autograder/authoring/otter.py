"""Otter-grader test files and autograder zips, generated from the public tests.

One otter test file per question the tests score (exception-based format);
each only calls :func:`autograder.grading.notebook.check`, so the public pytest
tests stay the one source of truth.  A question's otter points are its points
in ``lab.toml``, all or none: all when every public test of the question
passes (each lab has one public test per question).  A question without public
tests is worth 0 in otter (``grader.check`` only imports the files then), and
one marked by hand (``manual = true``) has no otter test at all.
``tests/framework/content/test_otter.py`` fails when the committed files drift
from what :func:`test_files` produces.  docs/otter.md says what the zip holds.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

import autograder
from autograder.authoring import release
from autograder.core import chapter, labs
from autograder.core.files import shipped_files, write_zip
from autograder.grading import checker
from autograder.labkit import plugin

TESTS_DIR = "otter_tests"  # beside the notebook: grader = otter.Notebook(tests_dir="otter_tests")
ZIP_LAB_ROOT = "tests/ironlaw"  # in the otter zip: otter copies tests/ over anything a submission holds
ENGINE_DIR = "files"  # otter copies files/ next to the submitted notebook: `import autograder` finds it there
REQUIREMENTS = "requirements.txt"  # in the zip, for `pip install -r` before `otter run` (environment.yml has them too)
OTTER_CONFIG = {
    "lang": "python",
    "show_stdout": False,
    # Every otter test here is public.  By default otter puts a summary row "Public Tests"
    # (no score: NaN NaN in otter run's table) above the questions; these three drop it and
    # keep each question's row visible.
    "show_hidden": True,
    "force_public_test_summary": False,
    "show_all_public": True,
}
# Needed at grading though no module imports it: the labkit plugin puts pytest-timeout's
# `timeout` mark on every test (without it the marks do nothing and no test is timed out).
PLUGIN_REQUIREMENTS = ("pytest-timeout",)
# otter's scaffold installs otter-grader itself (otter-grader[grading,plugins]==<its version>)
PROVIDED = ("otter-grader",)
# Imported only where the platform itself provides it, never installed: Colab's own package
# (google.colab: the notebook's hand-in cell takes the notebook from Colab's editor with it,
# autograder.grading.notebook.submit)
PLATFORM_MODULES = ("google",)

TEMPLATE = '''\
"""Otter test for question {question!r} of {lab}: runs its public tests
(assignments/{lab}/tests) on the files in the notebook's folder; worth
{points:g} point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests {short}`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = {question!r}


@test_case(name={case!r}, points={points:g})
def public_tests():
    from autograder.grading.notebook import check

    check({lab!r}, {question!r}{root})
'''


class _PublicPoints:
    """Sums the points of the public tests of each question, at collection."""

    def __init__(self):
        self.points: dict[str, float] = {}

    @pytest.hookimpl(trylast=True)  # after the plugin has read the question markers
    def pytest_collection_modifyitems(self, items):
        for item in items:
            info = item.stash.get(plugin.ITEM, None)
            if info is not None and info.public:
                self.points[info.question] = self.points.get(info.question, 0.0) + info.points


def public_points(lab: labs.Lab) -> dict[str, float]:
    """Question id -> points of its public tests (0 for a question without any)."""
    collector = _PublicPoints()
    with contextlib.redirect_stdout(io.StringIO()):  # collection lists every file; nobody reads it
        code = pytest.main([str(lab.public_tests_dir), "--collect-only", "-qq", "-p", "no:cacheprovider",
                            "--rootdir", str(lab.root)], plugins=[collector])
    if code != pytest.ExitCode.OK:
        raise RuntimeError(f"collecting the public tests of {lab.name} failed (pytest exit {int(code)})")
    return {q.id: collector.points.get(q.id, 0.0) for q in lab.manifest.questions}


def otter_points(lab: labs.Lab) -> dict[str, float]:
    """Question id -> its otter points, for each question the tests score (none marked by
    hand): its ``lab.toml`` points, or 0 when it has no public test."""
    public = public_points(lab)
    return {q.id: q.points if public[q.id] > 0 else 0.0 for q in lab.manifest.tested}


def test_files(lab: labs.Lab, root: str | None = None) -> dict[str, str]:
    """File name -> source of each question's otter test.  ``root``: where the
    lab material lies at grading, relative to otter's working folder."""
    root_arg = f", root={root!r}" if root else ""
    return {f"{q}.py": TEMPLATE.format(question=q, case=checker.PUBLIC_TESTS, lab=lab.name, short=lab.short, points=pts, root=root_arg)
            for q, pts in otter_points(lab).items()}


def write_test_files(lab: labs.Lab) -> list[Path]:
    """Write ``assignments/<lab>/otter_tests/``; removes files of questions that are gone."""
    folder = lab.assignment_dir / TESTS_DIR
    folder.mkdir(exist_ok=True)
    wanted = test_files(lab)
    for stale in folder.glob("*.py"):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        (folder / name).write_text(text, encoding="utf-8")
    return sorted(folder / n for n in wanted)


# -- what the zip's Python needs ---------------------------------------------------------
def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(root: Path) -> dict[str, str]:
    """requirements.lock: canonical name -> ``name==version`` as the lock spells it."""
    pins = {}
    for line in (root / "requirements.lock").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            pins[_canonical(line.split("==", 1)[0])] = line
    return pins


def top_level_imports(source: str) -> set[str]:
    """The top-level names of every absolute import in ``source``, lazy ones (inside functions) too."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


def _notebook_code(path: Path) -> str:
    """A notebook's code cells as Python (IPython's magics made plain calls)."""
    import nbformat
    from IPython.core.inputtransformer2 import TransformerManager

    nb = nbformat.read(path, as_version=4)
    shell = TransformerManager()
    return "\n".join(shell.transform_cell(c.source) for c in nb.cells if c.cell_type == "code")


def requirements(lab: labs.Lab, python_files: dict[str, bytes | str], torch_index: str | None = None) -> list[str]:
    """The pip requirements of the zip: the distribution of every module that its Python
    files and the lab's notebooks import (engine, lab and pytest plugins aside), pinned by
    requirements.lock; ``torch_index``: an extra index for torch's CPU wheel (first line)."""
    from importlib.metadata import packages_distributions

    local = {Path(n).stem for n in python_files} | {Path(f).stem for f in lab.manifest.student_files}
    local |= {p.stem for p in lab.assignment_dir.rglob("*.py")}
    sources = [t if isinstance(t, str) else t.decode("utf-8") for t in python_files.values()]
    sources += [_notebook_code(lab.assignment_dir / nb) for nb in lab.manifest.notebooks
                if (lab.assignment_dir / nb).is_file()]
    modules = set().union(*map(top_level_imports, sources))
    modules -= set(sys.stdlib_module_names) | local | {"autograder"} | set(PLATFORM_MODULES)
    dists = packages_distributions()
    pins = lock_pins(lab.root)
    names = {_canonical(d) for d in PLUGIN_REQUIREMENTS}
    for m in sorted(modules):
        if m not in dists:
            raise RuntimeError(f"{m!r} is imported by the otter zip of {lab.name} but no installed "
                               f"distribution provides it: install the project with its [dev] extra")
        names.update(_canonical(d) for d in dists[m])
    names -= {_canonical(d) for d in PROVIDED}
    missing = sorted(n for n in names if n not in pins)
    if missing:
        raise RuntimeError(f"requirements.lock pins none of {', '.join(missing)} (needed by the otter zip)")
    return ([f"--extra-index-url {torch_index}"] if torch_index else []) + [pins[n] for n in sorted(names)]


# -- the zip ---------------------------------------------------------------------------------
def _otter_scaffold(reqs: list[str]) -> dict[str, bytes]:
    """otter generate's own files (setup.sh, run_autograder, environment.yml with ``reqs``
    in its pip list, ...), tests aside."""
    from otter.generate import main as otter_generate

    with tempfile.TemporaryDirectory(prefix="ironlaw-otter-") as tmp:
        config = Path(tmp) / "otter_config.json"
        config.write_text(json.dumps(OTTER_CONFIG))
        req_file = Path(tmp) / REQUIREMENTS
        req_file.write_text("".join(f"{r}\n" for r in reqs))
        out = Path(tmp) / "scaffold.zip"
        otter_generate(tests_dir=str(Path(tmp) / "none"), output_path=str(out), config=str(config),
                       requirements=str(req_file), no_environment=True, python_version="3.11")
        with zipfile.ZipFile(out) as z:
            return {n: z.read(n) for n in z.namelist() if not n.endswith("/")}


def _catalogs(lab: labs.Lab, material: dict[str, bytes | str]) -> dict[str, bytes]:
    """``locale/<lang>.po``: the lab's catalogs as the student bundle carries them (only the
    messages of what ships: a notebook in Vietnamese sets $IRONLAW_LANG, and check's
    messages follow it), made by :func:`autograder.authoring.catalogs.student_subset` over the
    zip's lab material and the lab's notebooks."""
    from autograder.authoring import catalogs
    from autograder.core import i18n

    pos = sorted((lab.assignment_dir / i18n.LAB_LOCALE).glob("*.po"))
    if not pos:
        return {}
    with tempfile.TemporaryDirectory(prefix="ironlaw-otter-") as tmp:
        shipped = Path(tmp) / lab.name
        for rel, data in material.items():
            (shipped / rel).parent.mkdir(parents=True, exist_ok=True)
            (shipped / rel).write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        for nb in lab.manifest.notebooks:  # a submission brings one; their messages are the lab's
            if (lab.assignment_dir / nb).is_file():
                (shipped / nb).write_bytes((lab.assignment_dir / nb).read_bytes())
        return {f"{i18n.LAB_LOCALE}/{po.name}": catalogs.student_subset(po, lab, shipped) for po in pos}


def zip_files(lab: labs.Lab, torch_index: str | None = None) -> dict[str, bytes | str]:
    """Everything in the otter autograder zip of ``lab``.

    * ``tests/<q>.py``: the otter tests, pointed at ``tests/ironlaw``, which
      holds the lab's manifest (without its variants, as the student bundle
      has it) beside the chapter's outline (``assignments/chapter.toml``), support modules, public tests and message catalogs (otter
      replaces a submission's ``tests/`` with these);
    * ``files/``: the support modules the notebook imports, and the student
      half of the engine (``autograder/``, the modules ``autograder release``
      ships), copied next to the submitted notebook, where the notebook's
      first cell and the otter tests import it;
    * ``environment.yml`` (otter's, which its grading image installs) and
      ``requirements.txt``: otter-grader and what the zip's Python imports,
      pinned by requirements.lock.

    The student's own modules come in the submission zip, next to the notebook.
    """
    m = lab.manifest
    files: dict[str, bytes | str] = {}
    for name, text in test_files(lab, root=ZIP_LAB_ROOT).items():
        files[f"tests/{name}"] = text
    material = {"lab.toml": release.student_manifest((lab.assignment_dir / "lab.toml").read_text(encoding="utf-8"))}
    material.update({f: (lab.assignment_dir / f).read_bytes() for f in m.support_files})
    material.update({rel: p.read_bytes() for rel, p in
                     shipped_files(lab.public_tests_dir, lab.assignment_dir).items()})
    material.update(_catalogs(lab, material))
    for rel, data in material.items():
        files[f"{ZIP_LAB_ROOT}/assignments/{lab.name}/{rel}"] = data
    # the chapter's outline: the manifest's sections are checked against it, and hints read it
    files[f"{ZIP_LAB_ROOT}/assignments/{chapter.FILE}"] = (lab.root / "assignments" / chapter.FILE).read_bytes()
    for f in m.support_files:
        files[f"{ENGINE_DIR}/{f}"] = (lab.assignment_dir / f).read_bytes()
    for name, src in release.engine_files(Path(autograder.__file__).resolve().parent).items():
        files[f"{ENGINE_DIR}/{name}"] = src.read_bytes()
    reqs = requirements(lab, {n: t for n, t in files.items() if n.endswith(".py")}, torch_index)
    files[REQUIREMENTS] = "".join(f"{r}\n" for r in reqs)
    files.update(_otter_scaffold(reqs))
    return files


def build_zip(lab: labs.Lab, dest: Path, torch_index: str | None = None) -> Path:
    return write_zip(dest, zip_files(lab, torch_index), executable=frozenset({"run_autograder", "setup.sh"}))


def submission_zip(lab: labs.Lab, files: dict[str, str], dest: Path) -> Path:
    """What a student uploads to ``otter run``: the lab's notebook and their modules, side by side
    (the tests, ``benchmarks/otter_vs_gradescope.py``)."""
    contents: dict[str, bytes | str] = {f"{lab.name}.ipynb": (lab.assignment_dir / f"{lab.name}.ipynb").read_bytes()}
    contents.update(files)
    return write_zip(dest, contents)
