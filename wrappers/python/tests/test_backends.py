"""Redis (private server, faults), the file backend across processes, and
values written by the C core read back by Python."""
from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import time

import msgpack
import pytest

from cachekit import Backend, CoreCache, cache
from cachekit._core import ffi, lib


def counter():
    calls = []

    def get_item(x):
        calls.append(x)
        return {"x": x, "pid": os.getpid(), "n": len(calls)}

    get_item.calls = calls
    return get_item


# ---------------------------------------------------------------- Redis

def test_redis_hit_miss(redis_server):
    f = counter()
    g = cache(backend=redis_server.url, namespace="redis1")(f)
    assert g(1)["n"] == 1
    assert g(1)["n"] == 1
    h = cache(backend=redis_server.url, namespace="redis1", l1=False)(f.__wrapped__ if hasattr(f, "__wrapped__") else f)
    assert h(1)["n"] == 1  # served by Redis
    assert h.cache_info().l2_hits == 1
    assert len(f.calls) == 1


def test_redis_zero_config_prefix(redis_server, monkeypatch):
    monkeypatch.setenv("CACHEKIT_REDIS_URL", redis_server.url)
    f = counter()
    g = cache(namespace="zc")(f)
    g(5)
    key = g._cachekit.key_for((5,), {})
    raw = Backend(redis_server.url)
    assert raw.get("t:default:" + key) is not None  # the reference provider's t:{tenant}: prefix


def test_redis_paused_calls_still_return(redis_server):
    # fail_closed on the raw handle: errors reach the cache, which degrades and counts them
    backend = Backend(redis_server.url, command_timeout_ms=150, connect_timeout_ms=150, fail_closed=True)
    f = counter()
    g = cache(backend=backend, namespace="fault", l1=False)(f)
    g(1)
    redis_server.pause()
    try:
        t0 = time.time()
        for i in range(8):
            assert g(100 + i)["x"] == 100 + i  # fail-open: computed, returned
        assert g(1)["x"] == 1
        elapsed = time.time() - t0
        assert elapsed < 8  # timeouts, then the breaker fails fast
    finally:
        redis_server.resume()
    st = g._cachekit.core.stats(b"fault")
    assert st["backend_errors"] + st["timeouts"] >= 1
    assert g.cache_info().misses >= 9
    assert "cache_operations_total" in g._cachekit.core.metrics_text()


def test_redis_down_is_fail_open():
    f = counter()
    backend = Backend("redis://127.0.0.1:1/0", command_timeout_ms=100, connect_timeout_ms=100)
    g = cache(backend=backend, namespace="down", l1=False)(f)
    assert g(1)["x"] == 1
    assert g(1)["x"] == 1
    assert len(f.calls) == 2
    assert g.cache_info().misses == 2


# ---------------------------------------------------------------- files, two processes

def _child(dirname: str, q) -> None:
    from cachekit import cache as c

    def get_item(x):
        return {"x": x, "pid": os.getpid()}

    get_item.__qualname__ = "shared_get_item"
    g = c(backend=dirname, namespace="mp")(get_item)
    q.put(g(7))


def test_file_backend_shared_by_two_processes(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(str(tmp_path), q))
    p.start()
    first = q.get(timeout=60)
    p.join(60)
    p2 = ctx.Process(target=_child, args=(str(tmp_path), q))
    p2.start()
    second = q.get(timeout=60)
    p2.join(60)
    assert first["pid"] == p.pid
    assert second == first  # the second process read the first one's entry


# ---------------------------------------------------------------- C-written values

def test_value_written_by_core_put_read_by_decorator(tmp_path):
    """A C-side writer (cachekit_cache_put through the C API) and a Python reader."""
    f = counter()
    g = cache(backend=str(tmp_path), namespace="cw")(f)
    key = g._cachekit.key_for((3,), {})
    writer = CoreCache(backend_url="file://" + str(tmp_path), l1=False)
    writer.put(b"cw", key.encode(), msgpack.packb({"from": "c", "list": [1, 2]}), 0.0)
    assert g(3) == {"from": "c", "list": [1, 2]}
    assert f.calls == []


def test_frame_built_with_codec_calls_read_by_decorator():
    """Build envelope + CK frame with the C codec calls, store raw, read via @cache."""
    payload = msgpack.packb({"id": 9, "name": "codec"})
    env = ffi.new("cachekit_buf *")
    frame = ffi.new("cachekit_buf *")
    try:
        assert lib.cachekit_envelope_wrap(env, payload, len(payload), b"msgpack") == 0
        envelope = ffi.buffer(env.ptr, env.size)[:]
        meta = b'{"format": "msgpack", "encoding": "utf-8", "compressed": true, "original_type": "msgpack"}'
        assert lib.cachekit_frame_encode(frame, b"default", meta, envelope, len(envelope)) == 0
        data = ffi.buffer(frame.ptr, frame.size)[:]
    finally:
        lib.cachekit_buf_dispose(env)
        lib.cachekit_buf_dispose(frame)
    backend = Backend("memory://")
    f = counter()
    g = cache(backend=backend, namespace="codec")(f)
    backend.set(g._cachekit.key_for((9,), {}), data)
    assert g(9) == {"id": 9, "name": "codec"}
    assert f.calls == []


def _tool() -> str | None:
    b = os.environ.get("CACHEKIT_BUILD_DIR")
    if b and os.path.exists(os.path.join(b, "tools", "cachekit")):
        return os.path.join(b, "tools", "cachekit")
    return shutil.which("cachekit")


def test_value_written_by_cachekit_tool(tmp_path):
    tool = _tool()
    if tool is None:
        pytest.skip("the cachekit tool is not built (set CACHEKIT_BUILD_DIR)")
    f = counter()
    g = cache(backend=str(tmp_path), namespace="tool")(f)
    key = g._cachekit.key_for((4,), {})
    # `cachekit set` writes a raw value; give it the frame bytes the core would write.
    writer = CoreCache(backend_url="file://" + str(tmp_path / "scratch"), l1=False)
    writer.put(b"tool", key.encode(), msgpack.packb([4, "tool"]), 0.0)
    raw = Backend("file://" + str(tmp_path / "scratch")).get(key)
    src = tmp_path / "value.bin"
    src.write_bytes(raw)
    r = subprocess.run([tool, "--help"], capture_output=True, text=True)
    help_text = r.stdout + r.stderr
    if " set" not in help_text and "set " not in help_text:
        pytest.skip("this cachekit tool has no `set` command")
    res = subprocess.run([tool, "set", key, "--file", str(src), "--backend", "file://" + str(tmp_path)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cachekit set usage differs: {res.stderr.strip()[:200]}")
    assert g(4) == [4, "tool"]
    assert f.calls == []


def test_redis_zero_config_prefix_ignores_the_encryption_tenant(redis_server, monkeypatch):
    """Found live against cachekit-py 0.24.1: its zero-config provider prefixes with the
    request tenant context ("default" when none is set), not the encryption tenant (its
    deployment_uuid, our tenant=): both SDKs must store under t:default:."""
    monkeypatch.setenv("CACHEKIT_REDIS_URL", redis_server.url)
    f = counter()
    g = cache(namespace="zct", encryption=True, master_key="33" * 32,
              tenant="5f0c7c2e-1f7b-4c8e-9a57-0d5c1d7f3a10")(f)
    g(5)
    key = g._cachekit.key_for((5,), {})
    raw = Backend(redis_server.url)
    assert raw.get("t:default:" + key) is not None
    assert raw.get("t:5f0c7c2e-1f7b-4c8e-9a57-0d5c1d7f3a10:" + key) is None


@pytest.mark.parametrize("where", ["memory", "redis"])
def test_raw_backend_byte_calls(where, request):
    """The raw Backend's calls the Django backend (cachekit/django.py) is built on."""
    url = "memory://" if where == "memory" else request.getfixturevalue("redis_server").url
    b = Backend(url, fail_closed=True)
    try:
        b.set(b"p:a", b"1")
        b.set(b"p:b", b"2", 100)
        b.set(b"q:c", b"3")
        assert b.exists(b"p:a") and not b.exists(b"p:none")
        assert b.ttl(b"p:a") == -1.0
        assert 99 <= b.ttl(b"p:b") <= 100
        assert b.ttl(b"p:none") is None
        assert b.get_many([b"p:a", b"p:none", b"p:b"]) == [b"1", None, b"2"]
        assert b.get_many([]) == []
        b.set_many([(b"p:d", b"4"), (b"p:e", b"")], 50)
        assert b.get_many([b"p:d", b"p:e"]) == [b"4", b""]
        assert 49 <= b.ttl(b"p:d") <= 50
        token = b.lock(b"lk", 1000)
        assert token is not None and b.lock(b"lk", 1000) is None
        assert b.unlock(b"lk", token) is True and b.unlock(b"lk", token) is False
        with pytest.raises(ValueError):
            b.clear_prefix(b"")
        assert b.clear_prefix(b"p:") == 4
        assert b.get(b"q:c") == b"3" and not b.exists(b"p:a")
    finally:
        b.clear_prefix(b"p:")
        b.delete(b"q:c")
        b.close()


@pytest.mark.parametrize("where", ["memory", "file", "redis"])
def test_raw_backend_counter_calls(where, request, tmp_path):
    """incr/add/touch/delete_many: one core call each (the Django backend's incr, add,
    touch and delete_many), with the core's codes for a missing key and a non-integer."""
    from cachekit._core import CacheKitError
    if where == "memory":
        url = "memory://"
    elif where == "file":
        url = f"file://{tmp_path}/counters"
    else:
        url = request.getfixturevalue("redis_server").url
    b = Backend(url, fail_closed=True)
    try:
        b.delete_many([b"c:n", b"c:a", b"c:t"])
        assert b.incr(b"c:n") is None and not b.exists(b"c:n")
        b.set(b"c:n", b"10", 100)
        assert b.incr(b"c:n", 5) == 15
        assert b.incr(b"c:n", -20) == -5
        assert b.get(b"c:n") == b"-5"
        assert 90 <= b.ttl(b"c:n") <= 100
        b.set(b"c:n", b"\x80pickle")
        with pytest.raises(CacheKitError) as e:
            b.incr(b"c:n")
        assert e.value.code == lib.CACHEKIT_EUNSUPPORTED
        b.set(b"c:n", str(2**63 - 1).encode())
        with pytest.raises(CacheKitError) as e:
            b.incr(b"c:n")
        assert e.value.code == lib.CACHEKIT_ETOOBIG
        with pytest.raises(OverflowError):
            b.incr(b"c:n", 2**63)
        assert b.add(b"c:a", b"first", 100) is True
        assert b.add(b"c:a", b"second") is False
        assert b.get(b"c:a") == b"first"
        assert b.touch(b"c:a", 0) is True and b.ttl(b"c:a") == -1.0
        assert b.touch(b"c:a", 30) is True and 25 <= b.ttl(b"c:a") <= 30
        assert b.touch(b"c:t", 30) is False
        assert b.delete_many([b"c:n", b"c:a", b"c:t"]) == 2
        assert b.delete_many([]) == 0
        assert not b.exists(b"c:n") and not b.exists(b"c:a")
    finally:
        b.close()



def test_raw_backend_counter_calls_are_one_command(redis_server):
    """What the server saw (INFO commandstats): one EVALSHA per incr once the script is
    cached, one SET per add, one PEXPIRE per touch, one UNLINK per delete_many."""
    b = Backend(redis_server.url, fail_closed=True)
    try:
        b.set(b"oc:n", b"1")
        assert b.incr(b"oc:n") == 2  # caches the script
        redis_server.command("CONFIG", "RESETSTAT")
        for _ in range(3):
            b.incr(b"oc:n")
        assert b.add(b"oc:a", b"v") is True
        assert b.touch(b"oc:a", 10) is True
        assert b.delete_many([b"oc:n", b"oc:a", b"oc:none"]) == 2
        assert redis_server.command_calls("evalsha") == 3
        assert redis_server.command_calls("eval") == 0 and redis_server.command_calls("incrby") == 3
        assert redis_server.command_calls("set") == 1
        assert redis_server.command_calls("pexpire") == 1
        assert redis_server.command_calls("unlink") == 1 and redis_server.command_calls("del") == 0
    finally:
        b.close()
