"""Lab 1, part 2, a correct alternative: a table of units and small steps.

Conversions come from one table of units; every calculator is written as a
chain of named intermediate quantities.
"""

from __future__ import annotations

import math

UNITS = {"s": 1.0, "hour": 3600.0, "day": 86400.0, "kW": 1000.0}
FLOPS_PER_PARAM_TOKEN = {"forward": 2.0, "backward": 4.0}


def training_flops(n_params: float, n_tokens: float) -> float:
    """The 6 * P * T estimate of the FLOPs to train a dense transformer."""
    return sum(FLOPS_PER_PARAM_TOKEN.values()) * n_params * n_tokens


def iron_law_time_s(flops: float, peak_flop_per_s: float, efficiency: float, data_bytes: float = 0.0,
                    bandwidth_bytes_per_s: float = float("inf"), latency_s: float = 0.0) -> float:
    """Time of a job by the iron law, general form."""
    achieved = peak_flop_per_s * efficiency
    terms = [data_bytes / bandwidth_bytes_per_s, flops / achieved, latency_s]
    return math.fsum(terms)


def model_flops_utilization(n_params: float, tokens_per_step: float, step_time_s: float,
                            peak_flop_per_s: float, n_devices: int = 1) -> float:
    """MFU: the model's useful FLOP rate as a fraction of the devices' peak."""
    useful_rate = training_flops(n_params, tokens_per_step) / step_time_s
    available_rate = peak_flop_per_s * n_devices
    return useful_rate / available_rate


def rent_vs_buy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                rent_per_gpu_hour: float, gpu_price: float) -> dict:
    """What one training run costs to rent, against buying the GPUs."""
    work = training_flops(n_params, n_tokens)
    wall_s = iron_law_time_s(work, peak_flop_per_s * n_gpus, mfu)
    wall_hours = wall_s / UNITS["hour"]
    gpu_hours = wall_hours * n_gpus
    rent = gpu_hours * rent_per_gpu_hour
    buy = gpu_price * n_gpus
    return {"flops": work, "days": wall_s / UNITS["day"], "gpu_hours": gpu_hours, "rent_cost": rent,
            "buy_cost": buy, "breakeven_runs": buy / rent}


def implied_mfu(n_params: float, n_tokens: float, gpu_hours: float, peak_flop_per_s: float) -> float:
    """The MFU a reported run must have reached, from its GPU-hours."""
    peak_work = gpu_hours * UNITS["hour"] * peak_flop_per_s  # what the GPUs could have done at peak
    return training_flops(n_params, n_tokens) / peak_work


def training_energy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                    gpu_watts: float, n_hosts: int = 0, host_watts: float = 0.0, pue: float = 1.0) -> dict:
    """Energy of a training run: (GPU power + host power) x hours x PUE."""
    wall_s = iron_law_time_s(training_flops(n_params, n_tokens), n_gpus * peak_flop_per_s, mfu)
    hours = wall_s / UNITS["hour"]
    watts = {"gpus": n_gpus * gpu_watts, "hosts": n_hosts * host_watts}
    power_kw = sum(watts.values()) / UNITS["kW"]
    facility_kw = power_kw * pue
    return {"hours": hours, "power_kw": power_kw, "energy_kwh": facility_kw * hours}


def mixed_precision_speedup(tensor_core_fraction: float, peak_ratio: float) -> float:
    """A table of the FP32 step's parts: (its share of the time, how much faster it gets)."""
    parts = {"on Tensor Cores": (tensor_core_fraction, peak_ratio), "the rest": (1.0 - tensor_core_fraction, 1.0)}
    mixed_share = sum(share / faster for share, faster in parts.values())
    return 1.0 / mixed_share


def implied_tensor_core_fraction(speedup: float, peak_ratio: float) -> float:
    """The share of the FP32 step that must run peak_ratio times faster to save what the speed-up saves."""
    time_saved = 1.0 - 1.0 / speedup
    saved_per_unit_share = 1.0 - 1.0 / peak_ratio
    return time_saved / saved_per_unit_share


def mixed_precision_run(flops: float, n_gpus: int, fp32_peak_flop_per_s: float, fp32_efficiency: float,
                        peak_ratio: float, tensor_core_fraction: float, usd_per_gpu_hour: float) -> dict:
    """Each run as a chain of named quantities."""
    fp32_wall_s = iron_law_time_s(flops, fp32_peak_flop_per_s * n_gpus, fp32_efficiency)
    speedup = mixed_precision_speedup(tensor_core_fraction, peak_ratio)
    mixed_wall_s = fp32_wall_s / speedup
    mixed_peak = fp32_peak_flop_per_s * peak_ratio * n_gpus
    mixed_efficiency = flops / (mixed_peak * mixed_wall_s)  # the iron law read backwards
    gpu_hours = {"fp32": fp32_wall_s * n_gpus / UNITS["hour"], "mixed": mixed_wall_s * n_gpus / UNITS["hour"]}
    return {"fp32_days": fp32_wall_s / UNITS["day"], "mixed_days": mixed_wall_s / UNITS["day"], "speedup": speedup,
            "mixed_efficiency": mixed_efficiency, "fp32_cost": gpu_hours["fp32"] * usd_per_gpu_hour,
            "mixed_cost": gpu_hours["mixed"] * usd_per_gpu_hour}
