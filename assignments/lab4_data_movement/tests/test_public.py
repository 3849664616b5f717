"""Public tests for Lab 4: quick checks against stored snapshots.

Run them with `autograder check lab4`. Passing them does not mean full
marks: more hidden tests (random inputs, edge cases, measured time and
memory) run at grading.
"""

import numpy as np
import pytest

from autograder.labkit import messages as M
from autograder.core.i18n import _
from autograder.labkit.support import trusted_support


def numbers(d: dict) -> dict:
    """The numeric entries of a result dict (names such as "bottleneck" are checked by hidden tests)."""
    return {k: v for k, v in d.items() if not isinstance(v, str)}


@pytest.mark.question("slowest_stage")
def test_gpt2_pipeline(student, snapshot):
    got = {f"workers_{w}": numbers(student.gpt2_pipeline(workers=w)) for w in (1, 8)}
    snapshot.check("gpt2_pipeline", got, what="gpt2_pipeline", case=_("chapter defaults, 1 and 8 workers"), rtol=1e-9)


@pytest.mark.question("prefetch")
def test_loader_computes_every_item_in_order(student, snapshot):
    got = {}
    for prefetch in (False, True):
        report = student.run_loader(n_items=4, load_work=0.005, compute_work=0.005, kind="sleep", prefetch=prefetch)
        events = sorted(report["events"], key=lambda e: e["start"])
        got[f"prefetch_{prefetch}"] = {
            "computed": np.asarray([e["item"] for e in events if e["stage"] == "compute"]),
            "loaded": np.asarray([e["item"] for e in events if e["stage"] == "load"]),
        }
    snapshot.check("loader_order", got, what=_("run_loader's recorded events"), case=_("4 items, kind='sleep'"), rtol=0)


@pytest.mark.question("tiled_attention")
def test_tiled_attention_small(student, snapshot):
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 37, 8)) for _tensor in range(3))  # 37 = 2×16 + 5: a short last block
    got = {f"causal_{c}": student.tiled_attention(q=q, k=k, v=v, causal=c, block_size=16) for c in (False, True)}
    snapshot.check("tiled_attention", got, what="tiled_attention", case=_("shape (2, 37, 8), block_size=16, float64"),
                   rtol=1e-10, atol=1e-10)


@pytest.mark.question("ring_allreduce")
def test_ring_allreduce_small(student, snapshot, lab):
    sim = trusted_support(lab, "lab4_sim.py")  # the shipped simulation, never a submitted copy
    rng = np.random.default_rng(4)
    buffers = [rng.integers(-9, 10, size=10) for _rank in range(4)]  # 10 elements over 4 ranks: chunks of 3, 3, 2, 2
    case = _("4 ranks, 10 int64 elements")
    try:
        out = sim.run_ring(buffers=buffers, send=student.ring_send, receive=student.ring_receive)
    except sim.RingError as exc:  # the simulated network refused a message: say which rule, in the student's language
        raise AssertionError(exc.explain(case=M.case_suffix(case))) from None
    got = {f"rank_{r}": res for r, res in enumerate(out["results"])}
    got["bytes_sent"] = np.asarray(out["bytes_sent"])  # counted by the simulated network
    snapshot.check("ring_allreduce", got, what=_("ring AllReduce over lab4_sim.run_ring"), case=case, rtol=0)


@pytest.mark.question("network_wall")
def test_network_wall_7b(student, snapshot):
    got = {link: numbers(student.network_wall(n_params=7e9, bytes_per_param=2, n_gpus=8, link_GBps=bw, compute_s=1.0))
           for link, bw in (("ethernet_100Gb", 12.5), ("nvlink", 900.0))}
    snapshot.check("network_wall", got, what="network_wall", case=_("7e9 params, FP16, 8 GPUs, 1 s compute"), rtol=1e-9)
