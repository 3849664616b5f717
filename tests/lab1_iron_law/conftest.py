"""Lab 1 hidden tests: the grader's copy of the device module, exact-int checks, torch's threads kept.

``device_model`` is the engine's copy of the shipped ``lab1_device.py``
(from the assignment folder, loaded by path, never from a submission),
loaded into the grader. The throughput tests replay known mistakes on its
model (``product_seconds``) to name the one a wrong result equals.
"""

from __future__ import annotations

import importlib.util

import pytest
import torch

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _

_CACHE: dict[str, object] = {}

NOT_AN_INT = N_("an exact int (a count: integer arithmetic, // and never /)")


def load_device_module(path):
    key = str(path)
    if key not in _CACHE:
        spec = importlib.util.spec_from_file_location("lab1_device_grader", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _CACHE[key] = mod
    return _CACHE[key]


@pytest.fixture
def device_model(lab):
    return load_device_module(lab.assignment_dir / "lab1_device.py")


@pytest.fixture(autouse=True)
def keep_torch_threads(student):
    """A submission that changes torch's thread setting changes it in its own worker; in-process
    (plain pytest, ``verify --no-sandbox``) it would change the grader's, so put it back after each test.
    Recorded once the student's code is set up (the plugin runs lab code on one thread)."""
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


def check_exact_ints(values, *, what: str, case: str = "") -> None:
    """Every count in ``values`` (a number, a list, or a dict of them) is a Python int (not a float,
    not a bool): the lab's counts are exact ints."""
    items = values.items() if isinstance(values, dict) else (
        enumerate(values) if isinstance(values, (list, tuple)) else [(None, values)])
    for key, v in items:
        if type(v) is not int:
            name = what if key is None else f"{what}[{key!r}]"
            raise AssertionError(M.say(M.WRONG_TYPE, what=name, case=M.case_suffix(case), expected_type=_(NOT_AN_INT),
                                       got_type=M.student_text(type(v).__name__, limit=60)))


@pytest.fixture
def exact_ints():
    """``exact_ints(values, what=..., case=...)``: see :func:`check_exact_ints`."""
    return check_exact_ints
