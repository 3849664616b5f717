"""Fixtures for testing the engine itself, on a toy lab that knows nothing of the real ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]


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
