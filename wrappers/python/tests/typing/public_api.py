"""A program using the public API, checked with `mypy --strict` by the meson
suite python-typing (tests/interop/python_typing.py); never run. A type error in
the public API (or a change that loses the decorated function's signature)
fails that suite."""
from __future__ import annotations

import asyncio

import cachekit
from cachekit import (Backend, BackendError, CacheInfo, CacheKitError, ConfigurationError, CoreCache, cache,
                      decode_interop_value, encode_interop_value, generate_interop_key, get_default_backend,
                      set_default_backend)


@cache(ttl=60, namespace="users")
def get_user(user_id: int, verbose: bool = False) -> dict[str, int]:
    return {"id": user_id}


@cache
def bare(x: str) -> str:
    return x


@cache.production(ttl=10)
async def load(x: int) -> list[int]:
    return [x]


@cache.local(ttl=5)
def local(x: int) -> int:
    return x


def use() -> None:
    user: dict[str, int] = get_user(1, verbose=True)
    s: str = bare("a")
    n: int = local(1)
    info: CacheInfo = get_user.cache_info()
    hits: int = info.hits
    get_user.cache_clear()
    get_user.invalidate_cache(1)
    original = get_user.__wrapped__
    again: dict[str, int] = original(2)

    async def main() -> list[int]:
        await load.invalidate_cache(1)
        return await load(3)

    values: list[int] = asyncio.run(main())
    key: str = generate_interop_key("ns", "op", [1])
    packed: bytes = encode_interop_value({"a": 1})
    decoded = decode_interop_value(packed)
    set_default_backend(Backend("memory://"))
    set_default_backend(None)
    default = get_default_backend()
    version: str = cachekit.__version__
    errors: tuple[type[CacheKitError], ...] = (ConfigurationError, BackendError)
    core = CoreCache(backend_url="memory://")
    core.close()
    print(user, s, n, hits, again, values, key, decoded, default, version, errors)
