"""Otter-grader test files and autograder zips, generated from the public tests.

One otter test file per question (exception-based format); each only calls
:func:`autograder.grading.notebook.check`, so the public pytest tests stay the one
source of truth and a question's otter points are its public tests' points.
``tests/framework/content/test_otter.py`` fails when the committed files drift from
what :func:`test_files` produces.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
import zipfile
from pathlib import Path

import pytest

from autograder.core import labs
from autograder.labkit import plugin
from autograder.core.files import write_zip

TESTS_DIR = "otter_tests"  # beside the notebook: grader = otter.Notebook(tests_dir="otter_tests")
ZIP_LAB_ROOT = "tests/ironlaw"  # in the otter zip: otter copies tests/ over anything a submission holds
OTTER_CONFIG = {"lang": "python", "show_stdout": False}

TEMPLATE = '''\
"""Otter test for question {question!r} of {lab}: runs its public tests
(assignments/{lab}/tests) on the files in the notebook's folder.

Written by `autograder otter-tests {short}`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = {question!r}


@test_case(name="public tests", points={points:g})
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


def test_files(lab: labs.Lab, root: str | None = None) -> dict[str, str]:
    """File name -> source of each question's otter test.  ``root``: where the
    lab material lies at grading, relative to otter's working folder."""
    root_arg = f", root={root!r}" if root else ""
    return {f"{q}.py": TEMPLATE.format(question=q, lab=lab.name, short=lab.short, points=pts, root=root_arg)
            for q, pts in public_points(lab).items()}


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


def _otter_scaffold() -> dict[str, bytes]:
    """otter generate's own files (setup.sh, run_autograder, environment.yml, ...), tests aside."""
    from otter.generate import main as otter_generate

    with tempfile.TemporaryDirectory(prefix="ironlaw-otter-") as tmp:
        config = Path(tmp) / "otter_config.json"
        config.write_text(json.dumps(OTTER_CONFIG))
        out = Path(tmp) / "scaffold.zip"
        otter_generate(tests_dir=str(Path(tmp) / "none"), output_path=str(out), config=str(config),
                       no_requirements=True, no_environment=True, python_version="3.11")
        with zipfile.ZipFile(out) as z:
            return {n: z.read(n) for n in z.namelist() if not n.endswith("/")}


def zip_files(lab: labs.Lab) -> dict[str, bytes | str]:
    """Everything in the otter autograder zip of ``lab``.

    ``tests/<q>.py``: the otter tests, pointed at ``tests/ironlaw``, which holds
    the lab's manifest, support modules and public tests (otter replaces a
    submission's ``tests/`` with these).  ``files/``: the support modules the
    notebook imports, copied next to the submitted notebook.  The student's own
    modules come in the submission zip, next to the notebook.
    """
    files: dict[str, bytes | str] = dict(_otter_scaffold())
    for name, text in test_files(lab, root=ZIP_LAB_ROOT).items():
        files[f"tests/{name}"] = text
    m = lab.manifest
    material = ["lab.toml", *m.support_files]
    material += [p.relative_to(lab.assignment_dir).as_posix() for p in sorted(lab.public_tests_dir.rglob("*"))
                 if p.is_file() and "__pycache__" not in p.parts]
    for rel in material:
        files[f"{ZIP_LAB_ROOT}/assignments/{lab.name}/{rel}"] = (lab.assignment_dir / rel).read_bytes()
    for f in m.support_files:
        files[f"files/{f}"] = (lab.assignment_dir / f).read_bytes()
    return files


def build_zip(lab: labs.Lab, dest: Path) -> Path:
    return write_zip(dest, zip_files(lab), executable=frozenset({"run_autograder", "setup.sh"}))
