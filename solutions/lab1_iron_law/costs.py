"""Lab 1, part 2: the iron law as a calculator, from FLOPs to days, dollars and kWh.

    T_train = O / (R_peak * eta)

O is the work in FLOPs, R_peak the peak rate of all devices together and eta
the achieved fraction of peak (for a whole model: MFU): §2 Iron Law of
Training Performance.  Conventions used by
every function below (the tests rely on them):

* The work of training a dense transformer is O = 6 * P * T FLOPs
  (training_flops): P parameters, T tokens; the chapter's 6 FLOPs per
  parameter per token (§4.4.2 Batch size and parameter updates, "The
  utility bill", the one place it prints the factor; §5 Identifying
  Bottlenecks uses it for its MFU example without printing it).
* Rates are FLOP/s, times seconds unless a name says hours or days;
  1 hour = 3600 s, 1 day = 86400 s.  Money is in dollars, power in watts
  (arguments) or kW (results), energy in kWh.
* peak_flop_per_s is the peak of ONE device unless a docstring says otherwise.
* Every number returned is a float.

Your task: replace every `raise NotImplementedError` below with code.  Each
docstring is the contract the tests check; they call every function with keyword
arguments.  `autograder check lab1` runs the public tests; hidden ones run at grading.

Tóm tắt (tiếng Việt): định luật sắt thành công cụ tính; mọi hàm được gọi bằng
đối số từ khoá.  O = 6 * P * T FLOP; tốc độ là FLOP/s, thời gian là giây (trừ khi
tên ghi giờ hay ngày); tiền là đô la, công suất là W (đối số) hay kW (kết quả),
năng lượng là kWh; peak_flop_per_s là đỉnh của MỘT thiết bị; mọi số trả về là float.
Độ chính xác hỗn hợp: tăng tốc theo định luật Amdahl và thời gian, chi phí theo định luật sắt.
"""

from __future__ import annotations

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0


def training_flops(n_params: float, n_tokens: float) -> float:
    """The 6 * P * T estimate of the FLOPs to train a dense transformer.

    Each parameter takes part in one multiply-accumulate per token in the
    forward pass (2 FLOPs) and two in the backward pass (4 FLOPs): input
    gradient and weight gradient.  The rule ignores the attention products
    of two activations (scores and attention x V), which have no parameters
    and grow as S^2; flops.step_flops counts them.  For GPT-2 XL at B=32,
    S=1024 (P=1.5e9, T=32768 tokens) this gives 294.9 TFLOP against the
    counted 320.8 TFLOP.

    Returns:
        float: 6 * n_params * n_tokens.

    Tóm tắt (tiếng Việt): ước lượng FLOP huấn luyện transformer dày (dense): trả
    về float 6 * n_params * n_tokens (mỗi tham số 2 FLOP mỗi token ở lượt xuôi,
    4 ở lượt ngược; bỏ qua các tích attention giữa hai giá trị kích hoạt).
    """
    ### BEGIN SOLUTION
    return 6.0 * n_params * n_tokens
    ### END SOLUTION


def iron_law_time_s(flops: float, peak_flop_per_s: float, efficiency: float, data_bytes: float = 0.0,
                    bandwidth_bytes_per_s: float = float("inf"), latency_s: float = 0.0) -> float:
    """Time of a job by the iron law, general form.

        T = data_bytes / bandwidth_bytes_per_s + flops / (peak_flop_per_s * efficiency) + latency_s

    Here peak_flop_per_s is the AGGREGATE peak of everything that runs the
    job (multiply by the number of devices before calling).  With the
    defaults (no data, infinite bandwidth, no latency) it is the plain
    iron law O / (R_peak * eta).  The terms are added: nothing overlaps.
    peak_flop_per_s and efficiency must be positive (no result is defined
    otherwise).

    Returns:
        float seconds.

    Tóm tắt (tiếng Việt): thời gian, float giây, = data_bytes / bandwidth_bytes_per_s
    + flops / (peak_flop_per_s * efficiency) + latency_s (cộng, không chồng lấp);
    peak_flop_per_s ở đây là đỉnh TỔNG của mọi thiết bị.
    """
    ### BEGIN SOLUTION
    assert peak_flop_per_s > 0 and efficiency > 0, "the peak rate and the efficiency must be positive"
    return data_bytes / bandwidth_bytes_per_s + flops / (peak_flop_per_s * efficiency) + latency_s
    ### END SOLUTION


def model_flops_utilization(n_params: float, tokens_per_step: float, step_time_s: float,
                            peak_flop_per_s: float, n_devices: int = 1) -> float:
    """MFU: the model's useful FLOP rate as a fraction of the devices' peak.

        MFU = (6 * n_params * tokens_per_step / step_time_s) / (n_devices * peak_flop_per_s)

    The numerator uses training_flops (6 * P * T), not the FLOPs the
    hardware actually executed: recomputation does not count as useful.
    Example (§5 Identifying Bottlenecks): a 7B model, 1024 tokens per step,
    1.2 s per step on one A100 (312e12 FLOP/s) has MFU 0.115 (the chapter
    prints it rounded, about 0.11).

    Returns:
        float, a fraction (0.3 to 0.5 for good production runs).

    Tóm tắt (tiếng Việt): MFU = (6 * n_params * tokens_per_step / step_time_s)
    / (n_devices * peak_flop_per_s), chỉ tính FLOP hữu ích (phần tính lại không
    được tính); trả về float, một tỉ lệ.
    """
    ### BEGIN SOLUTION
    achieved = training_flops(n_params, tokens_per_step) / step_time_s
    return achieved / (n_devices * peak_flop_per_s)
    ### END SOLUTION


def mixed_precision_speedup(tensor_core_fraction: float, peak_ratio: float) -> float:
    """Step-time speed-up of switching to a lower precision, by Amdahl's law.

    Lower precision raises the peak of the work that runs on Tensor Cores
    (the matmuls) by peak_ratio, the ratio of the two peaks: 16 for an A100
    (312 TFLOP/s FP16/BF16 against 19.5 FP32) and about 2 for an H100's
    FP8 against its FP16 (§6.3.3 Mixed-precision hardware support), about 8
    for a V100 (125 against 15.7: §3.1.2 Matrix operations).  The rest of a
    step (data movement, other kernels, communication, loss scaling, the
    optimizer) does not speed up.  With f = tensor_core_fraction, the fraction of the FP32
    step TIME spent in the work that moves to Tensor Cores, and that work
    running at the same fraction of its new peak as of its old one:

        speedup = T_fp32 / T_mixed = 1 / ((1 - f) + f / peak_ratio)

    This is Amdahl's law (G. Amdahl, AFIPS 1967; the chapter names it in §5
    Identifying Bottlenecks).  f = 0 gives 1; f = 1 gives peak_ratio, the ceiling.
    0 <= f <= 1 and peak_ratio >= 1.

    Returns:
        float, the speed-up (>= 1).

    Tóm tắt (tiếng Việt): tăng tốc thời gian mỗi bước khi chuyển sang độ chính
    xác thấp hơn, theo định luật Amdahl: 1 / ((1 - f) + f / peak_ratio), với f =
    tensor_core_fraction là tỉ lệ THỜI GIAN của bước FP32 dành cho phần chạy trên
    Tensor Core, peak_ratio là tỉ số hai mức đỉnh; trả về float.
    """
    ### BEGIN SOLUTION
    f = tensor_core_fraction
    # times add, rates do not: the part that does not speed up keeps its share of the time
    return 1.0 / ((1.0 - f) + f / peak_ratio)
    ### END SOLUTION


def implied_tensor_core_fraction(speedup: float, peak_ratio: float) -> float:
    """The fraction f of FP32 step time that a measured speed-up implies (Amdahl, inverted).

    The f for which mixed_precision_speedup(f, peak_ratio) == speedup:

        f = (1 - 1 / speedup) / (1 - 1 / peak_ratio)        (peak_ratio > 1)

    Example: the chapter's V100 runs GPT-2 at about 90 samples/s in FP32
    and 220 in mixed precision (§6.3.2 Mixed-precision benefits), a
    speed-up of 220/90; its peaks are 125 TFLOP/s (FP16 Tensor Cores) and
    15.7 (FP32), a ratio of 125/15.7.  That implies f = 0.676: about a third
    of the FP32 step does not get faster at all.

    Returns:
        float, a fraction.

    Tóm tắt (tiếng Việt): tỉ lệ f của thời gian bước FP32 mà một mức tăng tốc đo
    được hàm ý: f = (1 - 1 / speedup) / (1 - 1 / peak_ratio); trả về float.
    """
    ### BEGIN SOLUTION
    return (1.0 - 1.0 / speedup) / (1.0 - 1.0 / peak_ratio)
    ### END SOLUTION


def mixed_precision_run(flops: float, n_gpus: int, fp32_peak_flop_per_s: float, fp32_efficiency: float,
                        peak_ratio: float, tensor_core_fraction: float, usd_per_gpu_hour: float) -> dict:
    """One training run in FP32 and in mixed precision, time and cost by the iron law.

    FP32: T_fp32 = flops / (n_gpus * fp32_peak_flop_per_s * fp32_efficiency)
    (iron_law_time_s).  Mixed precision: T_mixed = T_fp32 / speedup, with
    speedup = mixed_precision_speedup(tensor_core_fraction, peak_ratio).
    Written as the iron law, the mixed run has a peak of peak_ratio *
    fp32_peak_flop_per_s per GPU and an efficiency (a fraction of THAT
    peak) of fp32_efficiency * speedup / peak_ratio: the peak rises by the
    full ratio, the efficiency falls, and the time falls only by the
    speed-up.  Each run is billed per GPU-hour: n_gpus * hours *
    usd_per_gpu_hour.

    Returns:
        dict of floats with exactly these keys:
        "fp32_days":        wall-clock days in FP32.
        "mixed_days":       wall-clock days in mixed precision.
        "speedup":          fp32_days / mixed_days.
        "mixed_efficiency": the mixed run's efficiency against its own peak.
        "fp32_cost":        dollars, FP32.
        "mixed_cost":       dollars, mixed precision.

    Tóm tắt (tiếng Việt): một lần huấn luyện ở FP32 và ở độ chính xác hỗn hợp:
    T_fp32 theo định luật sắt, T_mixed = T_fp32 / speedup; hiệu suất của lần
    chạy hỗn hợp so với đỉnh MỚI (peak_ratio lần đỉnh FP32) là fp32_efficiency
    * speedup / peak_ratio; chi phí = n_gpus * số giờ * usd_per_gpu_hour.  Trả
    về dict các float với đúng các khoá ở trên.
    """
    ### BEGIN SOLUTION
    fp32_s = iron_law_time_s(flops, n_gpus * fp32_peak_flop_per_s, fp32_efficiency)
    speedup = mixed_precision_speedup(tensor_core_fraction, peak_ratio)
    mixed_s = fp32_s / speedup
    return {"fp32_days": fp32_s / SECONDS_PER_DAY, "mixed_days": mixed_s / SECONDS_PER_DAY, "speedup": speedup,
            "mixed_efficiency": fp32_efficiency * speedup / peak_ratio,
            "fp32_cost": n_gpus * fp32_s / SECONDS_PER_HOUR * usd_per_gpu_hour,
            "mixed_cost": n_gpus * mixed_s / SECONDS_PER_HOUR * usd_per_gpu_hour}
    ### END SOLUTION


def rent_vs_buy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                rent_per_gpu_hour: float, gpu_price: float) -> dict:
    """What one training run costs to rent, against buying the GPUs.

    The run does training_flops(n_params, n_tokens) FLOPs on n_gpus GPUs,
    each at peak_flop_per_s * mfu (iron law).  Renting is paid per GPU-hour;
    buying pays gpu_price per GPU once (power, hosting and resale ignored).

    Returns:
        dict of floats with exactly these keys:
        "flops":          total FLOPs of the run.
        "days":           wall-clock days of the run.
        "gpu_hours":      n_gpus * wall-clock hours.
        "rent_cost":      gpu_hours * rent_per_gpu_hour, dollars.
        "buy_cost":       n_gpus * gpu_price, dollars.
        "breakeven_runs": buy_cost / rent_cost, how many runs buying needs to pay off.

    Example, the chapter's "The utility bill" (§4.4.2 Batch size and
    parameter updates): Llama 2 70B, 70e9 params, 2e12 tokens, 1024 H100 at
    989e12, MFU 0.5, $3 per GPU-hour, $30,000 per GPU: 8.4e23 FLOPs, 19.2
    days, 471,857 GPU-hours, $1.42M to rent, $30.72M to buy, 21.7 runs.

    Tóm tắt (tiếng Việt): chi phí thuê một lần huấn luyện (training_flops trên
    n_gpus GPU, mỗi GPU ở peak_flop_per_s * mfu) so với mua GPU; trả về dict các
    float với đúng các khoá "flops", "days", "gpu_hours", "rent_cost", "buy_cost"
    (đô la) và "breakeven_runs" = buy_cost / rent_cost.
    """
    ### BEGIN SOLUTION
    flops = training_flops(n_params, n_tokens)
    seconds = iron_law_time_s(flops, n_gpus * peak_flop_per_s, mfu)
    gpu_hours = n_gpus * seconds / SECONDS_PER_HOUR  # every GPU is billed for the whole run
    rent = gpu_hours * rent_per_gpu_hour
    buy = n_gpus * gpu_price
    return {"flops": flops, "days": seconds / SECONDS_PER_DAY, "gpu_hours": gpu_hours,
            "rent_cost": rent, "buy_cost": buy, "breakeven_runs": buy / rent}
    ### END SOLUTION


def implied_mfu(n_params: float, n_tokens: float, gpu_hours: float, peak_flop_per_s: float) -> float:
    """The MFU a reported run must have reached, from its GPU-hours.

        MFU = training_flops(n_params, n_tokens) / (gpu_hours * 3600 * peak_flop_per_s)

    Example, beyond the chapter: Touvron et al. (2023), "Llama 2: Open
    Foundation and Fine-Tuned Chat Models", Table 2, report 1,720,320
    A100-80GB GPU-hours for the 70B model (70e9 params, 2e12 tokens); at
    312e12 FLOP/s that is MFU 0.435.

    Returns:
        float, a fraction.

    Tóm tắt (tiếng Việt): MFU mà một lần chạy được báo cáo phải đạt, suy ra từ số
    giờ-GPU: training_flops(n_params, n_tokens) / (gpu_hours * 3600 *
    peak_flop_per_s); trả về float.
    """
    ### BEGIN SOLUTION
    return training_flops(n_params, n_tokens) / (gpu_hours * SECONDS_PER_HOUR * peak_flop_per_s)
    ### END SOLUTION


def training_energy(n_params: float, n_tokens: float, n_gpus: int, peak_flop_per_s: float, mfu: float,
                    gpu_watts: float, n_hosts: int = 0, host_watts: float = 0.0, pue: float = 1.0) -> dict:
    """Energy of a training run: (GPU power + host power) x hours x PUE.

    The run lasts as long as the iron law says (training_flops on n_gpus
    GPUs at peak_flop_per_s * mfu each).  GPUs draw gpu_watts each and the
    n_hosts host machines host_watts each, for the whole run; PUE
    (power usage effectiveness, >= 1) scales what the facility draws.

    Returns:
        dict of floats with exactly these keys:
        "hours":      wall-clock hours of the run.
        "power_kw":   IT power, (n_gpus * gpu_watts + n_hosts * host_watts) / 1000,
                      WITHOUT the PUE factor.
        "energy_kwh": power_kw * hours * pue.

    Example, the chapter's "The carbon footprint of training" (§7.4 When to
    scale: The physical ceiling; it leaves PUE out, §6.8 Optimization impact
    summary multiplies by it): 7B model, 1e12 tokens, 1024 A100 at 312e12
    and MFU 0.5, 400 W each, 128 hosts at 200 W, PUE 1: 73.0 h, 435.2 kW,
    31,784 kWh.

    Tóm tắt (tiếng Việt): năng lượng của một lần huấn luyện dài đúng như định luật
    sắt cho; trả về dict các float với đúng các khoá "hours", "power_kw" (công
    suất IT (n_gpus * gpu_watts + n_hosts * host_watts) / 1000, KHÔNG nhân PUE)
    và "energy_kwh" = power_kw * hours * pue.
    """
    ### BEGIN SOLUTION
    flops = training_flops(n_params, n_tokens)
    hours = iron_law_time_s(flops, n_gpus * peak_flop_per_s, mfu) / SECONDS_PER_HOUR
    power_kw = (n_gpus * gpu_watts + n_hosts * host_watts) / 1000.0
    return {"hours": hours, "power_kw": power_kw, "energy_kwh": power_kw * hours * pue}
    ### END SOLUTION
