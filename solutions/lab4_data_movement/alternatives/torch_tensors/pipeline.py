"""Lab 4, part 1, another idiom: numpy for the stages, a prefetching generator.

The slowest stage is ``np.argmin`` / ``np.argmax`` over the stage values
(both return the first of ties). The prefetcher is a generator: it starts
one ``threading.Thread`` that fills a ``queue.Queue(maxsize=queue_size)``,
yields the items in order and joins the thread when the stream ends.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

import numpy as np

from lab4_sim import Recorder


def storage_rate(*, disk_rate: float, network_rate: float, access_factor: float = 1.0) -> float:
    """min(disk, network) × access factor."""
    return float(np.min([disk_rate, network_rate]) * access_factor)


def preprocess_rate(*, workers: int, t_transform_s: float) -> float:
    """workers / t_transform."""
    assert t_transform_s > 0, "a transform takes a positive time"
    return float(np.divide(workers, t_transform_s))


def pipeline_rate(*, stage_rates: dict[str, float]) -> dict:
    """np.argmin picks the slowest stage (the first of ties)."""
    assert "compute" in stage_rates, "the pipeline needs a 'compute' stage"
    names = list(stage_rates)
    rates = np.array([stage_rates[n] for n in names], dtype=np.float64)
    slowest = int(np.argmin(rates))
    return {"rate": float(rates[slowest]), "bottleneck": names[slowest],
            "utilization": float(rates[slowest] / stage_rates["compute"])}


def pipeline_step(*, stage_times_s: dict[str, float], overlap: bool) -> dict:
    """np.sum or np.max of the stage times; np.argmax names the bottleneck (the first of ties)."""
    assert "compute" in stage_times_s, "the pipeline needs a 'compute' stage"
    names = list(stage_times_s)
    times = np.array([stage_times_s[n] for n in names], dtype=np.float64)
    step = float(times.max() if overlap else times.sum())
    return {"step_s": step, "throughput": 1.0 / step, "utilization": float(stage_times_s["compute"]) / step,
            "bottleneck": names[int(np.argmax(times))]}


def gpt2_pipeline(*, batch_size: int = 32, seq_len: int = 1024, tokens_per_s_per_core: float = 500_000.0,
                  workers: int = 8, bytes_per_token: int = 8, pcie_GBps: float = 15.75,
                  forward_s: float = 0.080) -> dict:
    """The GPT-2 pipeline's three stages as one numpy vector."""
    tokens = batch_size * seq_len
    one_core = tokens / tokens_per_s_per_core
    batch_bytes = tokens * bytes_per_token
    times = np.array([one_core / workers, batch_bytes / (pcie_GBps * 1e9), forward_s])
    serial, overlapped = float(times.sum()), float(times.max())
    return {
        "tokens_per_batch": int(tokens), "tokenize_s_one_core": float(one_core), "tokenize_s": float(times[0]),
        "batch_bytes": int(batch_bytes), "transfer_s": float(times[1]), "forward_s": float(forward_s),
        "step_s_no_overlap": serial, "step_s_overlap": overlapped,
        "utilization_no_overlap": forward_s / serial, "utilization_overlap": forward_s / overlapped,
        "bottleneck": ("tokenize", "transfer", "compute")[int(np.argmax(times))],
    }


STAGES = ("storage", "preprocess", "transfer", "compute")


def image_pipeline(*, workers: int, batch_size: int = 32, t_transform_s: float = 0.030,
                   compute_s: float = 0.010, image_bytes: float = 500_000.0, disk_GBps: float = 7.0,
                   network_GBps: float | None = None, access_factor: float = 0.1,
                   tensor_bytes_per_image: int = 224 * 224 * 3 * 4, pcie_GBps: float = 15.75) -> dict:
    """The four stage rates as one numpy vector; np.argmin names the slowest (the first of ties)."""
    links = [disk_GBps] if network_GBps is None else [disk_GBps, network_GBps]
    storage = float(np.min(links)) * 1e9 * access_factor / (batch_size * image_bytes)
    rates = np.array([storage, preprocess_rate(workers=workers, t_transform_s=t_transform_s),
                      pcie_GBps * 1e9 / (batch_size * tensor_bytes_per_image), 1.0 / compute_s])
    slowest = int(np.argmin(rates))
    rate = float(rates[slowest])
    return {**{f"{s}_rate": float(r) for s, r in zip(STAGES, rates)}, "rate": rate, "bottleneck": STAGES[slowest],
            "utilization": rate / float(rates[3]), "images_per_s": rate * batch_size}


def prefetched(load: Callable[[int], dict], n_items: int, queue_size: int) -> Iterator[dict]:
    """Yield load(0), ..., load(n_items − 1), loaded ahead by one thread through a bounded queue."""
    buffer: queue.Queue = queue.Queue(maxsize=queue_size)

    def fill() -> None:
        for i in range(n_items):
            buffer.put(load(i))

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    try:
        for _ in range(n_items):
            yield buffer.get()
    finally:
        thread.join()


def run_loader(*, n_items: int, load_work: float, compute_work: float, kind: str = "sleep",
               prefetch: bool = False, queue_size: int = 2) -> dict:
    """Compute every item in this thread; prefetch=True loads them in a background thread."""
    assert kind in ("sleep", "python_cpu"), f"unknown kind {kind!r}"
    assert queue_size >= 1, "a bounded queue holds at least one item"
    rec = Recorder()

    def load(i: int) -> dict:
        return rec.load(i, kind=kind, amount=load_work)

    items = prefetched(load, n_items, queue_size) if prefetch else map(load, range(n_items))
    for item in items:
        rec.compute(item, kind=kind, amount=compute_work)
    return rec.report()
