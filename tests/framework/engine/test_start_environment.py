"""What a grader and a worker read only as their process starts: the hash seed and the thread pools.

A set of strings iterates in an order that depends on the interpreter's hash seed, fixed when the
process starts. Student code whose result depends on that order (a list made from a set) must get
the same grade in every run, so every zygote, and so every worker, hashes with one seed. A pooled
grader too, and it starts with one BLAS/OpenMP thread: a spawned grader imports its parent's
__main__ before anything else runs in it, and numpy sizes its thread pool as it loads.
"""

from __future__ import annotations

import os

import pytest

from autograder.grading import runner
from autograder.grading.pool import AT_START, GraderPool
from autograder.sandbox.backend import SandboxBackend

ORDER = '''
import sys


def norm(x=None):
    return [sys.flags.hash_randomization, hash("attention"), list({"query", "key", "value", "output", "mask"})]
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")
def test_workers_of_every_zygote_hash_strings_alike(toy_lab, tmp_path):
    from autograder.sandbox import backend as sandbox_backend

    (tmp_path / "toy.py").write_text(ORDER)
    seen = []
    for _zygote in range(2):
        sandbox_backend.stop_zygote()  # the next call starts a zygote of its own
        backend = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
        try:
            seen.append(backend.call("norm", (), {})[0])
        finally:
            backend.close()
            sandbox_backend.stop_zygote()
    assert seen[0][0] == 0, "a worker hashes with a random seed"
    assert seen[0] == seen[1]


# A builtin and a string: what a spawned grader can unpickle (the test module is not on its path).
PROBE = ("(__import__('sys').flags.hash_randomization, hash('attention'),"
         " open('/proc/self/environ', 'rb').read().split(b'\\0'))")


def test_pooled_graders_start_with_the_seed_and_one_thread(tmp_path, monkeypatch):
    for name in AT_START:
        monkeypatch.delenv(name, raising=False)  # as in a shell that sets none of them
    seen = []
    for _pool in range(2):
        pool = GraderPool(str(tmp_path), 1, dict(runner.GRADER_ENV))
        try:
            seen.append(pool._pool.submit(eval, PROBE).result(timeout=120))
        finally:
            pool.close()
    randomized, first_hash, environ = seen[0]
    at_start = dict(line.decode().split("=", 1) for line in environ if b"=" in line)  # as the process began
    assert randomized == 0 and first_hash == seen[1][1]
    assert {k: at_start.get(k) for k in AT_START} == {k: runner.GRADER_ENV[k] for k in AT_START}
    assert not any(name in os.environ for name in AT_START), "the pool left its settings in this process"
