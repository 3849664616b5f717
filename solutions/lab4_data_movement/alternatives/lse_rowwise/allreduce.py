"""Lab 4, part 3, another idiom: a rank's buffer as a list of chunks.

ring_receive splits the buffer at the chunk boundaries (``np.split``),
replaces the one chunk that arrived (summed or copied) and puts the
buffer back together with ``np.concatenate``. The bounds come from a
running sum of chunk sizes.
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np


def _sizes(M: int, N: int) -> list[int]:
    return [M // N + (c < M % N) for c in range(N)]


def chunk_bounds(*, M: int, N: int) -> list[tuple[int, int]]:
    """Contiguous chunks, sizes M // N plus one for the first M mod N chunks."""
    assert N >= 1 and M >= 0, f"need N >= 1 and M >= 0, got N={N}, M={M}"
    stops = list(accumulate(_sizes(M, N)))
    return list(zip([0] + stops[:-1], stops))


def ring_chunk(*, rank: int, N: int, step: int) -> int:
    """The schedule, phase by phase."""
    assert 0 <= step < 2 * (N - 1), f"a ring over {N} ranks has steps 0..{2 * (N - 1) - 1}, got {step}"
    reduce_scatter = step <= N - 2
    if reduce_scatter:
        offset = -step
    else:
        offset = 1 - (step - (N - 1))
    return (rank + offset) % N


def _split(buffer: np.ndarray, N: int) -> list[np.ndarray]:
    cuts = [stop for _start, stop in chunk_bounds(M=len(buffer), N=N)][:-1]
    return np.split(buffer, cuts)


def ring_send(*, rank: int, N: int, step: int, buffer: np.ndarray) -> list[dict]:
    """The scheduled chunk, to the next rank on the ring."""
    chunk = ring_chunk(rank=rank, N=N, step=step)
    message = {"to": (rank + 1) % N, "chunk": chunk, "data": np.copy(_split(buffer, N)[chunk])}
    return [message]


def ring_receive(*, rank: int, N: int, step: int, buffer: np.ndarray, messages: list[dict]) -> np.ndarray:
    """Replace the arrived chunk by mine + it (reduce-scatter) or by it (all-gather), then rejoin."""
    parts = _split(buffer, N)
    for message in messages:
        c = message["chunk"]
        incoming = np.asarray(message["data"], dtype=buffer.dtype)
        parts[c] = parts[c] + incoming if step < N - 1 else incoming.copy()
    return np.concatenate(parts).astype(buffer.dtype, copy=False)


def allreduce_bytes_per_rank(*, M_bytes: float, N: int) -> float:
    """N−1 chunks in each of two phases, each a fraction 1/N of M."""
    if N == 1:
        return 0.0
    return 2.0 * M_bytes * (N - 1) / N


def network_wall(*, n_params: float, bytes_per_param: int, n_gpus: int, link_GBps: float,
                 compute_s: float) -> dict:
    """Communication against compute for one data-parallel step."""
    gradient_bytes = n_params * bytes_per_param
    bytes_per_gpu = allreduce_bytes_per_rank(M_bytes=gradient_bytes, N=n_gpus)
    bandwidth = link_GBps * 1e9  # bytes/s
    comm_s = bytes_per_gpu / bandwidth
    bound = "communication" if comm_s > compute_s else "compute"
    return dict(gradient_bytes=gradient_bytes, bytes_per_gpu=bytes_per_gpu, comm_s=comm_s,
                step_s_no_overlap=compute_s + comm_s, step_s_overlap=max(compute_s, comm_s), bound=bound,
                break_even_GBps=bytes_per_gpu / compute_s / 1e9)


def scaling_speedup(*, n_gpus: int, r: float) -> float:
    """The communication-tax curve, N / (1 + (N − 1)·r)."""
    return n_gpus / (1.0 + r * (n_gpus - 1))


def communication_tax(*, n_params: float, bytes_per_param: int, n_gpus: int, link_Gbps: float,
                      compute_s_one_gpu: float, overlap: bool = False) -> dict:
    """network_wall with the link in GB/s; the speed-up as N × (1 − the waiting fraction)."""
    share = compute_s_one_gpu / n_gpus
    wall = network_wall(n_params=n_params, bytes_per_param=bytes_per_param, n_gpus=n_gpus,
                        link_GBps=link_Gbps / 8.0, compute_s=share)
    step = wall["step_s_overlap"] if overlap else wall["step_s_no_overlap"]
    waiting = (step - share) / step
    return dict(comm_s=wall["comm_s"], compute_s=share, step_s=step, comm_fraction=waiting,
                speedup=compute_s_one_gpu / step, efficiency=compute_s_one_gpu / step / n_gpus,
                r=2 * n_params * bytes_per_param * 8 / (link_Gbps * 1e9 * compute_s_one_gpu))
