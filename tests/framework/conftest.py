"""Fixtures for testing the engine itself, on a toy lab that knows nothing of the real ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True, scope="session")
def stubs_on_disk():
    """The stubs in assignments/, of the real labs and of the toy lab (before any
    test copies it), for the tests that use them in place (notebooks, otter's
    checks, ``check`` on the stubs): they are generated from the reference and
    never committed (``autograder.build.stubs``)."""
    from autograder.build import stubs
    from autograder.core import labs

    for lab in labs.all_labs(REPO) + labs.all_labs(FIXTURES / "toyroot"):
        stubs.write(lab)


@pytest.fixture(autouse=True)
def english_unless_asked(monkeypatch):
    """Tests read English messages whatever this machine's locale; a test that
    wants Vietnamese asks for it (``--lang vi``, or its own $IRONLAW_LANG)."""
    from autograder.core import i18n

    monkeypatch.setenv(i18n.ENV, "en")


@pytest.fixture
def toy_root(tmp_path, monkeypatch) -> Path:
    """A private copy of the toy project (IRONLAW_ROOT points at it)."""
    root = tmp_path / "toyroot"
    shutil.copytree(FIXTURES / "toyroot", root)
    monkeypatch.setenv("IRONLAW_ROOT", str(root))
    monkeypatch.setenv("COLUMNS", "250")  # rich must not wrap the lines the tests read
    return root


@pytest.fixture
def toy_lab(toy_root):
    from autograder.core import labs

    return labs.get("labx", toy_root)
