"""Lab 4, part 3, another idiom: chunk bounds and the schedule in closed form.

Chunk c starts at c·base + min(c, extra) (base, extra = divmod(M, N)), so
a rank computes only the one pair of bounds it needs. The schedule is one
formula for both phases: reduce-scatter sends chunk (r − s) mod N, and
all-gather at step s sends chunk (r + 1 − (s − (N − 1))) mod N, which is
(r + N − s) mod N = (r − s) mod N too.
"""

from __future__ import annotations

import numpy as np


def _start(c: int, M: int, N: int) -> int:
    base, extra = divmod(M, N)
    return c * base + min(c, extra)


def chunk_bounds(*, M: int, N: int) -> list[tuple[int, int]]:
    """N contiguous (start, stop) pairs, the first M mod N chunks one element longer."""
    if N < 1 or M < 0:
        raise ValueError(f"need N >= 1 and M >= 0, got N={N}, M={M}")
    return [(_start(c, M, N), _start(c + 1, M, N)) for c in range(N)]


def ring_chunk(*, rank: int, N: int, step: int) -> int:
    """The chunk rank ``rank`` sends at ``step``: (r − s) mod N, then (r + 1 − t) mod N."""
    if not 0 <= step < 2 * (N - 1):
        raise ValueError(f"a ring over {N} ranks has steps 0..{2 * N - 3}, got {step}")
    # all-gather: r + 1 − (s − (N − 1)) = r − s + N ≡ r − s (mod N), the same formula as reduce-scatter
    return (rank - step) % N


def ring_send(*, rank: int, N: int, step: int, buffer: np.ndarray) -> list[dict]:
    """One message to (rank + 1) % N carrying this step's chunk."""
    c = ring_chunk(rank=rank, N=N, step=step)
    M = len(buffer)
    data = np.array(buffer[_start(c, M, N):_start(c + 1, M, N)])  # a copy
    return [{"to": (rank + 1) % N, "chunk": c, "data": data}]


def ring_receive(*, rank: int, N: int, step: int, buffer: np.ndarray, messages: list[dict]) -> np.ndarray:
    """Add (reduce-scatter) or copy (all-gather) each delivered chunk into a new buffer."""
    out = np.array(buffer)
    M = len(buffer)
    reducing = step < N - 1
    for msg in messages:
        c = int(msg["chunk"])
        view = out[_start(c, M, N):_start(c + 1, M, N)]
        if reducing:
            np.add(view, msg["data"], out=view)
        else:
            np.copyto(view, msg["data"])
    return out


def allreduce_bytes_per_rank(*, M_bytes: float, N: int) -> float:
    """2(N−1)/N × M: N−1 chunks of M/N in each of the two phases."""
    phases, chunks_per_phase, chunk = 2, N - 1, M_bytes / N
    return float(phases * chunks_per_phase * chunk)


def network_wall(*, n_params: float, bytes_per_param: int, n_gpus: int, link_GBps: float,
                 compute_s: float) -> dict:
    """Compute-bound or communication-bound: the ring's bytes over the link against compute."""
    out = {"gradient_bytes": n_params * bytes_per_param}
    out["bytes_per_gpu"] = allreduce_bytes_per_rank(M_bytes=out["gradient_bytes"], N=n_gpus)
    link = link_GBps * 1e9
    out["comm_s"] = out["bytes_per_gpu"] / link
    out["step_s_no_overlap"] = compute_s + out["comm_s"]
    out["step_s_overlap"] = out["comm_s"] if out["comm_s"] > compute_s else compute_s
    out["bound"] = "communication" if out["comm_s"] > compute_s else "compute"
    out["break_even_GBps"] = out["bytes_per_gpu"] / compute_s / 1e9
    return out


def scaling_speedup(*, n_gpus: int, r: float) -> float:
    """Amdahl's form: 1 / ((1 − r)/N + r)."""
    return 1.0 / ((1.0 - r) / n_gpus + r)


def communication_tax(*, n_params: float, bytes_per_param: int, n_gpus: int, link_Gbps: float,
                      compute_s_one_gpu: float, overlap: bool = False) -> dict:
    """The step on N GPUs, computed here from the ring's bytes (not through network_wall)."""
    gradient = n_params * bytes_per_param
    bytes_per_s = link_Gbps * 1e9 / 8
    comm = allreduce_bytes_per_rank(M_bytes=gradient, N=n_gpus) / bytes_per_s
    compute = compute_s_one_gpu / n_gpus
    if overlap:
        step = compute if compute >= comm else comm
    else:
        step = compute + comm
    speedup = compute_s_one_gpu / step
    return {"comm_s": comm, "compute_s": compute, "step_s": step, "comm_fraction": 1.0 - compute / step,
            "speedup": speedup, "efficiency": speedup / n_gpus, "r": 2 * gradient / bytes_per_s / compute_s_one_gpu}
