"""Warm grader processes for a batch: pytest, torch and the tests stay loaded.

A fresh grader process spends seconds importing pytest, torch and the
tests before grading anything; a batch reuses a few warm ones instead.
Only in sandbox mode: there the grader never runs student code, so nothing
a submission does can linger into the next one's grading.  A grader is
still replaced after ``MAX_TASKS`` submissions, and if one dies the pool is
rebuilt and that submission graded again in a fresh process.  A grader
that outlives its submission's deadline is killed with its pool, which is
rebuilt; the submissions it held are graded again in fresh processes.
Every grader runs under an address-space cap (``memory_limit``), so no
reply a worker sends can take the machine's memory; reading one costs it at
most about twice ``wire.MAX_BYTES`` (``wire.loads``: every array decoded is
made of bytes received), far below the lab's ``grader_memory_mb``.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import resource
import signal
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from autograder.core import quick_exit
from autograder.core.files import scoped_environ

MAX_TASKS = 40
MEMORY_ENV = "IRONLAW_GRADER_MEMORY_MB"
# A grader's start (pytest, torch, the lab's tests: 3-5 s of CPU for a real lab) costs about as much as
# grading 4 to 8 submissions in a warm one (docs/performance.md): a batch left to choose starts one
# grader per SHARE submissions at most, so a batch of 3 pays for one start, not two.
SHARE = 4
# What Python and the numeric libraries read only as a process starts: the hash seed (the order in
# which a set of strings iterates) and the BLAS/OpenMP thread pools that numpy and torch size as they
# load.  A spawned grader imports its parent's __main__ before _init runs (a script that calls
# grade.main may import numpy at its top), so these must be in its environment from its start: the
# pool sets them in ours while it can start graders.  Given in _init only, a pooled grader hashed
# with a random seed and, under such a script, ran two BLAS threads each (docs/performance.md).
AT_START = ("PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
            "PYTHONDONTWRITEBYTECODE")


def graders(jobs: int, submissions: int, share: int = 1) -> int:
    """Graders for ``submissions``: ``jobs`` at most, and at most one per ``share`` of them."""
    return max(1, min(jobs, -(-submissions // share)))


def memory_limit(mb: str | int | None = None) -> None:
    """Cap this grader's address space at ``mb`` MiB, by default $IRONLAW_GRADER_MEMORY_MB
    (set by runner.grader_env from the lab's ``grader_memory_mb``)."""
    mb = mb or os.environ.get(MEMORY_ENV)
    if mb:
        limit = int(mb) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _init(root: str, env: dict[str, str]) -> None:
    atexit.register(quick_exit.skip_teardown)  # a grader that imported torch leaves in ms, not 0.3-0.6 s
    os.chdir(root)
    os.environ.update(env)
    memory_limit()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # pytest's own report would garble the batch's progress bar
    os.dup2(devnull, 2)
    import pytest  # noqa: F401  (warm: the point of the pool)
    # torch is not imported here: a lab's tests import it when the first submission collects
    # them, and it stays loaded for the next ones (pytest_here forgets only test modules);
    # a lab whose tests never use it (the engine's toy lab) never pays for it.  One thread
    # all the same: runner.GRADER_ENV sets OMP_NUM_THREADS=1 before any import.


def _pytest_main(args: list[str]) -> int:
    from autograder.grading import pytest_here  # forgets each run's test modules: the next may be another lab's

    return pytest_here.run_pytest_here(args, Path.cwd())


class GraderPool:
    def __init__(self, root: str, jobs: int, env: dict[str, str]):
        self.root, self.jobs, self.env = root, jobs, env
        self._lock = threading.Lock()
        with contextlib.ExitStack() as stack:  # kept until close(): a grader replaced later starts with them too
            stack.enter_context(scoped_environ(**{k: env[k] for k in AT_START if k in env}))
            self._pool = self._new()
            self._at_start = stack.pop_all()

    def _new(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.jobs, mp_context=multiprocessing.get_context("spawn"),
                                   max_tasks_per_child=MAX_TASKS, initializer=_init,
                                   initargs=(self.root, self.env))

    def run(self, args: list[str], timeout_s: float | None = None) -> int | None:
        """pytest's exit code, or None when the grader process died or overran ``timeout_s``."""
        pool = self._pool
        try:
            return pool.submit(_pytest_main, args).result(timeout=timeout_s)
        except FutureTimeout:
            for proc in list(getattr(pool, "_processes", {}).values()):  # recycle: no other way to stop one
                try:
                    os.kill(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
            self._rebuild(pool)
            return None
        except BrokenProcessPool:
            self._rebuild(pool)
            return None

    def _rebuild(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:  # the first thread to notice rebuilds it
                self._pool = self._new()

    def close(self) -> None:
        try:
            self._pool.shutdown(wait=True, cancel_futures=True)
        finally:
            self._at_start.close()
