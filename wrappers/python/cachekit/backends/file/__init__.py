"""cachekit.backends.file (the reference's names): FileBackend and FileBackendConfig, on
the core's file backend (docs/l2.md; the same limits as the reference's defaults)."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from cachekit._urlbackend import CoreUrlBackend, refuse_fields


def _default_dir() -> Path:
    env = os.environ.get("CACHEKIT_FILE_CACHE_DIR")
    return Path(env) if env else Path(tempfile.gettempdir()) / "cachekit"


@dataclass
class FileBackendConfig:
    """The reference's fields and defaults, which are also the core file backend's
    (1 GiB, 10,000 entries, 100 MiB a value, files 0600 in a 0700 directory).
    cache_dir is the object's own; another limit or mode is refused when a FileBackend is
    built from it (the decorator's core opens the file backend with its defaults)."""

    cache_dir: Union[Path, str] = field(default_factory=_default_dir)
    max_size_mb: int = 1024
    max_value_mb: int = 100
    max_entry_count: int = 10_000
    lock_timeout_seconds: float = 5.0
    permissions: int = 0o600
    dir_permissions: int = 0o700


_UNHONOURED = {"max_size_mb": 1024, "max_value_mb": 100, "max_entry_count": 10_000, "permissions": 0o600,
               "dir_permissions": 0o700}


class FileBackend(CoreUrlBackend):
    """A directory L2: FileBackend(FileBackendConfig(cache_dir=...)) (or FileBackend() for
    the default directory). The core's file backend writes the reference FileBackend's
    format (docs/l2.md), so both read one directory."""

    def __init__(self, config: Optional[FileBackendConfig] = None) -> None:
        config = config if config is not None else FileBackendConfig()
        refuse_fields(config, _UNHONOURED, "the decorator opens libcachekit's file backend with its own limits")
        self.config = config
        path = os.path.abspath(os.path.expanduser(os.fspath(config.cache_dir)))
        os.makedirs(path, mode=0o700, exist_ok=True)
        super().__init__("file://" + path)

    def _kind(self) -> str:
        return "file"


__all__ = ["FileBackend", "FileBackendConfig"]
