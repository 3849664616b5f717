"""Lab 4 hidden tests: the trusted side's simulations.

``sim`` is the engine's copy of the shipped ``lab4_sim.py`` (from the
assignment folder, loaded by path, never from a submission), loaded into
the grader. The ring tests drive the student's per-rank functions through
its network here, in the grader, so every message is seen and counted by
trusted code; the loader's events are recorded by the same module inside
the worker and come back as plain data.
"""

from __future__ import annotations

import importlib.util

import pytest

_CACHE: dict[str, object] = {}


def load_sim(path):
    key = str(path)
    if key not in _CACHE:
        spec = importlib.util.spec_from_file_location("lab4_sim_grader", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _CACHE[key] = mod
    return _CACHE[key]


@pytest.fixture
def sim(lab):
    return load_sim(lab.assignment_dir / "lab4_sim.py")
