"""Hidden argument values never reach the feedback, not even rounded (labs 3 and 4).

A drawn case is named by what it is ("a random GPT, a random batch size",
"a random number of ranks and buffer length"), never by a value its test
drew: not a size, not a shape made of drawn sizes, not a count that gives one
away (docs/feedback.md, "Labels, not arguments"). The chapter's fixed cases
keep their numbers: their inputs are the same for everyone.

Lab 3's and lab 4's hidden tests run here in this process (as ``verify
--no-sandbox`` would, in seconds), two ways:

* the reference, under two seed salts: every case label a check is given,
  those of the checks that pass included, is the same under both, test by
  test. A label that prints a drawn value (or a drawn choice) differs;
* wrong submissions, under a known salt: no integer of two digits or more
  that a test drew from its ``rng`` appears in that test's feedback. (One
  digit would match an index, a rank or a step by chance.) Each mistake
  passes its question's fixed cases and fails a drawn one, so its feedback
  names a drawn case.
"""

from __future__ import annotations

import collections
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder.authoring import candidates
from autograder.core import labs
from autograder.grading import pytest_here
from autograder.labkit import assertions, messages, plugin

LABS = ("lab3", "lab4")
SALT = "drawn-values"  # any salt: the draws are recorded, not assumed


# -- grading in this process, with listeners -------------------------------------------------
class _Results:
    def pytest_configure(self, config):
        # as `check` does (grading/local.py): pytest's own report of each failure, which nothing here
        # shows (the feedback is the plugin's), is the exception's text, not a traceback with source
        config.option.tbstyle = "value"

    def pytest_sessionfinish(self, session):
        self.results = plugin.collected_results(session.config)


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> Path:
    """The ``--batch-cache`` folder of this module's grades, as a batch's graders share one
    (labkit/batch_cache.py): the ground truth of a case two grades meet (a fixed case, or a drawn
    one under the same salt) is computed once. A cached answer is decoded from the same wire bytes
    as a fresh one, and the labels and draws recorded here are the tests' own, hit or miss."""
    return tmp_path_factory.mktemp("answers")


def grade(lab: labs.Lab, files: dict[str, str], folder: Path, salt: str, answers: Path,
          listeners=()) -> dict[str, tuple[str, str]]:
    """{test nodeid: (status, feedback)} of ``lab``'s hidden tests on ``files``, in this process
    (``answers``: the batch cache's folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    # the lab's test modules are imported afresh, so they import the assertions as they are now
    pytest_here.forget(list(sys.modules), [lab.hidden_tests_dir])
    collector = _Results()
    threads = torch.get_num_threads()
    try:
        # LEAN, as every engine run of pytest: without the unraisableexception plugin's gc.collect() at the
        # end of each run (0.2 s or more a grade in this process, with torch loaded; no grade reads it)
        pytest_here.run_pytest_here([str(lab.hidden_tests_dir), "--submission", str(folder), "--seed-salt", salt,
                                     *pytest_here.LEAN, "-p", "no:terminal", "-o", "addopts=",
                                     "--import-mode=importlib", "--rootdir", str(lab.root), "--batch-cache", str(answers)],
                                    lab.root, [collector, *listeners])
    finally:
        torch.set_num_threads(threads)
    return {r.nodeid: (r.status, r.feedback) for r in collector.results}


def _running_test() -> str:
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]


class _DrawSpy:
    """A test's ``rng``, noting every single integer it draws (arrays are data, not arguments)."""

    def __init__(self, rng, drawn: set):
        self._rng, self._drawn = rng, drawn

    def __getattr__(self, name):
        attr = getattr(self._rng, name)
        if not callable(attr):
            return attr

        def draw(*args, **kwargs):
            out = attr(*args, **kwargs)
            if isinstance(out, (int, np.integer)) and not isinstance(out, bool):
                self._drawn.add(int(out))
            return out
        return draw


class _Draws:
    """A pytest plugin: {test nodeid: the integers its ``rng`` drew}."""

    def __init__(self):
        self.by_test: dict[str, set] = collections.defaultdict(set)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item):
        out = yield
        if "rng" in getattr(item, "funcargs", {}):  # the test receives the spy; its fixtures are set up
            item.funcargs["rng"] = _DrawSpy(item.funcargs["rng"], self.by_test[item.nodeid])
        return out


class _Labels:
    """Every case label given to a check, passing or failing, by test (in the order first given):
    the labkit's assertions and ``messages.case_suffix``, wrapped for as long as ``monkeypatch`` lasts."""

    ASSERTIONS = ("assert_close", "assert_scalar", "assert_equal", "assert_int", "assert_keys", "assert_fields")

    def __init__(self, monkeypatch):
        self.by_test: dict[str, list] = collections.defaultdict(list)
        for name in self.ASSERTIONS:
            monkeypatch.setattr(assertions, name, self._wrap(getattr(assertions, name)))
        monkeypatch.setattr(messages, "case_suffix", self._wrap(messages.case_suffix, positional=True))

    def _wrap(self, fn, positional=False):
        def spy(*args, **kwargs):
            case = args[0] if positional and args else kwargs.get("case", "")
            labels = self.by_test[_running_test()]
            if case and case not in labels:
                labels.append(case)
            return fn(*args, **kwargs)
        return spy


def reference_files(lab: labs.Lab) -> dict[str, str]:
    return candidates.sources(lab, next(c for c in candidates.all_candidates(lab) if c.id == candidates.REFERENCE))


# -- every case label, whatever is drawn -------------------------------------------------------
@pytest.mark.parametrize("lab_name", LABS)
def test_case_labels_are_the_same_whatever_is_drawn(lab_name, tmp_path, monkeypatch, answers):
    lab = labs.get(lab_name)
    spy = _Labels(monkeypatch)
    labels = {}
    for salt in ("one", "two"):
        spy.by_test.clear()
        results = grade(lab, reference_files(lab), tmp_path / salt, salt, answers)
        assert all(status == "passed" for status, _fb in results.values()), results
        labels[salt] = {test: list(cases) for test, cases in spy.by_test.items() if test}
    assert len(labels["one"]) >= 20, "the checks' labels were not seen: " + repr(labels["one"])
    differ = {test: [(a, b) for a, b in zip(cases, labels["two"].get(test, [])) if a != b] or
              (cases, labels["two"].get(test))
              for test, cases in labels["one"].items() if cases != labels["two"].get(test)}
    assert not differ, differ


# -- the feedback of wrong submissions -----------------------------------------------------------
# Mistakes that pass their question's fixed cases and fail a drawn one: lab.toml's variants where
# they do, else an edit of the reference made here ((file, [(text, replacement), ...])).
VARIANTS = {"lab3": ("no_attention_term", "zeros_as_underflow"), "lab4": ()}
EDITS = {
    "lab3": {
        # the 16 bytes/parameter of the chapter for every scheme: right at 7B, 20B and 175B
        "model_state_always_16": ("memory.py", [(
            'return int(n_params) * bytes_per_parameter(scheme=scheme)["total"]',
            "return int(n_params) * 16")]),
    },
    "lab4": {
        # FP32's 4 bytes whatever bytes_per_element says: right for the chapter's FP32 case
        "score_bytes_fp32_only": ("attention.py", [(
            '"full_bytes": S * S * bytes_per_element, "tile_bytes": block_size * block_size * bytes_per_element',
            '"full_bytes": S * S * 4, "tile_bytes": block_size * block_size * 4')]),
        # the whole buffer in every message once it is longer than 30 elements, and the receiver picks
        # out the chunk: the right sums, and test_every_message_follows_the_ring's fixed rings (30
        # elements at most) pass; its drawn one (20 to 199) does not
        "ring_whole_buffer_when_long": ("allreduce.py", [
            ('"data": buffer[lo:hi].copy()', '"data": (buffer if buffer.shape[0] > 30 else buffer[lo:hi]).copy()'),
            ('out[lo:hi] += msg["data"]', 'out[lo:hi] += msg["data"][lo:hi] if len(msg["data"]) > hi - lo '
                                          'else msg["data"]'),
            ('out[lo:hi] = msg["data"]', 'out[lo:hi] = msg["data"][lo:hi] if len(msg["data"]) > hi - lo '
                                         'else msg["data"]'),
        ]),
    },
}


def wrong_submissions():
    for lab_name in LABS:
        for vid in VARIANTS[lab_name]:
            yield pytest.param(lab_name, vid, id=f"{lab_name}-{vid}")
        for eid in EDITS[lab_name]:
            yield pytest.param(lab_name, eid, id=f"{lab_name}-{eid}")


def submission(lab: labs.Lab, sid: str) -> dict[str, str]:
    if sid in VARIANTS[lab.short]:
        return candidates.sources(lab, next(c for c in candidates.all_candidates(lab) if c.id == sid))
    files = reference_files(lab)
    name, edits = EDITS[lab.short][sid]
    for text, replacement in edits:
        assert text in files[name], f"{sid}: the reference's {name} no longer has {text!r}"
        files[name] = files[name].replace(text, replacement)
    return files


NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")  # a whole number, not part of a name (float32) or a decimal


@pytest.mark.parametrize(("lab_name", "sid"), list(wrong_submissions()))
def test_feedback_holds_no_drawn_integer(lab_name, sid, tmp_path, answers):
    lab = labs.get(lab_name)
    draws = _Draws()
    results = grade(lab, submission(lab, sid), tmp_path / sid, SALT, answers, [draws])
    failed = {test: fb for test, (status, fb) in results.items() if status != "passed"}
    drawn = {test: {v for v in values if abs(v) >= 10} for test, values in draws.by_test.items()}
    assert any(drawn.get(test) for test in failed), f"{sid} fails no test that draws: {failed}"
    shown = {test: drawn.get(test, set()) & {int(t) for t in NUMBER.findall(fb)} for test, fb in failed.items()}
    leaks = {test: (sorted(values), failed[test]) for test, values in shown.items() if values}
    assert not leaks, leaks
