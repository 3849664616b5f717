"""Fixtures for Lab 2's hidden tests: the trusted copy of the shipped support module."""

import importlib.util

import pytest


@pytest.fixture
def models(lab):
    """``lab2_models`` loaded from the assignment folder (never from a submission).

    Loaded under a private name, so it cannot collide with the copy the code
    under test imports as ``lab2_models``.
    """
    path = lab.assignment_dir / "lab2_models.py"
    spec = importlib.util.spec_from_file_location("_lab2_models_trusted", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Run this lab's tiny models on one thread, then restore the setting.

    Lab 2's models have a few hundred parameters; on a shared 2-core machine
    a second intra-op thread only adds spin-waiting (measured: about 6x
    slower).  The sandboxed worker runs on one thread anyway.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
