def measure_matmul_throughput(batch_sizes: list[int], d_in: int, d_out: int, repeats: int = 5,
                              peak_flop_per_s: float | None = None, device: dict | None = None) -> dict:
    probe = measure_peak_flop_per_s(device=device) if peak_flop_per_s is None else None
    dev = lab1_device.open_device(device)
    W = dev.randn(d_in, d_out)
    Xs = [dev.randn(b, d_in) for b in batch_sizes]
    # BUG: no untimed warm-up: the first timed call of each shape pays the one-time cost
    times = [[] for _ in batch_sizes]
    for _ in range(repeats):
        for X, t in zip(Xs, times):
            t.append(_seconds_of_one(dev, X, W))
    seconds = [statistics.median(t) for t in times]
    flops = [matmul_flops(b, d_in, d_out) for b in batch_sizes]
    rates = [f / s for f, s in zip(flops, seconds)]
    peak = float(peak_flop_per_s) if probe is None else max(probe, *rates)
    return {"batch_sizes": list(batch_sizes), "flops": flops, "seconds": seconds, "flop_per_s": rates,
            "peak_flop_per_s": peak, "utilization": [r / peak for r in rates]}
