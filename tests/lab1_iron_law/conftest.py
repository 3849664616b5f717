"""Lab 1 hidden tests: the grader's copy of the device module, exact-int checks, torch's threads kept.

``device_model`` is the engine's copy of the shipped ``lab1_device.py``
(from the assignment folder, loaded by path, never from a submission),
loaded into the grader. The throughput tests replay known mistakes on its
model (``product_seconds``) to name the one a wrong result equals.
"""

from __future__ import annotations

import pytest
import torch

from autograder.labkit.assertions import assert_int
from autograder.labkit.support import trusted_support


@pytest.fixture
def device_model(lab):
    return trusted_support(lab, "lab1_device.py")


@pytest.fixture(autouse=True)
def keep_torch_threads(student):
    """A submission that changes torch's thread setting changes it in its own worker; in-process
    (plain pytest, ``verify --no-sandbox``) it would change the grader's, so put it back after each test.
    Recorded once the student's code is set up (the plugin runs lab code on one thread)."""
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


@pytest.fixture
def exact_ints():
    """``exact_ints(values, what=..., case=...)``: ``labkit.assertions.assert_int``."""
    return assert_int
