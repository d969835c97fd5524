"""The scenarios of the interop runs with a Rust side (python_rust_interop.py,
rust_python/run.py, go_rust/run.py): side.py's functions one(a), three(a, b, c=2.5)
and var(*args, **kwargs) as cachekit-rs's `#[cachekit(interop = ...)]` and our
`#[cached]` declare them (namespace rsplain plain, rsvault encrypted), their argument
cases, and one pair of sides run both ways over them; and the namespaced entries
(function "kv": explicit keys behind a client namespace, cachekit-rs's `.namespace()`
and our `key_prefix`), run both ways the same way."""
from __future__ import annotations

import hashlib

# side.py's single-argument cases inside cachekit-rs's interop model (no Decimal, Enum, date).
ONE_CASES = ["int", "bigint", "negint", "float", "negzero", "str", "bytes", "none", "bool", "list", "tuple", "dict",
             "nested", "datetime", "set", "uuid"]
FUNCTIONS = (("one", ONE_CASES), ("three", ["defaults", "all"]), ("var", ["varargs", "empty"]))


def run_pair(runner, label: str, a: str, b: str, backend: dict, master_key: str, *, tenant: str | None = None,
             functions=FUNCTIONS, options: dict | None = None, keyless: bool = False) -> None:
    """For each function, plain then encrypted (`master_key`, `tenant` or the default one):
    `a` writes and `b` must be served every value, then the reverse, then the key lists
    the two writers left must be equal byte for byte. `runner` is a python_interop.Runner
    whose sides include `a` and `b`. keyless: also check that `a` without the master key
    is not served `b`'s encrypted entries."""
    for secure in (False, True):
        opts = dict(options or {})
        if secure:
            opts.update(encryption=True, master_key=master_key)
            if tenant:
                opts["tenant"] = tenant
        kind = f"encrypted (same master key, tenant {tenant or 'default'})" if secure else "plain"
        for function, cases in functions:
            job = {"backend": backend, "namespace": "rsvault" if secure else "rsplain", "function": function,
                   "interop": function, "options": opts}
            scenario = f"{label}, {kind}, {function}()"
            k_a = runner.direction(scenario, a, b, job, cases, uncached=frozenset())
            k_b = runner.direction(scenario, b, a, job, cases, uncached=frozenset())
            if secure and keyless:  # b's entries are still there: without the key, a is not served them
                got = runner.side(a, {**job, "options": {}, "cases": cases})
                runner.check(scenario, all("error" in g or g["ran"] for g in got),
                             f"{a} without the master key is not served {b}'s encrypted entries", got)
            runner.check(scenario, k_a == k_b and len(k_a) == len(cases),
                         f"entry key lists equal byte for byte ({len(k_a)} keys)",
                         {f"only_{a}": [k for k in k_a if k not in k_b], f"only_{b}": [k for k in k_b if k not in k_a]})


# Namespaced entries: cachekit-rs's client `.namespace(NAMESPACED)` stores `get`/`set`
# keys as "{NAMESPACED}:{key}" (plain MessagePack, and since 0.10 encrypted whenever
# the client has a key, the AAD binding that stored key); our sides store the same
# under key_prefix "{NAMESPACED}:" in the plain format. Each case is a key: a side
# gets it and, on a miss, computes its value and sets it.
NAMESPACED = "rsapp"
NAMESPACED_KEYS = ["user:1", "user:42", "report.2026-12_q4", "k"]


def run_namespaced_pair(runner, label: str, a: str, b: str, backend: dict, master_key: str, *,
                        tenant: str | None = None, keyless: bool = False) -> None:
    """run_pair for the namespaced entries: plain then encrypted, `a` writes and `b` is
    served every value, the reverse, then the stored keys must be equal byte for byte
    and all carry the namespace; keyless: `a` without the key is not served `b`'s
    encrypted entries."""
    for secure in (False, True):
        opts: dict = {}
        if secure:
            opts.update(encryption=True, master_key=master_key)
            if tenant:
                opts["tenant"] = tenant
        kind = f"encrypted (same master key, tenant {tenant or 'default'})" if secure else "plain"
        job = {"backend": backend, "namespace": NAMESPACED, "function": "kv", "interop": None, "options": opts}
        scenario = f"{label}, namespaced {NAMESPACED}:, {kind}"
        k_a = runner.direction(scenario, a, b, job, NAMESPACED_KEYS, uncached=frozenset())
        k_b = runner.direction(scenario, b, a, job, NAMESPACED_KEYS, uncached=frozenset())
        if secure and keyless:
            got = runner.side(a, {**job, "options": {}, "cases": NAMESPACED_KEYS})
            runner.check(scenario, all("error" in g or g["ran"] for g in got),
                         f"{a} without the master key is not served {b}'s encrypted entries", got)
        stored = [f"{NAMESPACED}:{k}" for k in NAMESPACED_KEYS]
        if "file" in backend:  # the file backend names an entry by BLAKE2b-128 of its key
            stored = [hashlib.blake2b(k.encode(), digest_size=16).hexdigest() for k in stored]
        wanted = sorted(k.encode() for k in stored)
        runner.check(scenario, k_a == k_b and sorted(k_a) == wanted,
                     f"stored keys equal byte for byte ({len(k_a)} keys, each {NAMESPACED}:{{key}}"
                     + (", as file names" if "file" in backend else "") + ")", {f"{a}": k_a, f"{b}": k_b})
