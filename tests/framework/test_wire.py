"""Plain data only crosses the boundary, and nothing is ever unpickled."""

import math
import pickle

import numpy as np
import pytest
import torch

from autograder.calls import wire


def test_roundtrip_keeps_types():
    value = {"a": (1, 2.5, None, True), "arr": np.arange(6.0).reshape(2, 3), 3: [float("nan"), float("inf")],
             "t": torch.ones(2, dtype=torch.bfloat16), "f32": np.float32(1.5), "nested": {"x": [np.int64(3)]}}
    back = wire.roundtrip(value)
    assert back["a"] == (1, 2.5, None, True)
    np.testing.assert_array_equal(back["arr"], value["arr"])
    assert math.isnan(back[3][0]) and back[3][1] == math.inf
    assert back["t"].dtype == torch.bfloat16 and torch.equal(back["t"], value["t"])
    assert back["f32"] == 1.5 and back["nested"]["x"] == [3]


@pytest.mark.parametrize("bad, where", [
    ({"fn": len}, "['fn']"),
    ([np.array([object()], dtype=object)], "object arrays"),
    ({"mod": pytest}, "['mod']"),
    ({"gen": (i for i in range(3))}, "['gen']"),
])
def test_rejects_non_plain_data(bad, where):
    with pytest.raises(wire.WireError, match=None) as exc:
        wire.dumps(bad, "result")
    assert where in str(exc.value) or "unsupported" in str(exc.value)


def test_never_unpickles():
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    payload = pickle.dumps(Evil())
    with pytest.raises(Exception):
        wire.loads(payload)  # not our framing: refused, never unpickled
    forged = wire.dumps({"x": np.zeros(1)}).replace(b"__ndarray__", b"__pickled__")
    with pytest.raises(wire.WireError):
        wire.loads(forged)


def test_object_npy_blob_is_refused():
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([1, "a"], dtype=object), allow_pickle=True)
    good = wire.dumps({"x": np.zeros(1)})
    zeros = io.BytesIO()
    np.save(zeros, np.zeros(1), allow_pickle=False)
    evil = good.replace(zeros.getvalue(), buf.getvalue())
    evil = evil.replace(len(zeros.getvalue()).to_bytes(8, "big"), len(buf.getvalue()).to_bytes(8, "big"))
    with pytest.raises(ValueError):
        wire.loads(evil)


def test_size_limit(monkeypatch):
    monkeypatch.setattr(wire, "MAX_BYTES", 1000)
    with pytest.raises(wire.WireError, match="limit"):
        wire.dumps(np.zeros(1000))


def _message(head: bytes, nblobs: int = 0) -> bytes:
    import struct

    return struct.pack("!Q", len(head)) + head + struct.pack("!Q", nblobs)


@pytest.mark.parametrize("head, symptom", [
    (b'{"ok": [' + b"[]," * 1_100_000 + b"[]]}", "items"),  # expands ~47x when decoded
    (b'{"ok": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested"),
    (b"{\"__dict__\": {\"ok\": " + b"[" * 70 + b"]" * 70 + b"}}", "nested deeper"),
])
def test_decoding_is_bounded(head, symptom):
    """A reply the grader reads never costs more than a small multiple of its size."""
    with pytest.raises(wire.WireError, match=symptom):
        wire.loads(_message(head))


def test_head_and_blob_counts_are_capped():
    import struct

    with pytest.raises(wire.WireError, match="JSON part"):
        wire.loads(struct.pack("!Q", wire.MAX_HEAD_BYTES + 1) + b"x" * 16)
    with pytest.raises(wire.WireError, match="arrays"):
        wire.loads(_message(b"1", nblobs=wire.MAX_BLOBS + 1))
