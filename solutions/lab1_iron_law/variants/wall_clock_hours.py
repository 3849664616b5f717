def rent_vs_buy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                rent_per_gpu_hour: float, gpu_price: float) -> dict:
    # BUG: bills the wall-clock hours once, not once per GPU
    flops = training_flops(n_params, n_tokens)
    seconds = iron_law_time_s(flops, n_gpus * peak_flop_per_s, mfu)
    gpu_hours = seconds / SECONDS_PER_HOUR
    rent = gpu_hours * rent_per_gpu_hour
    buy = n_gpus * gpu_price
    return {"flops": flops, "days": seconds / SECONDS_PER_DAY, "gpu_hours": gpu_hours,
            "rent_cost": rent, "buy_cost": buy, "breakeven_runs": buy / rent}
