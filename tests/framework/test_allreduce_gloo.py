"""Lab 4's reference ring AllReduce against torch.distributed (gloo, 4 local processes).

Independent ground truth for the simulation: the same buffers summed by a
real collective.  It runs the reference only (trusted code), in-process.
"""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from autograder import labs, seam

N_RANKS = 4


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, port: int, buffers: list[np.ndarray], out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=N_RANKS)
    t = torch.from_numpy(buffers[rank].copy())
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    np.save(os.path.join(out_dir, f"rank{rank}.npy"), t.numpy())
    dist.destroy_process_group()


@pytest.mark.parametrize("M, dtype", [(1000, np.float64), (1003, np.float64), (7, np.float32)])
def test_reference_ring_matches_gloo(tmp_path, M, dtype):
    rng = np.random.default_rng(M)
    buffers = [rng.normal(size=M).astype(dtype) for _ in range(N_RANKS)]
    mp.start_processes(_rank_main, args=(_free_port(), buffers, str(tmp_path)), nprocs=N_RANKS,
                       start_method="spawn", join=True)
    gloo = [np.load(tmp_path / f"rank{r}.npy") for r in range(N_RANKS)]

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
