"""Fixtures for testing the engine itself, on a toy lab that knows nothing of the real ones."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from filelock import FileLock


FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
# The suite's longest files (each over ~20 s: batches graded through the sandbox, notebooks run,
# pytest and venvs started), longest first. pytest-xdist hands whole files to its workers in the
# order collected (labkit/plugin.py turns its most-tests-first order off), so these go out first
# and the short files fill in around them; listed last, one of them would run alone at the end.
# Only the order: a file missing here runs after them, as collected.
LONG_FIRST = (
    "content/test_notebooks.py",
    "engine/test_hostile.py",
    "content/test_colab.py",
    "content/test_examples.py",
    "content/test_handin_notebook.py",
    "engine/test_cli.py",
    "engine/test_leftovers.py",
    "content/test_otter.py",
    "engine/test_intake_robust.py",
    "engine/test_intake_layouts.py",
    "engine/test_plugin.py",
    "content/test_gradescope.py",
    "engine/test_manual.py",
    "content/test_no_drawn_values.py",
    "engine/test_intake_hostile.py",
    "engine/test_hostile_round5.py",
    "content/test_held_out_mistakes.py",
    "engine/test_handin.py",
    "engine/test_load.py",
    "engine/test_predictions.py",
    "content/test_lab1_held_out.py",
    "content/test_release.py",
    "engine/test_tracebacks.py",
    "content/test_allreduce_gloo.py",
    "engine/test_gradescope_shape.py",
    "engine/test_worker_memory.py",
    "engine/test_mutants.py",
    "engine/test_feedback_safety.py",
)


def pytest_configure(config):
    """The suite keeps the bytecode of the project's own files, whatever PYTHONDONTWRITEBYTECODE
    says (this machine's environment and .ci/run set it).  The suite starts hundreds of Python
    processes, graders, CLIs and kernels, and a warm grader imports a lab's test files again for
    every submission; without cached bytecode each compiles the engine again and has pytest
    rewrite the asserts of every test file it imports (measured: about 40 of a fresh clone's
    ~640 CPU-seconds, docs/performance.md).  Here, so that only the suite does: this process
    (an xdist worker, which collects every test file first) and the processes it starts write
    the caches (``__pycache__``, ignored by git), and the graders they start read them."""
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_collection_modifyitems(items):
    """The long files first (``LONG_FIRST``), each file's tests in their own order."""
    here = Path(__file__).parent
    gone = [f for f in LONG_FIRST if not (here / f).is_file()]
    if gone:  # a renamed file would silently lose its place
        raise pytest.UsageError(f"tests/framework/conftest.py LONG_FIRST names no file: {', '.join(gone)}")
    rank = {str(here / f): i for i, f in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(str(item.path), len(rank)))


@pytest.fixture(autouse=True, scope="session")
def stubs_on_disk():
    """The stubs in assignments/, of the real labs and of the toy lab (before any
    test copies it), for the tests that use them in place (notebooks, otter's
    checks, ``check`` on the stubs): they are generated from the reference and
    never committed (``autograder.core.stubs``)."""
    from autograder.core import labs, stubs

    for lab in labs.all_labs(REPO) + labs.all_labs(FIXTURES / "toyroot"):
        stubs.write(lab)


@pytest.fixture(autouse=True, scope="module")
def no_zygote_outlives_its_module():
    """A test that calls a SandboxBackend directly starts this process's own zygote
    (``sandbox.backend.zygote``); stop it with the module, as the plugin does after a
    pytest run, so no later file in this process finds it still running."""
    yield
    from autograder.sandbox.backend import stop_zygote

    stop_zygote()


@pytest.fixture(autouse=True)
def english_unless_asked(monkeypatch):
    """Tests read English messages whatever this machine's locale; a test that
    wants Vietnamese asks for it (``--lang vi``, or its own $IRONLAW_LANG)."""
    from autograder.core import i18n

    monkeypatch.setenv(i18n.ENV, "en")


@pytest.fixture
def toy_root(tmp_path, monkeypatch) -> Path:
    """A private copy of the toy project (IRONLAW_ROOT points at it)."""
    root = tmp_path / "toyroot"
    shutil.copytree(FIXTURES / "toyroot", root)
    monkeypatch.setenv("IRONLAW_ROOT", str(root))
    monkeypatch.setenv("COLUMNS", "250")  # rich must not wrap the lines the tests read
    return root


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory) -> Path:
    """Where this session's processes meet: under xdist each worker's temporary tree is a folder
    of the session's (``pytest-N/popen-gw0``), so the session's folder; alone, this process's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def checkout_closed(session_dir):
    """``with checkout_closed():`` this checkout's secret folders (``backend.secret_list``: the
    solutions and the tests) at mode 700 for the block, as setup.sh leaves Gradescope's source/,
    then as they were.  One block at a time in the whole session, the xdist workers' too: two
    that overlapped (test_hostile.py's and test_gradescope.py's, in two workers) each restored
    the modes it had found, so one reopened the solutions in the middle of the other's batch,
    and a hostile submission read them.  Nothing below them is closed on its own: a copy of the
    toy project made meanwhile (``toy_root``) would copy its mode, and no worker could read it."""
    from autograder.sandbox import backend

    lock = FileLock(str(session_dir / "checkout-modes.lock"))

    @contextlib.contextmanager
    def closed():
        with lock:
            folders = [Path(p) for p in backend.secret_list()]
            saved = {d: stat.S_IMODE(d.stat().st_mode) for d in folders}
            try:
                for d in folders:
                    d.chmod(0o700)
                yield
            finally:
                for d, mode in saved.items():
                    d.chmod(mode)

    return closed


@pytest.fixture
def toy_copies(toy_root):
    """``make(folder, n, fast=n)``: ``n`` submissions ``s0``... in ``folder``, each the toy's
    reference; all but the first ``fast`` sleep 2.5 s at import (under the toy's 3 s limit), so
    a test that stops a batch once ``fast`` results are written stops it with seconds of work
    left on any machine: sleeping is wall time, which no load shortens."""
    code = (toy_root / "solutions" / "labx_toy" / "toy.py").read_text()

    def make(folder: Path, n: int, fast: int | None = None) -> Path:
        for i in range(n):
            (folder / f"s{i}").mkdir(parents=True)
            slow = fast is not None and i >= fast
            (folder / f"s{i}" / "toy.py").write_text(code + ("\n\nimport time\ntime.sleep(2.5)\n" if slow else ""))
        return folder

    return make


@pytest.fixture
def toy_lab(toy_root):
    from autograder.core import labs

    return labs.get("labx", toy_root)


@pytest.fixture(scope="session")
def linked_venv():
    """``make(where, names)``: a new venv under ``where`` that sees only the distributions
    ``names`` and what they need (the extras a dependent asks for, none of their own), at this venv's versions (requirements.lock's),
    through links to this venv's files named by a ``.pth`` file; returns its python.

    Seconds instead of the minutes (and the GB) of installing torch again, and offline.  A
    path a ``.pth`` file names is not a site folder, so the ``.pth`` files found there (this
    project's editable install among them) are not run: ``import autograder`` fails in it."""
    import subprocess
    import sys
    import sysconfig
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def closure(names) -> dict[str, metadata.Distribution]:
        """Each distribution needed, with the extras its dependents ask for (``bleach[css]``)."""
        found, seen, todo = {}, set(), [(n, "") for n in names]
        while todo:
            name, extra = todo.pop()
            name = canonicalize_name(name)
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            found[name] = dist = found.get(name) or metadata.distribution(name)
            for line in dist.requires or []:
                req = Requirement(line)
                if req.marker is None or req.marker.evaluate({"extra": extra}):
                    todo += [(req.name, "")] + [(req.name, e) for e in req.extras]
        return found

    def make(where: Path, names) -> Path:
        # no pip of its own (ensurepip: about 4 CPU-seconds a venv); name "pip" to link this venv's
        subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(where / "venv")], check=True,
                       timeout=300)
        python = where / "venv" / "bin" / "python"
        links = where / "preinstalled"
        links.mkdir()
        site = Path(sysconfig.get_paths()["purelib"])
        for dist in closure(names).values():
            for top in {Path(str(f)).parts[0] for f in dist.files or ()} - {"..", "__pycache__"}:
                if (site / top).exists() and not (links / top).exists():
                    (links / top).symlink_to(site / top)
        purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        (Path(purelib) / "preinstalled.pth").write_text(f"{links}\n")
        return python

    return make


@pytest.fixture(scope="session")
def passed_check():
    """``passed_check(lang)``: how a passing ``grader.check`` reads in ``lang`` (otter's frame,
    translated by ``autograder.grading.checker``)."""
    from autograder.core import i18n
    from autograder.grading import checker

    def said(lang: str) -> str:
        with i18n.language(lang):
            return i18n._(checker.ALL_PASSED).format(name="")

    return said
