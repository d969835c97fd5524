"""Multi-tenant encryption (the reference's tenant_extractor): each call's
tenant comes from the extractor (an object with .extract(args, kwargs), or a
callable (args, kwargs)), must be a UUID, and selects the keys entries are
sealed with. The core derives keys per cache handle, so each tenant gets its
own _Cached (and core) built on that tenant's first call; the function's own
_Cached keeps the counters, which every tenant's state adds to. A call whose
tenant cannot be extracted runs uncached (never under a shared key), as in
the reference."""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Optional

from cachekit._options import tenant_of_call

log = logging.getLogger("cachekit")

_MAX_TENANTS = 10_000  # beyond this many tenants in one process, new ones run uncached


class TenantRouter:
    def __init__(self, base: Any, make_state: Callable[[str], Any], extractor: Any) -> None:
        self.base = base
        self.make_state = make_state
        self.extractor = extractor
        self.states: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.warned = False

    def install(self) -> None:
        """The function's own state dispatches its calls and invalidations here."""
        b = self.base
        b.call, b.acall, b.invalidate, b.invalidate_all = self.call, self.acall, self.invalidate, self.invalidate_all

    def state_for(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[Any]:
        try:
            tenant = tenant_of_call(self.extractor, args, kwargs)
        except Exception as exc:
            self._warn(f"its tenant could not be extracted ({type(exc).__name__}: {exc})")
            return None
        st = self.states.get(tenant)
        if st is not None:
            return st
        with self.lock:
            st = self.states.get(tenant)
            if st is None:
                if len(self.states) >= _MAX_TENANTS:
                    self._warn(f"more than {_MAX_TENANTS} tenants")
                    return None
                st = self.make_state(tenant)
                st.count, st.count_miss, st.count_waited = self.base.count, self.base.count_miss, self.base.count_waited
                self.states[tenant] = st
        return st

    def _warn(self, why: str) -> None:
        if not self.warned:
            self.warned = True
            log.warning("cachekit: %s.%s runs uncached: %s", self.base.module, self.base.qualname, why)

    @staticmethod
    def _plain(kwargs: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in kwargs.items() if k != "_bypass_cache"}

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        st = self.state_for(args, self._plain(kwargs))
        if st is None:
            return self.base.fn(*args, **self._plain(kwargs))
        return type(st).call(st, args, kwargs)

    async def acall(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        st = self.state_for(args, self._plain(kwargs))
        if st is None:
            return await self.base.fn(*args, **self._plain(kwargs))
        return await type(st).acall(st, args, kwargs)

    def invalidate(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The tenant's InvalidationOutcome; FAILED when no tenant can be extracted (its entry
        cannot be addressed); None for the whole function."""
        if not args and not kwargs and self.base._has_params():
            self.invalidate_all()
            return None
        st = self.state_for(args, kwargs)
        if st is None:
            from cachekit._outcome import InvalidationOutcome
            return InvalidationOutcome.FAILED
        return type(st).invalidate(st, args, kwargs)

    def invalidate_all(self) -> None:
        with self.lock:
            states = list(self.states.values())
        for st in states:
            type(st).invalidate_all(st)
