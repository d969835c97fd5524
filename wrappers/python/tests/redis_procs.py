"""Private redis-server and Redis Sentinel processes for the Python suite (conftest.py's
fixtures) and for other test scripts that cannot depend on pytest (tests/tool): free
loopback ports, no persistence, and a plain RESP2 client to check what landed where."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_binary() -> str:
    return shutil.which("redis-server") or "redis-server"


def _wait_pong(port: int, proc: subprocess.Popen, limit: float = 10) -> bool:
    """Until the server on `port` answers PING (False when `proc` exits or `limit` passes)."""
    deadline = time.time() + limit
    while time.time() < deadline and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return True
        except OSError:
            time.sleep(0.05)
    return False


def _read_reply(f):
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise RuntimeError(f"redis: truncated reply {line!r}")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest
    if kind == b"-":
        raise RuntimeError(rest.decode(errors="replace"))
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2]
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise RuntimeError(f"redis: unexpected reply {line!r}")


def redis_command(port: int, *args: bytes | str | int):
    """One command on a fresh plain connection to 127.0.0.1:port, its RESP2 reply (no client library)."""
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        with s.makefile("rb") as f:
            return _read_reply(f)


class RedisServer:
    def __init__(self, tmp: str, extra_args: tuple[str, ...] = ()) -> None:
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [_redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", tmp, *extra_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not _wait_pong(self.port, self.proc):
            self.stop()
            raise RuntimeError("redis-server did not start")

    def command(self, *args: bytes | str | int):
        """One command on a plain connection of its own (not through cachekit)."""
        return redis_command(self.port, *args)

    def command_calls(self, command: str) -> int:
        """How many times the server ran `command` (INFO commandstats; 0 if never since
        CONFIG RESETSTAT): how tests count round trips by what the server saw."""
        info = self.command("INFO", "commandstats")
        info = info.decode() if isinstance(info, bytes) else info
        field = f"cmdstat_{command.lower()}:calls="
        at = info.find(field)
        return 0 if at < 0 else int(info[at + len(field):].split(",", 1)[0])

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class RedisSentinel:
    """`redis-server <conf> --sentinel` on a free loopback port, monitoring master "m" at
    127.0.0.1:master_port with quorum 1 (as tests/redis/sentinel_harness.hpp starts one), with
    its own config file in `tmp` (Sentinel rewrites it); `extra`: more config lines (TLS)."""

    def __init__(self, tmp: str, master_port: int, extra: str = "") -> None:
        for _ in range(5):  # a lost port race: again
            self.port = _free_port()
            conf = os.path.join(tmp, f"sentinel-{self.port}.conf")
            with open(conf, "w") as f:
                f.write(f"port {self.port}\nbind 127.0.0.1\ndaemonize no\ndir {tmp}\n"
                        f"logfile {tmp}/sentinel-{self.port}.log\n{extra}"
                        f"sentinel monitor m 127.0.0.1 {master_port} 1\n"
                        "sentinel down-after-milliseconds m 1000\nsentinel failover-timeout m 3000\n")
            self.proc = subprocess.Popen([_redis_binary(), conf, "--sentinel"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if _wait_pong(self.port, self.proc):
                return
            self.stop()
        raise RuntimeError(f"redis-server --sentinel did not start (logs in {tmp})")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class SentinelSet:
    """One primary and one sentinel monitoring it as "m"."""

    def __init__(self, tmp: str) -> None:
        self.primary = RedisServer(tmp)
        try:
            self.sentinel = RedisSentinel(tmp, self.primary.port)
        except BaseException:
            self.primary.stop()
            raise

    def url(self, params: str = "") -> str:
        return f"redis-sentinel://127.0.0.1:{self.sentinel.port}/m" + (f"?{params}" if params else "")

    def stop(self) -> None:
        self.sentinel.stop()
        self.primary.stop()
