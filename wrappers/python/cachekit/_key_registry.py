"""The reference SDK's server-side key registry for a decorated function
(docs/redis.md "Key registry"; the core keeps it). The reference keeps one
only on its zero-configuration Redis provider's backend (keys under
t:{tenant}:), in auto mode without key=: so does this wrapper, so that both
SDKs leave the same Redis keys. There, every L2 write lists its key in
{prefix}ck:reg:{namespace}:{BLAKE3-64 of module.qualname}, and a
whole-function invalidation by any process (of either SDK) drains it.
Elsewhere the function keeps its per-process list of written keys."""
from __future__ import annotations

import logging
from typing import Any

from cachekit import _codec
from cachekit._core import BackendError

log = logging.getLogger("cachekit")


def function_id(state: Any) -> bytes:
    """The identity the reference hashes: "{module}.{qualname}"."""
    return f"{state.module}.{state.qualname}".encode("utf-8")


def declare(state: Any, core: Any) -> bool:
    """Declare the function on its core; True when its keys are listed in a registry."""
    spec = state.core_spec
    if spec is None or not spec[1].get("key_prefix") or state.key_fn is not None or state.interop_op is not None:
        return False
    key = _codec.key_auto(state.namespace, state.module, state.qualname, _codec.pack_auto_args((), {}),
                          state.integrity, state.serializer_id)
    cut = key.rfind(":args:")
    if cut < 0 or len(key) - cut - 6 < 64:  # the shortened long form: no head covers its keys
        return False
    return core.track_function(state.ns_bytes, function_id(state), key[:cut + 6].encode("utf-8"))


def drain(state: Any, core: Any) -> bool:
    """Invalidate every entry of the function that any process wrote; False when
    the drain failed (logged: the entries stay until their TTL or the next drain)."""
    try:
        core.invalidate_function(state.ns_bytes, function_id(state))
        return True
    except BackendError as exc:
        log.warning("cachekit: %s.%s: the key registry drain failed (%s): the entries stay until their TTL",
                    state.module, state.qualname, exc)
        return False
