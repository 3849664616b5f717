"""What a lab notebook needs from the engine: find the lab, run one question's public tests.

``grader.check("q")`` in a notebook runs otter's test file ``otter_tests/q.py``
(written by ``autograder otter-tests LAB``), and that file only calls
:func:`check` here: the public pytest tests stay the one source of truth, and
otter shows their failure messages.  Everything runs in the notebook's own
process, like ``autograder check``: fine for feedback, never for trusted grades.

Nothing here imports torch at import time: the notebook's first cell imports
this module before the lab sets its thread count.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import pytest

from autograder.calls import errors, loader
from autograder.core import files, labs
from autograder.labkit import plugin
from autograder.core.i18n import N_, _
from autograder.core.results import PASSED

BUNDLE_DIR = "iron-law-labs"  # the folder name the instructions below tell students to use
INSTALL_HELP = N_("""\
Cannot find the files of {lab} ({module}.py and its lab.toml).
Open this notebook from the folder assignments/{lab}/ of the lab bundle, or:
  * set the environment variable IRONLAW_ROOT to the bundle's folder (the one holding assignments/), or
  * put the bundle in a folder named {bundle} next to this notebook. On Colab, for example:
      !unzip -q iron-law-labs.zip -d {bundle}            # the bundle zip your course gave you
      !pip install -q -c {bundle}/requirements.lock -e {bundle}
    or: !git clone <your course's repository URL> {bundle}
Then run this cell again.""")


# -- finding the lab's folder ------------------------------------------------------
def candidate_dirs(lab: str, cwd: Path, environ) -> list[Path]:
    """Where a lab's folder may be, in order of preference."""
    roots = [Path(environ["IRONLAW_ROOT"])] if environ.get("IRONLAW_ROOT") else []
    roots += [cwd / BUNDLE_DIR, cwd.parent / BUNDLE_DIR, cwd.parent.parent]
    roots.append(Path(__file__).resolve().parents[2])  # the bundle this package was installed from
    return [r / "assignments" / lab for r in roots]


def find_lab_dir(lab: str, module: str, cwd: Path | None = None, environ=None) -> Path | None:
    """The folder to work in: the current one if ``module.py`` is here (a lab folder,
    or otter's grading folder), else the first candidate holding the lab."""
    cwd = Path(cwd or Path.cwd())
    if (cwd / f"{module}.py").is_file():
        return cwd
    for d in candidate_dirs(lab, cwd, os.environ if environ is None else environ):
        if (d / "lab.toml").is_file() and (d / f"{module}.py").is_file():
            return d.resolve()
    return None


def locate_bundle(lab: str, module: str) -> Path:
    """Make ``import <module>`` and ``grader.check`` work: change to the lab's folder.

    Raises FileNotFoundError with install instructions when there is none.
    """
    found = find_lab_dir(lab, module)
    if found is None:
        raise FileNotFoundError(_(INSTALL_HELP).format(lab=lab, module=module, bundle=BUNDLE_DIR))
    if found != Path.cwd().resolve():
        os.chdir(found)
        print(_("working in {folder}").format(folder=found))
    if str(found) not in sys.path:  # Jupyter has "" on the path; a script may not
        sys.path.insert(0, str(found))
    return found


# -- one question's public tests ------------------------------------------------------
class _OneQuestion:
    """Keeps only the public tests of one question; records how many there are."""

    def __init__(self, question: str):
        self.question = question
        self.selected = 0
        self.results = []

    @pytest.hookimpl(trylast=True)  # after the plugin has read the question markers
    def pytest_collection_modifyitems(self, config, items):
        keep = [i for i in items if (info := i.stash.get(plugin.ITEM, None)) and info.public
                and info.question == self.question]
        drop = [i for i in items if i not in keep]
        items[:] = keep
        self.selected = len(keep)
        if drop:
            config.hook.pytest_deselected(items=drop)

    def pytest_sessionfinish(self, session):
        self.results = plugin.collected_results(session.config)


def _plugin_args() -> list[str]:
    """``-p autograder.labkit.plugin`` when the package is only on sys.path, not installed
    (then pytest does not load it from the entry point)."""
    from importlib.metadata import entry_points

    installed = any(ep.value == "autograder.labkit.plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "autograder.labkit.plugin"]


def run_question(lab_name: str, question: str, code_dir: Path, root: Path | None = None):
    """``(results, selected)``: the public tests of ``question`` run in this process on
    the files in ``code_dir``.  ``root`` holds ``assignments/`` (default: found from here)."""
    root = Path(root).resolve() if root else labs.find_root()
    lab = labs.get(lab_name, root)
    if question not in {q.id for q in lab.manifest.questions}:
        raise KeyError(f"{lab.name} has no question {question!r}")
    picker = _OneQuestion(question)
    out = io.StringIO()
    # the plugin finds the lab of each test file from IRONLAW_ROOT
    with files.scoped_environ(**{labs.ROOT_ENV: str(root)}), contextlib.redirect_stdout(out):
        code = pytest.main([str(lab.public_tests_dir), "--submission", str(Path(code_dir).resolve()),
                            *_plugin_args(), "-p", "no:cacheprovider", "--import-mode=importlib",
                            "--capture=sys", "-qq", "--no-header", "--tb=no", "-rN",
                            "--rootdir", str(root)], plugins=[picker])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED):
        raise RuntimeError(f"the public tests of {lab.name} could not run (pytest exit {int(code)}):\n"
                           f"{out.getvalue()[-3000:]}")
    return picker.results, picker.selected


def _import_check(lab_name: str, code_dir: Path, root: Path | None) -> None:
    """For a question without public tests: the student's files at least import."""
    lab = labs.get(lab_name, Path(root).resolve() if root else None)
    m = lab.manifest
    try:
        loader.load_modules(Path(code_dir), m.student_files, lab.assignment_dir, m.support_files)
    except errors.StudentCodeError as exc:
        raise AssertionError(exc.message + (f"\n{exc.traceback}" if exc.traceback else "")) from None
    print(_("This question has no public test; your files import. Hidden tests check it at grading."))


def check(lab_name: str, question: str, code_dir: str | Path | None = None, root: str | Path | None = None) -> None:
    """Raise AssertionError with the public tests' messages unless all of them pass.

    ``code_dir``: the student's files (default: the current folder, i.e. the
    notebook's).  Called by the generated otter test files.
    """
    code_dir = Path(code_dir or Path.cwd())
    tests, selected = run_question(lab_name, question, code_dir, Path(root) if root else None)
    if not selected:
        return _import_check(lab_name, code_dir, root)
    failed = [t for t in tests if t.status != PASSED]
    passed = len(tests) - len(failed)
    if passed < selected:
        lines = [_("{failed} of {total} public tests of {question} failed.").format(
            failed=selected - passed, total=selected, question=repr(question))]
        lines += [f"\n{t.name}:\n{t.feedback}" for t in failed]
        raise AssertionError("\n".join(lines))
