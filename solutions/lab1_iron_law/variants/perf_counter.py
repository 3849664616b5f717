import time


def _seconds_of_one(dev, X, W) -> float:
    # BUG: times with the real clock instead of the device's: a simulated device's time is on dev.clock()
    t0 = time.perf_counter()
    dev.matmul(X, W)
    return time.perf_counter() - t0
