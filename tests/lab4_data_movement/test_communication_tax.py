"""Hidden tests, question "communication_tax": what N GPUs buy once the ring AllReduce is paid.

Ground truth is written out here from the docstrings' definitions (strong scaling: one GPU's step
split N ways, then a ring AllReduce of 2(N−1)/N × the gradient over the link), never taken from the
code under test, and checked against the chapter's own numbers: the three curves of the figure "The
Communication Tax" (§7 Scaling Training Systems: r = 0.05, 0.15, 0.40, N up to 256), the first
pitfall of §8 Fallacies and Pitfalls (8 GPUs that spend 30–50% of the step synchronising give 4–6×,
not 8×; a cluster of 8 taking 36 h against one A100's 24 h) and the callout "The network wall" of
§7.2 Scaling beyond a single node (7B FP16 gradients, 8 GPUs, 100 Gb/s: 1.96 s against 1 s).
"""

import pytest

from autograder.core.i18n import _
from autograder.labkit.assertions import assert_fields, assert_scalar

pytestmark = pytest.mark.question("communication_tax")

TAX_KEYS = ("comm_s", "compute_s", "step_s", "comm_fraction", "speedup", "efficiency", "r")


def tax(*, n_params, bytes_per_param, n_gpus, link_Gbps, compute_s_one_gpu, overlap=False):
    """The docstring's quantities, computed here independently of network_wall and of the reference."""
    grad = n_params * bytes_per_param
    link = link_Gbps * 1e9 / 8  # bytes per second
    comm = 2 * (n_gpus - 1) / n_gpus * grad / link
    compute = compute_s_one_gpu / n_gpus
    step = max(compute, comm) if overlap else compute + comm
    speedup = compute_s_one_gpu / step
    return {"comm_s": comm, "compute_s": compute, "step_s": step, "comm_fraction": (step - compute) / step,
            "speedup": speedup, "efficiency": speedup / n_gpus, "r": 2 * grad / (link * compute_s_one_gpu)}


def test_scaling_speedup_draws_the_chapters_curves(student):
    # The figure's curves: N / (1 + (N − 1)·r), a comment in the figure's code (§7 Scaling Training Systems).
    for r, label in ((0.05, _("compute-bound, r = 0.05")), (0.15, _("LLM with NVLink, r = 0.15")),
                     (0.40, _("slow network, r = 0.40"))):
        for n in (1, 2, 8, 64, 256):
            assert_scalar(student.scaling_speedup(n_gpus=n, r=r), n / (1 + (n - 1) * r), what="scaling_speedup",
                          case=_("the chapter's curve {curve}, {n} GPU(s)").format(curve=label, n=n), rtol=1e-12)
    # The first pitfall of §8 Fallacies and Pitfalls: 8 GPUs that spend 30% of the step synchronising give
    # 5.6x (r = 3/49), 50% give 4x (r = 1/7); a cluster of 8 taking 36 h against one GPU's 24 h is a speed-up
    # of 2/3 (r = 11/7).
    for r, expected, label in ((3 / 49, 5.6, _("8 GPUs with 30% of the step synchronising")),
                               (1 / 7, 4.0, _("8 GPUs with 50% of the step synchronising")),
                               (11 / 7, 2 / 3, _("the chapter's 36 h cluster of 8 against 24 h on one GPU"))):
        assert_scalar(student.scaling_speedup(n_gpus=8, r=r), expected, what="scaling_speedup", case=label, rtol=1e-12)
    # Amdahl's ceiling: with r = 0.10 (the checkpoint "Scaling decisions" of §7.4 When to scale: The physical
    # ceiling) no number of GPUs gives more than 10x.
    assert_scalar(student.scaling_speedup(n_gpus=10**6, r=0.10), 10**6 / (1 + (10**6 - 1) * 0.10),
                  what="scaling_speedup", case=_("a million GPUs, r = 0.10"), rtol=1e-12)


def test_communication_tax_of_the_network_wall(student):
    # The network wall of §7.2 Scaling beyond a single node: 7e9 FP16 parameters, 8 GPUs, 100 Gb/s, 1 s of
    # compute on each (8 s on one GPU): 1.96 s of AllReduce, a 2.96 s step, 2.7x instead of 8x; overlapped,
    # 1.96 s and 4.1x. NVLink (900 GB/s).
    for link, name in ((100.0, _("100 Gb/s")), (7200.0, _("NVLink, 7200 Gb/s"))):
        for overlap in (False, True):
            kw = {"n_params": 7e9, "bytes_per_param": 2, "n_gpus": 8, "link_Gbps": link, "compute_s_one_gpu": 8.0,
                  "overlap": overlap}
            assert_fields(student.communication_tax(**kw), tax(**kw), what="communication_tax",
                          case=_("7e9 params, FP16, 8 GPUs, {link}, 8 s on one GPU, overlap={overlap}").format(
                              link=name, overlap=overlap))


def test_communication_tax_gives_the_pitfalls_four_times(student):
    # Half of every step on the network (§8 Fallacies and Pitfalls, the first pitfall): the 7B gradients over
    # 100 Gb/s on 8 GPUs take 1.96 s, as long as each GPU's share of a 15.68 s step. r = 1/7; 4x, efficiency
    # 0.5. Then the same model and link from 1 to 256 GPUs: without overlap the speed-up follows
    # N / (1 + (N − 1)·r).
    base = {"n_params": 7e9, "bytes_per_param": 2, "link_Gbps": 100.0, "compute_s_one_gpu": 15.68}
    got = student.communication_tax(n_gpus=8, **base)
    assert_fields(got, tax(n_gpus=8, **base), what="communication_tax",
                  case=_("7e9 params, FP16, 8 GPUs, 100 Gb/s, 15.68 s on one GPU"))
    for n in (1, 2, 4, 16, 64, 256):
        case = _("7e9 params, FP16, {n} GPU(s), 100 Gb/s, 15.68 s on one GPU").format(n=n)
        got = student.communication_tax(n_gpus=n, **base)
        assert_fields(got, tax(n_gpus=n, **base), what="communication_tax", case=case)
        assert_scalar(got["speedup"], n / (1 + (n - 1) / 7), what=_("communication_tax speed-up against the curve"),
                      case=case, rtol=1e-9)


def test_communication_tax_matches_reference(student, reference, rng):
    for overlap in (False, True):
        kw = {"n_params": float(rng.uniform(1e8, 1e11)), "bytes_per_param": int(rng.choice([2, 4])),
              "n_gpus": int(rng.integers(2, 513)), "link_Gbps": float(rng.choice([10.0, 25.0, 100.0, 400.0, 7200.0])),
              "compute_s_one_gpu": float(rng.uniform(0.5, 200.0)), "overlap": overlap}
        case = _("a random model, bytes per parameter, number of GPUs, link and compute time, "
                 "overlap={overlap}").format(overlap=overlap)
        got = student.communication_tax(**kw)
        assert_fields(got, tax(**kw), what="communication_tax", case=case)
        assert_fields(got, reference.communication_tax(**kw), what="communication_tax", case=case)
        if not overlap:  # the curve, with the r the submission reports
            assert_scalar(got["speedup"], student.scaling_speedup(n_gpus=kw["n_gpus"], r=got["r"]),
                          what=_("communication_tax speed-up against scaling_speedup with its r"), case=case, rtol=1e-9)
    r = float(rng.uniform(0.0, 1.0))
    n = int(rng.integers(2, 1025))
    assert_scalar(student.scaling_speedup(n_gpus=n, r=r), n / (1 + (n - 1) * r), what="scaling_speedup",
                  case=_("a random number of GPUs and r"), rtol=1e-12)
