"""Errors: the exception class comes from the core's status code alone (one
class per status family, docs/python.md "Errors"), read from the call's own
cachekit_error (the `_ex` forms), never from the message text."""
from __future__ import annotations

import threading

import pytest
from thread_helpers import join as _join, until as _until

import cachekit
from cachekit import (Backend, BackendError, CacheKitError, CacheMemoryError, CacheTimeoutError, CircuitOpenError,
                      ConfigurationError, CoreCache, DeadlockError, DecodeError, DecryptionAuthenticationError,
                      IntegrityError, InteropError, LoadFailed, LoadTimeout, ValueTooLargeError)
from cachekit import _core
from cachekit._core import ffi, lib

# Status name (cachekit.h) -> the class it raises.
FAMILIES = {
    "EINVAL": ConfigurationError, "EKEY": ConfigurationError, "ECRYPTO_UNAVAILABLE": ConfigurationError,
    "EUNSUPPORTED": InteropError, "ESEGMENT": InteropError,
    "EDESERIALIZE": DecodeError, "EDEPTH": DecodeError, "ETRUNCATED": DecodeError, "ETRAILING": DecodeError,
    "EOVERCLAIM": DecodeError, "EBOMB": DecodeError, "EDECOMPRESS": DecodeError, "ESIZE": DecodeError,
    "ETOOBIG": ValueTooLargeError, "ENOMEM": CacheMemoryError,
    "EBACKEND": BackendError, "EBUSY": BackendError, "ETIMEOUT": CacheTimeoutError,
    "ECIRCUIT_OPEN": CircuitOpenError,
    "ECORRUPT": IntegrityError, "ECHECKSUM": IntegrityError, "EFRAME": IntegrityError,
    "EKEYNOTFOUND": IntegrityError, "ECIPHERTEXT": IntegrityError, "EAUTH": DecryptionAuthenticationError,
    "EDEADLOCK": DeadlockError, "EUSER": LoadFailed,
    "ENONCE": CacheKitError, "EINTERNAL": CacheKitError,
}


def _err(code: int, message: str):
    e = ffi.new("cachekit_error *", {"struct_size": ffi.sizeof("cachekit_error")})
    e.code = code
    raw = message.encode()
    ffi.memmove(e.message, raw, len(raw))
    return e


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_status_maps_to_its_family(name):
    code = getattr(lib, "CACHEKIT_" + name)
    exc = _core.call_error(_err(code, "some message"))
    assert type(exc) is FAMILIES[name]
    assert exc.code == code and exc.message == "some message"
    assert exc.name == ffi.string(lib.cachekit_error_name(code)).decode()


def test_every_pinned_status_has_a_class():
    codes = [v for k, v in vars(lib).items() if k.startswith("CACHEKIT_E") and isinstance(v, int) and v < 0]
    assert set(codes) - {lib.CACHEKIT_ENOTFOUND} == {getattr(lib, "CACHEKIT_" + n) for n in FAMILIES}


def test_the_message_does_not_choose_the_class():
    # The words the single-flight wait used to be recognised by, on a backend error.
    exc = _core.call_error(_err(lib.CACHEKIT_EBACKEND, "waited 5 ms for another caller's load of this key"))
    assert type(exc) is BackendError
    assert type(_core.call_error(_err(lib.CACHEKIT_EUSER, "[cachekit-py load 1] KeyError"))) is LoadFailed
    assert not hasattr(_core, "_LOAD_TOKEN") and not hasattr(_core, "_WAIT_TIMEOUT")


def test_python_builtin_bases():
    assert issubclass(CacheTimeoutError, TimeoutError) and issubclass(CacheTimeoutError, BackendError)
    assert issubclass(LoadTimeout, CacheTimeoutError)
    assert issubclass(ConfigurationError, ValueError) and issubclass(DecodeError, ValueError)
    assert issubclass(CacheMemoryError, MemoryError) and issubclass(DeadlockError, RuntimeError)
    for cls in set(FAMILIES.values()):
        assert cls.__name__ in cachekit.__all__


# Real calls, one per family the wrapper can provoke.

def test_bad_interop_segment_is_interop_error():
    with pytest.raises(InteropError) as ei:
        _core.key_interop("bad:ns", "op", b"\x90")
    assert ei.value.code == lib.CACHEKIT_ESEGMENT


def test_truncated_msgpack_is_decode_error():
    with pytest.raises(DecodeError) as ei:
        _core.msgpack_check(b"\x92\x01")
    assert ei.value.code == lib.CACHEKIT_EOVERCLAIM


def test_unknown_backend_scheme_is_configuration_error():
    with pytest.raises(ConfigurationError) as ei:
        Backend("nosuch://x")
    assert ei.value.code == lib.CACHEKIT_EINVAL


def test_bad_master_key_is_configuration_error():
    with pytest.raises(ConfigurationError):
        CoreCache(backend_url="memory://", encryption=True, master_key="zz")


def test_fail_closed_unreachable_redis_is_backend_error():
    c = CoreCache(backend_url="redis://127.0.0.1:1/0", fail_closed=True, connect_timeout_ms=200,
                  command_timeout_ms=200)
    try:
        with pytest.raises(BackendError) as ei:
            c.get(b"n", b"n:k")
        assert not isinstance(ei.value, LoadTimeout)
    finally:
        c.close()


def test_loader_asking_for_its_own_key_is_deadlock_error():
    c = CoreCache(backend_url="memory://")
    try:
        with pytest.raises(DeadlockError) as ei:
            c.get_or_load(b"n", b"n:k", 0.0, lambda: c.get_or_load(b"n", b"n:k", 0.0, lambda: b"\xc0")[0] or b"\xc0")
        assert ei.value.code == lib.CACHEKIT_EDEADLOCK
    finally:
        c.close()


def test_waiter_timeout_is_load_timeout():
    c = CoreCache(backend_url="memory://", load_timeout_ms=50)
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        assert release.wait(30)
        return b"\x01"

    t = threading.Thread(target=lambda: c.get_or_load(b"n", b"n:k", 0.0, slow), daemon=True)
    t.start()
    try:
        _until(started.is_set, "the load")
        with pytest.raises(LoadTimeout) as ei:
            c.get_or_load(b"n", b"n:k", 0.0, lambda: b"\x02")
        assert ei.value.code == lib.CACHEKIT_ETIMEOUT
    finally:
        release.set()
        _join([t])
        c.close()


def test_waiter_of_an_interrupted_leader_gets_no_stale_exception():
    """A waiter takes only a failure recorded after its call began: an older
    failure of the same key is not handed to it."""
    c = CoreCache(backend_url="memory://")
    with pytest.raises(KeyError):
        c.get_or_load(b"n", b"n:k", 0.0, lambda: (_ for _ in ()).throw(KeyError("old")))
    rec = c._failures.get(b"n:k", 0)
    assert isinstance(rec[0], KeyError)
    assert c._failures.get(b"n:k", c._failures.seq) is None
    c.close()
