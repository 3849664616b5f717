"""Issue 27, section 3: feedback is no answer key, however often a student resubmits.

An attacker implements nothing.  Each round it hands in files whose functions
return constants (one per quantity), grades them as the grader would (staged,
the hidden tests of lab 1 in this process with the staged files' sha256 as the
seed salt: ``runner.grade_staged`` minus the subprocess), reads each failed
test's feedback for which way the quantity is off ("too large", "slightly too
small (within 5%)", "off by a factor of 0.69") and bisects.  Before the fixed
cases lost their direction, ``test_llama2_reality_check_mfu`` passed by round
27.  Now no message of a chapter case says which way, so the attacker has
nothing to bisect on, and no target passes.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import pytest

from autograder.core import labs
from autograder.grading import pytest_here, staging
from autograder.labkit import plugin

ROUNDS = 40
BLIND_ROUNDS = 4  # rounds without any direction: the guesses move blindly, the feedback must stay mute
TARGETS = (  # lab 1's hidden tests whose inputs are the chapter's, the same on every submission
    "test_costs.py::test_llama2_reality_check_mfu",
    "test_costs.py::test_rent_vs_buy_llama2_70b",
    "test_costs.py::test_chapter_mfu_and_six_p_tokens",
    "test_costs.py::test_energy_chapter_case",
    "test_forward_flops.py::test_gpt2_xl_layer_reproduces_chapter",
)
DICTS = {  # function: the keys of its result
    "rent_vs_buy": ("flops", "days", "gpu_hours", "rent_cost", "buy_cost", "breakeven_runs"),
    "training_energy": ("hours", "power_kw", "energy_kwh"),
    "layer_matmul_flops": ("qkv", "scores", "attn_v", "out_proj", "mlp", "total"),
}
SCALARS = ("implied_mfu", "model_flops_utilization", "training_flops")
INTS = ("layer_matmul_flops",)  # exact counts: the constants are ints
FILE_OF = {"layer_matmul_flops": "flops.py"}  # every other function is in costs.py

# which way the feedback says a quantity is off
LARGER = re.compile(r"too large")
SMALLER = re.compile(r"too small")
FACTOR = re.compile(r"(?:off by a factor of|about) ([0-9.]+(?:e[-+]?\d+)?)")
DIRECTION = re.compile(r"too large|too small|factor of|×|\bwrong sign\b")
SLOT = re.compile(r"^(\w+(?:\['\w+'\])?)")


class Attacker:
    """One constant per quantity (``implied_mfu``, ``rent_vs_buy['days']``), bisected from the feedback."""

    def __init__(self):
        self.slots = [f"{f}[{k!r}]" for f, keys in DICTS.items() for k in keys] + list(SCALARS)
        self.lo = {s: 1e-30 for s in self.slots}
        self.hi = {s: 1e30 for s in self.slots}
        self.guess = {s: (1 if self._is_int(s) else 1.0) for s in self.slots}

    @staticmethod
    def _is_int(slot: str) -> bool:
        return slot.split("[")[0] in INTS

    def files(self) -> dict[str, str]:
        def value(slot):
            return repr(int(self.guess[slot]) if self._is_int(slot) else float(self.guess[slot]))

        out = {"costs.py": "", "flops.py": ""}
        for fn in SCALARS:
            out[FILE_OF.get(fn, "costs.py")] += f"def {fn}(**kwargs):\n    return {value(fn)}\n\n\n"
        for fn, keys in DICTS.items():
            body = ", ".join(f"{k!r}: {value(f'{fn}[{k!r}]')}" for k in keys)
            out[FILE_OF.get(fn, "costs.py")] += f"def {fn}(**kwargs):\n    return {{{body}}}\n\n\n"
        return out

    def read(self, feedback: str) -> bool:
        """Move the guess of the quantity ``feedback`` names; whether it said a direction."""
        what, _sep, symptom = feedback.partition(": ")
        m = SLOT.match(what)
        slot = m.group(1) if m else ""
        if slot not in self.guess:
            return bool(DIRECTION.search(symptom))
        g = self.guess[slot]
        factor = FACTOR.search(symptom)
        if factor:  # two figures of the ratio: jump, then bisect inside its rounding
            target = g / float(factor.group(1))
            self.lo[slot], self.hi[slot] = target / 1.06, target * 1.06
        elif LARGER.search(symptom):
            self.hi[slot] = g
        elif SMALLER.search(symptom):
            self.lo[slot] = g
        else:
            return False
        lo, hi = self.lo[slot], self.hi[slot]
        self.guess[slot] = (lo + hi) // 2 if self._is_int(slot) else math.sqrt(lo * hi)
        if self._is_int(slot):
            self.lo[slot], self.hi[slot] = math.floor(lo), math.ceil(hi)
        return True

    def blind(self):
        """No direction anywhere: another guess, chosen without information."""
        for s in self.slots:
            self.guess[s] = self.guess[s] * 3 + (1 if self._is_int(s) else 0)


class _Results:
    def pytest_sessionfinish(self, session):
        self.results = plugin.collected_results(session.config)


def grade_in_process(lab, folder: Path, work: Path) -> dict[str, tuple[str, str]]:
    """{test name: (status, feedback)} of the targets, graded as ``grade_staged`` grades (staged files,
    their sha256 as the seed salt), in this process and without the sandbox."""
    staged = staging.stage(folder, lab.manifest.student_files, work / "staged")
    collector = _Results()
    nodeids = [str(lab.hidden_tests_dir / t) for t in TARGETS]
    pytest_here.run_pytest_here([*nodeids, "--submission", str(staged.directory), "--seed-salt", staged.sha256,
                                 "-p", "no:cacheprovider", "-p", "no:terminal", "-o", "addopts=",
                                 "--import-mode=importlib", "--rootdir", str(lab.root)], lab.root, [collector])
    return {r.name: (r.status, r.feedback) for r in collector.results}


def test_resubmitting_constants_bisects_nothing(tmp_path):
    lab = labs.get("lab1")
    attacker, passed, directed, blind = Attacker(), set(), [], 0
    for rnd in range(1, ROUNDS + 1):
        folder = tmp_path / f"round{rnd}"
        folder.mkdir()
        for name, source in attacker.files().items():
            (folder / name).write_text(source)
        results = grade_in_process(lab, folder, tmp_path / f"work{rnd}")
        assert set(results) == {t.split("::")[1] for t in TARGETS}, results
        passed |= {name for name, (status, _fb) in results.items() if status == "passed"}
        said = [(rnd, name, fb) for name, (status, fb) in results.items()
                if status != "passed" and attacker.read(fb)]
        directed += said
        if not said:
            blind += 1
            if blind >= BLIND_ROUNDS:  # nothing to bisect on: further rounds only guess
                break
            attacker.blind()
    assert not passed, f"bisected from the feedback: {sorted(passed)}"
    assert not directed, f"a fixed case's feedback says which way: {directed[:3]}"


# -- the same attacker where messages do say which way: it wins ---------------------------------------
def _module(path: Path):
    spec = importlib.util.spec_from_file_location(f"_bisect_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_attacker_wins_where_messages_say_which_way(tmp_path):
    """The control: the test above can fail.  ``test_llama2_reality_check_mfu``'s own checks, called
    outside any fixed case (as every hidden test was before issue 27), are bisected within the rounds."""
    lab = labs.get("lab1")
    tests = _module(lab.hidden_tests_dir / "test_costs.py")
    reference = _module(lab.solution_dir / "costs.py")
    attacker = Attacker()
    for rnd in range(1, ROUNDS + 1):
        student = _module(_write(tmp_path / f"round{rnd}", attacker.files())["costs.py"])
        try:
            tests.test_llama2_reality_check_mfu(student=student, reference=reference)
        except AssertionError as exc:
            assert attacker.read(str(exc)), str(exc)
            continue
        break
    else:
        pytest.fail("the attacker did not bisect a test whose messages say which way: the test above proves nothing")
    assert rnd > 5  # it took real bisection, not a lucky first guess


def _write(folder: Path, files: dict[str, str]) -> dict[str, Path]:
    folder.mkdir()
    for name, source in files.items():
        (folder / name).write_text(source)
    return {name: folder / name for name in files}
