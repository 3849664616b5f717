"""Warm grader processes for a batch: pytest, torch and the tests stay loaded.

A fresh grader process spends seconds importing pytest, torch and the
tests before grading anything; a batch reuses a few warm ones instead.
Only in sandbox mode: there the grader never runs student code, so nothing
a submission does can linger into the next one's grading.  A grader is
still replaced after ``MAX_TASKS`` submissions, and if one dies the pool is
rebuilt and that submission graded again in a fresh process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

MAX_TASKS = 40


def _init(root: str, env: dict[str, str]) -> None:
    os.chdir(root)
    os.environ.update(env)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # pytest's own report would garble the batch's progress bar
    os.dup2(devnull, 2)
    import pytest  # noqa: F401  (warm: the point of the pool)
    import torch

    torch.set_num_threads(1)


def _pytest_main(args: list[str]) -> int:
    from autograder import inprocess  # forgets each run's test modules: the next may be another lab's

    return inprocess.run_pytest(args, Path.cwd())


class GraderPool:
    def __init__(self, root: str, jobs: int, env: dict[str, str]):
        self.root, self.jobs, self.env = root, jobs, env
        self._lock = threading.Lock()
        self._pool = self._new()

    def _new(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.jobs, mp_context=multiprocessing.get_context("spawn"),
                                   max_tasks_per_child=MAX_TASKS, initializer=_init,
                                   initargs=(self.root, self.env))

    def run(self, args: list[str]) -> int | None:
        """pytest's exit code, or None when the grader process died."""
        pool = self._pool
        try:
            return pool.submit(_pytest_main, args).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:  # the first thread to notice rebuilds it
                    self._pool = self._new()
            return None

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
