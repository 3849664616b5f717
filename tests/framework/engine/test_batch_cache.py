"""Answers a batch shares (``autograder/labkit/batch_cache.py``): the reference's and the tests'
ground truth, computed once per distinct call, the same value whether computed or read back, kept
in a private folder the batch's graders share, and a new key whenever the lab's trusted files change."""

from __future__ import annotations

import stat

import numpy as np
import pytest

from autograder.grading import runner
from autograder.labkit import batch_cache


def counting(value, calls):
    def compute():
        calls.append(1)
        return value
    return compute


def test_an_answer_is_computed_once_and_reads_back_as_computed(toy_lab, tmp_path):
    calls = []
    compute = counting({"pair": (1, 2.5), "a": np.arange(3.0), "n": None}, calls)
    mine = batch_cache.Store(toy_lab, tmp_path / "shared")
    first = mine.answer("f", (1,), {"k": "v"}, compute)
    again = mine.answer("f", (1,), {"k": "v"}, compute)
    theirs = batch_cache.Store(toy_lab, tmp_path / "shared").answer("f", (1,), {"k": "v"}, compute)  # another grader
    assert len(calls) == 1 and (mine.misses, mine.hits) == (1, 1)
    for got in (first, again, theirs):  # what the wire carries, hit or miss alike
        assert type(got["pair"]) is tuple and got["pair"] == (1, 2.5) and got["n"] is None
        assert isinstance(got["a"], np.ndarray) and np.array_equal(got["a"], np.arange(3.0))
    mine.answer("f", (2,), {"k": "v"}, compute)  # other arguments, another answer
    mine.answer("g", (1,), {"k": "v"}, compute)  # another function
    assert len(calls) == 3 and len(list((tmp_path / "shared").glob("*" + batch_cache.SUFFIX))) == 3


def test_a_changed_test_or_reference_is_a_new_key(toy_lab, tmp_path):
    calls = []
    batch_cache.Store(toy_lab, tmp_path / "shared").answer("f", (), {}, counting(1, calls))
    for path in (toy_lab.hidden_tests_dir / "test_toy.py", toy_lab.solution_dir / "toy.py"):
        path.write_text(path.read_text() + "\n# edited\n")
        batch_cache.Store(toy_lab, tmp_path / "shared").answer("f", (), {}, counting(1, calls))
    assert len(calls) == 3


def test_only_plain_data_is_kept(toy_lab):
    store = batch_cache.Store(toy_lab)
    with pytest.raises(TypeError, match="f: its answer cannot be kept"):
        store.answer("f", (), {}, lambda: object())
    with pytest.raises(TypeError, match="f: its arguments cannot key"):
        store.answer("f", (object(),), {}, lambda: 1)
    with pytest.raises(TypeError, match="is for the helpers of a lab's tests"):
        batch_cache.batch_constant(lambda: 1)  # this file is no lab's test


def test_the_shared_folder_is_private(tmp_path):
    batch_cache.open_session(tmp_path / "shared")
    try:
        assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o700
    finally:
        batch_cache.close_session()


def test_the_reference_answers_each_distinct_call_once_and_measures_every_time(toy_lab):
    class Reference:
        label = "reference"

        def __init__(self):
            self.calls = []

        def call(self, name, args, kwargs, measure=False):
            self.calls.append((name, measure))
            return [1.0, 2.0], ("measured" if measure else None)

    inner = Reference()
    ref = batch_cache.CachedBackend(inner, batch_cache.Store(toy_lab))
    assert ref.call("add", (), {"a": [1.0], "b": [2.0]}) == ref.call("add", (), {"a": [1.0], "b": [2.0]})
    assert ref.call("add", (), {"a": [1.0], "b": [2.0]}, measure=True)[1] == "measured"
    ref.call("add", (), {"a": [1.0], "b": [2.0]}, measure=True)
    assert inner.calls == [("add", False), ("add", True), ("add", True)]


def test_a_batch_shares_what_is_the_same_and_grades_as_without(toy_lab, tmp_path):
    """Graded twice without a seed salt (as verify grades), the second grading adds no answer; a
    salted one adds its own; every grade equals the grade without the folder."""
    shared = tmp_path / "shared"

    def grade(salt, cache):
        res = runner.grade_staged(toy_lab, toy_lab.solution_dir, "s", sandbox=False, seed_salt=salt, batch_cache=cache)
        return [(t.nodeid, t.status, t.points) for t in res.tests]

    first = grade("", shared)
    kept = sorted(p.name for p in shared.iterdir())
    assert kept, "the reference's answers are kept for the batch"
    assert grade("", shared) == first and sorted(p.name for p in shared.iterdir()) == kept
    salted = grade("abc", shared)
    assert len(list(shared.iterdir())) > len(kept)  # salted inputs: answers of their own
    assert salted == grade("abc", None) and first == grade("", None)
