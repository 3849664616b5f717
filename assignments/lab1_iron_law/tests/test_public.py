"""Public tests: quick checks against stored answers (snapshots/).

Run them with `autograder check lab1`.  More tests, hidden ones, run at
grading: on other inputs, against torch's own FLOP counter and on other
simulated devices.
"""

import pytest

from autograder.core.i18n import _

XL = dict(B=32, S=1024, d=1600, h=25)  # GPT-2 XL: d_model 1600, 25 heads; B=32 sequences of 1024 tokens
GPT2_SMALL = dict(B=4, S=256, d=768, h=12)
SIMULATED = {"kind": "simulated", "seed": 1}  # lab1_device.SIMULATED's other settings


@pytest.mark.question("forward_flops")
def test_gpt2_xl_layer_matmuls(student, snapshot):
    got = student.layer_matmul_flops(**XL)
    got["matmul_64x32x16"] = student.matmul_flops(m=64, k=32, n=16)
    snapshot.check("gpt2_xl_layer_matmuls", got, what="layer_matmul_flops", case=_("GPT-2 XL layer, B=32, S=1024"),
                   rtol=1e-12)


@pytest.mark.question("count_to_the_end")
def test_gpt2_small_elementwise(student, snapshot):
    got = {"elementwise": student.elementwise_flops(**GPT2_SMALL),
           "matmul_fraction": student.matmul_fraction(**GPT2_SMALL)}
    snapshot.check("gpt2_small_elementwise", got, what=_("non-matmul FLOPs"), case=_("GPT-2 small layer, B=4, S=256"),
                   rtol=1e-9)


@pytest.mark.question("forward_backward")
def test_gpt2_xl_training_step(student, snapshot):
    got = {"step": student.step_flops(**XL, n_layers=48), "layer_backward": student.layer_backward_flops(**GPT2_SMALL)}
    snapshot.check("gpt2_xl_training_step", got, what=_("training FLOPs"),
                   case=_("GPT-2 XL step (48 layers), GPT-2 small layer"), rtol=1e-12)


@pytest.mark.question("roofline")
def test_roofline_chapter_cases(student, snapshot):
    a100 = dict(peak_tflop_per_s=312.0, bandwidth_gb_per_s=2039.0)
    got = {
        "matmul_64x32x16_fp16": student.matmul_intensity(m=64, k=32, n=16, bytes_per_element=2),
        "gpt2_small_scores_fp16": student.attention_scores_intensity(S=1024, d_head=64, bytes_per_element=2),
        "gelu_fp32": student.elementwise_intensity(n_elements=1000, flops_per_element=9, n_inputs=1,
                                                   bytes_per_element=4),
        "a100_ridge": student.ridge_point(**a100),
    }
    roof = student.roofline(intensity=32.0, **a100)  # the regime is a string: the snapshot keeps whether it is memory-bound
    got["scores_on_a100"] = {"ridge": roof["ridge"], "attainable_flop_per_s": roof["attainable_flop_per_s"],
                             "memory_bound": roof["regime"] == "memory-bound"}
    snapshot.check("roofline_chapter_cases", got, what=_("arithmetic intensity and the roofline"),
                   case=_("GPT-2 small's scores and an A100"), rtol=1e-12)


@pytest.mark.question("throughput")
def test_throughput_flops_column(student, snapshot):
    got = student.measure_matmul_throughput(batch_sizes=[1, 4, 16], d_in=64, d_out=32, repeats=3, peak_flop_per_s=1e11)
    # timings differ from machine to machine; the shapes, and so the FLOPs, do not
    snapshot.check("throughput_flops_column", {"batch_sizes": got["batch_sizes"], "flops": got["flops"]},
                   what="measure_matmul_throughput", case=_("batch sizes [1, 4, 16], d_in=64, d_out=32"), rtol=1e-12)
    # on a simulated device (lab1_device.py) the same code always gives the same times: the hidden tests
    # compare yours with the reference's on other simulated devices, this checks one of them
    stated = student.measure_matmul_throughput(batch_sizes=[1, 4, 16], d_in=64, d_out=32, repeats=3,
                                               peak_flop_per_s=1e11, device=SIMULATED)
    measured = student.measure_matmul_throughput(batch_sizes=[1, 64, 512], d_in=256, d_out=256, device=SIMULATED)
    peak = student.measure_peak_flop_per_s(device=SIMULATED)
    snapshot.check("throughput_simulated", {"stated": stated, "measured": measured, "peak": peak},
                   what=_("measure_matmul_throughput and measure_peak_flop_per_s on a simulated device"),
                   case=_("lab1_device defaults, seed 1"), rtol=1e-9)


@pytest.mark.question("warmup")
def test_warmup_break_it(student, snapshot):
    # on a simulated device the first product of a shape pays a one-time cost (lab1_device.SIMULATED["warmup_s"])
    got = {"without": student.time_without_warmup(rows=16, d_in=64, d_out=32, repeats=3, device=SIMULATED),
           "with": student.time_with_warmup(rows=16, d_in=64, d_out=32, repeats=3, device=SIMULATED)}
    snapshot.check("warmup_break_it", got, what=_("time_without_warmup and time_with_warmup on a simulated device"),
                   case=_("lab1_device defaults, seed 1"), rtol=1e-9)


@pytest.mark.question("iron_law_mfu")
def test_chapter_mfu_and_iron_law(student, snapshot):
    got = {
        "mfu_7b": student.model_flops_utilization(n_params=7e9, tokens_per_step=1024, step_time_s=1.2,
                                                  peak_flop_per_s=312e12, n_devices=1),
        "training_flops_gpt2_xl_step": student.training_flops(n_params=1.5e9, n_tokens=32 * 1024),
        "iron_law_time_s": student.iron_law_time_s(flops=8.4e23, peak_flop_per_s=1024 * 989e12, efficiency=0.5),
    }
    snapshot.check("chapter_mfu_and_iron_law", got, what=_("iron law"), case=_("chapter examples"), rtol=1e-9)


@pytest.mark.question("mixed_precision")
def test_mixed_precision_v100(student, snapshot):
    fraction = student.implied_tensor_core_fraction(speedup=220 / 90, peak_ratio=125 / 15.7)
    got = {
        "a100_whole_step": student.mixed_precision_speedup(tensor_core_fraction=1.0, peak_ratio=312 / 19.5),
        "v100_fraction": fraction,
        "run": student.mixed_precision_run(flops=1e21, n_gpus=32, fp32_peak_flop_per_s=15.7e12, fp32_efficiency=0.5,
                                           peak_ratio=125 / 15.7, tensor_core_fraction=0.5, usd_per_gpu_hour=3.0),
    }
    snapshot.check("mixed_precision_v100", got, what=_("mixed precision and the iron law"),
                   case=_("the chapter's V100 and A100"), rtol=1e-9)


@pytest.mark.question("rent_and_energy")
def test_llama2_rent_vs_buy_and_7b_energy(student, snapshot):
    got = {
        "rent_vs_buy": student.rent_vs_buy(n_params=70e9, n_tokens=2e12, n_gpus=1024, peak_flop_per_s=989e12,
                                           mfu=0.5, rent_per_gpu_hour=3.0, gpu_price=30_000.0),
        "energy": student.training_energy(n_params=7e9, n_tokens=1e12, n_gpus=1024, peak_flop_per_s=312e12, mfu=0.5,
                                          gpu_watts=400.0, n_hosts=128, host_watts=200.0, pue=1.0),
    }
    snapshot.check("llama2_rent_vs_buy_and_7b_energy", got, what=_("costs"),
                   case=_("Llama 2 70B rent vs buy, 7B energy"), rtol=1e-9)
