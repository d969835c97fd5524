"""The reference SDK's documented usages (cachekit-py 0.24.1: its README and the
decorator's docstrings), as a program checked by the meson suite python-typing
with mypy --strict and pyright (tests/interop/python_typing.py); never run.

Each correct call below must type-check. The lines marked `# type: ignore[...]`
are wrong calls that must stay errors: mypy --strict reports an ignore that is
no longer needed, so a type that grows too loose (a method that takes anything)
fails the suite too."""
from __future__ import annotations

import asyncio
from typing import Any

from cachekit import CacheInfo, CircuitBreakerConfig, DecoratorConfig, InvalidationOutcome, cache
from cachekit.backends import BaseBackend, RedisBackend
from cachekit.backends.file import FileBackend, FileBackendConfig
from cachekit.config import L1CacheConfig
from cachekit.key_generator import CacheKeyGenerator


# -- plain functions, every decorator form -------------------------------------------

@cache
def expensive_function() -> dict[str, int]:
    return {"a": 1}


@cache()
def get_score(x: int) -> int:
    return x ** 2


@cache(ttl=1800, namespace="custom", backend=None)
def custom_function() -> dict[str, str]:
    return {"result": "value"}


@cache.minimal
def minimal_bare(user_id: int) -> str:
    return str(user_id)


@cache.production(ttl=600)
def production(user_id: int, *, verbose: bool = False) -> list[int]:
    return [user_id]


@cache.secure(master_key="a" * 64, backend="memory://")
def secure(user_id: int) -> bytes:
    return b""


@cache.dev
def dev(x: str) -> str:
    return x


@cache.test(ttl=5)
def in_tests(x: str) -> str:
    return x


@cache.local(ttl=300, max_entries=256)
def local(x: int) -> float:
    return x / 2


@cache(key=lambda user_id: f"user:{user_id}", backend=None)
def with_key(user_id: int) -> int:
    return user_id


def untyped(x, y=1):  # type: ignore[no-untyped-def]  # an application's untyped code
    return x


untyped_cached = cache(untyped)


@cache(backend=None)
def takes_anything(value: Any) -> int:
    return 0


# -- async ----------------------------------------------------------------------------

@cache(ttl=60)
async def fetch_user(user_id: int) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"id": user_id}


@cache.production
async def fetch_many(*ids: int) -> list[int]:
    return list(ids)


# -- methods ----------------------------------------------------------------------------

class Repo:
    @cache(ttl=60, backend=None)
    def get(self, item_id: int) -> str:
        return str(item_id)

    @classmethod
    @cache(ttl=60, backend=None)
    def cm(cls, item_id: int) -> str:
        return str(item_id)

    @classmethod
    @cache
    def cm_bare(cls, name: str = "x") -> str:
        return name

    @staticmethod
    @cache(backend=None)
    def sm(item_id: int) -> int:
        return item_id

    @cache.local(ttl=5)
    async def aget(self, item_id: int) -> int:
        return item_id


def use_functions() -> None:
    a: dict[str, int] = expensive_function()
    b: int = get_score(2)
    info: CacheInfo = get_score.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    assert info.l1_hits + info.l2_hits == info.hits
    maxsize: int | None = info.maxsize
    c: dict[str, str] = custom_function()
    d: str = minimal_bare(1)
    e: list[int] = production(1, verbose=True)
    f: bytes = secure(1)
    g: str = dev("x") + in_tests("y")
    h: float = local(1)
    i: int = with_key(1)
    j: Any = untyped_cached(1, y=2)
    k: int = takes_anything(object())
    get_score.cache_clear()
    get_score.invalidate_cache(2)
    get_score.invalidate_cache()
    original: int = get_score.__wrapped__(3)
    print(a, b, maxsize, c, d, e, f, g, h, i, j, k, original)


def use_methods() -> None:
    repo = Repo()
    a: str = repo.get(1)
    b: str = Repo.get(repo, 1)  # read from the class: unbound, as a function
    c: str = Repo.cm(1)
    d: str = repo.cm(2)
    e: str = Repo.cm_bare() + Repo.cm_bare(name="y")
    # (Read from the class: mypy 1.13 binds a @staticmethod's callable object read from an instance.)
    f: int = Repo.sm(1)
    repo.get.invalidate_cache(1)
    repo.get.cache_clear()
    Repo.cm.invalidate_cache(1)
    hits: int = Repo.cm.cache_info().hits + Repo.get.cache_info().hits
    print(a, b, c, d, e, f, hits)


async def use_async() -> None:
    user: dict[str, Any] = await fetch_user(1)
    many: list[int] = await fetch_many(1, 2, 3)
    await fetch_user.ainvalidate_cache(1)
    await fetch_user.invalidate_cache(1)
    await fetch_user.ainvalidate_cache()
    await get_score.ainvalidate_cache(2)  # sync functions have it too
    outcome: InvalidationOutcome | None = await fetch_user.ainvalidate_cache(1)
    print(outcome is InvalidationOutcome.SUCCEEDED)
    n: int = await Repo().aget(1)
    await Repo().aget.ainvalidate_cache(1)
    await Repo().get.ainvalidate_cache(1)
    await Repo.cm.ainvalidate_cache(1)
    print(user, many, n)


# -- the reference's modules -----------------------------------------------------------

@cache(config=DecoratorConfig(ttl=60, namespace="cfg", backend=None, l1=L1CacheConfig(max_size_mb=8)))
def configured(x: int) -> int:
    return x


@cache(ttl=60, backend=None, circuit_breaker=CircuitBreakerConfig(failure_threshold=10))
def guarded(x: int) -> int:
    return x


def use_reference_modules(directory: str) -> None:
    files: BaseBackend = FileBackend(FileBackendConfig(cache_dir=directory))
    redis: BaseBackend = RedisBackend("redis://127.0.0.1:6379")
    on_files = cache(ttl=60, backend=files)(get_score.__wrapped__)
    key: str = CacheKeyGenerator().generate_key(get_score.__wrapped__, (1,), {}, namespace="n")
    print(configured(1) + guarded(2) + on_files(3), redis, key)


def wrong_calls_stay_errors() -> None:
    repo = Repo()
    repo.get("1")  # type: ignore[arg-type]
    repo.get(1, 2)  # type: ignore[call-arg]
    Repo.cm("1")  # type: ignore[arg-type]
    Repo.sm()  # type: ignore[call-arg]
    s: int = repo.get(1)  # type: ignore[assignment]
    get_score("2")  # type: ignore[arg-type]
    production(1, verbose="yes")  # type: ignore[arg-type]
    t: str = asyncio.run(fetch_user(1))  # type: ignore[assignment]
    get_score.cache_size()  # type: ignore[attr-defined]
    print(s, t)
