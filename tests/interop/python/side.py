"""One side of a live Python interop scenario: `python side.py '<json job>'`.

The same file runs under both packages named `cachekit`: ours (Debian's python3 with the
build tree's wrapper on PYTHONPATH) and the reference SDK (its venv). Functions are
defined here at top level, so both sides key them as `__main__.<name>`. The job says
which backend, decorator options and calls; the answer (stdout, one JSON line) says,
per call, who computed the value (its `writer` field) and whether this process ran the
function body.

Job: {"side": "ours"|"ref", "backend": {"redis": url} | {"file": dir[, "max_entries": n (ref)]} | {"zero_config": true}
     | {"user_redis": url} (a user-defined backend object over that Redis),
      "options": {decorator kwargs}, "ref_options" / "ours_options": {one side's only}, "function": name, "cases": [case names],
      "action": "call" | "invalidate" | "invalidate_all", "interop": operation or null, "namespace": ns,
      "key": a KEY_FUNCTIONS name (key=) or absent}
typed_value's answers keep each part's Python type (typed()), so the runner sees what an L2 hit restored.
Function "kv" (ours only; rs_scenarios.py's namespaced entries): each case is a key behind
key_prefix "{namespace}:" in the plain format (cachekit-rs's client .namespace() layout),
read through cachekit.CoreCache and, on a miss, rs_answer("kv") stored under it.
"""
from __future__ import annotations

import datetime as dt
import enum
import json
import sys
import uuid
from decimal import Decimal

import cachekit
from cachekit import cache

JOB = json.loads(sys.argv[1])
SIDE = JOB["side"]
RAN: list = []


class Color(enum.Enum):
    RED = "red"
    BLUE = 2


# The value each function returns besides who wrote it: every kind the standard
# serializer carries (tuples come back as lists; datetime/date via the sentinel maps).
PAYLOAD = {"int": 7, "big": 2**64 - 1, "neg": -(2**63), "float": 2.5, "str": "h\u00e9llo", "bytes": b"\x00\xff",
           "none": None, "bool": False, "list": [1, [2, "x"]], "map": {"k": {"z": 1}},
           "when": dt.datetime(2026, 12, 1, 12, 30, 15, 123456, tzinfo=dt.timezone.utc), "day": dt.date(2026, 12, 1)}

# Argument cases: (args, kwargs). `date` and `set` are refused as key material by the
# reference (and by ours): those calls run uncached on both sides.
CASES = {
    "int": ((42,), {}), "bigint": ((2**64 - 2,), {}), "negint": ((-(2**63),), {}), "float": ((3.25,), {}),
    "negzero": ((-0.0,), {}), "str": (("h\u00e9llo w\u00f6rld",), {}), "bytes": ((b"\x00\x01\xfe",), {}),
    "none": ((None,), {}), "bool": ((True,), {}), "list": (([1, "a", None],), {}), "tuple": (((1, 2, "b"),), {}),
    "dict": (({"b": 1, "a": [2, 3]},), {}), "nested": (({"x": [1, {"y": (2, 3.5)}], "a": {"c": b"z"}},), {}),
    "kwargs": ((1,), {"limit": 10, "order": "desc"}), "datetime": ((dt.datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=dt.timezone.utc),), {}),
    "date": ((dt.date(2026, 3, 4),), {}), "set": (({1, 2, 3},), {}), "decimal": ((Decimal("12.340"),), {}),
    "uuid": ((uuid.UUID("12345678-1234-5678-1234-567812345678"),), {}), "enum": ((Color.RED, Color.BLUE), {}),
    "multi": ((1, "two", 3.0, [4]), {"five": {"six": 6}}),
}


# Values of every type the serializers treat apart (returned by typed_value(case)).
VALUES = {
    "tuple": (1, (2, "x"), ()), "set": {1, 2, "three"}, "frozenset": frozenset({"a", (1, 2)}),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "datetime": dt.datetime(2026, 12, 1, 12, 30, 15, 123456, tzinfo=dt.timezone.utc),
    "naive": dt.datetime(2026, 12, 1, 12, 30), "date": dt.date(2026, 12, 1), "time": dt.time(23, 59, 1, 5),
    "bytes": b"\x00\xff", "nested": {"ids": (uuid.UUID(int=1),), "tags": {frozenset({1})}, "rows": [(1, "a")]},
    "enum": Color.RED,
}


def typed_value(case):
    RAN.append("typed_value")
    return {"writer": SIDE, "v": VALUES[case]}


def _result(fn_name: str, args: tuple, kwargs: dict) -> dict:
    RAN.append(fn_name)
    return {"writer": SIDE, "fn": fn_name, "args": repr((args, kwargs)), "payload": PAYLOAD}


def echo(*args, **kwargs):
    return _result("echo", args, kwargs)


def with_default(a, b=2, *, c="d"):
    return _result("with_default", (a, b), {"c": c})


def get_user(user_id, region="eu"):
    return {"writer": SIDE, "id": user_id, "region": region, "tags": ["a", "b"], "score": 1.5}


# The Python side of cachekit-rs's interop functions (tests/interop/rust/src/py_side.rs):
# the same operations and argument lists, the same returned map.
def rs_answer(op: str) -> dict:
    RAN.append(op)
    return {"writer": SIDE, "op": op, "tags": ["a", "b"], "score": 1.5, "big": 2**64 - 1, "neg": -(2**63),
            "none": None, "nested": {"k": [1, 2]}}


def one(a):
    return rs_answer("one")


def three(a, b, c=2.5):
    return rs_answer("three")


def var(*args, **kwargs):
    return rs_answer("var")


RS_CASES = {"three": {"defaults": ((1, "x"), {}), "all": ((1, "x", 0.25), {})},
            "var": {"varargs": ((1, "two"), {"k": "v"}), "empty": ((), {})}}
FUNCTIONS = {"echo": echo, "with_default": with_default, "get_user": get_user, "one": one, "three": three,
             "var": var, "typed_value": typed_value}


class UserRedisBackend:
    """A user-defined backend (the reference's BaseBackend protocol) over the runner's
    redis-server, the same class on both sides: each SDK hands it its keys and bytes."""

    def __init__(self, url: str) -> None:
        import os
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from resp import Redis
        self.redis = Redis(int(url.rsplit(":", 1)[1].split("/")[0]))

    def get(self, key: str):
        return self.redis("GET", key)

    def set(self, key: str, value: bytes, ttl=None) -> None:
        if ttl:
            self.redis("SET", key, value, "EX", int(ttl))
        else:
            self.redis("SET", key, value)

    def delete(self, key: str) -> bool:
        return self.redis("DEL", key) == 1

    def exists(self, key: str) -> bool:
        return self.redis("EXISTS", key) == 1

    def health_check(self):
        return True, {"latency_ms": 0.0, "backend_type": "user-redis"}


def backend_option() -> dict:
    b = JOB["backend"]
    if "zero_config" in b:
        return {}
    if "user_redis" in b:
        return {"backend": UserRedisBackend(b["user_redis"])}
    if SIDE == "ours":
        return {"backend": b["redis"] if "redis" in b else "file://" + b["file"]}
    if "redis" in b:
        from cachekit.backends.redis import RedisBackend
        return {"backend": RedisBackend(b["redis"])}
    from cachekit.backends.file import FileBackend, FileBackendConfig
    limits = {"max_entry_count": b["max_entries"]} if "max_entries" in b else {}
    return {"backend": FileBackend(FileBackendConfig(cache_dir=b["file"], **limits))}


def jsonable(v):
    if isinstance(v, bytes):
        return {"$bytes": v.hex()}
    if isinstance(v, (dt.datetime, dt.date)):
        return {"$" + type(v).__name__: v.isoformat()}
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def typed(v):
    """A JSON form that keeps the Python type of every part (the runner compares them)."""
    if isinstance(v, enum.Enum):
        return {"$enum": f"{type(v).__name__}.{v.name}"}
    if isinstance(v, tuple):
        return {"$tuple": [typed(x) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {"$" + type(v).__name__: sorted(json.dumps(typed(x)) for x in v)}
    if isinstance(v, uuid.UUID):
        return {"$uuid": str(v)}
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return {"$" + type(v).__name__: v.isoformat()}
    if isinstance(v, bytes):
        return {"$bytes": v.hex()}
    if isinstance(v, dict):
        return {str(k): typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [typed(x) for x in v]
    return v


# key= functions by name (a job cannot carry code): "first" keys a call by its first argument.
KEY_FUNCTIONS = {"first": lambda *args, **kwargs: f"k:{args[0]}"}


def namespaced_entries() -> None:
    """Function "kv": get each key; on a miss compute rs_answer("kv") and put it."""
    opts, ns = JOB.get("options", {}), JOB["namespace"]
    b = JOB["backend"]
    core = cachekit.CoreCache(backend_url=b["redis"] if "redis" in b else "file://" + b["file"], plain=True,
                              key_prefix=ns + ":", encryption=bool(opts.get("encryption")),
                              master_key=opts.get("master_key"), tenant=opts.get("tenant"), l1=False,
                              fail_closed=True)
    out = []
    for key in JOB["cases"]:
        before = len(RAN)
        try:
            found, _ = core.get(ns.encode(), key.encode())
            if found is not None:
                value = cachekit.decode_interop_value(found)
            else:
                value = rs_answer("kv")
                core.put(ns.encode(), key.encode(), cachekit.encode_interop_value(value), 600)
            out.append({"case": key, "ran": len(RAN) > before, "value": jsonable(value)})
        except Exception as exc:  # reported, compared by the runner
            out.append({"case": key, "error": f"{type(exc).__name__}: {exc}"})
    print(json.dumps({"side": SIDE, "package": cachekit.__file__, "results": out}))


def main() -> None:
    if JOB["function"] == "kv":
        namespaced_entries()
        return
    opts = dict(JOB.get("options", {}))
    if JOB.get("key"):
        opts["key"] = KEY_FUNCTIONS[JOB["key"]]
    # options one side spells its own way (the reference's single_tenant_mode=True, ...)
    opts.update(JOB.get("ref_options" if SIDE == "ref" else "ours_options", {}))
    if JOB.get("interop"):
        opts["interop"] = JOB["interop"]
    fn = cache(namespace=JOB.get("namespace"), **backend_option(), **opts)(FUNCTIONS[JOB["function"]])
    if JOB.get("action") == "invalidate_all":  # every entry of the function, whoever wrote it
        fn.invalidate_cache()
        print(json.dumps({"side": SIDE, "package": cachekit.__file__, "results": []}))
        return
    out = []
    for case in JOB["cases"]:
        if JOB["function"] == "get_user":
            args, kwargs = (int(case),), {}
        elif JOB["function"] in ("with_default", "typed_value"):
            args, kwargs = (case,), {}
        elif JOB["function"] in RS_CASES:
            args, kwargs = RS_CASES[JOB["function"]][case]
        elif JOB["function"] == "one":
            args, kwargs = CASES[case]
        elif case.startswith("n:"):  # many distinct entries: echo(<int>)
            args, kwargs = (int(case[2:]),), {}
        else:
            args, kwargs = CASES[case]
        before = len(RAN)
        if JOB.get("action") == "invalidate":
            fn.invalidate_cache(*args, **kwargs)
            out.append({"case": case})
            continue
        try:
            value = fn(*args, **kwargs)
            shown = typed(value) if JOB["function"] == "typed_value" else jsonable(value)
            out.append({"case": case, "ran": len(RAN) > before, "value": shown})
        except Exception as exc:  # reported, compared by the runner
            out.append({"case": case, "error": f"{type(exc).__name__}: {exc}"})
    print(json.dumps({"side": SIDE, "package": cachekit.__file__, "results": out}))


if __name__ == "__main__":
    main()
