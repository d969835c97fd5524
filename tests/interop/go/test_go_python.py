"""Go <-> Python interop through the shared backends (issue 16).

Values written by Go's cachekit.Wrap1/Wrap2 are read by Python's
@cache(interop=...) functions and the reverse, through Redis and the file
backend, plain and encrypted. A reader's function fails when it is called: the
entry must come from the other language (same key, same value bytes, same
AAD). The Go side is tests/interop/go/peer (built by run.py, path in
CACHEKIT_GO_PEER)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from datetime import datetime, timezone

import pytest

from cachekit import Backend, cache

PEER = os.environ.get("CACHEKIT_GO_PEER", "")
MASTER_KEY = "6b" * 32
TENANT = "interop-go"


def profile(uid: int) -> dict:
    """The value of profile(id) in both languages (peer/main.go's profile)."""
    return {"id": uid, "name": f"user{uid}", "tags": ["a", "b"], "score": uid + 0.5,
            "raw": bytes([uid, 0xFF]), "prefs": {"lang": "en"},
            "at": datetime(2024, 1, uid, 12, 30, 45, 123456, tzinfo=timezone.utc)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url():
    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(server):
        pytest.skip("redis-server is not installed")
    port = _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("redis-server did not start")
    yield f"redis://127.0.0.1:{port}"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=5)


@pytest.fixture(params=["redis", "file"])
def backend_url(request, tmp_path):
    if request.param == "redis":
        return request.getfixturevalue("redis_url")
    return "file://" + str(tmp_path)


_namespaces = iter(range(1_000_000))


@pytest.fixture
def ns():
    """A namespace of the test's own: no entry (nor Python L1 entry) of
    another test is seen."""
    return f"interop{next(_namespaces)}"


def _peer(mode: str, url: str, ns: str, encrypted: bool) -> list:
    if not PEER:
        pytest.fail("CACHEKIT_GO_PEER is not set (run through tests/interop/go/run.py)")
    args = [PEER, mode, url, ns] + ([MASTER_KEY, TENANT] if encrypted else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"peer {mode}: {r.stderr}"
    return [json.loads(line) for line in r.stdout.splitlines()]


def _functions(prefix: str, url: str, ns: str, encrypted: bool, compute: bool):
    opts = dict(namespace=ns, backend=Backend(url), ttl=600)
    if encrypted:
        opts.update(encryption=True, master_key=MASTER_KEY, tenant=TENANT)

    def must_not_compute():
        raise AssertionError("computed: the entry written by Go was not read")

    @cache(interop=f"{prefix}_profile", **opts)
    def get_profile(uid):
        return profile(uid) if compute else must_not_compute()

    @cache(interop=f"{prefix}_search", **opts)
    def search(region, weights):
        return [region, str(weights["a"] + weights["b"])] if compute else must_not_compute()

    return get_profile, search


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
def test_go_writes_python_reads(backend_url, ns, encrypted):
    written = _peer("write", backend_url, ns, encrypted)
    assert written[0]["name"] == "user1"
    get_profile, search = _functions("go", backend_url, ns, encrypted, compute=False)
    assert get_profile(1) == profile(1)
    assert get_profile(2) == profile(2)
    assert search("eu", {"b": 2, "a": 1}) == ["eu", "3"]


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
def test_python_writes_go_reads(backend_url, ns, encrypted):
    get_profile, search = _functions("py", backend_url, ns, encrypted, compute=True)
    assert get_profile(1) == profile(1) and get_profile(2) == profile(2)
    assert search("eu", {"a": 1, "b": 2}) == ["eu", "3"]
    read = _peer("read", backend_url, ns, encrypted)
    for got, uid in zip(read[:2], (1, 2)):
        want = profile(uid)
        assert got == dict(want, raw=want["raw"].hex(), at=want["at"].isoformat().replace("+00:00", "Z"))
    assert read[2] == {"search": ["eu", "3"]}


def test_encrypted_entries_do_not_open_without_the_key(backend_url, ns):
    """A Go reader without the key does not get a Python entry sealed with it:
    with FailClosed it reports an error rather than reading it as plain."""
    get_profile, _ = _functions("py", backend_url, ns, True, compute=True)
    get_profile(1)
    r = subprocess.run([PEER, "read", backend_url, ns], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "peer:" in r.stderr
