#!/usr/bin/env python3
"""Live interop with the reference Python SDK (meson suite `interop`).

Ours: Debian's python3 with the build tree's wrapper (the extension built as the
`python` suite builds it). Theirs: `cachekit` from PyPI (requirements-reference.txt) in
a venv; skipped (77) when PyPI is unreachable. One redis-server on a free loopback port
(started here) and temp directories for the file backend. Each scenario runs one side
writing and the other reading (tests/interop/python/side.py in both), in both
directions, then compares the Redis key lists the two writers left, byte for byte.
Prints `ok <scenario>: <check>` / `FAIL ...` lines; exits 1 on any FAIL.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pyvenv  # noqa: E402
from resp import Redis  # noqa: E402

SIDE = os.path.join(HERE, "python", "side.py")
K1 = "11" * 32  # master keys: K1 retired, K2 current
K2 = "22" * 32
ALL_CASES = ["int", "bigint", "negint", "float", "negzero", "str", "bytes", "none", "bool", "list", "tuple", "dict",
             "nested", "kwargs", "datetime", "date", "set", "decimal", "uuid", "enum", "multi"]
SINGLE_TENANT = {"single_tenant_mode": True}  # the reference's explicit tenant mode (tenant "default")
REGISTRY_RE = re.compile(rb"t:[^:]+:ck:reg:[a-z0-9._-]*:[0-9a-f]{16}")
UNCACHED = frozenset({"date", "set"})  # neither SDK keys a date or a set: both run such calls uncached
VALUE_CASES = ["tuple", "set", "frozenset", "uuid", "datetime", "naive", "date", "time", "bytes", "nested", "enum"]
# What each serializer of both SDKs refuses to store (the call runs uncached): a plain Enum
# everywhere; the standard serializer's sets, frozensets and UUIDs.
VALUE_UNCACHED = {"auto": frozenset({"enum"}), "default": frozenset({"enum", "set", "frozenset", "uuid", "nested"})}


def as_arrays(v):
    """The standard serializer's view of a typed value: tuples are arrays."""
    if isinstance(v, dict):
        if set(v) == {"$tuple"}:
            return [as_arrays(x) for x in v["$tuple"]]
        return {k: as_arrays(x) for k, x in v.items()}
    if isinstance(v, list):
        return [as_arrays(x) for x in v]
    return v


class Runner:
    def __init__(self, ours_env: dict, ref_python: str, redis_port: int, tmp: str, tool: str) -> None:
        self.ours_env, self.ref_python, self.port, self.tmp, self.tool = ours_env, ref_python, redis_port, tmp, tool
        self.redis = Redis(redis_port)
        self.failures: list[str] = []
        self.passed = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def check(self, scenario: str, ok: bool, what: str, detail: object = "") -> bool:
        if ok:
            self.passed += 1
            print(f"ok {scenario}: {what}", flush=True)
        else:
            self.failures.append(f"{scenario}: {what}")
            print(f"FAIL {scenario}: {what}: {detail}", flush=True)
        return ok

    def side(self, side: str, job: dict, env: dict | None = None) -> list[dict]:
        job = {"side": side, **job}
        if side == "ours":
            cmd, base = ["/usr/bin/python3", SIDE], dict(self.ours_env)
        else:
            cmd, base = [self.ref_python, SIDE], pyvenv.clean_env()
        base.update(env or {})
        base.setdefault("HOME", self.tmp)  # the reference may write ~/.cachekit
        r = subprocess.run(cmd + [json.dumps(job)], capture_output=True, text=True, env=base, cwd=self.tmp,
                           timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"{side} side failed ({job}):\n{r.stdout}\n{r.stderr}")
        return json.loads(r.stdout.strip().splitlines()[-1])["results"]

    # -- one direction: `writer` stores, `reader` must be served the writer's values --
    def direction(self, scenario: str, writer: str, reader: str, job: dict, cases: list[str],
                  reader_job: dict | None = None, env: dict | None = None, reader_env: dict | None = None,
                  uncached: frozenset = UNCACHED, served=lambda v: v) -> list:
        self.redis("FLUSHALL")
        job = {**job, "cases": cases}
        wrote = self.side(writer, job, env)
        keys = self.redis.keys()
        got = self.side(reader, {**job, **(reader_job or {})}, reader_env if reader_env is not None else env)
        name = f"{scenario} [{writer} writes, {reader} reads]"
        for w, g in zip(wrote, got):
            case = w["case"]
            if "error" in w or "error" in g:
                self.check(name, False, f"{case}: no exception", (w.get("error"), g.get("error")))
                continue
            if case in uncached:
                self.check(name, g["ran"] and g["value"]["writer"] == reader, f"{case}: uncached on both sides", g)
                continue
            self.check(name, not g["ran"] and g["value"] == served(w["value"]),
                       f"{case}: served the {writer} side's value", {"wrote": w, "got": g})
        return keys

    def both_ways(self, scenario: str, job: dict, cases: list[str], env: dict | None = None,
                  reader_job: dict | None = None, reader_env: dict | None = None,
                  uncached: frozenset = UNCACHED, served=lambda v: v) -> None:
        k_ref = self.direction(scenario, "ref", "ours", job, cases, reader_job, env, reader_env, uncached, served)
        k_ours = self.direction(scenario, "ours", "ref", job, cases, reader_job, env, reader_env, uncached, served)
        self.compare_keys(scenario, k_ref, k_ours)

    def compare_keys(self, scenario: str, k_ref: list[bytes], k_ours: list[bytes]) -> None:
        only_ref = [k for k in k_ref if k not in k_ours]
        only_ours = [k for k in k_ours if k not in k_ref]
        # The reference's key registry (t:{tenant}:ck:reg:{ns}:{blake3-64 of module.qualname},
        # a SET it SADDs each written key to) is its own extension, outside the protocol;
        # libcachekit writes it where the reference does (zero-config Redis, docs/redis.md
        # "Key registry"), so a registry key only the reference wrote is reported.
        registry = [k for k in only_ref if REGISTRY_RE.fullmatch(k)]
        only_ref = [k for k in only_ref if k not in registry]
        self.check(scenario, not only_ref and not only_ours and len(k_ours) > 0,
                   f"Redis key lists equal byte for byte ({len(k_ours)} keys)"
                   + (f"; known difference: the reference's registry key {registry[0].decode()}" if registry else ""),
                   {"only_ref": only_ref, "only_ours": only_ours})

    # -- scenarios --
    def auto_mode(self) -> None:
        base = {"backend": {"redis": self.url}, "function": "echo", "namespace": "interop"}
        self.both_ways("auto, integrity on", {**base, "options": {"ttl": 300}}, ALL_CASES)
        self.both_ways("auto, integrity off",
                       {**base, "options": {"ttl": 300, "integrity_checking": False}}, ALL_CASES)
        self.both_ways("auto, defaults not bound", {**base, "function": "with_default", "options": {"ttl": 300}},
                       ["1", "x"])

    def value_types(self) -> None:
        """Values of every type the serializers treat apart, each way: the reader gets the
        writer's value with the same Python types (the auto serializer keeps tuples, sets,
        frozensets and UUIDs; the standard one makes tuples arrays), and what a serializer
        refuses runs uncached on both sides."""
        for ser in ("auto", "default"):
            for integrity in (True, False):
                job = {"backend": {"redis": self.url}, "function": "typed_value", "namespace": f"types-{ser}",
                       "options": {"ttl": 300, "serializer": ser, "integrity_checking": integrity}}
                self.both_ways(f"value types, serializer={ser}, integrity {'on' if integrity else 'off'}", job,
                               VALUE_CASES, uncached=VALUE_UNCACHED[ser],
                               served=as_arrays if ser == "default" else (lambda v: v))

    def encryption(self) -> None:
        base = {"backend": {"redis": self.url}, "function": "echo", "namespace": "secret",
                "options": {"ttl": 300, "encryption": True, "master_key": K1}, "ref_options": SINGLE_TENANT}
        cases = ["int", "str", "nested", "kwargs", "uuid"]
        self.both_ways("auto, encrypted (same master key, tenant default)", base, cases)
        plain_body = {**base, "namespace": "secret0",
                      "options": {**base["options"], "integrity_checking": False}}
        self.both_ways("auto, encrypted, integrity off", plain_body, cases)
        rotated = {"options": {"ttl": 300, "encryption": True, "master_key": K2}}
        self.both_ways("auto, encrypted, reader rotated (K2 current, K1 previous)", base, cases,
                       reader_job=rotated, reader_env={"CACHEKIT_PREVIOUS_MASTER_KEYS": K1})

    def ttl(self) -> None:
        """TTLs honoured both ways. 8 s: long enough that a loaded machine's process start
        does not outlive it between the write and the read within it."""
        ttl = 8
        base = {"backend": {"redis": self.url}, "function": "echo", "namespace": "ttl", "options": {"ttl": ttl}}
        for writer, reader in (("ref", "ours"), ("ours", "ref")):
            name = f"ttl {ttl} s [{writer} writes, {reader} reads]"
            self.redis("FLUSHALL")
            self.side(writer, {**base, "cases": ["int"]})
            keys = self.redis.keys()
            pttl = [self.redis("PTTL", k) for k in keys]
            self.check(name, len(keys) == 1 and all(0 < p <= ttl * 1000 for p in pttl),
                       f"Redis PTTL in (0, {ttl}] s", pttl)
            got = self.side(reader, {**base, "cases": ["int"]})
            self.check(name, not got[0]["ran"], "a read within the TTL is a hit", got)
            deadline = time.time() + ttl + 20
            while self.redis.keys() and time.time() < deadline:
                time.sleep(0.2)
            got = self.side(reader, {**base, "cases": ["int"]})
            self.check(name, got[0]["ran"] and got[0]["value"]["writer"] == reader,
                       "after the TTL the reader computes", got)

    def invalidation(self) -> None:
        base = {"backend": {"redis": self.url}, "function": "echo", "namespace": "inv", "options": {"ttl": 300}}
        for writer, other in (("ref", "ours"), ("ours", "ref")):
            name = f"invalidation [{writer} writes, {other} invalidates]"
            self.redis("FLUSHALL")
            self.side(writer, {**base, "cases": ["int", "str"]})
            before = self.redis.keys()
            self.side(other, {**base, "cases": ["int"], "action": "invalidate"})
            after = self.redis.keys()
            self.check(name, len(before) == 2 and len(after) == 1, "the invalidated entry left Redis",
                       {"before": before, "after": after})
            got = self.side(writer, {**base, "cases": ["int", "str"]})
            self.check(name, got[0]["ran"] and not got[1]["ran"], "the writer recomputes it, keeps the other", got)

    def interop_mode(self) -> None:
        base = {"backend": {"redis": self.url}, "function": "get_user", "namespace": "users", "interop": "get_user",
                "options": {"ttl": 300}}
        self.both_ways("interop mode", base, ["42", "7"])
        # Every argument kind through interop mode's canonical args (*args: one nested array,
        # **kwargs: one map). A set is keyed here (sorted by encoded bytes); a date is not
        # (the reference raises InteropError to the caller, ours runs the call uncached:
        # docs/conformance.md), so it is left out.
        kinds = {**base, "function": "echo", "namespace": "iop", "interop": "echo"}
        self.both_ways("interop mode, every argument kind", kinds, [c for c in ALL_CASES if c != "date"],
                       uncached=frozenset())
        secure = {**base, "namespace": "vault", "options": {"ttl": 300, "encryption": True, "master_key": K1},
                  "ref_options": SINGLE_TENANT}
        self.both_ways("interop mode, encrypted", secure, ["42"])

    def file_backend(self) -> None:
        for writer, reader in (("ref", "ours"), ("ours", "ref")):
            d = tempfile.mkdtemp(prefix="file-", dir=self.tmp)
            job = {"backend": {"file": d}, "function": "echo", "namespace": "files", "options": {"ttl": 300}}
            name = f"file backend [{writer} writes, {reader} reads]"
            wrote = self.side(writer, {**job, "cases": ["int", "nested", "str"]})
            files = sorted(f for f in os.listdir(d) if not f.startswith("."))
            got = self.side(reader, {**job, "cases": ["int", "nested", "str"]})
            for w, g in zip(wrote, got):
                self.check(name, not g["ran"] and g["value"] == w["value"], f"{w['case']}: served from the file", g)
            # a corrupt entry written by the writer: the reader treats it as a miss and recomputes
            for f in files:
                p = os.path.join(d, f)
                data = bytearray(open(p, "rb").read())
                data[-3] ^= 0xFF
                open(p, "wb").write(bytes(data))
            got = self.side(reader, {**job, "cases": ["int"]})
            self.check(name, got[0]["ran"] and "error" not in got[0], "a corrupt entry is a miss, recomputed", got)
            self.file_names = getattr(self, "file_names", {})
            self.file_names[writer] = files
        self.check("file backend", self.file_names["ref"] == self.file_names["ours"] and self.file_names["ref"],
                   "file names equal", self.file_names)

    def file_eviction(self) -> None:
        """The reference's file-backend eviction (at 90 % of max_entry_count, down to 70 %,
        oldest mtime first) over a directory holding our entries: ours then finds the
        survivors and recomputes the evicted ones, without errors."""
        name = "file backend, the reference evicts our entries"
        d = tempfile.mkdtemp(prefix="evict-", dir=self.tmp)
        # 95 of ours, written in order (distinct mtimes, oldest first); the reference's cap is
        # 100 (its minimum): its write is accepted (at the cap it would refuse, not evict) and
        # finds 96 > 90 % of the cap, so it evicts down to 70.
        mine = [f"n:{i}" for i in range(95)]
        job = {"backend": {"file": d}, "function": "echo", "namespace": "evict", "options": {"ttl": 300}}
        self.side("ours", {**job, "cases": mine})
        before = len(os.listdir(d))
        self.side("ref", {**job, "backend": {"file": d, "max_entries": 100}, "cases": ["uuid"]})  # its minimum
        after = len(os.listdir(d))
        self.check(name, before == 95 and after < before, f"{before} entries -> {after} after the reference's write",
                   (before, after))
        got = self.side("ours", {**job, "cases": mine})
        ran = sum(1 for g in got if g.get("ran"))
        evicted = before + 1 - after
        self.check(name, all("error" not in g for g in got) and ran == evicted
                   and all(g["ran"] == (i < evicted) for i, g in enumerate(got)),
                   f"ours recomputes exactly the {evicted} evicted entries, the oldest, and reads the rest", got)

    def zero_config(self) -> None:
        env = {"CACHEKIT_REDIS_URL": self.url}
        base = {"backend": {"zero_config": True}, "function": "echo", "namespace": "zc", "options": {"ttl": 300}}
        self.both_ways("zero-config Redis (t:default: prefix)", base, ["int", "str"], env=env)
        enc = {**base, "namespace": "zcenc", "options": {"ttl": 300, "encryption": True, "master_key": K1},
               "ref_options": SINGLE_TENANT}
        self.both_ways("zero-config Redis, encrypted (AAD binds the prefixed key, 2026-10)", enc, ["int"], env=env)
        self.aad_bytes(enc, env)
        # A tenant of its own: the reference's deployment_uuid, ours tenant=.
        tenant = "5f0c7c2e-1f7b-4c8e-9a57-0d5c1d7f3a10"
        own = {**enc, "namespace": "zcten", "ref_options": {**SINGLE_TENANT, "deployment_uuid": tenant},
               "ours_options": {"tenant": tenant}}
        self.both_ways("zero-config Redis, encrypted, tenant " + tenant[:8], own, ["int"], env=env)
        same = {**enc, "namespace": "zcdep", "options": {**enc["options"], "deployment_uuid": tenant}}
        self.both_ways("zero-config Redis, encrypted, deployment_uuid on both sides", same, ["int"], env=env)

    def user_backend(self) -> None:
        """A user-defined backend object (get/set/delete/exists over the runner's Redis, the
        same class on both sides): each SDK reads the other's entries through it, and the
        keys it was handed are equal byte for byte."""
        base = {"backend": {"user_redis": self.url}, "function": "echo", "namespace": "user",
                "options": {"ttl": 300}}
        self.both_ways("user-defined backend object", base, ["int", "str", "nested", "kwargs"])
        enc = {**base, "namespace": "userenc", "options": {"ttl": 300, "encryption": True, "master_key": K1},
               "ref_options": SINGLE_TENANT}
        self.both_ways("user-defined backend object, encrypted", enc, ["int", "nested"])

    def key_registry(self) -> None:
        """The reference's server-side key registry, live: one side writes from two
        processes, the other's invalidate_cache() (no arguments) removes every entry and
        the registry; the Redis keys and the registry's members the two sides wrote are
        equal byte for byte."""
        env = {"CACHEKIT_REDIS_URL": self.url}
        base = {"backend": {"zero_config": True}, "function": "echo", "namespace": "reg", "options": {"ttl": 300}}
        written = {}
        for writer, other in (("ref", "ours"), ("ours", "ref")):
            name = f"key registry [{writer} writes from two processes, {other} invalidates all]"
            self.redis("FLUSHALL")
            self.side(writer, {**base, "cases": ["int", "str"]}, env)
            self.side(writer, {**base, "cases": ["nested", "kwargs"]}, env)  # a second process
            keys = self.redis.keys()
            registry = [k for k in keys if REGISTRY_RE.fullmatch(k)]
            members = sorted(self.redis("SMEMBERS", registry[0])) if len(registry) == 1 else []
            ttl = self.redis("TTL", registry[0]) if len(registry) == 1 else -2
            self.check(name, len(registry) == 1 and len(members) == 4 and len(keys) == 5
                       and all(b"t:default:" + m in keys for m in members) and 604000 < ttl <= 604800,
                       "one registry (7-day TTL) listing the 4 entries of both processes", {"keys": keys,
                                                                                              "members": members})
            written[writer] = (keys, members)
            self.side(other, {**base, "cases": [], "action": "invalidate_all"}, env)
            after = self.redis.keys()
            self.check(name, after == [], f"the {other} side's invalidation removed every entry and the registry",
                       after)
            got = self.side(writer, {**base, "cases": ["int", "nested"]}, env)
            self.check(name, all(g["ran"] for g in got), "the writer recomputes", got)
        self.check("key registry", sorted(written["ref"][0]) == sorted(written["ours"][0])
                   and written["ref"][1] == written["ours"][1],
                   "Redis keys and registry members equal byte for byte", written)

    def custom_key(self) -> None:
        """key=: the reference 0.24 keys `{16 hex of BLAKE3("__main__.echo")}-{namespace}:{key}`;
        each side reads the other's entries and the Redis keys are equal byte for byte."""
        base = {"backend": {"redis": self.url}, "function": "echo", "key": "first", "options": {"ttl": 300}}
        cases = ["int", "str", "kwargs"]
        self.both_ways("key= function, namespace ub", {**base, "namespace": "ub"}, cases)
        self.both_ways("key= function, no namespace", base, cases)
        self.redis("FLUSHALL")
        self.side("ref", {**base, "namespace": "ub", "cases": ["int"]})
        keys = self.redis.keys()
        self.check("key= function", len(keys) == 1 and re.fullmatch(rb"[0-9a-f]{16}-ub:k:42", keys[0]) is not None,
                   "the key is {16 hex}-ub:k:42", keys)

    def refresh_ttl(self) -> None:
        """refresh_ttl_on_get: the reference writes (ttl 100 s), the entry is aged to 20 s left,
        ours reads it with refresh_ttl_on_get=True: the entry is served and has 100 s again
        (below 50 % of its TTL, the reference's test); with 80 s left it is left alone."""
        base = {"backend": {"redis": self.url}, "function": "echo", "namespace": "refresh", "options": {"ttl": 100}}
        reader = {"options": {"ttl": 100, "refresh_ttl_on_get": True}}
        for left, refreshed in ((20, True), (80, False)):
            name = f"refresh_ttl_on_get [ref writes, {left} s of 100 left, ours reads]"
            self.redis("FLUSHALL")
            self.side("ref", {**base, "cases": ["int"]})
            keys = self.redis.keys()
            self.redis("EXPIRE", keys[0], str(left))
            got = self.side("ours", {**base, **reader, "cases": ["int"]})
            pttl = self.redis("PTTL", keys[0])
            self.check(name, not got[0]["ran"] and (pttl > 90000 if refreshed else pttl <= left * 1000),
                       "served, and the TTL reset to 100 s" if refreshed else "served, the TTL left alone",
                       {"got": got, "pttl": pttl})

    def padded_header(self) -> None:
        """CK v3 frames whose JSON header ends in ASCII spaces (counted in HDR_LEN), as
        cachekit 0.24's SerializationWrapper.wrap_prefix(align=...) writes them. 0.24.1 pads
        only its uncompressed plaintext Arrow frames (to a 64-byte body boundary), a
        serializer neither side exchanges with the other, so each writer's frames are padded
        here the same way before the other side reads them: it must be served them."""
        base = {"backend": {"redis": self.url}, "function": "echo", "namespace": "padded"}
        jobs = {"integrity on": {"ttl": 300}, "integrity off": {"ttl": 300, "integrity_checking": False},
                "encrypted": {"ttl": 300, "encryption": True, "master_key": K1}}
        for kind, options in jobs.items():
            job = {**base, "options": options, "ref_options": SINGLE_TENANT if "encryption" in options else {}}
            for writer, reader in (("ref", "ours"), ("ours", "ref")):
                name = f"padded CK v3 header, {kind} [{writer} writes, header padded, {reader} reads]"
                self.redis("FLUSHALL")
                cases = ["int", "nested", "str"]
                wrote = self.side(writer, {**job, "cases": cases})
                padded = [pad_frame_header(self.redis, k) for k in self.redis.keys()]
                self.check(name, len(padded) == len(cases) and all(padded),
                           "every stored frame padded to a 64-byte payload offset", padded)
                got = self.side(reader, {**job, "cases": cases})
                for w, g in zip(wrote, got):
                    self.check(name, "error" not in g and not g["ran"] and g["value"] == w["value"],
                               f"{w['case']}: served the {writer} side's value", g)

    def aad_bytes(self, job: dict, env: dict) -> None:
        """Which AAD the reference's entry carries, by the bytes: open its ciphertext with the
        `cachekit codec` tool under the prefixed (2026-10) and the bare cache key."""
        name = "AAD of the reference's zero-config entry"
        self.redis("FLUSHALL")
        self.side("ref", {**job, "cases": ["int"]}, env)
        stored = [k for k in self.redis.keys() if not REGISTRY_RE.fullmatch(k)]
        raw = self.redis("GET", stored[0])
        hlen = int.from_bytes(raw[3:7], "big")
        ciphertext = raw[7 + hlen:]
        logical = stored[0].decode()
        bare = logical[len("t:default:"):]
        reqs = []
        for key in (logical, bare):
            reqs.append({"op": "crypto.aad", "tenant": "default", "cache_key": key, "format": "msgpack",
                         "compressed": True, "original_type": "msgpack"})
        aads = [a["aad"] for a in self.codec(reqs)]
        opened = self.codec([{"op": "crypto.decrypt", "master_key": K1, "tenant": "default", "aad": aad,
                              "ciphertext": ciphertext.hex()} for aad in aads])
        self.check(name, raw[:3] == b"CK\x03" and opened[0]["ok"],
                   f"opens with the AAD over the logical key {logical[:24]}... (aad {aads[0][:40]}...)", opened[0])
        self.check(name, not opened[1]["ok"] and opened[1]["error"] == "AuthenticationFailed",
                   "does not open with the AAD over the bare key (the pre-2026-10 form)", opened[1])

    def codec(self, reqs: list[dict]) -> list[dict]:
        r = subprocess.run([self.tool, "codec"], input="".join(json.dumps(q) + "\n" for q in reqs),
                           capture_output=True, text=True, env=self.ours_env, timeout=60)
        return [json.loads(line) for line in r.stdout.splitlines()]


def pad_frame_header(redis: Redis, key: bytes, align: int = 64) -> int:
    """Rewrites the CK v3 frame under `key` with its JSON header followed by ASCII spaces
    (counted in HDR_LEN) until the payload starts at a multiple of `align`, keeping the
    TTL; returns the spaces added (0: not a frame)."""
    raw = redis("GET", key)
    if not raw or raw[:3] != b"CK\x03":
        return 0
    hlen = int.from_bytes(raw[3:7], "big")
    pad = -(7 + hlen) % align or align  # always some: an aligned header still gains a block
    header = raw[7:7 + hlen] + b" " * pad
    redis("SET", key, raw[:3] + len(header).to_bytes(4, "big") + header + raw[7 + hlen:], "KEEPTTL")
    return pad


def build_ours(build_dir: str, source_root: str, work: str) -> dict:
    """Builds our wrapper's extension against the build tree into `work`/ext; returns the
    environment that runs it under /usr/bin/python3, and makes the python suite's
    conftest importable."""
    wrapper = os.path.join(source_root, "wrappers", "python")
    ext = os.path.join(work, "ext")
    r = subprocess.run(["/usr/bin/python3", os.path.join(wrapper, "build_ext.py"), "--build-dir", build_dir,
                        "--out", ext, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        pyvenv.fail(f"cannot build the wrapper's extensions:\n{r.stdout}{r.stderr}")
    sys.path.insert(0, os.path.join(wrapper, "tests"))
    return pyvenv.clean_env(PYTHONPATH=os.pathsep.join([ext, wrapper]), LD_LIBRARY_PATH=os.path.join(build_dir, "src"))


def run_with_redis(label: str, prefix: str, make_runner, scenarios) -> int:
    """Starts a private redis-server (the python suite's conftest starter: make it importable
    first) in a temp directory, runs `scenarios(runner, tmp)` with `make_runner(port, tmp)`'s
    Runner, stops the server, prints the tally; returns the exit code (1 on any failure)."""
    from conftest import RedisServer  # free loopback port

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        server = RedisServer(tmp)
        runner = make_runner(server.port, tmp)
        try:
            scenarios(runner, tmp)
        finally:
            runner.redis.close()
            server.stop()
    print(f"{label}: {runner.passed} checks passed, {len(runner.failures)} failed")
    for f in runner.failures:
        print("  FAILED:", f)
    return 1 if runner.failures else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("scenarios", nargs="*")
    a = ap.parse_args()
    a.build_dir, a.source_root, a.work = (os.path.abspath(p) for p in (a.build_dir, a.source_root, a.work))
    if not shutil.which("redis-server"):
        pyvenv.fail("redis-server is not installed (Debian: redis-server)")
    ref_python = pyvenv.ensure(os.path.join(a.work, "venv-reference"), os.path.join(HERE, "requirements-reference.txt"))

    ours_env = build_ours(a.build_dir, a.source_root, a.work)

    def scenarios(runner: Runner, tmp: str) -> None:
        for name in a.scenarios or ["auto_mode", "value_types", "encryption", "ttl", "invalidation", "interop_mode",
                                    "file_backend", "file_eviction", "zero_config", "user_backend",
                                    "key_registry", "custom_key", "refresh_ttl", "padded_header"]:
            getattr(runner, name)()

    tool = os.path.join(a.build_dir, "tools", "cachekit")
    return run_with_redis("interop", "cachekit-interop-",
                          lambda port, tmp: Runner(ours_env, ref_python, port, tmp, tool), scenarios)


if __name__ == "__main__":
    sys.exit(main())
