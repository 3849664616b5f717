"""Lab 1, part 2, a correct alternative: numpy float64 arithmetic.

The same formulas as the chapter, computed with numpy scalars and arrays
and handed back as Python floats.
"""

from __future__ import annotations

import numpy as np

SECONDS = np.array([3600.0, 86400.0])  # an hour, a day


def training_flops(n_params: float, n_tokens: float) -> float:
    """The 6 * P * T estimate of the FLOPs to train a dense transformer."""
    return float(np.prod(np.array([6.0, n_params, n_tokens])))


def iron_law_time_s(flops: float, peak_flop_per_s: float, efficiency: float, data_bytes: float = 0.0,
                    bandwidth_bytes_per_s: float = float("inf"), latency_s: float = 0.0) -> float:
    """Time of a job by the iron law, general form."""
    terms = np.array([np.float64(data_bytes) / np.float64(bandwidth_bytes_per_s),
                      np.float64(flops) / (np.float64(peak_flop_per_s) * efficiency), latency_s])
    return float(terms.sum())


def model_flops_utilization(n_params: float, tokens_per_step: float, step_time_s: float,
                            peak_flop_per_s: float, n_devices: int = 1) -> float:
    """MFU: the model's useful FLOP rate as a fraction of the devices' peak."""
    return float(np.float64(training_flops(n_params, tokens_per_step)) / step_time_s / (n_devices * peak_flop_per_s))


def rent_vs_buy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                rent_per_gpu_hour: float, gpu_price: float) -> dict:
    """What one training run costs to rent, against buying the GPUs."""
    flops = training_flops(n_params, n_tokens)
    seconds = iron_law_time_s(flops, n_gpus * peak_flop_per_s, mfu)
    hours, days = (np.float64(seconds) / SECONDS).tolist()
    gpu_hours = float(np.float64(n_gpus) * hours)
    rent, buy = gpu_hours * rent_per_gpu_hour, float(np.float64(gpu_price) * n_gpus)
    return {"flops": flops, "days": days, "gpu_hours": gpu_hours, "rent_cost": rent, "buy_cost": buy,
            "breakeven_runs": buy / rent}


def implied_mfu(n_params: float, n_tokens: float, gpu_hours: float, peak_flop_per_s: float) -> float:
    """The MFU a reported run must have reached, from its GPU-hours."""
    return float(training_flops(n_params, n_tokens) / np.prod([gpu_hours, SECONDS[0], peak_flop_per_s]))


def training_energy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                    gpu_watts: float, n_hosts: int = 0, host_watts: float = 0.0, pue: float = 1.0) -> dict:
    """Energy of a training run: (GPU power + host power) x hours x PUE."""
    hours = iron_law_time_s(training_flops(n_params, n_tokens), n_gpus * peak_flop_per_s, mfu) / float(SECONDS[0])
    power_kw = float(np.dot([n_gpus, n_hosts], [gpu_watts, host_watts]) / 1000.0)
    return {"hours": hours, "power_kw": power_kw, "energy_kwh": power_kw * hours * pue}


def mixed_precision_speedup(tensor_core_fraction: float, peak_ratio: float) -> float:
    """Amdahl with the two parts of an FP32 step as an array of times, each divided by its own speed-up."""
    parts = np.array([1.0 - tensor_core_fraction, tensor_core_fraction])
    speedups = np.array([1.0, peak_ratio])
    return float(1.0 / (parts / speedups).sum())


def implied_tensor_core_fraction(speedup: float, peak_ratio: float) -> float:
    """Amdahl solved for the fraction."""
    return float((1.0 - np.reciprocal(np.float64(speedup))) / (1.0 - np.reciprocal(np.float64(peak_ratio))))


def mixed_precision_run(flops: float, n_gpus: int, fp32_peak_flop_per_s: float, fp32_efficiency: float,
                        peak_ratio: float, tensor_core_fraction: float, usd_per_gpu_hour: float) -> dict:
    """Both runs as one array of wall-clock seconds."""
    speedup = mixed_precision_speedup(tensor_core_fraction, peak_ratio)
    seconds = iron_law_time_s(flops, n_gpus * fp32_peak_flop_per_s, fp32_efficiency) / np.array([1.0, speedup])
    days = seconds / SECONDS[1]
    costs = n_gpus * seconds / SECONDS[0] * usd_per_gpu_hour
    return {"fp32_days": float(days[0]), "mixed_days": float(days[1]), "speedup": speedup,
            "mixed_efficiency": float(fp32_efficiency * speedup / peak_ratio), "fp32_cost": float(costs[0]),
            "mixed_cost": float(costs[1])}
