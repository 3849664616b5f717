def model_flops_utilization(n_params: float, tokens_per_step: float, step_time_s: float,
                            peak_flop_per_s: float, n_devices: int = 1) -> float:
    # BUG: counts the forward pass only (2 * P * T), not training (6 * P * T)
    achieved = 2.0 * n_params * tokens_per_step / step_time_s
    return achieved / (n_devices * peak_flop_per_s)
