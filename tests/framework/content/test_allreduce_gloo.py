"""Lab 4's ring AllReduce: the reference against torch.distributed (gloo), and the simulated network.

Independent ground truth for the simulation: the same buffers summed by a
real collective (4 local processes), against the reference's per-rank
steps driven by the shipped lab4_sim.run_ring.  It runs trusted code only,
in-process.  The network's own rules (only (r + 1) mod N, bytes counted
per message) are tested here too, since every ring grade relies on them.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.core import labs
from autograder.calls import seam
from autograder.labkit.support import trusted_support

N_RANKS = 4
RANK_SCRIPT = Path(__file__).parent / "gloo_rank.py"
LAB = labs.get("lab4")


SIM = trusted_support(LAB, "lab4_sim.py")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gloo_allreduce(cases: dict[str, list[np.ndarray]], tmp: Path) -> dict[str, list[np.ndarray]]:
    """Each case's buffers (one a rank) summed by gloo, all cases in one process group."""
    np.savez(tmp / "inputs.npz", **{f"{c}-rank{r}": b for c, buffers in cases.items() for r, b in enumerate(buffers)})
    port = str(_free_port())
    procs = [subprocess.Popen([sys.executable, str(RANK_SCRIPT), str(r), str(N_RANKS), port,
                               str(tmp / "inputs.npz"), str(tmp)]) for r in range(N_RANKS)]
    assert all(p.wait(timeout=600) == 0 for p in procs), "a gloo rank failed"  # a hang guard
    return {c: [np.load(tmp / f"{c}-rank{r}.npy") for r in range(N_RANKS)] for c in cases}


CASES = [(1000, np.float64), (1003, np.float64), (7, np.float32)]


def case_name(M: int, dtype) -> str:
    return f"{M}-{np.dtype(dtype).name}"


def case_buffers(M: int, dtype) -> list[np.ndarray]:
    rng = np.random.default_rng(M)
    return [rng.normal(size=M).astype(dtype) for _ in range(N_RANKS)]


@pytest.fixture(scope="module")
def gloo_sums(tmp_path_factory):
    """Every case summed by gloo, once: four ranks that each import torch once, not once a case."""
    return gloo_allreduce({case_name(M, dtype): case_buffers(M, dtype) for M, dtype in CASES},
                          tmp_path_factory.mktemp("gloo"))


def reference():
    return seam.CodeProxy(seam.InProcess(LAB.solution_dir, LAB.manifest.student_files, LAB.assignment_dir,
                                         LAB.manifest.support_files))


@pytest.mark.parametrize("M, dtype", CASES)
def test_reference_ring_matches_gloo(gloo_sums, M, dtype):
    buffers = case_buffers(M, dtype)
    gloo = gloo_sums[case_name(M, dtype)]
    ref = reference()
    ours = SIM.run_ring(buffers=buffers, send=ref.ring_send, receive=ref.ring_receive)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for r in range(N_RANKS):
        np.testing.assert_allclose(ours["results"][r], gloo[r], rtol=tol, atol=tol)
        np.testing.assert_allclose(ours["results"][r], np.sum(buffers, axis=0), rtol=tol, atol=tol)
    itemsize = np.dtype(dtype).itemsize
    assert sum(ours["bytes_sent"]) == 2 * (N_RANKS - 1) * M * itemsize
    if M % N_RANKS == 0:
        expected = 2 * (N_RANKS - 1) / N_RANKS * M * itemsize
        assert all(b == expected for b in ours["bytes_sent"])
    assert len(ours["log"]) == N_RANKS * 2 * (N_RANKS - 1)
    assert all(m["to"] == (m["from"] + 1) % N_RANKS for m in ours["log"])


def test_network_only_carries_messages_to_the_next_rank():
    net = SIM.RingNetwork(4, np.float64)
    net.send(step=0, rank=3, message={"to": 0, "chunk": 1, "data": np.ones(5)})
    assert net.bytes_sent == [0, 0, 0, 40]
    with pytest.raises(SIM.RingError, match="may only send to rank 2") as err:
        net.send(step=1, rank=1, message={"to": 3, "chunk": 0, "data": np.ones(2)})
    assert (err.value.kind, err.value.step, err.value.rank, err.value.to) == ("neighbour", 1, 1, 3)
    assert net.bytes_sent == [0, 0, 0, 40]  # a refused message is not counted
    for bad, kind in [({"to": 0, "chunk": 1}, "message"), ({"to": 0, "chunk": 4, "data": np.ones(1)}, "message"),
                      ({"to": 0, "chunk": 0, "data": [1.0]}, "message"),
                      ({"to": 0, "chunk": 0, "data": np.ones(1, np.float32)}, "dtype")]:
        with pytest.raises(SIM.RingError) as err:
            net.send(step=0, rank=3, message=bad)
        assert err.value.kind == kind
    inbox = net.deliver()
    assert [len(m) for m in inbox] == [1, 0, 0, 0] and inbox[0][0]["from"] == 3 and net.deliver() == [[]] * 4


def test_run_ring_gives_each_rank_only_its_own_buffer():
    seen = []

    def send(*, rank, N, step, buffer):
        seen.append((rank, step, float(buffer[0])))
        return []

    def receive(*, rank, N, step, buffer, messages):
        assert messages == []
        return buffer

    out = SIM.run_ring(buffers=[np.full(3, float(r)) for r in range(3)], send=send, receive=receive, history=True)
    assert seen == [(r, s, float(r)) for s in range(4) for r in range(3)]
    assert out["bytes_sent"] == [0, 0, 0] and len(out["history"]) == 5
    with pytest.raises(SIM.RingError) as err:
        SIM.run_ring(buffers=[np.zeros(3)] * 2, send=send, receive=lambda **kw: kw["buffer"][:2])
    assert err.value.kind == "buffer"


def test_a_refusal_reads_in_the_readers_language(monkeypatch):
    """The notebook prints the network's refusal as it stands: in Vietnamese for a Vietnamese reader."""
    net = SIM.RingNetwork(4, np.float64)
    for lang, start, words in [("en", "ring AllReduce (x):", "may only send to rank 2"),
                               ("vi", "AllReduce vòng (x):", "chỉ được gửi tới rank 2")]:
        monkeypatch.setenv("IRONLAW_LANG", lang)
        with pytest.raises(SIM.RingError) as err:
            net.send(step=1, rank=1, message={"to": 3, "chunk": 0, "data": np.ones(2)})
        assert words in str(err.value)
        assert err.value.explain(case=" (x)").startswith(start)
