"""A bare @cache with nothing configured (no backend=, no set_default_backend, no
CACHEKIT_REDIS_URL / CACHEKIT_FILE_CACHE_DIR / REDIS_URL): values stay in the
process, as in cachekit-py 0.24.1 (its zero-config L1-only mode), lru_cache and
cachetools, chosen at the first call. Persistence across runs is asked for by
naming the file backend (issue 28)."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest

from cachekit import Backend, cache, set_default_backend

SCRIPT = """
from cachekit import cache

@cache(ttl=3600)
def answer(x):
    return {value!r}

print(answer(1), answer(1), answer._cachekit.object_mode)
"""


def run_script(tmp_path, value, **env_extra):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(SCRIPT.format(value=value)))
    env = {k: v for k, v in os.environ.items()
           if k not in ("CACHEKIT_REDIS_URL", "REDIS_URL", "CACHEKIT_FILE_CACHE_DIR")}
    # The embedded file backend's per-user directory, were it used, lands here.
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), TMPDIR=str(tmp_path), **env_extra)
    r = subprocess.run([sys.executable, str(path)], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_a_changed_function_returns_its_new_value_on_the_next_run(tmp_path):
    assert run_script(tmp_path, "old") == ["old", "old", "True"]
    assert run_script(tmp_path, "new") == ["new", "new", "True"]
    assert not (tmp_path / "xdg" / "cachekit").exists()  # nothing was stored on disk


def test_naming_the_file_backend_persists_across_runs(tmp_path):
    d = str(tmp_path / "store")
    assert run_script(tmp_path, "old", CACHEKIT_FILE_CACHE_DIR=d) == ["old", "old", "False"]
    assert run_script(tmp_path, "new", CACHEKIT_FILE_CACHE_DIR=d) == ["old", "old", "False"]


def counted(**kw):
    calls = []

    @cache(**kw)
    def f(x):
        calls.append(x)
        return [x]

    return f, calls


def test_bare_cache_keeps_the_very_objects_in_process():
    f, calls = counted(ttl=60)
    a = f(1)
    assert f(1) is a and calls == [1]  # object mode: the same object, as backend=None
    assert f._cachekit.object_mode and f._cachekit.core_spec is None
    info = f.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    f.invalidate_cache(1)
    f(1)
    assert calls == [1, 1]


def test_decorating_makes_no_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    counted(ttl=60, l1_max_size_mb=3.25)  # a configuration not checked before in this process
    assert list(tmp_path.iterdir()) == []


def test_invalidation_and_info_before_the_first_call_settle_it():
    f, calls = counted(ttl=60)
    f.invalidate_cache(1)
    assert f._cachekit.object_mode
    g, _ = counted(ttl=60)
    assert g.cache_info().misses == 0 and g._cachekit.object_mode


def test_async_bare_cache_is_in_process_too():
    calls = []

    @cache
    async def f(x):
        calls.append(x)
        return [x]

    async def main():
        a = await f(1)
        assert await f(1) is a
        await f.ainvalidate_cache(1)
        await f(1)

    asyncio.run(main())
    assert calls == [1, 1] and f._cachekit.object_mode


def test_a_backend_configured_before_the_first_call_is_used(tmp_path, monkeypatch):
    f, calls = counted(ttl=60)
    monkeypatch.setenv("CACHEKIT_FILE_CACHE_DIR", str(tmp_path))
    f(1), f(1)
    assert not f._cachekit.object_mode and calls == [1]
    assert any(tmp_path.iterdir())  # stored in the named directory

    g, _ = counted(ttl=60)
    monkeypatch.delenv("CACHEKIT_FILE_CACHE_DIR")
    b = Backend("memory://")
    set_default_backend(b)
    try:
        g(1)
        assert not g._cachekit.object_mode
        assert b.get(g._cachekit.cached_key((1,), {})) is not None
    finally:
        set_default_backend(None)


def test_a_backend_set_after_the_first_call_does_not_move_it(tmp_path, monkeypatch):
    f, calls = counted(ttl=60)
    f(1)
    monkeypatch.setenv("CACHEKIT_FILE_CACHE_DIR", str(tmp_path))
    f(1)
    assert f._cachekit.object_mode and calls == [1] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kw", [dict(backend="memory://"), dict(backend=None)])
def test_a_named_backend_is_no_zero_config(kw):
    f, _ = counted(ttl=60, **kw)
    assert f._cachekit.zero_config is False
