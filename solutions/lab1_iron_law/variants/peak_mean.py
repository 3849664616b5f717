def measure_peak_flop_per_s(n: int = 512, repeats: int = 10, device: dict | None = None) -> float:
    dev = lab1_device.open_device(device)
    X, W = dev.randn(n, n), dev.randn(n, n)
    dev.matmul(X, W)
    # BUG: the rate of the mean time, not of the fastest: the peak is the best the device can do
    mean = statistics.mean(_seconds_of_one(dev, X, W) for _ in range(repeats))
    return matmul_flops(n, n, n) / mean
