"""Issue 27, section 5: lab 1's held-out mistakes, each caught by the throughput question alone.

The simulated device (``lab1_device.py``) now models what the protocol
leaves out: ``randn`` takes time, a product right after one of its own shape
finds warm caches (so the order of the sweep shows), and a thread setting
changed by the measuring code, at import time or in a function, with any
count, makes it raise.  Each class is a negative variant in ``lab.toml``;
here lab 1's hidden tests grade those variants in this process (as
``verify --no-sandbox`` would, in seconds) and must fail exactly the
throughput tests, on 1, 2 or 64 cores alike.
"""

from __future__ import annotations

import importlib.util
import os
import re

import numpy as np
import pytest
import torch

from autograder.authoring import candidates
from autograder.core import labs
from autograder.grading import pytest_here
from autograder.labkit import plugin

LAB = labs.get("lab1")


@pytest.fixture
def device(tmp_path):
    """A fresh copy of the shipped lab1_device module, as a student's folder would import it."""
    spec = importlib.util.spec_from_file_location("lab1_device_under_test", LAB.assignment_dir / "lab1_device.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the device model -------------------------------------------------------------------------
def test_randn_takes_time_on_a_simulated_device(device):
    dev = device.open_device({"kind": "simulated", "threads": torch.get_num_threads(), "randn_s_per_value": 1e-6})
    t0 = dev.clock()
    X = dev.randn(30, 40)
    assert dev.clock() - t0 == pytest.approx(1200 * 1e-6)
    W = dev.randn(40, 5)
    t1 = dev.clock()
    dev.matmul(X, W)
    t2 = dev.clock()
    spec = device.simulated_spec(dev.spec)
    assert t2 - t1 == pytest.approx(device.product_seconds(spec, (30, 40, 5), 0), rel=1e-12)


def test_the_order_of_the_products_shows(device):
    """Interleaved rounds never run a product right after its own shape; back-to-back repeats do, and are faster."""
    spec = {"kind": "simulated", "threads": torch.get_num_threads(), "noise": 0.0, "repeat_speedup": 0.25}
    shapes = [(4, 64, 64), (16, 64, 64)]

    def timed(order):
        dev = device.open_device(spec)
        W, Xs = dev.randn(64, 64), {b: dev.randn(b, 64) for b, _k, _n in shapes}
        for b, _k, _n in shapes:
            dev.matmul(Xs[b], W)  # warm-up
        out = {b: [] for b, _k, _n in shapes}
        for b in order:
            t0 = dev.clock()
            dev.matmul(Xs[b], W)
            out[b].append(dev.clock() - t0)
        return out

    rounds, blocked = timed([4, 16] * 3), timed([4] * 3 + [16] * 3)
    assert rounds[4][0] == rounds[4][1] == rounds[4][2]  # every one after another shape
    assert blocked[4][1] == pytest.approx(0.75 * rounds[4][1], rel=1e-12)  # after its own shape: warm caches
    assert blocked[4][0] == rounds[4][0]


def test_a_thread_setting_changed_by_the_measuring_code_raises(device, tmp_path):
    """Any torch.set_num_threads call of the folder that opens the device, even to the same count."""
    before = torch.get_num_threads()
    code = tmp_path / "student" / "measure.py"
    code.parent.mkdir()
    code.write_text("import torch\n\ndef measure(device, spec):\n    torch.set_num_threads(torch.get_num_threads())\n"
                    "    dev = device.open_device(spec)\n    dev.matmul(dev.randn(2, 2), dev.randn(2, 2))\n\n"
                    "def only_measure(device, spec):\n    dev = device.open_device(spec)\n"
                    "    dev.matmul(dev.randn(2, 2), dev.randn(2, 2))\n")
    spec = importlib.util.spec_from_file_location("measure_under_test", code)
    student = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(student)
    sim = {"kind": "simulated", "threads": before}
    try:
        student.only_measure(device, sim)  # nothing called yet: it measures
        torch.set_num_threads(before)  # the grader's own call (this file's folder): not the student's
        student.only_measure(device, sim)
        with pytest.raises(device.ThreadSettingError, match="torch.set_num_threads"):
            student.measure(device, sim)  # the same count: still a change the device cannot tell apart
        with pytest.raises(device.ThreadSettingError):
            student.only_measure(device, sim)  # and from then on
    finally:
        torch.set_num_threads(before)


def test_a_thread_setting_other_than_the_given_one_raises(device):
    """A change made before the device module was imported (or by anyone): torch's setting is not spec["threads"]."""
    dev = device.open_device({"kind": "simulated", "threads": torch.get_num_threads() + 1})
    with pytest.raises(device.ThreadSettingError, match="spec\\['threads'\\]"):
        dev.matmul(dev.randn(2, 2), dev.randn(2, 2))


# -- the variants, graded in this process --------------------------------------------------------
class _Results:
    def pytest_configure(self, config):
        # as `check` does (grading/local.py): pytest's own report of each failure, which nothing here
        # shows (the feedback is the plugin's), is the exception's text, not a traceback with source
        config.option.tbstyle = "value"

    def pytest_sessionfinish(self, session):
        self.results = plugin.collected_results(session.config)


def grade(files: dict[str, str], folder, salt: str = "x", tests=None,
          plugins=()) -> dict[str, tuple[str, str, str]]:
    """{test nodeid: (question, status, feedback)} of lab 1's hidden tests (or ``tests``, a file of them) on
    ``files``, in this process (``plugins``: more pytest plugin objects for the run)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    collector = _Results()
    before = torch.get_num_threads()
    try:
        # LEAN, as every engine run of pytest: without the unraisableexception plugin's gc.collect() at the
        # end of each run (0.2 s or more a grade in this process, with torch loaded; no grade reads it)
        pytest_here.run_pytest_here([str(LAB.hidden_tests_dir / (tests or "")), "--submission", str(folder), "--seed-salt", salt,
                                     *pytest_here.LEAN, "-p", "no:terminal", "-o", "addopts=",
                                     "--import-mode=importlib", "--rootdir", str(LAB.root)], LAB.root,
                                    [collector, *plugins])
    finally:
        torch.set_num_threads(before)
    return {r.nodeid: (r.question, r.status, r.feedback) for r in collector.results}


def candidate(cid: str) -> candidates.Candidate:
    return next(c for c in candidates.verify_candidates(LAB) if c.id == cid)


def lost(results) -> set[str]:
    return {q for q, status, _fb in results.values() if status != "passed"}


def failed(results) -> dict[str, str]:
    return {n.split("::")[-1]: fb for n, (_q, status, fb) in results.items() if status != "passed"}


SIMULATED_TESTS = {"test_peak_on_simulated_devices", "test_sweep_with_a_stated_peak", "test_sweep_with_a_measured_peak"}
NEW = ("G_all_threads", "N_threads_before_import", "O_one_thread_in_measure", "P_randn_in_timing", "Q_not_interleaved")
THREADS = "torch.set_num_threads"
SYMPTOM = {"G_all_threads": THREADS, "N_threads_before_import": THREADS, "O_one_thread_in_measure": THREADS,
           "P_randn_in_timing": "device.randn", "Q_not_interleaved": "back to back"}


@pytest.mark.parametrize("cid", NEW)
def test_held_out_mistake_loses_exactly_throughput(cid, tmp_path):
    results = grade(candidates.sources(LAB, candidate(cid)), tmp_path / cid)
    # throughput; a thread setting changed by the file also stops its break-it timings (lab.toml's loses)
    assert lost(results) == set(candidate(cid).expect_lost), {k: v for k, v in results.items() if v[1] != "passed"}
    assert "throughput" in lost(results)
    assert failed(results) and all(SYMPTOM[cid] in fb for fb in failed(results).values()), failed(results)


@pytest.mark.parametrize("cores", [1, 2, 64])
def test_thread_mistakes_are_caught_on_any_number_of_cores(cores, tmp_path, monkeypatch):
    """``os.cpu_count()`` is what these submissions set torch to: 1 on a one-core grader (the grader's own
    setting), 64 on a big one; each loses throughput, with the same tests failed, either way."""
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    for cid in ("G_all_threads", "N_threads_before_import"):  # the other questions: test_held_out_mistake...
        results = grade(candidates.sources(LAB, candidate(cid)), tmp_path / cid, tests="test_throughput.py")
        assert lost(results) == {"throughput"}, (cid, cores, failed(results))
        assert set(failed(results)) == SIMULATED_TESTS, (cid, cores, failed(results))


def test_a_fresh_operand_before_each_timed_product_keeps_full_marks(tmp_path):
    cand = candidate("alternatives/numpy_arrays")
    results = grade(candidates.sources(LAB, cand), tmp_path / "numpy_arrays")
    assert not lost(results), {k: v for k, v in results.items() if v[1] != "passed"}


# -- what the feedback says ---------------------------------------------------------------------
def test_more_repeats_are_named_without_a_count(tmp_path):
    """One timed product more than `repeats` in the peak: named as "more than `repeats`", with no count
    (the old "it equals what 11 timed repeats give" was wrong when two more ran, and it gave `repeats` away)."""
    files = candidates.sources(LAB, candidate("reference"))
    files["flops.py"] = files["flops.py"].replace("for _ in range(repeats))", "for _ in range(repeats + 1))")
    results = grade(files, tmp_path / "more")
    fb = next(fb for n, (_q, _s, fb) in results.items() if n.endswith("test_peak_on_simulated_devices"))
    assert "more than `repeats`" in fb, fb
    assert not re.search(r"\d+ timed repeats", fb), fb


def test_drawn_inputs_are_not_in_the_feedback(tmp_path):
    """A systematic mistake (FLOPs counted as m*k*n) fails alike whatever the drawn inputs: with the case
    named by number, the feedback is the same for two different salts, word for word (but for the index of
    an element in a list of batch sizes drawn in random order: a place, not a value)."""
    files = candidates.sources(LAB, candidate("A_mnk"))
    one, two = grade(files, tmp_path / "a", salt="one"), grade(files, tmp_path / "b", salt="two")

    def text(fb):
        return re.sub(r"at index \(\d+,\)", "at index (i,)", fb)

    differ = {n: (one[n][2], two[n][2]) for n in one if text(one[n][2]) != text(two[n][2])}
    assert not differ, differ


# -- issue 35: a grader that cannot build its case never fails the student --------------------------
# The throughput tests search a drawn device's noise for a seed on which every known mistake gives
# another answer (with_distinct_noise).  On some drawn devices there is none (a tiny product whose
# operands take too little time to make: randn inside the timed region shows by less than DISTINCT);
# the test then grades on a fixed case of the same kind, checked here, never the student.
PEAK_NODE = "tests/lab1_iron_law/test_throughput.py::test_peak_on_simulated_devices"
# the sha256 of some file: its peak test draws such a tiny product (found by trying digests once)
DIGEST_WITHOUT_CASE = "7d2b080321674f3ff8344995d7a0381ee2c4b2d5e99a60c2bcae9dd7a261153b"


@pytest.fixture
def throughput():
    """The hidden test module, loaded by path, with the grader's device model."""
    path = LAB.hidden_tests_dir / "test_throughput.py"
    spec = importlib.util.spec_from_file_location("lab1_throughput_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_fixed_case_tells_the_mistakes_apart_at_its_own_seed(throughput, device):
    """The fallbacks are pre-checked: each tells every known mistake apart with its own noise seed (one try)
    and is of its kind (a tiny product, an even or the default number of repeats, a stated or measured peak)."""
    T = throughput
    for label, (n, repeats, spec) in T.FIXED_PEAK.items():
        assert T.peak_search(device, n, repeats, spec, tries=1) is not None, label
    assert T.FIXED_PEAK[T.SIM_PEAK_DEFAULTS][:2] == (None, None) and T.FIXED_PEAK[T.SIM_PEAK_TINY][0] < 9
    for (big, default_repeats, even), args in T.FIXED_SWEEP.items():
        assert T.sweep_search(device, *args, big=big, tries=1) is not None, (big, default_repeats, even)
        repeats, stated = args[3], args[4]
        assert (stated is None) == (big is not None)
        assert (repeats == T.SWEEP_REPEATS) if default_repeats else True
        assert repeats % 2 == 0 if even else True


def test_the_digest_draws_a_case_no_seed_tells_apart(throughput, device):
    """Keeps the next test meaningful: with this digest the tiny peak case's search does fail."""
    T = throughput
    rng = np.random.default_rng(plugin.seed_for(PEAK_NODE, DIGEST_WITHOUT_CASE))
    # the cases' sizes, then each case's device, drawn as test_peak_on_simulated_devices draws them
    cases = [(None, None), (int(rng.integers(2, 9)), int(rng.integers(2, 13)))]
    cases += [(int(rng.integers(64, 700)), int(rng.integers(2, 13))) for _trial in range(2)]
    assert T.peak_search(device, None, None, T.draw_spec(rng)) is not None
    assert T.peak_search(device, *cases[1], T.draw_spec(rng)) is None


class _NoSearch:
    """Every search of test_throughput.py given no seed to try: each case is its fixed one."""

    def pytest_collection_modifyitems(self, items):
        for item in items:
            if item.module.__name__.endswith("test_throughput"):
                item.module.SEED_TRIES = 0


@pytest.mark.parametrize("how", ["digest", "no search"])
def test_a_failed_search_grades_on_the_fixed_case(how, tmp_path):
    """The reference keeps full marks and a throughput mistake still loses throughput, whether one drawn
    case has no seed (the digest) or every search fails (a budget of 0): never "grader bug" as a 0."""
    plugins = [_NoSearch()] if how == "no search" else []
    for cid, lose in (("reference", set()), ("I_peak_mean", {"throughput"}), ("D_computed_not_timed", {"throughput"})):
        results = grade(candidates.sources(LAB, candidate(cid)), tmp_path / cid, salt=DIGEST_WITHOUT_CASE,
                        tests="test_throughput.py", plugins=plugins)
        assert lost(results) == lose, (cid, failed(results))
        assert not any("grader" in fb for fb in failed(results).values()), failed(results)

