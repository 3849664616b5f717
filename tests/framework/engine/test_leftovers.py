"""Nothing is left in the temporary folder (issue 27, section 6).

A batch keeps everything it puts there (its staged submissions, the shared
answers, the graders' and the workers' folders, the zygote's socket) in one
private folder that goes with it, on Ctrl-C or SIGTERM too; one killed
outright is swept by the next run.  A notebook's set-up run removes its pip
constraints file once installed, and at exit when the install failed (its
printed commands use the file while the kernel lives).  Each test points
$TMPDIR at a new empty folder and checks it is empty afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.core import files

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def fresh_tmp():
    """A new empty temporary folder, short (a zygote's socket path must fit in 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="lo-", dir="/tmp"))
    yield path
    files.remove_tree(path)


def _left(folder: Path, wait_s: float = 120.0) -> list[str]:
    """What is still in ``folder`` once the processes that were ending are done (a wait that ends
    as soon as it is empty, bounded far over what a loaded machine needs: never a verdict on speed)."""
    end = time.monotonic() + wait_s
    while (left := sorted(os.listdir(folder))) and time.monotonic() < end:
        time.sleep(0.2)
    return left


def _env(tmp: Path, **extra) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(tmp), **extra}


def _start_grade(subs: Path, out: Path, tmp: Path) -> subprocess.Popen:
    # Ctrl-C's default: a suite started in the background by a script (`cmd &`) has SIGINT
    # ignored, and a Python started so keeps ignoring it, as `grade` does (files.run_folder)
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", "labx", str(subs), "--out", str(out),
                             "--jobs", "1"], env=_env(tmp), start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for_graded(out: Path, count: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 600  # a hang guard: the first toy submission takes seconds, minutes at worst
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "raw").is_dir() and len(list((out / "raw").glob("*.json"))) >= count:
            return
        time.sleep(0.1)
    raise AssertionError("the batch did not get going")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_batch_leaves_nothing(toy_copies, tmp_path, fresh_tmp, sig):
    # the signal comes with 10 s of sleeping left to grade, so it stops the batch part-way at any load
    # (with copies that took no time, a batch pinned to one core once finished before it: issue 36)
    subs, out = toy_copies(tmp_path / "subs", 5, fast=1), tmp_path / "out"
    proc = _start_grade(subs, out, fresh_tmp)
    _wait_for_graded(out, 1, proc)
    assert any(n.startswith("ironlaw-labx-batch-") for n in os.listdir(fresh_tmp)), "the batch's own folder"
    proc.send_signal(sig)  # to grade alone, as a kill(1) or a scheduler sends it
    try:
        proc.wait(600)
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert len(list((out / "raw").glob("*.json"))) < 5, "the batch should have been stopped part-way"
    assert _left(fresh_tmp) == []


def test_a_killed_batch_is_swept_by_the_next(toy_copies, tmp_path, fresh_tmp):
    subs, out = toy_copies(tmp_path / "subs", 5), tmp_path / "out"
    proc = _start_grade(subs, out, fresh_tmp)
    _wait_for_graded(out, 1, proc)
    os.killpg(proc.pid, signal.SIGKILL)  # nothing of it runs again: its folder stays
    proc.wait()
    assert _left(fresh_tmp, wait_s=0)
    subprocess.run([sys.executable, "-m", "autograder", "grade", "labx", str(subs), "--out", str(out), "--jobs", "1"],
                   env=_env(fresh_tmp), check=True, capture_output=True, timeout=300)
    assert _left(fresh_tmp) == []


def test_sweep_removes_only_what_dead_runs_left(fresh_tmp, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(fresh_tmp))
    dead = subprocess.Popen(["true"])
    dead.wait()
    ours = Path(tempfile.mkdtemp(prefix=files.owned_name("labx-batch")))  # this process: alive
    theirs = fresh_tmp / f"ironlaw-labx-batch-{dead.pid}.1-abcdefgh"  # its process is gone
    (theirs / "staged-x" / "deep").mkdir(parents=True)
    (theirs / "staged-x" / "deep").chmod(0)
    reused = fresh_tmp / f"ironlaw-constraints-{os.getpid()}.1-abcdefgh.txt"  # our pid, another start: not us
    reused.write_text("x")
    other = fresh_tmp / "ironlaw-labx-batch-abcdefgh"  # not named by a run: never touched
    other.mkdir()
    assert sorted(files.sweep_stale()) == sorted([theirs.name, reused.name])
    assert ours.is_dir() and other.is_dir() and not theirs.exists() and not reused.exists()


SETUP = """
import subprocess, sys, os
from pathlib import Path
from autograder.grading import notebook
root = Path(sys.argv[1])
ok = sys.argv[2] == "ok"
real = subprocess.run
def pip(cmd, **kw):
    return subprocess.CompletedProcess(cmd, 0 if ok else 1, "", "" if ok else "ERROR: no network")
notebook.subprocess.run = pip
try:
    notebook.install_missing(root)
except RuntimeError:
    pass
print(sorted(os.listdir(os.environ["TMPDIR"])))
"""


@pytest.mark.parametrize("outcome", ["ok", "failed"])
def test_a_notebook_set_up_leaves_nothing(tmp_path, fresh_tmp, outcome):
    """The set-up cell's install, offline (pip answers as it would): the constraints file lives
    while the kernel does when the install failed (the printed commands use it), else not at all."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["ironlaw-not-installed-here"]\n')
    (tmp_path / "requirements.lock").write_text("ironlaw-not-installed-here==1.0\n")
    proc = subprocess.run([sys.executable, "-c", SETUP, str(tmp_path), outcome], env=_env(fresh_tmp, PYTHONPATH=str(REPO)),
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    during = eval(proc.stdout.strip().splitlines()[-1])
    assert (len(during) == 1 and during[0].startswith("ironlaw-constraints-")) if outcome == "failed" else during == []
    assert _left(fresh_tmp, wait_s=0) == []


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the dropped exception, as expected
def test_a_stop_signal_is_remembered_when_its_exception_is_lost(tmp_path, monkeypatch):
    """The main thread can be running an object's finalizer when Ctrl-C's handler raises: the
    exception is printed and dropped there ("Exception ignored in ... __del__"), and a batch
    that lost it so would grade every submission.  The signal is remembered (files.stop_requested),
    by the outer run folder too (an export's holds the batch's), and the batch asks between
    submissions."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    class Finalized:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs here, inside the finalizer

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # not ignored, whatever started this suite
    try:
        with files.run_folder("export"):
            with files.run_folder("batch"):
                Finalized()  # collected at once: its KeyboardInterrupt goes nowhere
                with pytest.raises(KeyboardInterrupt):
                    files.stop_requested()
            with pytest.raises(KeyboardInterrupt):
                files.stop_requested()
        files.stop_requested()  # the run is over: nothing is asked any more
    finally:
        signal.signal(signal.SIGINT, before)
