"""Lab 1, part 2, a correct alternative: everything in GPU-seconds.

A run is first a number of GPU-seconds (the work over one GPU's achieved
rate); wall-clock time is that shared out over the GPUs.
"""

from __future__ import annotations

HOUR = 60.0 * 60.0
DAY = 24.0 * HOUR


def training_flops(n_params: float, n_tokens: float) -> float:
    """The 6 * P * T estimate of the FLOPs to train a dense transformer."""
    forward = 2.0 * n_params * n_tokens
    return forward + 2.0 * forward  # backward is twice the forward


def iron_law_time_s(flops: float, peak_flop_per_s: float, efficiency: float, data_bytes: float = 0.0,
                    bandwidth_bytes_per_s: float = float("inf"), latency_s: float = 0.0) -> float:
    """Time of a job by the iron law, general form."""
    compute = flops / peak_flop_per_s / efficiency
    move = 0.0 if data_bytes == 0 else data_bytes / bandwidth_bytes_per_s
    return move + compute + latency_s


def model_flops_utilization(n_params: float, tokens_per_step: float, step_time_s: float,
                            peak_flop_per_s: float, n_devices: int = 1) -> float:
    """MFU: the model's useful FLOP rate as a fraction of the devices' peak."""
    ideal_step_s = training_flops(n_params, tokens_per_step) / (n_devices * peak_flop_per_s)
    return ideal_step_s / step_time_s


def _gpu_seconds(n_params, n_tokens, peak_flop_per_s, mfu) -> float:
    return training_flops(n_params, n_tokens) / (peak_flop_per_s * mfu)


def rent_vs_buy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                rent_per_gpu_hour: float, gpu_price: float) -> dict:
    """What one training run costs to rent, against buying the GPUs."""
    gpu_s = _gpu_seconds(n_params, n_tokens, peak_flop_per_s, mfu)
    gpu_hours = gpu_s / HOUR
    rent = rent_per_gpu_hour * gpu_hours
    buy = gpu_price * n_gpus
    return {"flops": training_flops(n_params, n_tokens), "days": gpu_s / n_gpus / DAY, "gpu_hours": gpu_hours,
            "rent_cost": rent, "buy_cost": float(buy), "breakeven_runs": buy / rent}


def implied_mfu(n_params: float, n_tokens: float, gpu_hours: float, peak_flop_per_s: float) -> float:
    """The MFU a reported run must have reached, from its GPU-hours."""
    return _gpu_seconds(n_params, n_tokens, peak_flop_per_s, 1.0) / (gpu_hours * HOUR)


def training_energy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                    gpu_watts: float, n_hosts: int = 0, host_watts: float = 0.0, pue: float = 1.0) -> dict:
    """Energy of a training run: (GPU power + host power) x hours x PUE."""
    hours = _gpu_seconds(n_params, n_tokens, peak_flop_per_s, mfu) / n_gpus / HOUR
    power_kw = n_gpus * gpu_watts / 1000.0 + n_hosts * host_watts / 1000.0
    return {"hours": hours, "power_kw": power_kw, "energy_kwh": hours * power_kw * pue}


def mixed_precision_speedup(tensor_core_fraction: float, peak_ratio: float) -> float:
    """Amdahl: an FP32 step of 1 s becomes (1 - f) s of unchanged work plus f / r s on Tensor Cores."""
    mixed_step_s = (1.0 - tensor_core_fraction) + tensor_core_fraction / peak_ratio
    return 1.0 / mixed_step_s


def implied_tensor_core_fraction(speedup: float, peak_ratio: float) -> float:
    """Solve 1 / speedup = 1 - f + f / r for f."""
    saved_per_step = 1.0 - 1.0 / speedup  # of a 1 s FP32 step
    saved_per_tensor_core_second = 1.0 - 1.0 / peak_ratio
    return saved_per_step / saved_per_tensor_core_second


def mixed_precision_run(flops: float, n_gpus: int, fp32_peak_flop_per_s: float, fp32_efficiency: float,
                        peak_ratio: float, tensor_core_fraction: float, usd_per_gpu_hour: float) -> dict:
    """FP32 and mixed precision in GPU-seconds, then shared out over the GPUs."""
    fp32_gpu_s = flops / (fp32_peak_flop_per_s * fp32_efficiency)
    speedup = mixed_precision_speedup(tensor_core_fraction, peak_ratio)
    mixed_gpu_s = fp32_gpu_s / speedup
    return {"fp32_days": fp32_gpu_s / n_gpus / DAY, "mixed_days": mixed_gpu_s / n_gpus / DAY, "speedup": speedup,
            "mixed_efficiency": flops / (mixed_gpu_s * peak_ratio * fp32_peak_flop_per_s),
            "fp32_cost": fp32_gpu_s / HOUR * usd_per_gpu_hour, "mixed_cost": mixed_gpu_s / HOUR * usd_per_gpu_hour}
