"""Labs 3 and 4: mistakes the hidden tests once missed now lose exactly their question.

Two kinds of check, both on trusted code:

* the shipped support modules themselves: lab 4's Recorder files every load
  when it happens (a second load of an item shows) and reports the threads
  that did recorded work but were not joined, whether or not they happen to
  have ended; lab 3's models can share one block between layers (a module
  the forward pass reaches several times);
* each negative variant written for such a mistake, graded in-process
  exactly as ``autograder verify --no-sandbox`` grades it: it must lose the
  questions its lab.toml entry names, and keep every other.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.authoring import candidates, verify
from autograder.core import labs
from autograder.labkit.support import trusted_support

LAB3, LAB4 = labs.get("lab3"), labs.get("lab4")
SIM = trusted_support(LAB4, "lab4_sim.py")
MODELS = trusted_support(LAB3, "lab3_models.py")

NEW_VARIANTS = {  # lab -> the variants for issue 27's held-out mistakes
    "lab3": ["hooks_left_on", "shared_block_once", "shared_block_hooked_twice"],
    "lab4": ["loader_double_load", "loader_not_joined", "attn_max_from_zero", "attn_first_tile_max",
             "ring_receive_in_place"],
}


# -- lab 4's Recorder -----------------------------------------------------------------
def loads_of(report: dict, item: int) -> list[dict]:
    return [e for e in report["events"] if e["stage"] == "load" and e["item"] == item]


def test_every_load_is_recorded_even_when_its_item_is_dropped():
    rec = SIM.Recorder()
    item = rec.load(0, kind="sleep", amount=0.0)
    rec.load(0, kind="sleep", amount=0.0)  # loaded again, the result dropped: the work was still done
    rec.compute(item, kind="sleep", amount=0.0)
    assert len(loads_of(rec.report(), 0)) == 2


def test_a_load_carried_to_compute_is_filed_once():
    rec = SIM.Recorder()
    for i in range(3):
        rec.compute(rec.load(i, kind="sleep", amount=0.0), kind="sleep", amount=0.0)
    report = rec.report()
    assert [len(loads_of(report, i)) for i in range(3)] == [1, 1, 1]
    assert [e["stage"] for e in report["events"]] == ["load", "compute"] * 3
    assert report["unjoined"] == []  # the calling thread did everything


def test_a_load_from_another_process_is_filed_when_computed():
    # A loader in another process files into its own copy of the Recorder, out of reach: its record
    # travels with the item, under a name this Recorder has not filed.
    rec = SIM.Recorder()
    item = rec.load(0, kind="sleep", amount=0.0)
    foreign = {**item, "name": (-1, 0), "load": {**item["load"], "pid": -1}}
    rec.compute(foreign, kind="sleep", amount=0.0)
    assert [e["pid"] for e in loads_of(rec.report(), 0)] == [item["load"]["pid"], -1]


def test_unjoined_loader_thread_is_reported_until_joined():
    rec = SIM.Recorder()
    q: queue.Queue = queue.Queue()
    loader = threading.Thread(target=lambda: q.put(rec.load(0, kind="sleep", amount=0.0)), daemon=True)
    loader.start()
    rec.compute(q.get(), kind="sleep", amount=0.0)
    time.sleep(0.05)  # the loader has most likely ended by now: not joined all the same
    assert rec.report()["unjoined"] == [loads_of(rec.report(), 0)[0]["thread"]]
    loader.join()
    assert rec.report()["unjoined"] == []


def test_a_thread_pool_joined_by_its_with_block_is_not_reported():
    rec = SIM.Recorder()
    with ThreadPoolExecutor(max_workers=1) as pool:  # leaving the block joins the pool's threads
        item = pool.submit(rec.load, 0, kind="sleep", amount=0.0).result()
    rec.compute(item, kind="sleep", amount=0.0)
    report = rec.report()
    assert report["unjoined"] == [] and loads_of(report, 0)[0]["thread"] != report["thread"]


# -- lab 3's models ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["gpt", "mlp"])
def test_shared_blocks_reach_one_module_at_every_layer(kind):
    model = MODELS.build_model({"kind": kind, "n_layers": 3, "shared_blocks": True})
    blocks = list(model.blocks)
    assert all(b is blocks[0] for b in blocks)
    starts = []
    handle = blocks[0].register_forward_pre_hook(lambda m, i: starts.append(1))
    MODELS.forward_loss(model, MODELS.make_batch({"kind": kind}, 2))
    handle.remove()
    assert len(starts) == 3
    plain = MODELS.build_model({"kind": kind, "n_layers": 3})
    assert sum(1 for _m in model.modules()) < sum(1 for _m in plain.modules())


# -- the variants -------------------------------------------------------------------------
@pytest.mark.parametrize("lab_name,variant", [(lab, v) for lab, vs in NEW_VARIANTS.items() for v in vs])
def test_variant_loses_exactly_its_questions(lab_name, variant):
    lab = labs.get(lab_name)
    cand = {c.id: c for c in candidates.all_candidates(lab)}.get(variant)
    assert cand is not None, f"{lab_name}/lab.toml has no variant {variant}"
    res, = verify.grade_batch([(lab, cand.id, candidates.sources(lab, cand))], jobs=1, sandbox=False)
    assert verify.judge(lab, cand, res) == [], verify.explain(lab, cand, res)
