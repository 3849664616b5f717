"""Lab 4 hidden tests: the trusted side's simulations.

``sim`` is the engine's copy of the shipped ``lab4_sim.py`` (from the
assignment folder, loaded by path, never from a submission), loaded into
the grader. The ring tests drive the student's per-rank functions through
its network here, in the grader, so every message is seen and counted by
trusted code; the loader's events are recorded by the same module inside
the worker and come back as plain data.
"""

from __future__ import annotations

import pytest

from autograder.labkit.support import trusted_support

@pytest.fixture
def sim(lab):
    return trusted_support(lab, "lab4_sim.py")
