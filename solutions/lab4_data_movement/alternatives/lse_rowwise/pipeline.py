"""Lab 4, part 1, another idiom: stable sorting, and a loader that reports its errors.

The slowest stage comes from ``sorted`` (stable, so the first of ties in
the dict's order stays first). The prefetcher is a ``threading.Thread``
with a target; the consumer reads the bounded ``queue.Queue`` with
``iter(q.get, sentinel)``, and an exception in the loader travels through
the queue and is raised again in the calling thread.
"""

from __future__ import annotations

import queue
import threading

from lab4_sim import Recorder

END = ("end of stream",)


def storage_rate(*, disk_rate: float, network_rate: float, access_factor: float = 1.0) -> float:
    """min(disk, network) × access factor."""
    return sorted((disk_rate, network_rate))[0] * access_factor


def preprocess_rate(*, workers: int, t_transform_s: float) -> float:
    """workers / t_transform."""
    assert t_transform_s > 0, "a transform takes a positive time"
    return float(workers) / t_transform_s


def pipeline_rate(*, stage_rates: dict[str, float]) -> dict:
    """Stages sorted by rate, slowest first; a stable sort keeps ties in the dict's order."""
    assert "compute" in stage_rates, "the pipeline needs a 'compute' stage"
    name, rate = sorted(stage_rates.items(), key=lambda kv: kv[1])[0]
    return {"rate": rate, "bottleneck": name, "utilization": rate / stage_rates["compute"]}


def pipeline_step(*, stage_times_s: dict[str, float], overlap: bool) -> dict:
    """Stages sorted by time, slowest first (negated key: a stable sort keeps ties in order)."""
    assert "compute" in stage_times_s, "the pipeline needs a 'compute' stage"
    ranked = sorted(stage_times_s.items(), key=lambda kv: -kv[1])
    bottleneck, longest = ranked[0]
    step = longest if overlap else sum(stage_times_s.values())
    return dict(step_s=step, throughput=1.0 / step, utilization=stage_times_s["compute"] / step,
                bottleneck=bottleneck)


def gpt2_pipeline(*, batch_size: int = 32, seq_len: int = 1024, tokens_per_s_per_core: float = 500_000.0,
                  workers: int = 8, bytes_per_token: int = 8, pcie_GBps: float = 15.75,
                  forward_s: float = 0.080) -> dict:
    """The GPT-2 pipeline through pipeline_step."""
    tokens = batch_size * seq_len
    result = {"tokens_per_batch": tokens, "tokenize_s_one_core": tokens / tokens_per_s_per_core}
    result["tokenize_s"] = result["tokenize_s_one_core"] / workers
    result["batch_bytes"] = tokens * bytes_per_token
    result["transfer_s"] = result["batch_bytes"] / (pcie_GBps * 1e9)
    result["forward_s"] = forward_s
    stages = {"tokenize": result["tokenize_s"], "transfer": result["transfer_s"], "compute": forward_s}
    for suffix, overlap in (("no_overlap", False), ("overlap", True)):
        step = pipeline_step(stage_times_s=stages, overlap=overlap)
        result[f"step_s_{suffix}"] = step["step_s"]
        result[f"utilization_{suffix}"] = step["utilization"]
        result["bottleneck"] = step["bottleneck"]
    order = ("tokens_per_batch", "tokenize_s_one_core", "tokenize_s", "batch_bytes", "transfer_s", "forward_s",
             "step_s_no_overlap", "step_s_overlap", "utilization_no_overlap", "utilization_overlap", "bottleneck")
    return {key: result[key] for key in order}


class _LoaderFailed:
    def __init__(self, error: BaseException):
        self.error = error


def image_pipeline(*, workers: int, batch_size: int = 32, t_transform_s: float = 0.030,
                   compute_s: float = 0.010, image_bytes: float = 500_000.0, disk_GBps: float = 7.0,
                   network_GBps: float | None = None, access_factor: float = 0.1,
                   tensor_bytes_per_image: int = 224 * 224 * 3 * 4, pcie_GBps: float = 15.75) -> dict:
    """Stage rates in batches/s; a stable sort keeps the earliest of equally slow stages first."""
    network = disk_GBps if network_GBps is None else network_GBps
    per_batch_stored = image_bytes * batch_size
    stages = [("storage", storage_rate(disk_rate=disk_GBps * 1e9, network_rate=network * 1e9,
                                       access_factor=access_factor) / per_batch_stored),
              ("preprocess", preprocess_rate(workers=workers, t_transform_s=t_transform_s)),
              ("transfer", (pcie_GBps * 1e9 / tensor_bytes_per_image) / batch_size),
              ("compute", 1 / compute_s)]
    name, rate = sorted(stages, key=lambda stage: stage[1])[0]
    out = {f"{stage}_rate": r for stage, r in stages}
    out.update(rate=rate, bottleneck=name, utilization=rate / out["compute_rate"], images_per_s=batch_size * rate)
    return out


def run_loader(*, n_items: int, load_work: float, compute_work: float, kind: str = "sleep",
               prefetch: bool = False, queue_size: int = 2) -> dict:
    """Sequential, or a loader thread feeding a bounded queue that this thread drains."""
    assert kind in ("sleep", "python_cpu"), f"unknown kind {kind!r}"
    assert queue_size >= 1, "a bounded queue holds at least one item"
    rec = Recorder()
    if not prefetch:
        for i in range(n_items):
            item = rec.load(i, kind=kind, amount=load_work)
            rec.compute(item, kind=kind, amount=compute_work)
        return rec.report()

    ready: queue.Queue = queue.Queue(maxsize=queue_size)

    def loader() -> None:
        try:
            for i in range(n_items):
                ready.put(rec.load(i, kind=kind, amount=load_work))
        except BaseException as exc:  # hand the failure to the consumer instead of hanging it
            ready.put(_LoaderFailed(exc))
        ready.put(END)

    thread = threading.Thread(target=loader, name="loader", daemon=True)
    thread.start()
    for item in iter(ready.get, END):
        if isinstance(item, _LoaderFailed):
            thread.join()  # it has put END already, nothing blocks it
            raise item.error
        rec.compute(item, kind=kind, amount=compute_work)
    thread.join()
    return rec.report()
