"""set_default_backend(): the process-wide backend of every decorator given no
backend=, as the reference's cachekit.config.set_default_backend. Consulted when
a function is decorated (to check the configuration) and again at its first
call, which decides for the function's life: a default set after decoration
but before the first call applies; one set after the first call does not."""
from __future__ import annotations

import os
import threading
from typing import Any

_lock = threading.Lock()
_default: Any = None


def set_default_backend(backend: Any) -> None:
    """The backend of decorators without backend=: a URL, a directory, a
    cachekit.Backend or an object with get/set/delete (None clears it; it never
    means L1-only here: say backend=None on the decorator for that)."""
    from cachekit._core import Backend
    from cachekit._urlbackend import CoreUrlBackend
    from cachekit._userbackend import is_user_backend

    if backend is not None and not (isinstance(backend, (str, os.PathLike, Backend, CoreUrlBackend))
                                    or is_user_backend(backend)):
        raise TypeError("set_default_backend takes a URL, a directory, a cachekit.Backend, an object with "
                        f"get/set/delete, or None; got {type(backend).__name__}")
    if isinstance(backend, str):
        from cachekit._config import _backend_url
        _backend_url(backend)  # the refusals of backend= (an empty string, a malformed URL), with their messages
    global _default
    with _lock:
        _default = backend


def get_default_backend() -> Any:
    with _lock:
        return _default
