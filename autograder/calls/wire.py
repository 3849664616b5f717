"""Plain data across the process boundary: JSON plus ``.npy`` blobs.

Everything a student function takes or returns travels in this format, in
both grading modes, so a test behaves the same in-process and sandboxed.

* JSON scalars, lists, tuples and dicts (any JSON-able keys) travel as JSON.
* numpy arrays and torch tensors travel as their raw bytes (C order) beside
  a JSON record of their dtype and shape; numpy scalars as JSON numbers.
  Only plain dtypes cross (numbers, booleans, datetimes, bytes and text):
  object and structured arrays are refused on both sides, and a reader
  checks that the bytes are exactly what the dtype and shape take.
  Nothing is ever unpickled.  (Raw bytes, not ``.npy``: ``np.load`` parses
  each header with ``ast``, a tenth of a millisecond an array, and a ring
  test makes thousands of small calls.)
* Anything else raises :class:`WireError` naming the offending path, e.g.
  ``unsupported type 'function' at result['fn']``.
"""

from __future__ import annotations

import json
import math
import re
import struct

import numpy as np

from autograder.core.i18n import _

MAX_BYTES = 256 * 2**20  # a result larger than this is refused, not read
MAX_DEPTH = 64
# Decoding is bounded too, so a reader's memory stays within a small multiple
# of what it was sent: the JSON part (arrays travel as .npy blobs) is capped,
# and so is its number of containers and items, before json.loads runs.
# dumps checks the same caps, so whatever one side may send the other can read,
# and an honest value over them is told so, never called malformed.
MAX_HEAD_BYTES = 16 * 2**20
MAX_ITEMS = 1_000_000
MAX_BLOBS = 10_000

_LEN = struct.Struct("!Q")


class WireError(TypeError):
    """A value that cannot cross the boundary as plain data."""


def _torch():
    import torch  # imported lazily: the wire is used before torch is needed

    return torch


def _is_tensor(x) -> bool:
    mod = type(x).__module__
    return mod.startswith("torch") and type(x).__name__ in ("Tensor", "Parameter")


# a plain dtype as numpy spells it (dtype.str): byte order, kind, item size, a datetime's unit
_DTYPE = re.compile(r"[<>|=][?biufcmMSUV][0-9]{1,6}(\[[0-9]*[A-Za-z]{1,2}\])?")
MAX_DIMS = 64  # numpy's own limit


# The tensors that cross: torch's dtype, and the numpy dtype their bytes travel as (numpy has no
# bfloat16: its bits go as int16). A reader takes no other name.
_TORCH = {t: np.dtype("int16" if t == "bfloat16" else t).str
          for t in ("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
                    "float16", "bfloat16", "float32", "float64", "complex64", "complex128")}


def _nominal_bytes(shape, itemsize: int) -> int:
    """What an array of ``shape`` takes counting its empty dimensions as 1: its size when it is
    not empty, and what keeps an empty one's other dimensions in numpy's range."""
    return math.prod(max(n, 1) for n in shape) * itemsize


def _array(arr: np.ndarray, blobs: list[bytes], record: dict) -> dict:
    """``record`` plus the array's dtype, shape and the index of its bytes in ``blobs``."""
    if arr.dtype.hasobject:
        raise WireError(_("object arrays are not plain data"))
    if arr.dtype.names is not None or arr.dtype.subdtype is not None:
        raise WireError(_("structured arrays are not plain data (send one plain array per field)"))
    if arr.dtype.itemsize == 0:  # a reader takes only arrays its bytes account for
        raise WireError(_("arrays of dtype {dtype} hold no bytes: not plain data").format(dtype=arr.dtype.str))
    if arr.size == 0 and _nominal_bytes(arr.shape, arr.dtype.itemsize) > MAX_BYTES:
        raise WireError(_("an empty array of shape {shape} is over the {limit} MiB limit as if it were full").format(
            shape=tuple(arr.shape), limit=MAX_BYTES // 2**20))
    blobs.append(np.ascontiguousarray(arr).tobytes())
    return {**record, "dtype": arr.dtype.str, "shape": list(arr.shape)}


def _load_array(x: dict, blobs: list, key: str) -> np.ndarray:
    """The array a record describes, backed by its own blob, which no other record may use.

    Refused unless the bytes are exactly what its dtype and shape take, with a dtype of
    nonzero item size: so every array read is made of bytes that were received, and all
    the arrays of a message together hold at most what its blobs hold (:func:`loads`)."""
    index, dtype, shape = x[key], x.get("dtype"), x.get("shape")
    if not (isinstance(dtype, str) and _DTYPE.fullmatch(dtype) and isinstance(shape, list)
            and len(shape) <= MAX_DIMS and all(type(n) is int and n >= 0 for n in shape)
            and type(index) is int and 0 <= index < len(blobs)):
        raise WireError("malformed message: an array record")
    dt = np.dtype(dtype)
    blob = blobs[index]
    if blob is None:
        raise WireError("malformed message: an array's bytes are used twice")
    blobs[index] = None  # taken: a second record naming it would make a view of the same bytes
    if (dt.hasobject or dt.names is not None or dt.itemsize == 0 or math.prod(shape) * dt.itemsize != len(blob)
            or _nominal_bytes(shape, dt.itemsize) > MAX_BYTES):
        raise WireError("malformed message: an array's bytes do not match its dtype and shape")
    if not len(blob):
        return np.empty(shape, dt)
    return np.frombuffer(blob, dt).reshape(shape)  # blob is a bytearray: the array is writable


class Encoded:
    """A value already encoded into the arrays of the message being built (:func:`encode`):
    :func:`dumps` given the same ``blobs`` takes it as it was then, whatever happened to the
    value since."""

    __slots__ = ("head",)

    def __init__(self, head):
        self.head = head


def encode(value, blobs: list[bytes], what: str = "value") -> Encoded:
    """Encode ``value`` now, its arrays' bytes into ``blobs``; for ``dumps(..., blobs=blobs)``.
    A worker answering many calls encodes each result as soon as its call returns, so a
    later call that changes an earlier result in place (module state) cannot reach it."""
    return Encoded(_encode(value, blobs, what, 1))


def _encode(x, blobs: list[bytes], path: str, depth: int):
    if type(x) is Encoded:
        return x.head
    if depth > MAX_DEPTH:
        raise WireError(_("value nested deeper than {depth} levels at {path}").format(depth=MAX_DEPTH, path=path))
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float)) and type(x) in (int, float):
        if isinstance(x, float) and not math.isfinite(x):
            return {"__float__": repr(x)}  # JSON has no nan/inf
        return x
    if isinstance(x, np.generic):
        if x.dtype.hasobject:
            raise WireError(_("unsupported type {type} at {path}").format(type="'numpy object'", path=path))
        return _encode(x.item(), blobs, path, depth + 1)
    if isinstance(x, np.ndarray):
        return _array(x, blobs, {"__ndarray__": len(blobs)})
    if _is_tensor(x):
        t = x.detach().cpu()
        dtype = str(t.dtype).removeprefix("torch.")
        if dtype not in _TORCH:
            raise WireError(_("unsupported type {type} at {path}").format(type=repr(str(t.dtype)), path=path))
        if dtype == "bfloat16":  # numpy has no bfloat16: ship the bits
            t = t.view(_torch().int16)
        return {**_array(t.contiguous().numpy(), blobs, {"__tensor__": len(blobs)}), "torch_dtype": dtype}
    if isinstance(x, (list, tuple)):
        items = [_encode(v, blobs, f"{path}[{i}]", depth + 1) for i, v in enumerate(x)]
        return items if type(x) is list else {"__tuple__": items}
    if isinstance(x, dict):
        if all(type(k) is str for k in x):
            return {"__dict__": {k: _encode(v, blobs, f"{path}[{k!r}]", depth + 1) for k, v in x.items()}}
        return {
            "__pairs__": [
                [_encode(k, blobs, f"{path} key", depth + 1), _encode(v, blobs, f"{path}[{k!r}]", depth + 1)]
                for k, v in x.items()
            ]
        }
    raise WireError(_("unsupported type {type} at {path}").format(type=repr(type(x).__name__), path=path))


def _decode(x, blobs: list, depth: int = 0):
    if depth > MAX_DEPTH + 2:  # containers of plain values count one level each, tuples and dicts two
        raise WireError(f"malformed message: nested deeper than {MAX_DEPTH} levels")
    d = depth + 1
    if isinstance(x, list):
        return [_decode(v, blobs, d) for v in x]
    if not isinstance(x, dict):
        return x
    if "__dict__" in x:
        return {k: _decode(v, blobs, d) for k, v in _expect(x["__dict__"], dict).items()}
    if "__tuple__" in x:
        return tuple(_decode(v, blobs, d) for v in _expect(x["__tuple__"], list))
    if "__pairs__" in x:
        pairs = [_expect(p, list) for p in _expect(x["__pairs__"], list)]
        if any(len(p) != 2 for p in pairs):
            raise WireError("malformed message: a key-value pair")
        return {_hashable(_decode(k, blobs, d)): _decode(v, blobs, d) for k, v in pairs}
    if "__float__" in x:
        return float(_expect(x["__float__"], str))
    if "__ndarray__" in x:
        return _load_array(x, blobs, "__ndarray__")
    if "__tensor__" in x:
        name = x.get("torch_dtype")
        if not (isinstance(name, str) and _TORCH.get(name) == x.get("dtype")):  # a closed list, and its own bytes
            raise WireError("malformed message: a tensor record")
        torch = _torch()
        t = torch.from_numpy(_load_array(x, blobs, "__tensor__"))
        return t.view(torch.bfloat16) if name == "bfloat16" else t
    raise WireError(f"malformed message: unknown object {sorted(x)[:3]}")


def _expect(value, kind: type):
    if not isinstance(value, kind):
        raise WireError(f"malformed message: a {kind.__name__} expected, not {type(value).__name__}")
    return value


def _hashable(k):
    if isinstance(k, list):
        return tuple(_hashable(v) for v in k)
    return k


def _items(head: bytes) -> int:
    """An upper bound on the items and containers of a JSON text: each costs at least one of these."""
    return sum(head.count(c) for c in b"[{,:")


def dumps(obj, what: str = "value", blobs: list[bytes] | None = None) -> bytes:
    """Serialize plain data; raise WireError naming what is not plain or too large to be read.
    ``blobs``: the arrays of the :class:`Encoded` values inside ``obj``."""
    blobs = [] if blobs is None else blobs
    head = json.dumps(_encode(obj, blobs, what, 0), allow_nan=False).encode()
    if len(head) > MAX_HEAD_BYTES:
        raise WireError(_("{what} holds {size:.0f} MiB of lists, numbers and text, over the {limit} MiB limit "
                          "(large data travels as a numpy array)").format(
            what=what, size=len(head) / 2**20, limit=MAX_HEAD_BYTES // 2**20))
    if _items(head) > MAX_ITEMS:
        raise WireError(_("{what} holds more than {limit} values in lists and dicts "
                          "(large data travels as a numpy array)").format(what=what, limit=MAX_ITEMS))
    if len(blobs) > MAX_BLOBS:
        raise WireError(_("{what} holds {count} arrays, more than {limit}").format(
            what=what, count=len(blobs), limit=MAX_BLOBS))
    parts = [_LEN.pack(len(head)), head, _LEN.pack(len(blobs))]
    for b in blobs:
        parts += [_LEN.pack(len(b)), b]
    data = b"".join(parts)
    if len(data) > MAX_BYTES:
        raise WireError(_("{what} is {size:.0f} MiB, over the {limit} MiB limit").format(
            what=what, size=len(data) / 2**20, limit=MAX_BYTES // 2**20))
    return data


def loads(data: bytes):
    """Inverse of :func:`dumps`; never unpickles.

    Its memory is bounded by what it was sent: each array owns one blob, a copy of bytes
    in ``data`` used by no other array, so the arrays of the value hold at most
    ``len(data)`` bytes (``MAX_BYTES``) together, and the rest of it at most
    ``MAX_ITEMS`` values decoded from at most ``MAX_HEAD_BYTES`` of JSON; while it
    runs, ``data`` and those copies, at most twice ``MAX_BYTES``."""
    if len(data) > MAX_BYTES:
        raise WireError(f"message of {len(data)} bytes is over the limit")
    view = memoryview(data)
    pos = 0

    def take(n: int) -> bytearray:
        nonlocal pos
        if pos + n > len(view):
            raise WireError("truncated message")
        out = bytearray(view[pos : pos + n])  # a copy the decoded array may own and write to
        pos += n
        return out

    (hlen,) = _LEN.unpack(take(_LEN.size))
    if hlen > MAX_HEAD_BYTES:
        raise WireError(f"malformed message: a JSON part of {hlen} bytes (at most {MAX_HEAD_BYTES})")
    raw = take(hlen)
    if _items(raw) > MAX_ITEMS:
        raise WireError(f"malformed message: more than {MAX_ITEMS} items")
    try:
        head = json.loads(raw)
    except RecursionError:
        raise WireError("malformed message: nested too deeply") from None
    (nblobs,) = _LEN.unpack(take(_LEN.size))
    if nblobs > MAX_BLOBS:
        raise WireError(f"malformed message: {nblobs} arrays (at most {MAX_BLOBS})")
    blobs = []
    for _blob in range(nblobs):
        (blen,) = _LEN.unpack(take(_LEN.size))
        blobs.append(take(blen))
    try:
        value = _decode(head, blobs)
    except RecursionError:
        raise WireError("malformed message: nested too deeply") from None
    except WireError:
        raise
    except (TypeError, ValueError) as exc:  # an unhashable key, a float of "x": not one of ours
        raise WireError(f"malformed message: {type(exc).__name__}") from None
    if any(b is not None for b in blobs):  # each record took its own: bytes no record names were not sent by dumps
        raise WireError("malformed message: an array's bytes belong to no record")
    return value


def roundtrip(obj, what: str = "value"):
    """What the other side of the boundary would see."""
    return loads(dumps(obj, what))
