"""What a lab notebook needs from the engine: set itself up, find the lab, run one
question's public tests.

The first cell of every notebook (``assignments/notebook_setup.py``) imports
this module as soon as the lab bundle is on ``sys.path``, before anything is
installed: at import time it needs only the standard library and the engine's
standard-library modules (``core.files``, ``core.i18n``, ``core.labs``);
pytest, numpy and otter are imported where they are used.  The cell then calls

* :func:`install_missing`: pip installs what this Python lacks of what a student
  needs (the bundle's ``dependencies`` and ``[student]`` extra, then otter-grader
  and fica without their dependencies: :data:`NO_DEPS`), pinned by the bundle's
  ``requirements.lock``, and nothing that is already there: on Colab, whose
  numpy and torch stay as they are, a few small packages;
* :func:`locate_bundle`: goes to the lab's folder;
* :func:`checker`: otter's ``grader``, with IPython's autoreload on, so each
  cell runs the student's current code.

``grader.check("q")`` then runs otter's test file ``otter_tests/q.py``
(written by ``autograder otter-tests LAB``), and that file only calls
:func:`check` here: the public pytest tests stay the one source of truth, and
otter shows their failure messages.  Everything runs in the notebook's own
process, like ``autograder check``: fine for feedback, never for trusted grades.

Nothing here imports torch at import time: the notebook's first cell imports
this module before the lab sets its thread count.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from importlib import metadata
from pathlib import Path

from autograder.core import files, labs
from autograder.core.i18n import N_, _

BUNDLE_DIR = "iron-law-labs"  # the folder name the instructions below tell students to use
STUDENT_EXTRA = "student"  # pyproject.toml's extra of what a student's notebook and CLI import
# Installed without their dependencies: those serve otter's own grading and assignment tools (Sphinx,
# playwright, jupytext, docker's client), never a student's grader.check; what otter.Notebook does import
# is in the [student] extra.
NO_DEPS = ("otter-grader", "fica")
INSTALL_HELP = N_("""\
Cannot find the files of {lab} ({module}.py and its lab.toml).
Open this notebook from the folder assignments/{lab}/ of the lab bundle, or:
  * set the environment variable IRONLAW_ROOT to the bundle's folder (the one holding assignments/), or
  * put the bundle in a folder named {bundle} next to this notebook. On Colab, for example, upload the
    bundle zip your course gave you (iron-law-labs.zip) and run in a cell:
      !unzip -q iron-law-labs.zip -d {bundle}
Then run this cell again: it installs what is missing.""")
INSTALLED = N_("Installed in {seconds} s: {names}, with what they need.")
PIP_FAILED = N_("""\
Installing what this notebook needs did not work (pip stopped with exit code {code}):
{output}
Fix what pip says (on Colab, most often: no internet connection) and run this cell again. \
It runs these commands:
{commands}""")
OTTER_MISSING = N_("""\
{name} is missing: grader.check needs it. Install what a student needs; in a terminal, in the folder of the \
lab bundle:
  python -m pip install -c requirements.lock -e ".[student]"
  python -m pip install -c requirements.lock --no-deps {no_deps}
Then restart the kernel and run this cell again.""")


def _say(template: str, **fields) -> str:
    """``_(template)`` filled in; in English while Babel (which reads the catalogs) is not installed yet."""
    try:
        text = _(template)
    except ImportError:
        text = template
    return text.format(**fields)


# -- installing what is missing --------------------------------------------------------
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def canonical(name: str) -> str:
    """A distribution's name as pip compares them: ``PyYAML`` and ``pyyaml``, ``typing_extensions``
    and ``typing-extensions`` are the same."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed() -> set[str]:
    """The canonical names of the distributions this Python can import from."""
    return {canonical(d.metadata["Name"]) for d in metadata.distributions() if d.metadata["Name"]}


def requirements(root: Path) -> tuple[list[str], list[str]]:
    """``(with their dependencies, without)``: the names of what a student needs, from the
    bundle's ``pyproject.toml``: its dependencies and ``[student]`` extra, then :data:`NO_DEPS`."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = project.get("dependencies", []) + project.get("optional-dependencies", {}).get(STUDENT_EXTRA, [])
    names = [m.group(0) for r in wanted if (m := _NAME.match(r.strip()))]
    return [n for n in names if canonical(n) not in map(canonical, NO_DEPS)], list(NO_DEPS)


def constraints(lock: Path, have: set[str]) -> str:
    """The lines of ``requirements.lock`` that pin a distribution not installed here: what pip
    adds is pinned, and what is installed (Colab's numpy and torch) stays as it is."""
    keep = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        pin = line.split("#", 1)[0].strip()
        if "==" in pin and canonical(pin.split("==", 1)[0]) not in have:
            keep.append(pin)
    return "".join(f"{p}\n" for p in keep)


def missing(root: Path, have: set[str] | None = None) -> tuple[list[str], list[str]]:
    """:func:`requirements` less what is installed (``have``: default, what this Python has)."""
    have = installed() if have is None else have
    deps, bare = requirements(root)
    return [n for n in deps if canonical(n) not in have], [n for n in bare if canonical(n) not in have]


def install_commands(root: Path, have: set[str] | None = None) -> list[list[str]]:
    """The pip commands that install what this Python lacks (none when nothing is missing)."""
    have = installed() if have is None else have
    deps, bare = missing(root, have)
    if not deps and not bare:
        return []
    pip = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    lock = root / "requirements.lock"
    if lock.is_file():
        # Kept while this process lives (a failed install prints commands that use it), then gone:
        # removed at exit, at once after an install that worked (install_missing), and, when the
        # process was killed, by the next run (files.sweep_stale: its name says whose it is).
        fd, pins = tempfile.mkstemp(prefix=files.owned_name("constraints"), suffix=".txt")
        atexit.register(_remove, pins)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(constraints(lock, have))
        pip += ["-c", pins]
    return ([pip + deps] if deps else []) + ([pip + ["--no-deps", *bare]] if bare else [])


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def bundle_root() -> Path:
    """The folder this engine came from: the lab bundle (or the repository), which holds
    ``pyproject.toml`` and ``requirements.lock``."""
    return Path(__file__).resolve().parents[2]


def install_missing(root: Path | None = None) -> list[str]:
    """Install (pip, into this Python) what it lacks of what a student needs; returns what was
    installed.  Nothing runs when nothing is missing, or where no ``pyproject.toml`` says what
    is needed (an engine installed elsewhere, otter's grading folder)."""
    root = Path(root) if root else bundle_root()
    if not (root / "pyproject.toml").is_file():
        return []
    have = installed()
    names = [n for group in missing(root, have) for n in group]
    if not names:
        return []
    files.sweep_stale()  # what killed kernels left: their constraints files
    commands = install_commands(root, have)
    print("pip install " + " ".join(names), flush=True)  # before Babel is here: no message to translate
    t0 = time.monotonic()
    for cmd in commands:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            shown = "\n".join(" ".join(f'"{a}"' if " " in a else a for a in c) for c in commands)
            raise RuntimeError(_say(PIP_FAILED, code=proc.returncode, output=(proc.stdout + proc.stderr)[-3000:].strip(),
                                    commands=shown))
    for cmd in commands:  # installed: the commands are not shown, their constraints file goes
        if "-c" in cmd:
            _remove(cmd[cmd.index("-c") + 1])
    importlib.invalidate_caches()  # the new packages' folders appeared after Python listed site-packages
    print(_say(INSTALLED, seconds=round(time.monotonic() - t0), names=", ".join(names)))
    return names


# -- finding the lab's folder ------------------------------------------------------
def candidate_dirs(lab: str, cwd: Path, environ) -> list[Path]:
    """Where a lab's folder may be, in order of preference."""
    roots = [Path(environ["IRONLAW_ROOT"])] if environ.get("IRONLAW_ROOT") else []
    roots += [cwd / BUNDLE_DIR, cwd.parent / BUNDLE_DIR, cwd.parent.parent]
    roots.append(bundle_root())  # the bundle this package was installed from
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


# -- the checker -----------------------------------------------------------------------
def autoreload() -> bool:
    """In IPython, reload every edited module before each cell runs (``%autoreload 2``), so
    a cell calls the student's current code without a kernel restart.  False elsewhere."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    if "autoreload" not in shell.extension_manager.loaded:
        shell.run_line_magic("load_ext", "autoreload")
    shell.run_line_magic("autoreload", "2")
    return True


def checker(tests_dir: str = "otter_tests"):
    """otter's ``grader`` for the lab's folder (the current one, after :func:`locate_bundle`),
    with :func:`autoreload` on, its results in the notebook's language (``grading.checker``)."""
    autoreload()
    try:
        import otter
    except ImportError as exc:
        raise ImportError(_(OTTER_MISSING).format(name=exc.name, no_deps=" ".join(NO_DEPS))) from None
    from autograder.grading.checker import Grader

    return Grader(otter.Notebook(tests_dir=tests_dir))


# -- one question's public tests ------------------------------------------------------
def _one_question(question: str):
    """A pytest plugin that keeps only the public tests of ``question`` and records how many
    there are (made here: pytest is imported when a check runs, not with this module)."""
    import pytest

    from autograder.labkit import plugin

    class OneQuestion:
        def __init__(self):
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

    return OneQuestion()


def _plugin_args() -> list[str]:
    """``-p autograder.labkit.plugin`` when the package is only on sys.path, not installed
    (then pytest does not load it from the entry point)."""
    from importlib.metadata import entry_points

    installed = any(ep.value == "autograder.labkit.plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "autograder.labkit.plugin"]


def run_question(lab_name: str, question: str, code_dir: Path, root: Path | None = None):
    """``(results, selected)``: the public tests of ``question`` run in this process on
    the files in ``code_dir``.  ``root`` holds ``assignments/`` (default: found from here)."""
    import pytest

    root = Path(root).resolve() if root else labs.find_root()
    lab = labs.get(lab_name, root)
    if question not in {q.id for q in lab.manifest.questions}:
        raise KeyError(f"{lab.name} has no question {question!r}")
    picker = _one_question(question)
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
    from autograder.calls import errors, loader

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
    from autograder.core.results import PASSED

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
