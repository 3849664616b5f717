"""The iron law as a calculator: time, MFU, rent vs buy, energy (§2 Iron Law of Training Performance,
§5 Identifying Bottlenecks, §4.4.2 Batch size and parameter updates, §7.4 When to scale: The physical ceiling).

The chapter's cases (the tests that take no ``rng``, and the fixed cases inside the
others) are the same on every submission: their messages never say which way a value
is off (``labkit.messages.fixed_case``, docs/feedback.md).  The drawn cases are named
by their number, never by their drawn arguments.
"""

import pytest

from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_fields, assert_keys, assert_scalar
from autograder.labkit.messages import fixed_case

RENT_KEYS = ("flops", "days", "gpu_hours", "rent_cost", "buy_cost", "breakeven_runs")
ENERGY_KEYS = ("hours", "power_kw", "energy_kwh")
# docs/chapter.md, Lab 1: rent or buy, energy
LLAMA2_70B = dict(n_params=70e9, n_tokens=2e12, n_gpus=1024, peak_flop_per_s=989e12, mfu=0.5,
                  rent_per_gpu_hour=3.0, gpu_price=30_000.0)
LLAMA2_CASE = N_("Llama 2 70B on 1024 H100 at MFU 0.5, $3/GPU-hour, $30,000/GPU")
CASE_7B = dict(n_params=7e9, n_tokens=1e12, n_gpus=1024, peak_flop_per_s=312e12, mfu=0.5, gpu_watts=400.0,
               n_hosts=128, host_watts=200.0, pue=1.0)
CASE_7B_TEXT = N_("7B model, 1e12 tokens, 1024 A100 at MFU 0.5, 128 hosts at 200 W, PUE 1")


def log_uniform(rng, lo, hi) -> float:
    return float(10 ** rng.uniform(lo, hi))


# -- the iron law and MFU ------------------------------------------------------


@pytest.mark.question("iron_law_mfu")
def test_chapter_mfu_and_six_p_tokens(student, reference):
    case = _("7B model, 1024 tokens per step, 1.2 s per step, one A100 at 312e12")
    mfu = student.model_flops_utilization(n_params=7e9, tokens_per_step=1024, step_time_s=1.2,
                                          peak_flop_per_s=312e12, n_devices=1)
    assert_scalar(mfu, 0.115, what="model_flops_utilization", case=case, rtol=2e-3)
    assert_scalar(mfu, reference.model_flops_utilization(n_params=7e9, tokens_per_step=1024, step_time_s=1.2,
                                                         peak_flop_per_s=312e12, n_devices=1),
                  what="model_flops_utilization", case=case, rtol=1e-9)
    xl = student.training_flops(n_params=1.5e9, n_tokens=32 * 1024)
    assert_scalar(xl / 1e12, 294.9, what=_("training_flops in TFLOP"),
                  case=_("GPT-2 XL, 1.5e9 params, 32 x 1024 tokens"), rtol=1e-3)
    assert_scalar(student.training_flops(n_params=70e9, n_tokens=2e12), 8.4e23, what="training_flops",
                  case=_("Llama 2 70B, 2e12 tokens"), rtol=1e-12)


@pytest.mark.question("iron_law_mfu")
def test_iron_law_time_matches_formula(student, reference, rng):
    for trial in range(1, 7):  # a case is named by its label, not its (random) arguments
        kw = dict(flops=log_uniform(rng, 15, 24), peak_flop_per_s=log_uniform(rng, 12, 18),
                  efficiency=float(rng.uniform(0.05, 0.9)))
        case = _("plain iron law, random case {trial} of 6").format(trial=trial)
        got = student.iron_law_time_s(**kw)
        assert_scalar(got, kw["flops"] / (kw["peak_flop_per_s"] * kw["efficiency"]), what="iron_law_time_s",
                      case=case, rtol=1e-9)
        general = dict(kw, data_bytes=log_uniform(rng, 9, 15), bandwidth_bytes_per_s=log_uniform(rng, 9, 12),
                       latency_s=float(rng.uniform(0, 100)))
        case = _("with data and latency terms, random case {trial} of 6").format(trial=trial)
        assert_scalar(student.iron_law_time_s(**general), reference.iron_law_time_s(**general),
                      what="iron_law_time_s", case=case, rtol=1e-9)
    # the defaults (no data, no latency) with one term given at a time, on a tiny job where every term shows;
    # and a device slower than 1 FLOP/s: any positive peak is allowed.  Fixed inputs: no direction in their messages
    for kw, case in ((dict(flops=1e3, peak_flop_per_s=1e12, efficiency=0.5, bandwidth_bytes_per_s=1e9),
                      _("a tiny job, a bandwidth but no data (data_bytes left at its default)")),
                     (dict(flops=1e3, peak_flop_per_s=1e12, efficiency=0.5, data_bytes=64.0),
                      _("a tiny job, data but no bandwidth (bandwidth left at its default)")),
                     (dict(flops=3.0, peak_flop_per_s=0.5, efficiency=0.25, latency_s=2.0),
                      _("a device slower than 1 FLOP/s, with latency"))):
        with fixed_case():
            assert_scalar(student.iron_law_time_s(**kw), reference.iron_law_time_s(**kw), what="iron_law_time_s",
                          case=case, rtol=1e-9)


@pytest.mark.question("iron_law_mfu")
def test_mfu_matches_reference(student, reference, rng):
    for trial in range(1, 7):
        kw = dict(n_params=log_uniform(rng, 8, 11.5), tokens_per_step=float(rng.integers(512, 4_000_000)),
                  step_time_s=float(rng.uniform(0.1, 30)), peak_flop_per_s=float(rng.choice([312e12, 989e12, 125e12])),
                  n_devices=int(rng.choice([1, 8, 64, 2048])))
        case = _("random run {trial} of 6").format(trial=trial)  # never its drawn arguments
        assert_scalar(student.model_flops_utilization(**kw), reference.model_flops_utilization(**kw),
                      what="model_flops_utilization", case=case, rtol=1e-9)
    # a toy model on a toy device (small rates: every digit counts), and the default of one device (fixed inputs)
    toy = dict(n_params=1234.5, tokens_per_step=7.0, step_time_s=3.3, peak_flop_per_s=4.0e4)
    with fixed_case():
        assert_scalar(student.model_flops_utilization(**toy, n_devices=2),
                      reference.model_flops_utilization(**toy, n_devices=2), what="model_flops_utilization",
                      case=_("a toy model on 2 toy devices"), rtol=1e-9)
        assert_scalar(student.model_flops_utilization(**toy), reference.model_flops_utilization(**toy, n_devices=1),
                      what="model_flops_utilization", case=_("a toy model, n_devices left at its default"), rtol=1e-9)


# -- rent vs buy, the reality check, energy ---------------------------------------


@pytest.mark.question("rent_and_energy")
def test_rent_vs_buy_llama2_70b(student, reference):
    got = student.rent_vs_buy(**LLAMA2_70B)
    assert_keys(got, RENT_KEYS, what="rent_vs_buy", case=_(LLAMA2_CASE))
    chapter = {"flops": (8.4e23, 1e-9), "days": (19.2, 2e-3), "gpu_hours": (471_857, 1e-5),
               "rent_cost": (1.42e6, 5e-3), "buy_cost": (30.72e6, 1e-9), "breakeven_runs": (21.7, 2e-3)}
    for key, (value, rtol) in chapter.items():
        assert_scalar(got[key], value, what=f"rent_vs_buy[{key!r}]", case=_(LLAMA2_CASE), rtol=rtol)
    assert_fields(got, reference.rent_vs_buy(**LLAMA2_70B), keys=RENT_KEYS, what="rent_vs_buy", case=_(LLAMA2_CASE))


@pytest.mark.question("rent_and_energy")
def test_llama2_reality_check_mfu(student, reference):
    kw = dict(n_params=70e9, n_tokens=2e12, gpu_hours=1_720_320, peak_flop_per_s=312e12)
    case = _("Llama 2 70B, 1,720,320 A100 GPU-hours at 312e12")
    got = student.implied_mfu(**kw)
    assert_scalar(got, 0.435, what="implied_mfu", case=case, rtol=2e-3)
    assert_scalar(got, reference.implied_mfu(**kw), what="implied_mfu", case=case, rtol=1e-9)


@pytest.mark.question("rent_and_energy")
def test_energy_chapter_case(student, reference):
    got = student.training_energy(**CASE_7B)
    assert_keys(got, ENERGY_KEYS, what="training_energy", case=_(CASE_7B_TEXT))
    for key, value, rtol in (("hours", 73.0, 1e-3), ("power_kw", 435.2, 1e-9), ("energy_kwh", 31_784, 1e-4)):
        assert_scalar(got[key], value, what=f"training_energy[{key!r}]", case=_(CASE_7B_TEXT), rtol=rtol)
    assert_fields(got, reference.training_energy(**CASE_7B), keys=ENERGY_KEYS, what="training_energy", case=_(CASE_7B_TEXT))
    # twice the utilization, half the time, half the energy
    at_30 = student.training_energy(**dict(CASE_7B, mfu=0.3))["energy_kwh"]
    at_60 = student.training_energy(**dict(CASE_7B, mfu=0.6))["energy_kwh"]
    assert_scalar(at_30 / at_60, 2.0, what=_("energy at MFU 0.3 / energy at MFU 0.6"), case=_(CASE_7B_TEXT), rtol=1e-9)
    # PUE scales what the facility draws, not the IT power
    pue = student.training_energy(**dict(CASE_7B, pue=1.5))
    assert_scalar(pue["power_kw"], 435.2, what=_("training_energy['power_kw'] (without PUE)"), case="PUE 1.5",
                  rtol=1e-9)
    assert_scalar(pue["energy_kwh"] / got["energy_kwh"], 1.5, what=_("energy at PUE 1.5 / energy at PUE 1"),
                  case=_(CASE_7B_TEXT), rtol=1e-9)
    # Llama 2 70B, GPUs only, at the MFU its GPU-hours imply: 1,720,320 h x 0.4 kW = 688 MWh
    mfu = reference.implied_mfu(n_params=70e9, n_tokens=2e12, gpu_hours=1_720_320, peak_flop_per_s=312e12)
    llama = student.training_energy(n_params=70e9, n_tokens=2e12, n_gpus=1024, peak_flop_per_s=312e12, mfu=mfu,
                                    gpu_watts=400.0, n_hosts=0, host_watts=0.0, pue=1.0)
    assert_scalar(llama["energy_kwh"], 688_128, what="training_energy['energy_kwh']",
                  case=_("Llama 2 70B, GPUs only, 400 W, at its implied MFU"), rtol=1e-6)
    # the defaults: no hosts, no host power, PUE 1, each left out in turn
    gpus_only = dict(CASE_7B, n_hosts=0, host_watts=0.0, pue=1.0)
    for drop, case in ((("n_hosts", "host_watts", "pue"), _("GPUs only, every default")),
                       (("n_hosts",), _("host_watts given, n_hosts left at its default")),
                       (("host_watts",), _("n_hosts given, host_watts left at its default")),
                       (("pue",), _("pue left at its default"))):
        kw = {k: v for k, v in CASE_7B.items() if k not in drop}
        want = reference.training_energy(**{**CASE_7B, **{k: gpus_only[k] for k in drop}})
        assert_fields(student.training_energy(**kw), want, keys=ENERGY_KEYS, what="training_energy", case=case)


@pytest.mark.question("rent_and_energy")
def test_costs_match_reference_on_random_runs(student, reference, rng):
    for trial in range(1, 6):
        run = dict(n_params=log_uniform(rng, 8, 12), n_tokens=log_uniform(rng, 10, 13),
                   n_gpus=int(rng.choice([8, 64, 512, 4096])), peak_flop_per_s=float(rng.choice([312e12, 989e12])),
                   mfu=float(rng.uniform(0.2, 0.6)))
        case = _("random run {trial} of 5").format(trial=trial)  # never its drawn arguments
        money = dict(rent_per_gpu_hour=float(rng.uniform(1, 5)), gpu_price=float(rng.uniform(1e4, 4e4)))
        assert_fields(student.rent_vs_buy(**run, **money), reference.rent_vs_buy(**run, **money), keys=RENT_KEYS,
                      what="rent_vs_buy", case=case)
        power = dict(gpu_watts=float(rng.uniform(250, 700)), n_hosts=int(run["n_gpus"] // 8),
                     host_watts=float(rng.uniform(100, 800)), pue=float(rng.uniform(1.0, 1.6)))
        assert_fields(student.training_energy(**run, **power), reference.training_energy(**run, **power),
                      keys=ENERGY_KEYS, what="training_energy", case=case)
        hours = log_uniform(rng, 3, 7)
        kw = dict(n_params=run["n_params"], n_tokens=run["n_tokens"], gpu_hours=hours,
                  peak_flop_per_s=run["peak_flop_per_s"])
        case = _("random run {trial} of 5, random GPU-hours").format(trial=trial)
        assert_scalar(student.implied_mfu(**kw), reference.implied_mfu(**kw), what="implied_mfu", case=case, rtol=1e-9)
