"""What a lab notebook needs from the engine: set itself up, find the lab, run one
question's public tests, hand in.

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
* :func:`locate_bundle`: goes to the lab's folder, and on Colab warns when that
  folder is in the session's temporary storage (:func:`discarded`), with the
  two lines that keep it in Google Drive, where the next session finds it;
* :func:`checker`: otter's ``grader``, with IPython's autoreload on, so each
  cell runs the student's current code.

The notebook's last cell (``assignments/notebook_handin.py``, appended by the
build) calls :func:`submit`: the hand-in zip, as ``autograder submit`` writes
it (``autograder.grading.handin``), with this notebook in it.

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
import importlib.util
import io
import json
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
# Colab: the session's files live in /content and go with the session; Google Drive, once mounted, is under
# /content/drive and stays.  The setup cell looks for a bundle kept in Drive first (DRIVE_BUNDLE).
COLAB_CONTENT = Path("/content")
DRIVE_MOUNT = COLAB_CONTENT / "drive"
DRIVE_BUNDLE = DRIVE_MOUNT / "MyDrive" / BUNDLE_DIR
SAVE_TIMEOUT_S = 10  # how long submit waits for Jupyter to save the notebook (otter's save_notebook)
COLAB_TIMEOUT_S = 60  # how long submit waits for Colab to send the notebook's content
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
KEEP_IN_DRIVE = N_("""\
WARNING: this lab's folder, {folder}, is in Colab's temporary storage: Colab deletes it when this session ends, \
and your work in it with it. To keep it in your Google Drive, run these two lines in a new cell (the first asks \
you to let Colab use your Drive):
  from google.colab import drive; drive.mount("{mount}")
  !mkdir -p "{drive}" && cp -rn "{bundle}/." "{drive}/"
Then run this cell again: it works in the copy in your Drive from then on. In a later session, run the first \
line before this cell. (cp -n never replaces a file already in your Drive.)""")
NO_NOTEBOOK_FILE = N_("""\
Cannot find this notebook's file (looked for: {paths}). Save the notebook, then hand in with its path:
  notebook.submit(LAB, LANG, notebook_file="<the path of this notebook>")""")
SAVED_VERSION = N_("WARNING: could not make Jupyter save this notebook: the zip holds its last saved version "
                   "({time}). If you changed it since, save it (Ctrl+S) and run this cell again.")
NO_COLAB_NOTEBOOK = N_("Colab did not send this notebook's content ({error}). Run this cell again; if it fails "
                       "again, download the notebook (File > Download > Download .ipynb) and hand it in with "
                       "`autograder submit LAB --notebook FILE`.")
DOWNLOADING = N_("Your browser downloads {zip} now (allow it if it asks); Colab keeps a copy in {folder} until the "
                 "session ends.")
CHECK_ALL = N_("Run grader.check_all() to see which.")
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


def _found(name: str) -> bool:
    """Whether a distribution called ``name`` is installed, as :func:`installed` would say it is."""
    try:
        return bool(metadata.distribution(name).metadata["Name"])
    except metadata.PackageNotFoundError:
        return False


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
    if all(_found(n) for group in requirements(root) for n in group):
        return []  # each looked up by its name: listing every distribution (installed()) costs 0.1 s
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
def on_colab() -> bool:
    """Whether this is Colab's Python (its ``google.colab`` package is there)."""
    if "google.colab" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):
        return False


def discarded(folder: Path) -> bool:
    """Whether ``folder`` is where Colab deletes it at the end of the session: in /content, not
    in the Google Drive mounted there."""
    folder = Path(folder).resolve()
    return on_colab() and files.is_within(folder, COLAB_CONTENT) and not files.is_within(folder, DRIVE_MOUNT)


def _unpacked(root: Path) -> list[Path]:
    """A folder a bundle zip was unpacked into: itself, then each folder in it (a zip with a
    top-level folder unpacks the bundle one level down)."""
    inner = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() and not (root / "assignments").is_dir() \
        else []
    return [root, *inner]


def candidate_dirs(lab: str, cwd: Path, environ) -> list[Path]:
    """Where a lab's folder may be, in order of preference: ``$IRONLAW_ROOT``, the copy kept in
    Google Drive (Colab), a bundle unpacked next to the notebook or one folder up, the bundle
    around this folder, and the bundle this engine came from."""
    unpacked = [Path(environ["IRONLAW_ROOT"])] if environ.get("IRONLAW_ROOT") else []
    unpacked += [DRIVE_BUNDLE, cwd / BUNDLE_DIR, cwd.parent / BUNDLE_DIR]
    roots = [r for u in unpacked for r in _unpacked(u)] + [cwd.parent.parent, bundle_root()]
    return [r / "assignments" / lab for r in roots]


def find_lab_dir(lab: str, module: str, cwd: Path | None = None, environ=None) -> Path | None:
    """The folder to work in: the current one if ``module.py`` is here (a lab folder,
    or otter's grading folder), else the first candidate holding the lab.  On Colab a
    current folder in the session's temporary storage comes after the candidates: a copy
    kept in Drive is the one to work in."""
    cwd = Path(cwd or Path.cwd())
    here = cwd if (cwd / f"{module}.py").is_file() else None
    if here and not discarded(here):
        return here
    for d in candidate_dirs(lab, cwd, os.environ if environ is None else environ):
        if (d / "lab.toml").is_file() and (d / f"{module}.py").is_file():
            return d.resolve()
    return here


_opened_in: Path | None = None  # the folder the notebook was opened in: where submit writes the zip


def locate_bundle(lab: str, module: str) -> Path:
    """Make ``import <module>`` and ``grader.check`` work: change to the lab's folder.  On
    Colab, warn when that folder goes with the session (:data:`KEEP_IN_DRIVE`).

    Raises FileNotFoundError with install instructions when there is none.
    """
    global _opened_in
    if _opened_in is None:  # the first run: the kernel's folder is the notebook's
        _opened_in = Path.cwd().resolve()
    found = find_lab_dir(lab, module)
    if found is None:
        raise FileNotFoundError(_(INSTALL_HELP).format(lab=lab, module=module, bundle=BUNDLE_DIR))
    if found != Path.cwd().resolve():
        os.chdir(found)
        print(_("working in {folder}").format(folder=found))
    if str(found) not in sys.path:  # Jupyter has "" on the path; a script may not
        sys.path.insert(0, str(found))
    if discarded(found):
        print(_(KEEP_IN_DRIVE).format(folder=found, mount=DRIVE_MOUNT, drive=DRIVE_BUNDLE, bundle=found.parents[1]))
    return found


# -- the checker -----------------------------------------------------------------------
_skipper = None  # this kernel's _SkipInstalled


def autoreload() -> bool:
    """In IPython, reload every edited module before each cell runs (``%autoreload 2``), so
    a cell calls the student's current code without a kernel restart; the modules of the
    standard library and of installed packages are not looked at (:class:`_SkipInstalled`).
    False elsewhere."""
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
    global _skipper
    if _skipper is None or _skipper.shell is not shell:  # once per kernel, however often the setup cell runs
        _skipper = _SkipInstalled(shell)
        shell.events.register("post_run_cell", _skipper.skip_new)
    return True


class _SkipInstalled:
    """``%autoreload 2`` looks at the file of every imported module before each cell: once torch
    is imported, some 3,000 of them, about 20 ms a cell.  After each cell, the modules it imported
    from the standard library or an installed package (``site-packages``, ``dist-packages``) are
    marked not to reload (``%aimport -name``): nobody edits those while the notebook runs.  The
    lab's modules, and the engine where it is not installed (a bundle on Colab), still reload."""

    def __init__(self, shell):
        self.shell = shell
        self.seen: set[str] = set()
        self.installed = _installed_dirs()

    def skip_new(self, *_result) -> None:
        new = sys.modules.keys() - self.seen
        self.seen |= new
        skip = [name for name in new if self._installed(getattr(sys.modules.get(name), "__file__", None))]
        if skip:  # the magic's own function: run_line_magic would first expand the long line, for seconds
            self.shell.find_line_magic("aimport")(", ".join("-" + name for name in sorted(skip)))

    def _installed(self, path) -> bool:
        if not isinstance(path, str):
            return False
        path = os.path.abspath(path)
        folders = path.split(os.sep)[:-1]  # a folder named so, not any name that contains the word
        return path.startswith(self.installed) or any(d in folders for d in ("site-packages", "dist-packages"))


def _installed_dirs() -> tuple[str, ...]:
    """The folders of the standard library and of installed packages, each ending with a separator."""
    import site
    import sysconfig

    dirs = {sysconfig.get_path(p) for p in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs.update(getattr(site, "getsitepackages", list)())
    return tuple(os.path.join(os.path.abspath(d), "") for d in dirs if d)


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


def run_question(lab_name: str, question: str, code_dir: Path, root: Path | None = None):
    """``(results, selected)``: the public tests of ``question`` run in this process on
    the files in ``code_dir``.  ``root`` holds ``assignments/`` (default: found from here)."""
    import pytest

    from autograder.grading import pytest_here

    root = Path(root).resolve() if root else labs.find_root()
    lab = labs.get(lab_name, root)
    if question not in {q.id for q in lab.manifest.questions}:
        raise KeyError(f"{lab.name} has no question {question!r}")
    picker = _one_question(question)
    out = io.StringIO()
    # the plugin finds the lab of each test file from IRONLAW_ROOT
    with files.scoped_environ(**{labs.ROOT_ENV: str(root)}), contextlib.redirect_stdout(out):
        code = pytest_here.main([str(lab.public_tests_dir), "--submission", str(Path(code_dir).resolve()),
                                 *pytest_here.LEAN, "--import-mode=importlib",
                                 "--capture=sys", "-qq", "--no-header", "--tb=no", "-rN",
                                 "--rootdir", str(root)], [picker])
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


# -- handing in -------------------------------------------------------------------------
def _user_namespace() -> dict:
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def find_notebook_file(name: str, given: str | Path | None = None, environ=None) -> Path | None:
    """This notebook's file in Jupyter: ``given``; else the path the front end gave the kernel
    (Jupyter Server's ``$JPY_SESSION_NAME``, VS Code's ``__vsc_ipynb_file__``); else ``name``
    (the lab's notebook in this language) in the folder the notebook was opened in, then in
    the current one.  None when none of these is a file."""
    environ = os.environ if environ is None else environ
    ns = _user_namespace()
    said = [given, environ.get("JPY_SESSION_NAME"), ns.get("__vsc_ipynb_file__"), ns.get("__session__")]
    tries = [Path(p) for p in said if p and str(p).endswith(".ipynb")]
    tries += [d / name for d in (_opened_in, Path.cwd()) if d is not None]
    return next((p.resolve() for p in tries if p.is_file()), None)


def save(path: Path) -> bool:
    """Ask the Jupyter front end to save the notebook at ``path`` and wait until the file changes
    (otter's ``save_notebook``: classic Notebook's save call, then JupyterLab's ``docmanager:save``
    command through ipylab); False when it did not change in :data:`SAVE_TIMEOUT_S`, or where no
    front end can be asked (VS Code, which gives the kernel its notebook's path, or no otter)."""
    if "__vsc_ipynb_file__" in _user_namespace():
        return False
    try:
        from otter.check.utils import save_notebook
    except ImportError:
        return False
    return bool(save_notebook(str(path), timeout=SAVE_TIMEOUT_S))


def _clear_output() -> None:
    if _user_namespace():
        from IPython.display import clear_output

        clear_output()


def colab_notebook() -> bytes:
    """The notebook as it is now in Colab's editor, outputs and all (Colab's own
    ``get_ipynb`` request to the front end): nothing need be saved first."""
    from google.colab import _message

    reply = _message.blocking_request("get_ipynb", request="", timeout_sec=COLAB_TIMEOUT_S)
    nb = reply.get("ipynb") if isinstance(reply, dict) else None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise RuntimeError(_(NO_COLAB_NOTEBOOK).format(error=repr(reply)[:200]))
    return files.text_bytes(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def submit(lab_name: str, lang: str, notebook_file: str | Path | None = None) -> Path:
    """The notebook's hand-in cell: the zip ``autograder submit`` writes (``grading.handin``),
    with this notebook in it, written next to the notebook; returns its path.

    The notebook: on Colab, what its editor holds now (:func:`colab_notebook`), and the zip is
    then downloaded; in Jupyter, the file, saved first (:func:`save`), or as last saved, and
    said so.  ``notebook_file``: the notebook's path, where :func:`find_notebook_file` cannot find it.
    The files handed in are the current folder's (the lab's, after :func:`locate_bundle`)."""
    from autograder.grading import handin

    lab = labs.get(lab_name)
    name = handin.notebook_name(lab, lang)
    said = []
    if on_colab() and notebook_file is None:
        data = colab_notebook()
    else:
        path = find_notebook_file(name, notebook_file)
        if path is None:
            raise FileNotFoundError(_(NO_NOTEBOOK_FILE).format(paths=", ".join(
                str(d / name) for d in (_opened_in, Path.cwd()) if d is not None)))
        saved = save(path)
        _clear_output()  # the front end's save request (otter's Javascript output) is nothing to show
        if not saved:
            said.append(_(SAVED_VERSION).format(time=time.strftime("%Y-%m-%d %H:%M", time.localtime(
                path.stat().st_mtime))))
        data = path.read_bytes()
    folder = _opened_in or Path.cwd()
    made = handin.make(lab, Path.cwd(), {name: data}, folder / f"{lab.name}-submission.zip", said)
    for _kind, text in made.lines(_(CHECK_ALL)):
        print(text)
    if on_colab():
        from google.colab import files as colab_files

        print(_(DOWNLOADING).format(zip=made.dest.name, folder=made.dest.parent))
        colab_files.download(str(made.dest))
    return made.dest
