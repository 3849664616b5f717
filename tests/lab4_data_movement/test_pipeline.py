"""Hidden tests, question "slowest_stage": rates, overlap, the GPT-2 pipeline and an image pipeline whose
bottleneck moves as workers are added (§4.2 Data pipeline)."""

import pytest

from autograder.core.i18n import N_, _
from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_fields, assert_keys, assert_scalar
from autograder.labkit.messages import fixed_case

pytestmark = pytest.mark.question("slowest_stage")

STEP_KEYS = ("step_s", "throughput", "utilization", "bottleneck")
GPT2_KEYS = ("tokens_per_batch", "tokenize_s_one_core", "tokenize_s", "batch_bytes", "transfer_s", "forward_s",
             "step_s_no_overlap", "step_s_overlap", "utilization_no_overlap", "utilization_overlap", "bottleneck")


def test_storage_and_preprocess_rates(student, reference, rng):
    # Chapter: NVMe Gen4 reads 7 GB/s sequentially; random access is about 0.1 of that.
    with fixed_case():  # issue 27: the chapter's cases, the same on every submission: no direction
        got = student.storage_rate(disk_rate=7e9, network_rate=12.5e9, access_factor=0.1)
        assert_scalar(got, 0.7e9, what="storage_rate", case=_("NVMe 7 GB/s, 12.5 GB/s network, random access 0.1"),
                      rtol=1e-9)
        got = student.storage_rate(disk_rate=7e9, network_rate=1.25e9)
        assert_scalar(got, 1.25e9, what="storage_rate", case=_("7 GB/s disk behind a 1.25 GB/s network, sequential"),
                      rtol=1e-9)
        # The access factor scales the slower of disk and network: min(7, 1.25) × 0.1 = 0.125 GB/s,
        # not min(7 × 0.1, 1.25) = 0.7 GB/s.
        got = student.storage_rate(disk_rate=7e9, network_rate=1.25e9, access_factor=0.1)
        assert_scalar(got, 0.125e9, what="storage_rate",
                      case=_("7 GB/s disk behind a 1.25 GB/s network, random access 0.1"), rtol=1e-9)
        got = student.preprocess_rate(workers=8, t_transform_s=0.004)
        assert_scalar(got, 2000.0, what="preprocess_rate", case=_("8 workers, 4 ms per item"), rtol=1e-9)
    for _trial in range(3):
        kw = {"disk_rate": float(rng.uniform(1e8, 1e10)), "network_rate": float(rng.uniform(1e8, 1e10)),
              "access_factor": float(rng.uniform(0.05, 1.0))}
        assert_scalar(student.storage_rate(**kw), reference.storage_rate(**kw), what="storage_rate",
                      case=_("random disk/network rates and access factor"), rtol=1e-9)
        kw = {"workers": int(rng.integers(1, 33)), "t_transform_s": float(rng.uniform(1e-4, 1e-1))}
        assert_scalar(student.preprocess_rate(**kw), reference.preprocess_rate(**kw), what="preprocess_rate",
                      case=_("a random number of workers and transform time"), rtol=1e-9)


def test_pipeline_rate_slowest_stage_wins(student, reference, rng):
    # Chapter: 200 img/s of preprocessing feeding a 1000 img/s accelerator is 20% utilization.
    with fixed_case():  # issue 27: the chapter's cases and the ties, the same on every submission: no direction
        got = student.pipeline_rate(stage_rates={"storage": 700.0, "preprocess": 200.0, "compute": 1000.0})
        assert_fields(got, {"rate": 200.0, "bottleneck": "preprocess", "utilization": 0.2}, what="pipeline_rate",
                      case=_("storage 700, preprocess 200, compute 1000 img/s"))
        got = student.pipeline_rate(stage_rates={"storage": 5000.0, "preprocess": 3000.0, "compute": 1000.0})
        assert_fields(got, {"rate": 1000.0, "bottleneck": "compute", "utilization": 1.0}, what="pipeline_rate",
                      case=_("compute is the slowest stage"))
        # Ties: the docstring names the first of the equally slow stages in the dict's order.
        for rates in ({"storage": 500.0, "preprocess": 200.0, "transfer": 200.0, "compute": 1000.0},
                      {"transfer": 200.0, "storage": 500.0, "preprocess": 200.0, "compute": 1000.0},
                      {"compute": 300.0, "preprocess": 300.0, "storage": 900.0}):
            slowest = [name for name, r in rates.items() if r == min(rates.values())]
            assert_fields(student.pipeline_rate(stage_rates=rates),
                          {"rate": min(rates.values()), "bottleneck": slowest[0],
                           "utilization": min(rates.values()) / rates["compute"]}, what="pipeline_rate",
                          case=_("a tie between {stages}: the first in the dict's order wins").format(
                              stages=" = ".join(slowest)))
    for n_stages in (2, 4):
        names = ["storage", "preprocess", "transfer"][: n_stages - 1] + ["compute"]
        rates = {n: float(r) for n, r in zip(names, rng.uniform(50.0, 5000.0, size=n_stages))}
        assert_fields(student.pipeline_rate(stage_rates=rates), reference.pipeline_rate(stage_rates=rates),
                      what="pipeline_rate", case=_("{n_stages} random stage rates").format(n_stages=n_stages))


def test_pipeline_step_with_and_without_overlap(student, reference, rng):
    with fixed_case():  # issue 27: the chapter's cases and the ties, the same on every submission: no direction
        times = {"load": 0.030, "preprocess": 0.050, "compute": 0.040}
        got = student.pipeline_step(stage_times_s=times, overlap=False)
        assert_fields(got, {"step_s": 0.120, "throughput": 1 / 0.120, "utilization": 0.040 / 0.120,
                            "bottleneck": "preprocess"}, what="pipeline_step", case=_("30/50/40 ms, no overlap"))
        got = student.pipeline_step(stage_times_s=times, overlap=True)
        assert_fields(got, {"step_s": 0.050, "throughput": 20.0, "utilization": 0.8, "bottleneck": "preprocess"},
                      what="pipeline_step", case=_("30/50/40 ms, overlapped"))
        # Ties: the first of the equally slow stages in the dict's order, with and without overlap.
        for times in ({"load": 0.050, "preprocess": 0.050, "compute": 0.040},
                      {"compute": 0.060, "load": 0.030, "decode": 0.060}):
            slowest = [name for name, t in times.items() if t == max(times.values())]
            for overlap in (False, True):
                step = max(times.values()) if overlap else sum(times.values())
                assert_fields(student.pipeline_step(stage_times_s=times, overlap=overlap),
                              {"step_s": step, "throughput": 1 / step, "utilization": times["compute"] / step,
                               "bottleneck": slowest[0]}, what="pipeline_step",
                              case=_("a tie between {stages}, overlap={overlap}: the first in the dict's order wins"
                                     ).format(stages=" = ".join(slowest), overlap=overlap))
    for overlap in (False, True):
        times = {n: float(t) for n, t in zip(("read", "decode", "transfer", "compute"), rng.uniform(1e-3, 0.2, size=4))}
        assert_fields(student.pipeline_step(stage_times_s=times, overlap=overlap),
                      reference.pipeline_step(stage_times_s=times, overlap=overlap),
                      what="pipeline_step", case=_("4 random stage times, overlap={overlap}").format(overlap=overlap))


def test_gpt2_pipeline_chapter_numbers(student):
    # 32 × 1024 = 32,768 tokens; 65.5 ms on one core at 500K tokens/s, 8.2 ms on 8;
    # 262 KB of int64 moving in 0.017 ms over PCIe Gen3 (15.75 GB/s); forward 80 ms.
    tokens = 32 * 1024
    tok_1 = tokens / 500_000
    xfer = tokens * 8 / 15.75e9
    for workers in (8, 1):
        tok = tok_1 / workers
        serial = tok + xfer + 0.080
        expected = {
            "tokens_per_batch": tokens, "tokenize_s_one_core": tok_1, "tokenize_s": tok,
            "batch_bytes": tokens * 8, "transfer_s": xfer, "forward_s": 0.080,
            "step_s_no_overlap": serial, "step_s_overlap": 0.080,
            "utilization_no_overlap": 0.080 / serial, "utilization_overlap": 1.0, "bottleneck": "compute",
        }
        assert_fields(student.gpt2_pipeline(workers=workers), expected, what="gpt2_pipeline",
                      case=_("chapter defaults, {workers} tokenizer worker(s)").format(workers=workers))


def test_gpt2_pipeline_matches_reference(student, reference, rng):
    # A slow tokenizer makes tokenizing the bottleneck; a fast one leaves compute.
    cases = [{"tokens_per_s_per_core": 100_000.0, "workers": 2},
             {"batch_size": int(rng.integers(4, 65)), "seq_len": int(rng.choice([256, 512, 2048])),
              "tokens_per_s_per_core": float(rng.uniform(1e5, 1e6)), "workers": int(rng.integers(1, 17)),
              "bytes_per_token": int(rng.choice([2, 4, 8])), "pcie_GBps": float(rng.choice([15.75, 31.5, 64.0])),
              "forward_s": float(rng.uniform(0.01, 0.2))}]
    labels = (_("a slow tokenizer, 2 workers"), _("a random batch, tokenizer and link"))
    for kw, label, fixed in zip(cases, labels, (True, False)):
        with fixed_case(fixed):  # issue 27: the first case is the same on every submission: no direction
            assert_fields(student.gpt2_pipeline(**kw), reference.gpt2_pipeline(**kw), what="gpt2_pipeline", case=label)
    # Ties: tokenizing 32,768 tokens at 409,600 tokens/s on one core (204,800 on each of two) takes
    # exactly the 80 ms of the forward pass; "tokenize" comes first in the documented order.
    for tps, workers in ((409_600.0, 1), (204_800.0, 2)):
        got = student.gpt2_pipeline(tokens_per_s_per_core=tps, workers=workers)
        with fixed_case():  # issue 27: the same on every submission, so no direction
            assert_fields(got, reference.gpt2_pipeline(tokens_per_s_per_core=tps, workers=workers),
                          what="gpt2_pipeline", case=_("a tie: tokenizing takes exactly the 80 ms of the forward pass, "
                                                       "{workers} worker(s)").format(workers=workers))


IMAGE_KEYS = ("storage_rate", "preprocess_rate", "transfer_rate", "compute_rate", "rate", "bottleneck", "utilization",
              "images_per_s")
IMAGE_STAGES = ("storage", "preprocess", "transfer", "compute")  # pipeline order: the first of ties wins


def image_stages(*, workers, batch_size=32, t_transform_s=0.030, compute_s=0.010, image_bytes=500_000.0,
                 disk_GBps=7.0, network_GBps=None, access_factor=0.1, tensor_bytes_per_image=224 * 224 * 3 * 4,
                 pcie_GBps=15.75):
    """Ground truth for image_pipeline, written out here from the docstring's definitions (never the reference)."""
    storage = min(disk_GBps, disk_GBps if network_GBps is None else network_GBps) * 1e9 * access_factor
    rates = [storage / (batch_size * image_bytes), workers / t_transform_s,
             pcie_GBps * 1e9 / (batch_size * tensor_bytes_per_image), 1.0 / compute_s]
    slowest = min(range(4), key=rates.__getitem__)  # min keeps the first of ties
    return {"storage_rate": rates[0], "preprocess_rate": rates[1], "transfer_rate": rates[2], "compute_rate": rates[3],
            "rate": rates[slowest], "bottleneck": IMAGE_STAGES[slowest], "utilization": rates[slowest] / rates[3],
            "images_per_s": rates[slowest] * batch_size}


NOT_SLOWEST = N_("{what}{case}: not the slowest stage of the four rates your result reports")
TIE_NOT_FIRST = N_("{what}{case}: several of the four rates your result reports are equally slow, and it names a "
                   "later one; a tie goes to the first in the order storage, preprocess, transfer, compute")


def check_image(got, expected, *, case):
    """image_pipeline's result against ``expected``: every number, then the bottleneck by the docstring's rule
    (the slowest stage, the first of ties in pipeline order) applied to the four rates the result itself
    reports.  Those agree with ``expected``'s to rtol 1e-12, but where two stages are equally slow up to
    rounding (3 workers at 30 ms per batch against 10 ms of compute: 100 batches/s each, or a hair apart
    depending on the order of operations) only the submission's own floats say which one it found slowest;
    an exact tie in them goes to the first (issue 35: accepting any stage near the slowest let "the last of
    ties" pass)."""
    assert_keys(got, IMAGE_KEYS, what="image_pipeline", case=case)
    numbers = {k: v for k, v in expected.items() if k != "bottleneck"}
    # rtol 1e-12: any order of the docstring's operations agrees to a few ulps; 1e9 mistyped as 1e9 + 1 does not
    assert_fields({k: got[k] for k in numbers}, numbers, what="image_pipeline", case=case, rtol=1e-12)
    own = [float(got[f"{s}_rate"]) for s in IMAGE_STAGES]
    if got["bottleneck"] == IMAGE_STAGES[own.index(min(own))]:  # list.index: the first of ties
        return
    slowest = [s for s, r in zip(IMAGE_STAGES, own) if r == min(own)]
    what = "image_pipeline['bottleneck']"
    raise AssertionError(M.say(TIE_NOT_FIRST if got["bottleneck"] in slowest else NOT_SLOWEST, what=what,
                               case=M.case_suffix(case)))


def test_image_pipeline_bottleneck_moves_as_workers_are_added(student):
    # The chapter's numbers: one thread at 30 ms per batch cannot feed a 10 ms accelerator (§4.2.2
    # Preprocessing); NVMe at 7 GB/s (the GPT-2 example of §4.2.2 Preprocessing) with random access at 0.1 of
    # it (§4.2.1 Core components); PCIe Gen3 15.75 GB/s (the same example). The lab's own: 500 KB per stored image, FP32 224×224×3 on the wire. Random access:
    # preprocessing binds at 1 worker (33.3 of 100 batches/s), storage (43.75) from 2 on. Sequential reads:
    # preprocessing up to 3 workers (a tie with compute at 100 batches/s: either may be named, see
    # check_image), compute from 4.
    for access, label in ((0.1, _("random access (0.1)")), (1.0, _("sequential reads (1.0)"))):
        for workers in range(1, 9):
            # random access is the signature's default: called without it
            kw = {"workers": workers} if access == 0.1 else {"workers": workers, "access_factor": access}
            check_image(student.image_pipeline(**kw),
                        image_stages(workers=workers, access_factor=access),
                        case=_("the image pipeline (the chapter's rates, the lab's image sizes), {access}, "
                              "{workers} worker(s)").format(
                            access=label, workers=workers))
    # Storage behind a 1.25 GB/s (10 Gb/s) network link, sequential: the network binds below the disk.
    check_image(student.image_pipeline(workers=8, network_GBps=1.25, access_factor=1.0),
                image_stages(workers=8, network_GBps=1.25, access_factor=1.0),
                case=_("the image pipeline (the chapter's rates, the lab's image sizes) behind a 1.25 GB/s "
                       "network, sequential reads, 8 workers"))
    # The same link under random access (the default 0.1): the factor scales the network's rate too,
    # 1.25 GB/s × 0.1 / 16 MB = 7.8125 batches/s (not min(7 × 0.1, 1.25) GB/s: 43.75).
    check_image(student.image_pipeline(workers=8, network_GBps=1.25),
                image_stages(workers=8, network_GBps=1.25),
                case=_("the image pipeline (the chapter's rates, the lab's image sizes) behind a 1.25 GB/s "
                       "network, random access (0.1), 8 workers"))
    # Exact ties, whatever the order of the operations (powers of two and exact products): the docstring's
    # "ties go to the first in that order" decides, from the submission's own rates (check_image).
    with fixed_case():  # the same on every submission: no direction
        # storage = transfer = 0.5 GB/s / (16 x 2^20 B) = 29.8 batches/s, below preprocess (32) and compute (64)
        kw = dict(workers=8, batch_size=16, t_transform_s=0.25, compute_s=0.015625, image_bytes=2.0**20,
                  disk_GBps=0.5, access_factor=1.0, tensor_bytes_per_image=2**20, pcie_GBps=0.5)
        check_image(student.image_pipeline(**kw), image_stages(**kw),
                    case=_("an exact tie between storage and transfer, the slowest stages"))
        # preprocess = 4 workers / 0.5 s = compute = 1 / 0.125 s = 8 batches/s, below storage and transfer
        kw = dict(workers=4, t_transform_s=0.5, compute_s=0.125)
        check_image(student.image_pipeline(**kw), image_stages(**kw),
                    case=_("an exact tie between preprocess and compute, the slowest stages"))


def test_image_pipeline_matches_reference(student, reference, rng):
    for trial in range(3):
        kw = {"workers": int(rng.integers(1, 33)), "batch_size": int(rng.choice([16, 32, 64, 256])),
              "t_transform_s": float(rng.uniform(0.005, 0.2)), "compute_s": float(rng.uniform(0.002, 0.1)),
              "image_bytes": float(rng.uniform(5e4, 2e6)), "disk_GBps": float(rng.choice([0.5, 2.0, 3.5, 7.0])),
              "network_GBps": None if trial == 0 else float(rng.choice([1.25, 12.5, 25.0])),
              "access_factor": float(rng.uniform(0.05, 1.0)),
              "tensor_bytes_per_image": int(rng.choice([224 * 224 * 3, 224 * 224 * 3 * 4, 512 * 512 * 3 * 2])),
              "pcie_GBps": float(rng.choice([15.75, 31.5]))}
        case = _("a random pipeline: workers, batch, stage times, image size, disk, network, access factor, link")
        got = student.image_pipeline(**kw)
        check_image(got, image_stages(**kw), case=case)
        check_image(got, reference.image_pipeline(**kw), case=case)
