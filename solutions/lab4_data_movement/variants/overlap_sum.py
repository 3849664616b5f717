

# Variant: "overlap" that still adds the stage times, as if prefetching
# changed nothing.
def pipeline_step(*, stage_times_s, overlap):
    times = stage_times_s
    step = sum(times.values())
    bottleneck = max(times, key=times.get)
    return {"step_s": step, "throughput": 1.0 / step, "utilization": times["compute"] / step,
            "bottleneck": bottleneck}
