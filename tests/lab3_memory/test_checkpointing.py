"""Lab 3, activation checkpointing: the chapter's k + N/k model (§6.5.2 Optimal checkpoint placement
strategy) and torch.utils.checkpoint measured: what the forward pass saves, the peak during backward
(every checkpoint plus one segment rebuilt) and the recomputed work."""

import pytest

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_equal, assert_keys, assert_scalar

pytestmark = pytest.mark.question("checkpointing")

KEYS = ["saved_bytes", "segment_bytes", "peak_bytes", "forward_calls", "recompute_fraction", "loss", "grad_norm"]
NOT_ONE_PER_BLOCK = N_("{what}{case}: not a list with one count per block, in block order")


def test_sqrt_rule_worked_numbers_and_brute_force(student, lab3, rng):
    got = student.checkpoint_units(n_layers=48, n_checkpoints=7)
    with M.fixed_case():  # issue 27: the same on every submission, so no direction
        assert_keys(got, ["units", "saving"], what=_("checkpoint_units result"), case="N=48, k=7")
        assert_scalar(got["units"], 13.9, what=_("layer-activations kept"), case="N=48, k=7", rtol=5e-3)
        assert_scalar(got["saving"], 0.711, what=_("memory saving"), case="N=48, k=7", rtol=2e-3)
        assert_equal(student.best_checkpoint_count(n_layers=48), 7, what=_("best number of checkpoints"), case="N=48")
    for trial in range(1, 9):
        N = int(rng.integers(1, 200))
        k = int(rng.integers(1, N + 1))
        case = _("random N and k, case {trial} of 8").format(trial=trial)  # never the drawn N or k
        got = student.checkpoint_units(n_layers=N, n_checkpoints=k)
        assert_scalar(got["units"], k + N / k, what=_("layer-activations kept"), case=case, rtol=1e-12)
        assert_scalar(got["saving"], 1 - (k + N / k) / N, what=_("memory saving"), case=case,
                      rtol=1e-9, atol=1e-12)
        best = min(range(1, N + 1), key=lambda j: (j + N / j, j))  # brute force
        assert_equal(student.best_checkpoint_count(n_layers=N), best, what=_("best number of checkpoints"),
                     case=case)
    # the ends of the range (k = 1, k = N), N = 1, and the ties of k + N/k (N = k(k+1): k and k+1 tie)
    with M.fixed_case():  # issue 27: the same on every submission, so no direction
        for N in (1, 2, 5, 48):
            for k in sorted({1, N}):
                case = f"N={N}, k={k}"
                got = student.checkpoint_units(n_layers=N, n_checkpoints=k)
                assert_keys(got, ["units", "saving"], what=_("checkpoint_units result"), case=case)
                assert_scalar(got["units"], k + N / k, what=_("layer-activations kept"), case=case, rtol=1e-12)
                assert_scalar(got["saving"], 1 - (k + N / k) / N, what=_("memory saving"), case=case,
                              rtol=1e-9, atol=1e-12)
        for N in (1, 2, 3, 4, 6, 12, 56, 132):
            best = min(range(1, N + 1), key=lambda j: (j + N / j, j))  # brute force, the smaller k on a tie
            assert_equal(student.best_checkpoint_count(n_layers=N), best, what=_("best number of checkpoints"),
                         case=f"N={N}")


FIXED_GPT = {"kind": "gpt", "n_layers": 3}


def _configs(lab3, rng):
    return [FIXED_GPT, lab3.random_gpt(rng, n_layers=4), lab3.random_mlp(rng)]


def _segments(cfg):
    """(segment_size, its label): the last is the whole model in one segment, named so, since a random
    MLP draws its number of layers (never in a label: docs/feedback.md)."""
    L = cfg.get("n_layers", 2 if cfg["kind"] == "gpt" else 4)
    return [(0, "0"), (1, "1"), (2, "2"), (L, _("n_layers (one segment)"))]


def _case(lab3, cfg, B, segment: str, batch_drawn: bool) -> str:
    return lab3.describe(cfg, B=B, segment_size=segment, drawn=("B",) if batch_drawn else ())


def _check_saved(student, lab3, cfg, B, k, case):
    got = student.measure_checkpointing(config=cfg, batch_size=B, segment_size=k)
    assert_keys(got, KEYS, what=_("measure_checkpointing result"), case=case)
    want = lab3.truth.checkpointing(cfg, B, k)
    lab3.assert_exact_int(got["saved_bytes"], want["saved_bytes"], what=_("saved activation bytes"), case=case)


def test_saved_bytes_match_hooks(student, lab3, rng):
    # fixed first: the 3-layer GPT at B=1, where the q/k views sit at an offset in one storage and inputs and
    # targets share one token storage (a count by t.data_ptr() or by a view's own bytes is off there)
    cfg = FIXED_GPT
    with M.fixed_case():  # issue 27: the same on every submission, so no direction
        for k, segment in _segments(cfg):
            _check_saved(student, lab3, cfg, 1, k, _case(lab3, cfg, 1, segment, batch_drawn=False))
    for cfg in _configs(lab3, rng):
        B = int(rng.integers(1, 5))
        for k, segment in _segments(cfg):
            _check_saved(student, lab3, cfg, B, k, _case(lab3, cfg, B, segment, batch_drawn=True))


def test_forward_calls_count_the_recompute(student, lab3, rng):
    for cfg in _configs(lab3, rng):
        B = 2
        for k, segment in _segments(cfg):
            case = _case(lab3, cfg, B, segment, batch_drawn=False)
            got = student.measure_checkpointing(config=cfg, batch_size=B, segment_size=k)
            assert_keys(got, KEYS, what=_("measure_checkpointing result"), case=case)
            calls = got["forward_calls"]
            want = lab3.truth.checkpointing(cfg, B, k)["forward_calls"]  # pre-hooks on the real run
            if not isinstance(calls, (list, tuple)) or len(calls) != len(want):
                # no lengths: a random MLP's number of blocks is drawn
                raise AssertionError(M.say(NOT_ONE_PER_BLOCK, what="forward_calls", case=M.case_suffix(case)))
            for i, (c, w) in enumerate(zip(calls, want)):
                lab3.assert_exact_int(c, w, what=_("forward calls of block {block}").format(block=i), case=case)
            # every block rebuilt once: 1/3 of the step's block work (a backward is two forwards), the chapter's 33%
            assert_scalar(got["recompute_fraction"], lab3.truth.checkpointing(cfg, B, k)["recompute_fraction"],
                          what=_("recomputed block work, as a fraction of one step's"), case=case, rtol=1e-12)


def test_checkpointing_keeps_loss_and_gradients(student, lab3, rng):
    for cfg in _configs(lab3, rng):
        B = int(rng.integers(1, 5))
        plain = lab3.truth.checkpointing(cfg, B, 0)
        for k in (1, 2):
            case = _case(lab3, cfg, B, str(k), batch_drawn=True)
            got = student.measure_checkpointing(config=cfg, batch_size=B, segment_size=k)
            assert_keys(got, KEYS, what=_("measure_checkpointing result"), case=case)
            assert_scalar(got["loss"], plain["loss"], what=_("loss (same as without checkpointing)"), case=case,
                          rtol=1e-6)
            assert_scalar(got["grad_norm"], plain["grad_norm"], what=_("gradient norm (same as without checkpointing)"),
                          case=case, rtol=1e-5)


def test_peak_during_backward(student, lab3, rng):
    """The peak is every checkpoint plus one segment rebuilt, not what the forward pass saved."""
    for cfg in _configs(lab3, rng):
        B = int(rng.integers(1, 5))
        plain = lab3.truth.checkpointing(cfg, B, 0)
        segments = _segments(cfg)
        for k, segment in segments:
            case = _case(lab3, cfg, B, segment, batch_drawn=True)
            got = student.measure_checkpointing(config=cfg, batch_size=B, segment_size=k)
            assert_keys(got, KEYS, what=_("measure_checkpointing result"), case=case)
            want = lab3.truth.checkpointing(cfg, B, k)
            lab3.assert_exact_int(got["segment_bytes"], want["segment_bytes"],
                                  what=_("bytes of one segment rebuilt in backward"), case=case)
            lab3.assert_exact_int(got["peak_bytes"], want["peak_bytes"], what=_("peak activation bytes in backward"),
                                  case=case)
        # independent of the segment bookkeeping: one segment of the whole model rebuilds everything, so its
        # peak is what the forward pass saves without checkpointing
        k, segment = segments[-1]
        case = _case(lab3, cfg, B, segment, batch_drawn=True)
        got = student.measure_checkpointing(config=cfg, batch_size=B, segment_size=k)
        lab3.assert_exact_int(got["peak_bytes"], plain["saved_bytes"],
                              what=_("peak activation bytes in backward (same as without checkpointing)"), case=case)
