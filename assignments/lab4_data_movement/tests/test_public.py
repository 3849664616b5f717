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


@pytest.mark.question("slowest_stage")
def test_image_pipeline(student, snapshot):
    got = {f"access_{access}_workers_{w}": numbers(student.image_pipeline(workers=w, access_factor=access))
           for access in (0.1, 1.0) for w in (1, 2, 4, 8)}
    snapshot.check("image_pipeline", got, what="image_pipeline",
                   case=_("chapter defaults, random and sequential reads, 1 to 8 workers"), rtol=1e-9)


@pytest.mark.question("prefetch")
def test_loader_computes_every_item_in_order(student, snapshot):
    got = {}
    for prefetch in (False, True):  # the order is a happens-before fact, true at any speed: 1 ms stages
        report = student.run_loader(n_items=4, load_work=0.001, compute_work=0.001, kind="sleep", prefetch=prefetch)
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


@pytest.mark.question("softmax_overflow")
def test_naive_attention_overflows_in_rows_3_to_5(student, snapshot):
    rng = np.random.default_rng(5)
    q, k = (rng.integers(-8, 9, size=(6, 16)) / 8.0 for _tensor in range(2))
    q[3:, 0], k[:, 0] = 40.0, 100.0  # rows 3 to 5: every score near 1000, beyond exp's range in float64
    v = rng.standard_normal((6, 16))
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.asarray(student.naive_attention(q=q, k=k, v=v))
    got = {"naive_finite_rows": np.isfinite(naive).all(axis=-1).astype(np.int64), "naive_rows_0_to_2": naive[:3],
           "tiled": student.tiled_attention(q=q, k=k, v=v, block_size=6)}
    snapshot.check("naive_attention", got, what=_("naive_attention and tiled_attention"),
                   case=_("6 rows, d=16, rows 3 to 5 with scores near 1000, float64"), rtol=1e-10, atol=1e-10)


@pytest.mark.question("attention_traffic")
def test_attention_hbm_bytes_4096(student, snapshot):
    got = {f"heads_{h}": student.attention_hbm_bytes(S=4096, d=64, block_size=128, n_heads=h, bytes_per_element=4)
           for h in (1, 16)}
    snapshot.check("attention_hbm_bytes", got, what="attention_hbm_bytes",
                   case=_("S=4096, d=64, block 128, 1 and 16 heads, FP32"), rtol=1e-12)


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


@pytest.mark.question("communication_tax")
def test_communication_tax_7b(student, snapshot):
    model = {"n_params": 7e9, "bytes_per_param": 2, "link_Gbps": 100.0, "compute_s_one_gpu": 8.0}
    got = {f"gpus_{n}_overlap_{o}": student.communication_tax(n_gpus=n, overlap=o, **model)
           for n in (1, 2, 8, 64) for o in (False, True)}
    got["curves"] = {f"r_{r}_gpus_{n}": student.scaling_speedup(n_gpus=n, r=r) for r in (0.05, 0.15, 0.4)
                     for n in (8, 256)}
    snapshot.check("communication_tax", got, what="communication_tax",
                   case=_("7e9 params, FP16, 100 Gb/s, 8 s on one GPU; the chapter's three curves"), rtol=1e-9)
