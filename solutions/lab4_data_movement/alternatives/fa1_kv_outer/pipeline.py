"""Lab 4, part 1, another idiom: explicit loops, and a Thread subclass with a sentinel.

The slowest stage is found by a plain loop that replaces the current
choice only on a strictly slower stage, so the first of several ties
stays. The prefetcher is a ``threading.Thread`` subclass that owns the
bounded ``queue.Queue`` and ends the stream with a sentinel.
"""

from __future__ import annotations

import queue
import threading

from lab4_sim import Recorder

_DONE = object()  # the end of the stream


def storage_rate(*, disk_rate: float, network_rate: float, access_factor: float = 1.0) -> float:
    """min(disk, network) × access factor."""
    slower = disk_rate if disk_rate <= network_rate else network_rate
    return slower * access_factor


def preprocess_rate(*, workers: int, t_transform_s: float) -> float:
    """workers / t_transform."""
    if not t_transform_s > 0:
        raise ValueError("a transform takes a positive time")
    return workers / t_transform_s


def _first_extreme(values: dict[str, float], *, slowest_is_smallest: bool) -> str:
    """Name of the smallest (or largest) value; the first one of ties."""
    best_name, best = None, None
    for name, value in values.items():
        if best is None or (value < best if slowest_is_smallest else value > best):
            best_name, best = name, value
    return best_name


def pipeline_rate(*, stage_rates: dict[str, float]) -> dict:
    """The slowest rate, its stage (first of ties) and rate / compute rate."""
    if "compute" not in stage_rates:
        raise KeyError("the pipeline needs a 'compute' stage")
    name = _first_extreme(stage_rates, slowest_is_smallest=True)
    rate = stage_rates[name]
    return {"rate": rate, "bottleneck": name, "utilization": rate / stage_rates["compute"]}


def pipeline_step(*, stage_times_s: dict[str, float], overlap: bool) -> dict:
    """Sum of stage times without overlap, their max with it."""
    if "compute" not in stage_times_s:
        raise KeyError("the pipeline needs a 'compute' stage")
    name = _first_extreme(stage_times_s, slowest_is_smallest=False)
    if overlap:
        step = stage_times_s[name]
    else:
        step = 0.0
        for t in stage_times_s.values():
            step += t
    return {"step_s": step, "throughput": 1.0 / step, "utilization": stage_times_s["compute"] / step,
            "bottleneck": name}


def gpt2_pipeline(*, batch_size: int = 32, seq_len: int = 1024, tokens_per_s_per_core: float = 500_000.0,
                  workers: int = 8, bytes_per_token: int = 8, pcie_GBps: float = 15.75,
                  forward_s: float = 0.080) -> dict:
    """Tokenize, transfer, forward: each stage's time, both step times, and the slowest stage."""
    tokens = batch_size * seq_len
    one_core = tokens / tokens_per_s_per_core
    tokenize = one_core / workers
    nbytes = tokens * bytes_per_token
    transfer = nbytes / (pcie_GBps * 1e9)
    stages = (("tokenize", tokenize), ("transfer", transfer), ("compute", forward_s))
    serial = tokenize + transfer + forward_s
    slowest, overlapped = stages[0]
    for name, t in stages[1:]:
        if t > overlapped:
            slowest, overlapped = name, t
    return {
        "tokens_per_batch": tokens, "tokenize_s_one_core": one_core, "tokenize_s": tokenize,
        "batch_bytes": nbytes, "transfer_s": transfer, "forward_s": forward_s,
        "step_s_no_overlap": serial, "step_s_overlap": overlapped,
        "utilization_no_overlap": forward_s / serial, "utilization_overlap": forward_s / overlapped,
        "bottleneck": slowest,
    }


def image_pipeline(*, workers: int, batch_size: int = 32, t_transform_s: float = 0.030,
                   compute_s: float = 0.010, image_bytes: float = 500_000.0, disk_GBps: float = 7.0,
                   network_GBps: float | None = None, access_factor: float = 0.1,
                   tensor_bytes_per_image: int = 224 * 224 * 3 * 4, pcie_GBps: float = 15.75) -> dict:
    """Four stages in batches/s, in pipeline order; the first strictly slowest one binds."""
    storage_GBps = disk_GBps
    if network_GBps is not None and network_GBps < storage_GBps:
        storage_GBps = network_GBps
    stages = {
        "storage": storage_rate(disk_rate=storage_GBps * 1e9, network_rate=storage_GBps * 1e9,
                                access_factor=access_factor) / (batch_size * image_bytes),
        "preprocess": preprocess_rate(workers=workers, t_transform_s=t_transform_s),
        "transfer": pcie_GBps * 1e9 / (tensor_bytes_per_image * batch_size),
        "compute": 1.0 / compute_s,
    }
    name = _first_extreme(stages, slowest_is_smallest=True)
    rate = stages[name]
    return {"storage_rate": stages["storage"], "preprocess_rate": stages["preprocess"],
            "transfer_rate": stages["transfer"], "compute_rate": stages["compute"], "rate": rate,
            "bottleneck": name, "utilization": rate / stages["compute"], "images_per_s": rate * batch_size}


class _Loader(threading.Thread):
    """Loads items 0..n−1 in order into a bounded queue, then puts the sentinel."""

    def __init__(self, rec: Recorder, n_items: int, kind: str, amount: float, queue_size: int):
        super().__init__(name="prefetch-loader", daemon=True)
        self.rec, self.n_items, self.kind, self.amount = rec, n_items, kind, amount
        self.items: queue.Queue = queue.Queue(maxsize=queue_size)

    def run(self) -> None:
        for i in range(self.n_items):
            self.items.put(self.rec.load(i, kind=self.kind, amount=self.amount))
        self.items.put(_DONE)


def run_loader(*, n_items: int, load_work: float, compute_work: float, kind: str = "sleep",
               prefetch: bool = False, queue_size: int = 2) -> dict:
    """Load and compute n_items items, in one loop or with a background loader thread."""
    if kind not in ("sleep", "python_cpu"):
        raise ValueError(f"unknown kind {kind!r}")
    if queue_size < 1:
        raise ValueError("a bounded queue holds at least one item")
    rec = Recorder()
    if prefetch:
        loader = _Loader(rec, n_items, kind, load_work, queue_size)
        loader.start()
        while (item := loader.items.get()) is not _DONE:
            rec.compute(item, kind=kind, amount=compute_work)
        loader.join()
    else:
        i = 0
        while i < n_items:
            item = rec.load(i, kind=kind, amount=load_work)
            rec.compute(item, kind=kind, amount=compute_work)
            i += 1
    return rec.report()
