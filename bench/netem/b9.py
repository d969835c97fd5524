#!/usr/bin/env python3
"""B9 (issue 18): synchronous Redis gets with 250 us added to every round trip, beside the
1/RTT ceiling, and the same through get_many of 100 keys.

    CACHEKIT_BENCH_BUILD=<builddir> python3 bench/netem/b9.py     (as root; bench/run B9 does this)

Makes a network namespace with a veth pair on a private /30 (10.253.N.0), puts a netem
qdisc delaying 250 us on the host end, starts redis-server inside the namespace bound to
its end's address only, runs b9_bench against it and removes everything at exit. Prints
two JSON lines (B9, B9-many): figure = gets (keys) per second, anchor = the ceiling
1/RTT (100/RTT for get_many) with RTT a raw hiredis GET on the same link in the same run.
Without root, `ip`, network namespaces or sch_netem each case prints {"case", "skipped"}.
CACHEKIT_B9_ALLOW_NO_NETEM=1 runs the link without the delay (to check this script on a
kernel without netem; the figures then say nothing about B9's target).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from reporting.groups import load_bench_run  # noqa: E402

DELAY_US = 250
TARGET = 0.9


def skip(reason: str) -> int:
    for case in ("B9", "B9-many"):
        print(json.dumps({"case": case, "skipped": reason, "target": TARGET, "better": "higher"}), flush=True)
    return 0


def sh(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True)


class Link:
    """The namespace, the veth pair and the netem qdisc; close() removes them."""

    def __init__(self) -> None:
        n = os.getpid() % 250 + 1
        self.ns, self.host_if, self.ns_if = f"ckb9-{os.getpid()}", f"ckb9h{n}", f"ckb9n{n}"
        self.host_ip, self.ns_ip = f"10.253.{n}.1", f"10.253.{n}.2"
        self.netem = False

    def open(self) -> str | None:
        """None when the link is up, else why it cannot be made."""
        steps = [("ip", "netns", "add", self.ns),
                 ("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if),
                 ("ip", "link", "set", self.ns_if, "netns", self.ns),
                 ("ip", "addr", "add", self.host_ip + "/30", "dev", self.host_if),
                 ("ip", "link", "set", self.host_if, "up"),
                 ("ip", "netns", "exec", self.ns, "ip", "addr", "add", self.ns_ip + "/30", "dev", self.ns_if),
                 ("ip", "netns", "exec", self.ns, "ip", "link", "set", self.ns_if, "up")]
        for step in steps:
            r = sh(*step)
            if r.returncode != 0:
                return f"`{' '.join(step)}` failed: {r.stderr.strip()}"
        r = sh("tc", "qdisc", "add", "dev", self.host_if, "root", "netem", "delay", f"{DELAY_US}us")
        if r.returncode != 0:
            if os.environ.get("CACHEKIT_B9_ALLOW_NO_NETEM") != "1":
                return f"netem is not available (kernel module sch_netem): tc says {r.stderr.strip()!r}"
        else:
            self.netem = True
        return None

    def close(self) -> None:
        sh("ip", "link", "del", self.host_if)  # removes both ends
        sh("ip", "netns", "del", self.ns)


def start_redis(link: Link, tmp: str) -> subprocess.Popen:
    server = shutil.which("redis-server")
    proc = subprocess.Popen(["ip", "netns", "exec", link.ns, server, "--bind", link.ns_ip, "--port", "6379",
                             "--save", "", "--appendonly", "no", "--dir", tmp,
                             "--protected-mode", "no"],  # reachable only over the private veth
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection((link.ns_ip, 6379), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.terminate()
    raise SystemExit("b9: redis-server in the namespace did not start")


def measure(build: str, link: Link) -> None:
    run = load_bench_run()
    os.environ["CACHEKIT_B9_REDIS"] = f"{link.ns_ip}:6379"
    entries = run.run_binary(build, "netem/b9_bench", ["B9/rtt", "B9/get", "B9/get_many"])
    rtt = run.best(entries, "B9/rtt", "real_time", "us", "lower")
    get = run.best(entries, "B9/get", "real_time", "us", "lower")
    many = run.best(entries, "B9/get_many", "items_per_second", "keys/s", "higher")
    extra = {"rtt_us": round(rtt, 1), "netem_delay_us": DELAY_US if link.netem else 0, "better": "higher",
             "target": TARGET}
    print(json.dumps({"case": "B9", "figure": round(1e6 / get, 1), "anchor": round(1e6 / rtt, 1), "unit": "gets/s",
                      "ratio": round(rtt / get, 3), "anchor_desc": "the ceiling 1/RTT, RTT = a raw hiredis GET of the "
                      "same 100 B key on the same netem link in the same run", **extra}), flush=True)
    print(json.dumps({"case": "B9-many", "figure": round(many, 1), "anchor": round(100e6 / rtt, 1), "unit": "keys/s",
                      "ratio": round(many * rtt / 100e6, 3), "anchor_desc": "the ceiling 100 keys per RTT (one MGET of "
                      "100 keys of 100 B per round trip)", **extra}), flush=True)


def main() -> int:
    if os.geteuid() != 0:
        return skip("needs root (ip netns, tc)")
    for tool in ("ip", "tc", "redis-server"):
        if not shutil.which(tool):
            return skip(f"{tool} is not installed")
    build = os.environ.get("CACHEKIT_BENCH_BUILD", os.path.join(ROOT, "build-bench"))
    if not os.path.exists(os.path.join(build, "bench", "netem", "b9_bench")):
        return skip("b9_bench is not built (hiredis missing?)")
    link = Link()
    tmp = tempfile.mkdtemp(prefix="ck-b9-")
    proc = None
    try:
        reason = link.open()
        if reason:
            return skip(reason)
        proc = start_redis(link, tmp)
        measure(build, link)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(5)
        link.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
