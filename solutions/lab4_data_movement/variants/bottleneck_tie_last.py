

# Variant: breaks ties the other way. When several stages are equally slow
# it names the last of them, not the first in the dict's order as the
# docstrings say (a `>=` where `>` was meant).
def _slowest(values, *, largest):
    best = None
    for name, v in values.items():
        if best is None or (v >= values[best] if largest else v <= values[best]):
            best = name
    return best


def pipeline_rate(*, stage_rates):
    bottleneck = _slowest(stage_rates, largest=False)
    rate = stage_rates[bottleneck]
    return {"rate": rate, "bottleneck": bottleneck, "utilization": rate / stage_rates["compute"]}


def pipeline_step(*, stage_times_s, overlap):
    times = stage_times_s
    step = max(times.values()) if overlap else sum(times.values())
    return {"step_s": step, "throughput": 1.0 / step, "utilization": times["compute"] / step,
            "bottleneck": _slowest(times, largest=True)}
