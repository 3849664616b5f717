"""Each lab notebook runs headless against the reference in under 60 s, without stored outputs."""

from __future__ import annotations

import shutil
import time

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import labs

BUDGET_S = 60.0
LABS = labs.all_labs()


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_notebook_stored_without_outputs(lab):
    nb = nbformat.read(lab.assignment_dir / f"{lab.name}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "store notebooks without outputs"


@pytest.mark.parametrize("lab", LABS, ids=lambda l: l.short)
def test_notebook_runs_headless_under_budget(lab, tmp_path):
    for f in lab.manifest.student_files:
        shutil.copy(lab.solution_dir / f, tmp_path / f)
    for f in lab.manifest.support_files:
        shutil.copy(lab.assignment_dir / f, tmp_path / f)
    nb = nbformat.read(lab.assignment_dir / f"{lab.name}.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=int(BUDGET_S * 2), kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    t0 = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - t0
    assert elapsed < BUDGET_S, f"{lab.name}.ipynb took {elapsed:.1f} s (budget {BUDGET_S:.0f} s)"
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert images >= 2, "each notebook draws its plots"
