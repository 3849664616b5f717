"""Hidden tests, question "softmax_overflow": break it on purpose, graded by the symptom.

The student writes ``naive_attention``, the softmax without the row max, beside the stable
``tiled_attention``. On inputs the test chooses (some rows with ordinary scores, the others with
every score far above exp's range in the dtype, yet exactly representable), the naive one must
show exactly its symptom: the overflowing rows are not finite, the ordinary rows are right. A
"naive" one that is accidentally stable (it subtracts the max, clips, or computes float32 in
float64) or broken another way (ordinary rows wrong) loses the points; so does a tiled one that
overflows on the same inputs. Ground truth is the stable softmax computed here in float64.
"""

import numpy as np
import pytest

from autograder.core.i18n import N_, _
from autograder.labkit import messages as M
from autograder.labkit.assertions import assert_close, assert_equal, grader_check

pytestmark = pytest.mark.question("softmax_overflow")

F64 = dict(rtol=1e-10, atol=1e-10)
F32 = dict(rtol=1e-5, atol=1e-5)
NO_SYMPTOM = N_("{what}{case}: a row whose scores overflow exp came out finite. The naive softmax must show "
                "the overflow (NaN or inf in that row): subtract nothing, clip nothing, compute in q's dtype")
# Scores beyond these overflow exp in each dtype (exp(88.8) > float32 max, exp(709.8) > float64 max).
OVERFLOW = {"float32": 88.8, "float64": 709.8}


def overflow_case(rng, S, dtype):
    """(q, k, v, big): ``big`` marks the rows whose every score overflows exp in ``dtype``.

    d = 16, so 1/√d = 1/4 is exact; q and k hold multiples of 1/8 in [−1, 1] (the other columns add
    at most 15/4 to a score either way), and a first column where q is 0 for an ordinary row and a
    large integer for a big one, k a constant. float32's big scores lie between 88.8 and 709.8: they
    overflow float32 but not float64, so a float32 computation done in float64 shows no symptom.
    """
    d = 16
    name = np.dtype(dtype).name
    low, high, big_k = {"float32": (14, 20, 32.0), "float64": (32, 48, 100.0)}[name]
    q, k = (rng.integers(-8, 9, size=(S, d)) / 8.0 for _tensor in range(2))
    big = np.zeros(S, dtype=bool)
    big[rng.choice(S, size=S // 2, replace=False)] = True
    q[:, 0] = np.where(big, rng.integers(low, high, size=S, endpoint=True), 0)
    k[:, 0] = big_k
    rest = (d - 1) / 4
    # a case that does not show what it is built for is the grader's failure, never the student's 0
    grader_check(low * big_k / 4 - rest > OVERFLOW[name], "grader bug: a big row's scores do not overflow")
    grader_check(name != "float32" or high * big_k / 4 + rest < OVERFLOW["float64"],
                 "grader bug: a float32 big row would overflow in float64 too")
    v = rng.standard_normal((S, d))
    return q.astype(dtype), k.astype(dtype), v.astype(dtype), big


def case_name(S, causal, dtype):
    return _("S={S}, causal={causal}, {dtype}, half the rows with scores far beyond exp's range").format(
        S=S, causal=causal, dtype=np.dtype(dtype).name)


CASES = [(12, False, np.float64), (12, True, np.float64), (10, False, np.float32)]


@pytest.mark.question("softmax_overflow", points=2)
def test_naive_attention_overflows_exactly_where_the_scores_do(plain_attention, student, rng):
    for S, causal, dtype in CASES:
        q, k, v, big = overflow_case(rng, S, dtype)
        case = case_name(S, causal, dtype)
        with np.errstate(over="ignore", invalid="ignore"):  # run in this process (a local check): the overflow is expected
            got = np.asarray(student.naive_attention(q=q, k=k, v=v, causal=causal))
        assert_equal(got.shape, q.shape, what=_("shape of naive_attention's output"), case=case)
        # The ordinary rows: the naive softmax is right where exp does not overflow.
        assert_close(got[~big], plain_attention(q, k, v, causal)[~big], what=_("naive_attention, the rows with ordinary "
                     "scores"), case=case, **(F64 if dtype == np.float64 else F32))
        # The big rows: the symptom, inf / inf.
        if np.isfinite(got[big]).all(axis=-1).any():
            raise AssertionError(M.say(NO_SYMPTOM, what="naive_attention", case=M.case_suffix(case)))


def test_tiled_attention_stays_finite_on_the_same_case(plain_attention, student, rng):
    # One block holding every key: the running max alone keeps exp in range (the rescaling of
    # several blocks is the question tiled_attention's).
    for S, causal, dtype in CASES:
        q, k, v, _big = overflow_case(rng, S, dtype)
        got = student.tiled_attention(q=q, k=k, v=v, causal=causal, block_size=S)
        assert_close(got, plain_attention(q, k, v, causal), what=_("tiled_attention output"),
                     case=case_name(S, causal, dtype) + _(", block_size=S"), **(F64 if dtype == np.float64 else F32))
