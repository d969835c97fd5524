"""numpy 1-D array arguments in auto-mode keys, as the reference SDK's
CacheKeyGenerator keys them: ["__array_v1__", shape, dtype code, BLAKE2b-256 hex
of the little-endian C-order bytes]. Limits are the reference's: at most
100,000 bytes per array and 5,000,000 per call, 1-D, int32/int64/float32/float64;
anything else makes the call run uncached. numpy is never imported here: an
argument is recognised by its type's module and name."""
from __future__ import annotations

import hashlib
import sys
import threading
from typing import Any

ARRAY_MAX_BYTES = 100_000
ARRAY_AGGREGATE_MAX = 5_000_000
_DTYPES = {"int32": "i32", "int64": "i64", "float32": "f32", "float64": "f64"}

_seen = threading.local()  # bytes of arrays keyed so far in this thread's current key


def is_ndarray(v: Any) -> bool:
    t = type(v)
    return t.__module__ == "numpy" and t.__name__ == "ndarray"


def begin_key() -> None:
    """Start the per-call aggregate count (called once per key built)."""
    _seen.n = 0


def normalize_array(arr: Any, unsupported: type[Exception]) -> list[Any]:
    if arr.nbytes > ARRAY_MAX_BYTES:
        raise unsupported(f"numpy array of {arr.nbytes} bytes (the key takes at most {ARRAY_MAX_BYTES}): use key=")
    _seen.n = getattr(_seen, "n", 0) + arr.nbytes
    if _seen.n > ARRAY_AGGREGATE_MAX:
        raise unsupported(f"numpy arrays of more than {ARRAY_AGGREGATE_MAX} bytes in one call: use key=")
    if arr.ndim != 1:
        raise unsupported(f"only 1-D numpy arrays are keyed (got {arr.ndim}-D): use key= or ravel()")
    code = _DTYPES.get(arr.dtype.name)
    if code is None:
        raise unsupported(f"numpy dtype {arr.dtype.name!r} is not keyed (int32, int64, float32, float64)")
    import numpy as np  # type: ignore[import-not-found,unused-ignore]  # present: the argument is one of its arrays

    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return ["__array_v1__", list(arr.shape), code, hashlib.blake2b(arr.tobytes(), digest_size=32).hexdigest()]
