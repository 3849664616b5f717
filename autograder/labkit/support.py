"""The grader's own copy of a lab's support module (``lab4_sim.py``, ...).

A support file ships in the assignment folder and is what the student's
code imports in the worker.  A test that needs the same module on the
trusted side (a simulated device or network, seeded models) loads it here,
by path from the assignment folder, never from a submission, and once per
process: its module state is the grader's, not the student's.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from autograder.core.labs import Lab

_LOADED: dict[Path, ModuleType] = {}


def trusted_support(lab: Lab, filename: str) -> ModuleType:
    """``lab``'s support module ``filename``, loaded into the grader (cached)."""
    if filename not in lab.manifest.support_files:
        raise KeyError(f"{filename} is not a support file of {lab.name} (lab.toml support_files)")
    path = (lab.assignment_dir / filename).resolve()
    if path not in _LOADED:
        spec = importlib.util.spec_from_file_location(f"{path.stem}_trusted", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED[path] = module
    return _LOADED[path]
