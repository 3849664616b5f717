"""Lab 4's reference ring AllReduce against torch.distributed (gloo, 4 local processes).

Independent ground truth for the simulation: the same buffers summed by a
real collective.  It runs the reference only (trusted code), in-process.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder import labs, seam

N_RANKS = 4
RANK_SCRIPT = Path(__file__).parent / "gloo_rank.py"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gloo_allreduce(buffers: list[np.ndarray], tmp: Path) -> list[np.ndarray]:
    np.savez(tmp / "inputs.npz", **{f"rank{r}": b for r, b in enumerate(buffers)})
    port = str(_free_port())
    procs = [subprocess.Popen([sys.executable, str(RANK_SCRIPT), str(r), str(N_RANKS), port,
                               str(tmp / "inputs.npz"), str(tmp)]) for r in range(N_RANKS)]
    assert all(p.wait(timeout=120) == 0 for p in procs), "a gloo rank failed"
    return [np.load(tmp / f"rank{r}.npy") for r in range(N_RANKS)]


@pytest.mark.parametrize("M, dtype", [(1000, np.float64), (1003, np.float64), (7, np.float32)])
def test_reference_ring_matches_gloo(tmp_path, M, dtype):
    rng = np.random.default_rng(M)
    buffers = [rng.normal(size=M).astype(dtype) for _ in range(N_RANKS)]
    gloo = gloo_allreduce(buffers, tmp_path)
    lab = labs.get("lab4")
    ref = seam.CodeProxy(seam.InProcess(lab.solution_dir, lab.manifest.student_files))
    ours = ref.ring_allreduce(buffers=buffers)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for r in range(N_RANKS):
        np.testing.assert_allclose(ours["results"][r], gloo[r], rtol=tol, atol=tol)
    itemsize = np.dtype(dtype).itemsize
    if M % N_RANKS == 0:
        expected = 2 * (N_RANKS - 1) / N_RANKS * M * itemsize
        assert all(b == expected for b in ours["bytes_sent"])
