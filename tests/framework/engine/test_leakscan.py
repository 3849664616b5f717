"""The leak scan's rules, on small texts (the release tests run it on whole projects)."""

from __future__ import annotations

import json

from autograder.authoring import leakscan

REFERENCE = '''"""The reference."""
import numpy as np

SCALE = {"flops_per_mac": 2, "bytes_per_param": 16}


def helper_given(n: int) -> list[int]:
    """Given; do not change it."""
    return [i * i for i in range(int(n)) if i % 3]


def answer(x):
    """Compute it."""
    # the key step
    total = np.sum(np.asarray(x, dtype=np.float64) ** 2)
    return float(np.sqrt(total))
'''

STUB = '''"""The student's contract."""
import numpy as np

SCALE = {"flops_per_mac": 2, "bytes_per_param": 16}


def helper_given(n: int) -> list[int]:
    """Given; do not change it."""
    return [i * i for i in range(int(n)) if i % 3]


def answer(x):
    """Compute it."""
    raise NotImplementedError
'''


def test_significant_lines_skip_docstrings_imports_comments_and_short_lines():
    lines = leakscan.significant_lines(REFERENCE)
    assert set(lines) == {'SCALE = {"flops_per_mac": 2, "bytes_per_param": 16}',
                          "def helper_given(n: int) -> list[int]:",
                          "return [i * i for i in range(int(n)) if i % 3]",
                          "total = np.sum(np.asarray(x, dtype=np.float64) ** 2)",
                          "return float(np.sqrt(total))"}
    assert lines["total = np.sum(np.asarray(x, dtype=np.float64) ** 2)"] == 15


def test_public_by_design_is_the_skeleton_and_given_helpers():
    public = leakscan.public_by_design(STUB, REFERENCE)
    assert 'SCALE = {"flops_per_mac": 2, "bytes_per_param": 16}' in public
    assert "return [i * i for i in range(int(n)) if i % 3]" in public  # same body in both: given
    planted = STUB.replace("    raise NotImplementedError", "    return float(np.sqrt(total))\n    raise NotImplementedError")
    assert "return float(np.sqrt(total))" not in leakscan.public_by_design(planted, REFERENCE)


def test_scan_finds_lines_in_notebooks_and_ignores_binary():
    secrets = leakscan.Secrets(files={b"whole secret file, long enough": "solutions/l/a.py"},
                               lines={"total = np.sum(np.asarray(x, dtype=np.float64) ** 2)": "solutions/l/a.py:15"})
    nb = {"cells": [{"cell_type": "markdown", "source": ["# hi\n"]},
                    {"cell_type": "code", "source": ["x = 1\n", "total  =  np.sum(np.asarray(x, dtype=np.float64) ** 2)  # mine\n"]}]}
    found = leakscan.scan({"a/n.ipynb": json.dumps(nb).encode(), "a/s.npz": b"\x93NUMPY\xff\xfe",
                           "a/copy.py": b"whole secret file, long enough"}, secrets)
    assert [str(f) for f in found] == [
        "a/copy.py: identical to solutions/l/a.py",
        "a/n.ipynb: cell 2, line 2: line of solutions/l/a.py:15 leaks: "
        "total = np.sum(np.asarray(x, dtype=np.float64) ** 2)"]
