"""Hidden tests, question "ring_allreduce": the sum on every rank, over a network that watches.

The student writes one rank's step (ring_send, ring_receive). These tests
run the ring here, in the grader, with the engine's copy of
lab4_sim.run_ring: every call sees one rank's own buffer, every message
crosses the trusted RingNetwork, which refuses any destination but
(r + 1) mod N and counts the bytes each rank sends. So a submission that
computes the sum without passing messages has nothing to compute it from
(and module-level state that does so sends no bytes), and the byte counts
are the network's, never the submission's. Ground truth: numpy's sum here,
and the documented schedule played here step by step; the reference is
also checked against torch.distributed (gloo) in the framework tests.
"""

import numpy as np
import pytest

from autograder.labkit import messages as M
from autograder.core.i18n import N_, _
from autograder.labkit.assertions import assert_close, assert_equal, assert_scalar

pytestmark = pytest.mark.question("ring_allreduce")

# Integers add exactly; floats may be summed in any order (the ring's differs from numpy's).
TOL = {"int64": dict(rtol=0, atol=0), "int32": dict(rtol=0, atol=0), "float64": dict(rtol=1e-12, atol=1e-12),
       "float32": dict(rtol=1e-5, atol=1e-5)}
NOT_IDENTICAL = N_("{what}{case}: rank {rank} ends with a different buffer than rank 0 (max abs difference {diff})")
MESSAGE_COUNT = N_("{what}{case}: at step {step} rank {rank} sent {count} messages; the ring sends exactly one "
                   "per rank and step")
# never the scheduled chunk (an expected value) nor a count that gives a drawn length away
WRONG_CHUNK = N_("{what}{case}: at step {step} ({phase}) rank {rank} sent chunk {got}, not the chunk the schedule "
                 "sends at that step (ring_chunk)")
WRONG_PAYLOAD = N_("{what}{case}: at step {step} ({phase}) rank {rank}'s message is not its chunk {chunk} as it "
                   "was at the start of the step ({symptom})")
WRONG_LENGTH = N_("a different number of elements than the chunk has")  # no counts: they give M and N away
WRONG_STATE = N_("{what}{case}: after step {step} ({phase}) rank {rank}'s buffer is not what the ring holds "
                 "there ({hint})")
PHASES = {"rs": N_("reduce-scatter"), "ag": N_("all-gather")}
HINTS = {"rs": N_("in reduce-scatter the receiver adds the chunk into its own copy"),
         "ag": N_("in all-gather the receiver overwrites its copy of the chunk")}


def make_buffers(rng, N, M_, dtype):
    if np.dtype(dtype).kind == "i":
        return [rng.integers(-1000, 1000, size=M_).astype(dtype) for _rank in range(N)]
    return [rng.standard_normal(M_).astype(dtype) for _rank in range(N)]


RANDOM_RING = N_("a random number of ranks and buffer length, {dtype}")


def describe(N, M_, dtype, drawn: bool = False) -> str:
    """A fixed ring by its sizes; a drawn one by what it is, never by its drawn N or M (docs/feedback.md)."""
    if drawn:
        return _(RANDOM_RING).format(dtype=np.dtype(dtype).name)
    return _("N={N} ranks, M={M} elements, {dtype}").format(N=N, M=M_, dtype=np.dtype(dtype).name)


def true_bounds(M_, N):
    """Chunk c is [start, stop): numpy's array_split convention, the first M mod N chunks one longer."""
    sizes = [len(c) for c in np.array_split(np.arange(M_), N)]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    return [(int(a), int(a + s)) for a, s in zip(starts, sizes)]


def scheduled_chunk(r, N, s):
    return (r - s) % N if s < N - 1 else (r + 1 - (s - (N - 1))) % N


def true_ring(buffers):
    """The documented ring, played here: every rank's buffer at the start and after each step."""
    N, M_ = len(buffers), buffers[0].shape[0]
    bounds = true_bounds(M_, N)
    bufs = [b.copy() for b in buffers]
    states = [[b.copy() for b in bufs]]
    for s in range(2 * (N - 1)):
        sent = [(scheduled_chunk(r, N, s), bufs[r][slice(*bounds[scheduled_chunk(r, N, s)])].copy())
                for r in range(N)]
        for r, (c, data) in enumerate(sent):
            dst = bufs[(r + 1) % N]
            lo, hi = bounds[c]
            if s < N - 1:
                dst[lo:hi] += data
            else:
                dst[lo:hi] = data
        states.append([b.copy() for b in bufs])
    return states


class RecordedSend:
    """student.ring_send, noting (step, rank, messages) of every call in ``sends``; a step's
    calls go to the sandbox together (``each``), as run_ring makes them."""

    def __init__(self, student, sends: list):
        self.fn, self.sends = student.ring_send, sends

    def each(self, calls: list[dict]) -> list:
        out = self.fn.each(calls)
        self.sends += [(kw["step"], kw["rank"], msgs) for kw, msgs in zip(calls, out)]
        return out

    def __call__(self, **kw):
        return self.each([kw])[0]


def drive(sim, student, buffers, *, case, history=False, sends=None):
    """Run the ring here with the student's per-rank functions; a broken ring rule fails the test."""
    send = student.ring_send if sends is None else RecordedSend(student, sends)
    try:
        return sim.run_ring(buffers=buffers, send=send, receive=student.ring_receive, history=history)
    except sim.RingError as exc:
        # the trusted network's wording (lab4_sim.RingError.explain): the sentence `check` says too
        raise AssertionError(exc.explain(case=M.case_suffix(case))) from None


def check_sum_on_every_rank(sim, student, rng, N, M_, dtype, drawn=False):
    bufs = make_buffers(rng, N, M_, dtype)
    case = describe(N, M_, dtype, drawn)
    out = drive(sim, student, bufs, case=case)
    stacked = np.stack(bufs) if np.dtype(dtype).kind == "i" else np.stack(bufs).astype(np.float64)
    total = np.sum(stacked, axis=0)  # what every rank must hold: the SUM, not the mean
    for r, res in enumerate(out["results"]):
        assert_close(res, total, what=_("rank {r}'s buffer after AllReduce").format(r=r), case=case,
                     **TOL[np.dtype(dtype).name])
        # All-gather copies the finished chunks, so every rank ends bit-identical.
        if not np.array_equal(res, out["results"][0]):
            diff = float(np.max(np.abs(res.astype(np.float64) - out["results"][0].astype(np.float64))))
            raise AssertionError(M.say(NOT_IDENTICAL, what="ring AllReduce", case=M.case_suffix(case), rank=r,
                                       diff=diff))
    return bufs, out


def test_chunk_bounds_and_schedule(student):
    for M_, N in [(12, 4), (10, 3), (3, 5), (0, 2), (1001, 8), (7, 1)]:
        got = student.chunk_bounds(M=M_, N=N)
        got = [tuple(int(x) for x in pair) for pair in got] if isinstance(got, (list, tuple)) else got
        assert_equal(got, true_bounds(M_, N), what="chunk_bounds", case=f"M={M_}, N={N}")
    for N in (2, 3, 5, 8):
        flat = student.ring_chunk.each([dict(rank=r, N=N, step=s) for s in range(2 * (N - 1)) for r in range(N)])
        got = [flat[s * N:(s + 1) * N] for s in range(2 * (N - 1))]
        expected = [[scheduled_chunk(r, N, s) for r in range(N)] for s in range(2 * (N - 1))]
        assert_equal(got, expected, what="ring_chunk", case=_("N={N}, every rank and step").format(N=N))


def test_sum_on_every_rank(sim, student, rng):
    for N, M_, dtype in [(2, 8, np.int64), (4, 64, np.int64), (3, 300, np.float64), (8, 800, np.float64),
                         (4, 40, np.float32)]:
        check_sum_on_every_rank(sim, student, rng, N, M_, dtype)


def test_sum_for_any_buffer_length(sim, student, rng):
    # Lengths the rank count does not divide, shorter than N, a single element, and one rank.
    for N, M_, dtype in [(4, 10, np.int64), (3, 301, np.float64), (5, 3, np.int64), (6, 1, np.float64),
                         (8, 8 * 13 + 5, np.int64), (1, 7, np.float64)]:
        check_sum_on_every_rank(sim, student, rng, N, M_, dtype)
    check_sum_on_every_rank(sim, student, rng, int(rng.integers(2, 9)), int(rng.integers(50, 500)), np.float64,
                            drawn=True)


def test_every_message_follows_the_ring(sim, student, rng):
    # The network has already refused any destination but (r + 1) mod N; here every message is
    # compared with the schedule, and every rank's buffer after every step with the ring's.
    for N, M_, dtype, drawn in [(3, 30, np.int64, False), (4, 10, np.int64, False), (5, 23, np.float64, False),
                                (int(rng.integers(3, 8)), int(rng.integers(20, 200)), np.float64, True)]:
        bufs = make_buffers(rng, N, M_, dtype)
        case = describe(N, M_, dtype, drawn)
        sends: list = []
        out = drive(sim, student, bufs, case=case, history=True, sends=sends)
        truth = true_ring(bufs)
        bounds = true_bounds(M_, N)
        tol = TOL[np.dtype(dtype).name]
        for step, rank, msgs in sends:
            phase = "rs" if step < N - 1 else "ag"
            sfx, ph = M.case_suffix(case), _(PHASES[phase])
            if len(msgs) != 1:
                raise AssertionError(M.say(MESSAGE_COUNT, what="ring_send", case=sfx, step=step, rank=rank,
                                           count=len(msgs)))
            c, expected = int(msgs[0]["chunk"]), scheduled_chunk(rank, N, step)
            if c != expected:
                raise AssertionError(M.say(WRONG_CHUNK, what="ring_send", case=sfx, step=step, phase=ph, rank=rank,
                                           got=c))
            data, own = np.asarray(msgs[0]["data"]), truth[step][rank][slice(*bounds[c])]
            if data.shape != own.shape:
                symptom = _(WRONG_LENGTH)
            elif not np.allclose(data, own, rtol=tol["rtol"], atol=tol["atol"]):
                symptom = _("different values")
            else:
                continue
            raise AssertionError(M.say(WRONG_PAYLOAD, what="ring_send", case=sfx, step=step, phase=ph, rank=rank,
                                       chunk=c, symptom=symptom))
        for step in range(2 * (N - 1)):
            phase = "rs" if step < N - 1 else "ag"
            for rank in range(N):
                got, want = out["history"][step + 1][rank], truth[step + 1][rank]
                if not np.allclose(got, want, rtol=tol["rtol"], atol=tol["atol"]):
                    raise AssertionError(M.say(WRONG_STATE, what="ring_receive", case=M.case_suffix(case), step=step,
                                               phase=_(PHASES[phase]), rank=rank, hint=_(HINTS[phase])))


def test_bytes_counted_by_the_network(sim, student, rng):
    # N >= 3: with two ranks the ring and a naive exchange send the same bytes. Then lengths N does
    # not divide: chunks differ by one element, so ranks send slightly different amounts.
    for N, M_, dtype in [(3, 30, np.float32), (4, 64, np.int64), (8, 8 * 25, np.float64),
                         (3, 31, np.float32), (5, 3, np.int64), (6, 6 * 11 + 4, np.float64)]:
        bufs, out = check_sum_on_every_rank(sim, student, rng, N, M_, dtype)
        itemsize = np.dtype(dtype).itemsize
        case = _("N={N} ranks, M={M} elements of {itemsize} bytes").format(N=N, M=M_, itemsize=itemsize)
        sent = out["bytes_sent"]  # counted by the grader's network, message by message
        assert_scalar(sum(sent), 2 * (N - 1) * M_ * itemsize, what=_("bytes sent by all ranks together"), case=case,
                      rtol=0)
        bounds = true_bounds(M_, N)
        for r, b in enumerate(sent):
            if M_ % N == 0:
                expected = 2 * (N - 1) / N * M_ * itemsize
            else:
                expected = itemsize * sum(bounds[scheduled_chunk(r, N, s)][1] - bounds[scheduled_chunk(r, N, s)][0]
                                          for s in range(2 * (N - 1)))
            assert_scalar(b, expected, what=_("bytes rank {r} sent over the network").format(r=r), case=case, rtol=0)
