"""Lab 4, part 3, another idiom: np.array_split does the chunking.

Chunk sizes come from ``np.array_split`` (whose convention the contract
uses), and each chunk is a view of the rank's own buffer, so receiving
writes into the copy in place.
"""

from __future__ import annotations

import numpy as np


def chunk_bounds(*, M: int, N: int) -> list[tuple[int, int]]:
    """(start, stop) of the N chunks np.array_split makes of M elements."""
    if N < 1 or M < 0:
        raise ValueError(f"need N >= 1 and M >= 0, got N={N}, M={M}")
    sizes = [len(part) for part in np.array_split(np.empty(M, dtype=np.int8), N)]
    stops = np.cumsum(sizes)
    return [(int(stop - size), int(stop)) for size, stop in zip(sizes, stops)]


def ring_chunk(*, rank: int, N: int, step: int) -> int:
    """Reduce-scatter sends (r − s) mod N; all-gather step t sends (r + 1 − t) mod N."""
    if not 0 <= step < 2 * (N - 1):
        raise ValueError(f"a ring over {N} ranks has steps 0..{2 * N - 3}, got {step}")
    phase, t = divmod(step, N - 1)
    return (rank - t) % N if phase == 0 else (rank + 1 - t) % N


def _chunks(buffer: np.ndarray, N: int) -> list[np.ndarray]:
    return np.array_split(buffer, N)  # views into buffer


def ring_send(*, rank: int, N: int, step: int, buffer: np.ndarray) -> list[dict]:
    """One message to the next rank with a copy of this step's chunk."""
    c = ring_chunk(rank=rank, N=N, step=step)
    return [dict(to=(rank + 1) % N, chunk=c, data=_chunks(buffer, N)[c].copy())]


def ring_receive(*, rank: int, N: int, step: int, buffer: np.ndarray, messages: list[dict]) -> np.ndarray:
    """Into a copy of the buffer: += the chunk in reduce-scatter, [:] = it in all-gather."""
    out = buffer.copy()
    chunks = _chunks(out, N)
    for msg in messages:
        view = chunks[msg["chunk"]]
        if step < N - 1:
            view += msg["data"]
        else:
            view[:] = msg["data"]
    return out


def allreduce_bytes_per_rank(*, M_bytes: float, N: int) -> float:
    """2(N−1)/N × M."""
    return float(np.float64(M_bytes) * 2 * (N - 1) / N)


def network_wall(*, n_params: float, bytes_per_param: int, n_gpus: int, link_GBps: float,
                 compute_s: float) -> dict:
    """The network wall, with numpy scalars turned back into Python floats."""
    grad = float(n_params) * bytes_per_param
    per_gpu = allreduce_bytes_per_rank(M_bytes=grad, N=n_gpus)
    comm = per_gpu / (link_GBps * 1e9)
    times = np.array([compute_s, comm])
    return {
        "gradient_bytes": grad,
        "bytes_per_gpu": per_gpu,
        "comm_s": comm,
        "step_s_no_overlap": float(times.sum()),
        "step_s_overlap": float(times.max()),
        "bound": ("compute", "communication")[int(comm > compute_s)],
        "break_even_GBps": per_gpu / (compute_s * 1e9),
    }


def scaling_speedup(*, n_gpus: int, r: float) -> float:
    """N / (1 + (N − 1)·r) with numpy scalars, returned as a Python float."""
    n = np.float64(n_gpus)
    return float(n / (1.0 + (n - 1.0) * r))


def communication_tax(*, n_params: float, bytes_per_param: int, n_gpus: int, link_Gbps: float,
                      compute_s_one_gpu: float, overlap: bool = False) -> dict:
    """network_wall on the per-GPU share; the step from a numpy vector [compute, comm]."""
    wall = network_wall(n_params=n_params, bytes_per_param=bytes_per_param, n_gpus=n_gpus,
                        link_GBps=link_Gbps / 8, compute_s=compute_s_one_gpu / n_gpus)
    times = np.array([compute_s_one_gpu / n_gpus, wall["comm_s"]])
    step = float(times.max() if overlap else times.sum())
    speedup = compute_s_one_gpu / step
    return {"comm_s": float(times[1]), "compute_s": float(times[0]), "step_s": step,
            "comm_fraction": float((step - times[0]) / step), "speedup": speedup, "efficiency": speedup / n_gpus,
            "r": float(2 * wall["gradient_bytes"] / (link_Gbps / 8 * 1e9) / compute_s_one_gpu)}
