"""Plain data only crosses the boundary, and nothing is ever unpickled."""

import json
import math
import pickle
import struct

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


class Meters(int):
    pass


@pytest.mark.parametrize("bad, message", [
    ({"fn": len}, "unsupported type 'builtin_function_or_method' at result['fn']"),
    ([np.array([object()], dtype=object)], "object arrays are not plain data"),
    ({"mod": pytest}, "unsupported type 'module' at result['mod']"),
    ({"gen": (i for i in range(3))}, "unsupported type 'generator' at result['gen']"),
    ({"k": [Meters(3)]}, "unsupported type 'Meters' at result['k'][0]"),  # an int subclass may override anything
])
def test_rejects_non_plain_data(bad, message):
    with pytest.raises(wire.WireError) as exc:
        wire.dumps(bad, "result")
    assert str(exc.value) == message


def test_never_unpickles(capfd):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    payload = pickle.dumps(Evil())
    with pytest.raises(wire.WireError, match="^malformed message: a JSON part of [0-9]+ bytes"):
        wire.loads(payload)  # not our framing: refused, never unpickled
    forged = wire.dumps({"x": np.zeros(1)}).replace(b"__ndarray__", b"__pickled__")
    with pytest.raises(wire.WireError, match=r"^malformed message: unknown object \['__pickled__', 'dtype', 'shape'\]$"):
        wire.loads(forged)
    assert "pwned" not in capfd.readouterr().out


@pytest.mark.parametrize("record", [
    {"dtype": "|O8", "shape": [1]},  # an object array: its bytes would be pointers
    {"dtype": "[('a', '<f8')]", "shape": [1]},  # not a plain dtype
    {"dtype": "<f8", "shape": [2]},  # more elements than the bytes hold
    {"dtype": "<f8", "shape": [-1]},
    {"dtype": "<f8", "shape": "1"},
    {"dtype": "<f8"},
])
def test_forged_array_records_are_refused(record):
    """The reader trusts nothing but the bytes: an array's dtype and shape must account for them exactly."""
    good = wire.dumps({"x": np.zeros(1)})
    forged = good.replace(b'"dtype": "<f8", "shape": [1]', json.dumps(record)[1:-1].encode())
    forged = struct.pack("!Q", len(forged) - len(good) + struct.unpack("!Q", good[:8])[0]) + forged[8:]
    with pytest.raises(wire.WireError, match="^malformed message: an array"):
        wire.loads(forged)


def test_arrays_arrive_writable_and_exact():
    arrays = [np.arange(12, dtype=">i4").reshape(3, 4)[:, ::2], np.zeros((0, 3)), np.array(2.5),
              np.array(["ab", "c"]), np.array(["2024-01-01"], dtype="datetime64[ns]"), np.ones(3, dtype=bool)]
    for a in arrays:
        back = wire.roundtrip(a)
        assert back.dtype == a.dtype and back.shape == a.shape and back.flags.writeable
        np.testing.assert_array_equal(back, a)
    with pytest.raises(wire.WireError, match="^structured arrays are not plain data"):
        wire.dumps(np.zeros(2, dtype=[("a", "<f8")]))


def test_size_limit(monkeypatch):
    monkeypatch.setattr(wire, "MAX_BYTES", 2**20)
    with pytest.raises(wire.WireError, match=r"^result is 2 MiB, over the 1 MiB limit$"):
        wire.dumps(np.zeros(2**18), "result")
    big = wire.dumps(np.zeros(2**16), "result")  # half a MiB: written, and read back
    monkeypatch.setattr(wire, "MAX_BYTES", len(big) - 1)
    with pytest.raises(wire.WireError, match=f"^message of {len(big)} bytes is over the limit$"):
        wire.loads(big)


def _message(head: bytes, nblobs: int = 0) -> bytes:
    import struct

    return struct.pack("!Q", len(head)) + head + struct.pack("!Q", nblobs)


@pytest.mark.parametrize("head, message", [
    (b'{"ok": [' + b"[]," * 1_100_000 + b"[]]}", "more than 1000000 items"),  # expands ~47x when decoded
    (b'{"ok": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),  # json.loads' own recursion
    (b"{\"__dict__\": {\"ok\": " + b"[" * 70 + b"]" * 70 + b"}}", "nested deeper than 64 levels"),
])
def test_decoding_is_bounded(head, message):
    """A reply the grader reads never costs more than a small multiple of its size."""
    with pytest.raises(wire.WireError) as exc:
        wire.loads(_message(head))
    assert str(exc.value) == f"malformed message: {message}"


def test_head_and_blob_counts_are_capped():
    import struct

    with pytest.raises(wire.WireError, match=f"^malformed message: a JSON part of {wire.MAX_HEAD_BYTES + 1} bytes "
                                             f"\\(at most {wire.MAX_HEAD_BYTES}\\)$"):
        wire.loads(struct.pack("!Q", wire.MAX_HEAD_BYTES + 1) + b"x" * 16)
    with pytest.raises(wire.WireError, match=f"^malformed message: {wire.MAX_BLOBS + 1} arrays "
                                             f"\\(at most {wire.MAX_BLOBS}\\)$"):
        wire.loads(_message(b"1", nblobs=wire.MAX_BLOBS + 1))
    with pytest.raises(wire.WireError, match="^truncated message$"):
        wire.loads(_message(b'{"ok": 1}')[:-3])


# -- what one side may send, the other can read -------------------------------------------
def test_dumps_refuses_what_loads_would_refuse_and_says_why(monkeypatch):
    """An honest value over a decoding cap is refused when written, naming it, not called malformed."""
    with pytest.raises(wire.WireError, match=r"^result holds more than 1000000 values in lists and dicts "
                                             r"\(large data travels as a numpy array\)$"):
        wire.dumps(list(range(1_000_001)), "result")
    with pytest.raises(wire.WireError, match=r"^result holds 17 MiB of lists, numbers and text, over the 16 MiB limit"):
        wire.dumps("x" * (17 * 2**20), "result")
    monkeypatch.setattr(wire, "MAX_BLOBS", 3)
    with pytest.raises(wire.WireError, match=r"^result holds 4 arrays, more than 3$"):
        wire.dumps([np.zeros(1)] * 4, "result")
    assert len(wire.roundtrip([np.zeros(1)] * 3)) == 3


@pytest.mark.parametrize("n", [10, 99, 100, 101, 400])
def test_everything_dumps_writes_loads_reads(monkeypatch, n):
    monkeypatch.setattr(wire, "MAX_ITEMS", 200)
    value = {"xs": list(range(n)), "nested": [[i] for i in range(n // 4)]}
    try:
        data = wire.dumps(value, "result")
    except wire.WireError as exc:
        assert "values in lists and dicts" in str(exc) and n > 100
        return
    assert wire.loads(data) == value


# -- every array is made of bytes that were received (issue 27) ------------------------------
def _raw(ok, blobs=()) -> bytes:
    """A reply as a worker could write it by hand: ``ok``'s JSON as it is, any blobs."""
    h = json.dumps({"__dict__": {"ok": ok}}).encode()
    return (struct.pack("!Q", len(h)) + h + struct.pack("!Q", len(blobs))
            + b"".join(struct.pack("!Q", len(b)) + b for b in blobs))


def _arrays(value):
    if isinstance(value, (np.ndarray, torch.Tensor)):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _arrays(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _arrays(v)


def _nbytes(value) -> int:
    return sum(a.nbytes if isinstance(a, np.ndarray) else a.numel() * a.element_size() for a in _arrays(value))


MIB_F8 = {"dtype": "<f8", "shape": [2**17]}  # 1 MiB of float64


@pytest.mark.parametrize("ok, blobs, message", [
    # 10,000 views of one 1 MiB blob: 10 GiB for a test that copies each (np.asarray(x, float))
    ([{"__ndarray__": 0, **MIB_F8}] * 10_000, [bytes(2**20)], "an array's bytes are used twice"),
    ([{"__tensor__": 0, "torch_dtype": "float64", **MIB_F8}] * 2, [bytes(2**20)], "an array's bytes are used twice"),
    # no bytes at all: an itemsize of 0 takes none, whatever the shape
    ({"__ndarray__": 0, "dtype": "|V0", "shape": [2**20, 2**20]}, [b""], "an array's bytes do not match"),
    ({"__ndarray__": 0, "dtype": "|S0", "shape": [2**30]}, [b""], "an array's bytes do not match"),
    ({"__ndarray__": 0, "dtype": "<U0", "shape": [2**30]}, [b""], "an array's bytes do not match"),
    ({"__ndarray__": 0, "dtype": "<f8", "shape": [0, 2**62]}, [b""], "an array's bytes do not match"),
    (1, [bytes(2**20)], "an array's bytes belong to no record"),  # sent, named by nothing
    ({"__tensor__": 0, "torch_dtype": "float8_e4m3fn", "dtype": "|u1", "shape": [1]}, [b"x"], "a tensor record"),
    ({"__tensor__": 0, "torch_dtype": "float32", "dtype": "<U1", "shape": [1]}, [b"xxxx"], "a tensor record"),
    ({"__tensor__": 0, "dtype": "<f4", "shape": [1]}, [b"xxxx"], "a tensor record"),
    ({"__dict__": [1, 2]}, [], "a dict expected, not list"),
    ({"__pairs__": [[1, 2, 3]]}, [], "a key-value pair"),
    ({"__pairs__": [[{"__dict__": {}}, 1]]}, [], "TypeError"),  # an unhashable key
    ({"__float__": "one"}, [], "ValueError"),
])
def test_forged_replies_are_refused(ok, blobs, message):
    """What a worker writes by hand: refused as malformed, never decoded into more than it sent."""
    data = _raw(ok, blobs)
    with pytest.raises(wire.WireError) as exc:
        value = wire.loads(data)
        assert _nbytes(value) <= len(data), "decoded arrays hold more bytes than were received"
    assert str(exc.value).startswith(f"malformed message: {message}")


def test_what_is_read_holds_no_more_than_what_was_sent():
    """Honest messages: the arrays decoded hold at most the bytes received, and empty ones are fine."""
    value = {"a": [np.ones((3, 4)), np.zeros((0, 5)), np.array([], dtype="<U3")],
             "t": torch.ones(2, dtype=torch.bfloat16), "u": torch.ones(4, dtype=torch.uint16), "same": [np.ones(8)] * 3}
    data = wire.dumps(value)
    back = wire.loads(data)
    assert _nbytes(back) <= len(data)
    assert back["a"][1].shape == (0, 5) and back["t"].dtype == torch.bfloat16 and back["u"].dtype == torch.uint16
    assert not np.shares_memory(back["same"][0], back["same"][1])  # each its own bytes


@pytest.mark.parametrize("value, message", [
    (np.zeros(3, dtype="V0"), "arrays of dtype |V0 hold no bytes: not plain data"),
    (torch.zeros(2, dtype=torch.float8_e4m3fn), "unsupported type 'torch.float8_e4m3fn' at result"),
    (np.zeros((0, 2**40)), "an empty array of shape (0, 1099511627776) is over the 256 MiB limit as if it were full"),
])
def test_dumps_refuses_arrays_a_reader_would_refuse(value, message):
    with pytest.raises(wire.WireError) as exc:
        wire.dumps(value, "result")
    assert str(exc.value) == message
