"""Lab 4 hidden tests: the trusted side's simulations.

``sim`` is the engine's copy of the shipped ``lab4_sim.py`` (from the
assignment folder, loaded by path, never from a submission), loaded into
the grader. The ring tests drive the student's per-rank functions through
its network here, in the grader, so every message is seen and counted by
trusted code; the loader's events are recorded by the same module inside
the worker and come back as plain data.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograder.labkit.support import trusted_support

@pytest.fixture
def sim(lab):
    return trusted_support(lab, "lab4_sim.py")


def _softmax_attention(q, k, v, causal=False):
    """The definition, stable, in float64, with the whole (..., S, S) matrix: plain softmax attention,
    the ground truth the tiled and the naive attention are held to."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    S, d = q.shape[-2:]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
    if causal:
        scores = np.where(np.tril(np.ones((S, S), dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v


@pytest.fixture
def plain_attention():
    """``plain_attention(q, k, v, causal=False)``: the ground truth (:func:`_softmax_attention`)."""
    return _softmax_attention
