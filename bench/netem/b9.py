#!/usr/bin/env python3
"""B9 (issue 18): synchronous Redis gets with 250 us added to every round trip, beside the
1/RTT ceiling, and the same through get_many of 100 keys.

    CACHEKIT_BENCH_BUILD=<builddir> python3 bench/netem/b9.py     (bench/run B9 does this)

The link, netem where the kernel has it, else a userspace relay:
- netem (as root): a network namespace with a veth pair on a private /30 (10.253.N.0), a
  netem qdisc delaying 250 us on the host end, redis-server inside the namespace bound to
  its end's address only; everything is removed at exit.
- userspace relay: bench/netem/delay_relay on loopback between b9_bench and a private
  redis-server, holding every chunk 125 us in each direction (the kernel's loopback hop
  and the relay's own cost come on top, in the anchor as in the figures); its threads run
  SCHED_FIFO when allowed ("relay_sched": fifo or other).
CACHEKIT_B9_LINK=netem or =relay uses only that one. Prints two JSON lines (B9, B9-many)
with "link" saying which: figure = gets (keys) per second, anchor = the ceiling 1/RTT
(100/RTT for get_many) with RTT a raw hiredis GET across the same link in the same run.
When no link can be made each case prints {"case", "skipped"} with the reasons.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "python"))
from reporting.groups import load_bench_run  # noqa: E402
from run import bench_redis  # noqa: E402  (bench/python/run.py: a private redis-server)

DELAY_US = 250  # added to every round trip: netem on one end, or the relay's 125 us each way
TARGET = 0.9


def skip(reason: str) -> int:
    for case in ("B9", "B9-many"):
        print(json.dumps({"case": case, "skipped": reason, "target": TARGET, "better": "higher"}), flush=True)
    return 0


def sh(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True)


class NetemLink:
    """The namespace, the veth pair and the netem qdisc; close() removes them."""

    def __init__(self) -> None:
        n = os.getpid() % 250 + 1
        self.ns, self.host_if, self.ns_if = f"ckb9-{os.getpid()}", f"ckb9h{n}", f"ckb9n{n}"
        self.host_ip, self.ns_ip = f"10.253.{n}.1", f"10.253.{n}.2"

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
            return f"netem is not available (kernel module sch_netem): tc says {r.stderr.strip()!r}"
        return None

    def close(self) -> None:
        sh("ip", "link", "del", self.host_if)  # removes both ends
        sh("ip", "netns", "del", self.ns)


def start_redis(link: NetemLink, tmp: str) -> subprocess.Popen:
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


def mid(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def emit(case: str, rounds: list[dict], call: str, keys: int, unit: str, desc: str, common: dict) -> None:
    """One case from B9/round's repetitions: per repetition, the ratio of the mean raw GET to
    the mean call of the same loop (keys per call against keys per RTT); the repetition with
    the median ratio gives the figure and the anchor, the others the range."""
    ratios = [e["rtt_us"] / e[call] for e in rounds]
    r = sorted(zip(ratios, rounds), key=lambda p: p[0])[len(rounds) // 2][1]
    p50 = [e["rtt_p50_us"] / e[call.replace("_us", "_p50_us")] for e in rounds]
    print(json.dumps({"case": case, "figure": round(keys * 1e6 / r[call], 1), "anchor": round(keys * 1e6 / r["rtt_us"], 1),
                      "unit": unit, "ratio": round(r["rtt_us"] / r[call], 3),
                      "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
                      "rtt_us": round(r["rtt_us"], 1), "call_us": round(r[call], 1),
                      "p50_ratio": round(mid(p50), 3), "anchor_desc": desc, **common}), flush=True)


def measure(build: str, where: str, link: str, **about_link) -> None:
    """Runs b9_bench against host:port `where` (reached across `link`) and prints the cases."""
    run = load_bench_run()
    os.environ["CACHEKIT_B9_REDIS"] = where
    os.environ.setdefault("CACHEKIT_BENCH_MIN_TIME", "1")  # a thousand-odd rounds per repetition
    entries = run.run_binary(build, "netem/b9_bench", ["B9/round"])
    rounds = [e for e in entries if e.get("run_type", "iteration") == "iteration" and not e.get("error_occurred")
              and e["name"].split("/real_time")[0] == "B9/round"]
    if not rounds:
        raise SystemExit("b9: b9_bench gave no B9/round result: " +
                         "; ".join(e.get("error_message", "") for e in entries))
    common = {"link": link, **about_link, "added_rtt_us": DELAY_US, "repetitions": len(rounds),
              "better": "higher", "target": TARGET}
    emit("B9", rounds, "get_us", 1, "gets/s", "the ceiling 1/RTT, RTT = a raw hiredis GET of the same 100 B key "
         f"across the same {link} link, alternating with the gets in one loop", common)
    emit("B9-many", rounds, "many_us", 100, "keys/s", "the ceiling 100 keys per RTT (RTT as in B9; one MGET of 100 "
         f"keys of 100 B per round trip) across the same {link} link, alternating in one loop", common)


def run_netem(build: str) -> str | None:
    """B9 across netem; the reason when the link cannot be made (nothing measured then)."""
    if os.geteuid() != 0:
        return "netem needs root (ip netns, tc)"
    for tool in ("ip", "tc", "redis-server"):
        if not shutil.which(tool):
            return f"netem needs {tool}, which is not installed"
    link = NetemLink()
    tmp = tempfile.mkdtemp(prefix="ck-b9-")
    proc = None
    try:
        reason = link.open()
        if reason:
            return reason
        proc = start_redis(link, tmp)
        measure(build, f"{link.ns_ip}:6379", "netem")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(5)
        link.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return None


@contextlib.contextmanager
def delay_relay(binary: str, target: str):
    """delay_relay on a free loopback port in front of `target`, its threads SCHED_FIFO when
    allowed; yields its host:port and its scheduling policy (fifo or other)."""
    proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--target", target, "--delay-us",
                             str(DELAY_US // 2), "--realtime"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().split()  # "listening PORT sched=POLICY", or nothing if it failed
        if len(line) != 3 or line[0] != "listening":
            raise SystemExit(f"b9: delay_relay did not start (exit {proc.poll()})")
        yield f"127.0.0.1:{line[1]}", line[2].removeprefix("sched=")
    finally:
        proc.terminate()
        proc.wait(5)


def run_relay(build: str) -> str | None:
    """B9 across the userspace relay; the reason when it cannot run."""
    relay = os.path.join(build, "bench", "netem", "delay_relay")
    if not os.path.exists(relay):
        return "bench/netem/delay_relay is not built"
    with bench_redis() as url:
        if url is None:
            return "redis-server is not installed"
        u = urllib.parse.urlsplit(url)
        with delay_relay(relay, f"{u.hostname}:{u.port or 6379}") as (where, sched):
            measure(build, where, "userspace relay", relay_sched=sched)
    return None


def main() -> int:
    build = os.environ.get("CACHEKIT_BENCH_BUILD", os.path.join(ROOT, "build-bench"))
    if not os.path.exists(os.path.join(build, "bench", "netem", "b9_bench")):
        return skip("b9_bench is not built (hiredis or Google Benchmark missing?)")
    wanted = os.environ.get("CACHEKIT_B9_LINK", "")
    links = {"netem": run_netem, "relay": run_relay}
    if wanted and wanted not in links:
        raise SystemExit(f"b9: CACHEKIT_B9_LINK={wanted!r}: use netem or relay")
    reasons = []
    for name, runner in links.items():
        if wanted in ("", name):
            reason = runner(build)
            if reason is None:
                return 0
            reasons.append(reason)
    return skip("; ".join(reasons))


if __name__ == "__main__":
    sys.exit(main())
