"""Hidden tests, question "network_wall": 7B FP16 gradients on 8 GPUs, Ethernet against NVLink."""

import pytest

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_fields, assert_scalar

pytestmark = pytest.mark.question("network_wall")

RANDOM_ONE_GPU = N_("a random model, bytes per parameter, link and compute time, on 1 GPU")
RANDOM_TWO_GPUS = N_("a random model, bytes per parameter, link and compute time, on 2 GPUs")
RANDOM_GPUS = N_("a random model, bytes per parameter, link and compute time, on a random number of GPUs")
WALL_KEYS = ("gradient_bytes", "bytes_per_gpu", "comm_s", "step_s_no_overlap", "step_s_overlap", "bound",
             "break_even_GBps")


def test_seven_billion_on_eight_gpus(student):
    # 7B × 2 bytes = 14 GB; 2·7/8 × 14 = 24.5 GB per GPU; at 12.5 GB/s, 1.96 s against 1 s of compute.
    case = _("7e9 params, FP16, 8 GPUs, 12.5 GB/s, 1 s compute")
    assert_scalar(student.allreduce_bytes_per_rank(M_bytes=14e9, N=8), 24.5e9, what="allreduce_bytes_per_rank",
                  case=_("14 GB over 8 ranks"), rtol=1e-12)
    assert_scalar(student.allreduce_bytes_per_rank(M_bytes=1e6, N=2), 1e6, what="allreduce_bytes_per_rank",
                  case=_("1 MB over 2 ranks"), rtol=1e-12)
    assert_scalar(student.allreduce_bytes_per_rank(M_bytes=1e6, N=1), 0.0, what="allreduce_bytes_per_rank",
                  case=_("1 rank"), atol=0)
    got = student.network_wall(n_params=7e9, bytes_per_param=2, n_gpus=8, link_GBps=12.5, compute_s=1.0)
    assert_fields(got, {"gradient_bytes": 14e9, "bytes_per_gpu": 24.5e9, "comm_s": 1.96, "step_s_no_overlap": 2.96,
                        "step_s_overlap": 1.96, "bound": "communication", "break_even_GBps": 24.5},
                  what="network_wall", case=case)


def test_nvlink_moves_the_wall(student):
    case = _("7e9 params, FP16, 8 GPUs, NVLink 900 GB/s, 1 s compute")
    got = student.network_wall(n_params=7e9, bytes_per_param=2, n_gpus=8, link_GBps=900.0, compute_s=1.0)
    comm = 24.5e9 / 900e9
    assert_fields(got, {"gradient_bytes": 14e9, "bytes_per_gpu": 24.5e9, "comm_s": comm, "step_s_no_overlap": 1.0 + comm,
                        "step_s_overlap": 1.0, "bound": "compute", "break_even_GBps": 24.5},
                  what="network_wall", case=case)


def test_network_wall_matches_reference(student, reference, rng):
    with M.fixed_case():  # issue 27: the same on every submission, so no direction
        check_a_tie_and_a_tiny_model(student)  # the edges first: a tie, and a number small enough to show rounding
    # named by what was drawn, never by a drawn value (docs/feedback.md)
    for n_gpus, label in ((1, RANDOM_ONE_GPU), (2, RANDOM_TWO_GPUS), (int(rng.integers(3, 513)), RANDOM_GPUS)):
        kw = {"n_params": float(rng.uniform(1e8, 1e11)), "bytes_per_param": int(rng.choice([2, 4])), "n_gpus": n_gpus,
              "link_GBps": float(rng.choice([12.5, 25.0, 50.0, 450.0, 900.0])), "compute_s": float(rng.uniform(0.1, 5.0))}
        assert_fields(student.network_wall(**kw), reference.network_wall(**kw), what="network_wall", case=_(label))


def check_a_tie_and_a_tiny_model(student):
    # comm_s == compute_s exactly (every intermediate is an exact float in any order of operations):
    # the docstring says "communication" only if comm_s > compute_s
    got = student.network_wall(n_params=2e9, bytes_per_param=2, n_gpus=2, link_GBps=4.0, compute_s=1.0)
    assert_fields(got, {"gradient_bytes": 4e9, "bytes_per_gpu": 4e9, "comm_s": 1.0, "step_s_no_overlap": 2.0,
                        "step_s_overlap": 1.0, "bound": "compute", "break_even_GBps": 4.0},
                  what="network_wall", case=_("communication exactly as long as compute"))
    # a tiny model: the break-even bandwidth is a small number, so rounding it anywhere shows
    got = student.network_wall(n_params=1000.0, bytes_per_param=2, n_gpus=2, link_GBps=1.0, compute_s=0.3)
    assert_fields(got, {"gradient_bytes": 2000.0, "bytes_per_gpu": 2000.0, "comm_s": 2e-6, "step_s_no_overlap": 0.300002,
                        "step_s_overlap": 0.3, "bound": "compute", "break_even_GBps": 2000.0 / 0.3 / 1e9},
                  what="network_wall", case=_("a model of 1000 parameters on 2 GPUs"))
