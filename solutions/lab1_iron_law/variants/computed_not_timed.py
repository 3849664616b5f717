def measure_matmul_throughput(batch_sizes: list[int], d_in: int, d_out: int, repeats: int = 5,
                              peak_flop_per_s: float | None = None, device: dict | None = None) -> dict:
    # BUG: computes the time the peak rate would take instead of measuring it
    peak = peak_flop_per_s if peak_flop_per_s is not None else measure_peak_flop_per_s(device=device)
    flops = [matmul_flops(b, d_in, d_out) for b in batch_sizes]
    seconds = [f / peak for f in flops]
    rate = [f / s for f, s in zip(flops, seconds)]
    return {"batch_sizes": list(batch_sizes), "flops": flops, "seconds": seconds, "flop_per_s": rate,
            "peak_flop_per_s": float(peak), "utilization": [r / peak for r in rate]}
