"""A minimal RESP2 client for the interop runner: enough to list, read, corrupt and
flush keys of the test's own redis-server, byte for byte (no client library needed)."""
from __future__ import annotations

import socket


class Redis:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.rf = self.sock.makefile("rb")

    def __call__(self, *args: bytes | str | int):
        parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        self.sock.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        return self._read()

    def _read(self):
        line = self.rf.readline()[:-2]
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.rf.read(n + 2)[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise RuntimeError(f"unexpected reply {line!r}")

    def keys(self) -> list[bytes]:
        return sorted(self("KEYS", "*"))

    def close(self) -> None:
        self.sock.close()
