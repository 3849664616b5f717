"""Public-test snapshots: expected values stored from the reference.

One ``.npz`` per test in ``assignments/<lab>/tests/snapshots/``, found from
the lab (never the working directory).  Keys are meaningful names; nested
dicts are flattened with ``/``.  ``autograder snapshots LAB`` reruns the
public tests on the reference with ``update=True`` to rewrite them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder.labkit import messages as M
from autograder.labkit import assertions


def flatten(d: dict, prefix: str = "") -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "/"))
        else:
            v = v.detach().numpy() if hasattr(v, "detach") else v
            out[key] = np.asarray(v)
    return out


class Snapshot:
    def __init__(self, directory: Path, lab_short: str, update: bool):
        self.directory, self.lab_short, self.update = directory, lab_short, update

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.npz"

    def check(self, name: str, actual: dict, *, what: str = "", case: str = "",
              rtol: float = 1e-6, atol: float = 0.0) -> None:
        """Compare ``actual`` (a dict of numbers/arrays) with snapshot ``name``."""
        flat = flatten(actual)
        path = self.path(name)
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(path, **flat)
            return
        if not path.exists():
            raise AssertionError(M.say(M.SNAPSHOT_MISSING, name=name, lab=self.lab_short))
        with np.load(path, allow_pickle=False) as data:
            expected = {k: data[k] for k in data.files}
        assertions.assert_keys(flat, expected, what=what or name, case=case)
        for k, e in expected.items():
            assertions.assert_close(flat[k], e, what=f"{what or name}[{k!r}]", case=case, rtol=rtol, atol=atol)
