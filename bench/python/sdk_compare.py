#!/usr/bin/env python3
"""Side-by-side benchmarks against the reference Python SDK (issue 13): P1-P5 and D1.

    CACHEKIT_BUILD=<meson builddir> /usr/bin/python3 bench/python/sdk_compare.py [P1 ... P5 D1]

Ours runs under Debian's python3 with the build's wrapper; the reference `cachekit` from
PyPI (tests/interop/requirements-reference.txt) in a venv under <builddir>/bench/. One
JSON line per case, figure = ours, anchor = the reference, ratio = ours / reference.
P1-P5: two long-lived worker processes (sdk_worker.py) on one private redis-server; each
of `pairs` rounds times N calls on both (which goes first alternates); the round with the
median ratio is reported (per-call ns). cpu_ratio is the median of the rounds' ratios of
the workers' own CPU time (process_time), which a loaded machine moves far less than
the wall time: a guide there, the wall ratio stays the figure. D1: instructions per decode of the 23.5 KB dict's
verified MessagePack under `valgrind --tool=callgrind` ((Ir at 3,000 calls - Ir at 1,000)
/ 2,000, PYTHONHASHSEED=0, GC off): ours, the reference's decoder, msgpack.unpackb and
pickle.loads. Without PyPI (or valgrind, for D1) a case prints {"case", "skipped": why}.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
import pyvenv  # noqa: E402
import run  # noqa: E402

CASES = {
    "P1": (0.4, 20_000, "reference @cache(backend=None) hit, one int argument"),
    "P2": (0.8, 200, "reference hit with Redis configured and L1 on, 23.5 KB dict"),
    "P3": (0.8, 100, "reference Redis hit with L1 off, 23.5 KB dict"),
    "P4": (0.8, 50, "reference miss + store to Redis, 23.5 KB dict"),
    "P5": (0.8, 100, "reference encrypted Redis hit with L1 off, 23.5 KB dict"),
}
PAIRS = int(os.environ.get("CACHEKIT_BENCH_PAIRS", "15"))

# D1: one program per decoder; argv = decoder name, number of calls.
D1_PROGRAM = r"""
import gc, pickle, sys
sys.path.insert(0, {here!r})
from payload import users_payload
import msgpack
value = users_payload()
data = msgpack.packb(value, use_bin_type=True)
which, n = sys.argv[1], int(sys.argv[2])
if which == "ours":
    from cachekit import _codec, _core
    _core.msgpack_check(data)  # what the core verified before the wrapper decodes
    decode = lambda: _codec.decode_value(data, 0)
elif which == "reference":
    from cachekit.serializers.base import unpackb_bounded
    from cachekit.serializers.standard_serializer import StandardSerializer
    opts = StandardSerializer()._msgpack_unpack_opts
    decode = lambda: unpackb_bounded(data, **opts)
elif which == "pickle":
    p = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    decode = lambda: pickle.loads(p)
else:
    decode = lambda: msgpack.unpackb(data)
assert decode() == value
gc.disable()
for _ in range(n):
    decode()
"""


def reference_python(build: str) -> str | None:
    try:
        return pyvenv.ensure(os.path.join(build, "bench", "venv-reference"),
                             os.path.join(ROOT, "tests", "interop", "requirements-reference.txt"))
    except SystemExit as exc:  # pyvenv.skip: PyPI unreachable
        if exc.code == pyvenv.SKIP:
            return None
        raise


def ours_env(out: str) -> dict:
    return pyvenv.clean_env(PYTHONPATH=os.pathsep.join([out, run.WRAPPER]),
                            LD_LIBRARY_PATH=os.path.join(run.build_paths()[0], "src"))


class Worker:
    def __init__(self, python: str, side: str, case: str, url: str, env: dict) -> None:
        self.p = subprocess.Popen([python, os.path.join(HERE, "sdk_worker.py"), side, case, url], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.p.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{side} worker for {case} did not start")

    def time(self, n: int) -> tuple[int, int]:
        """(wall ns, the worker's CPU ns) of n calls."""
        self.p.stdin.write(f"{n}\n")
        self.p.stdin.flush()
        wall, cpu = self.p.stdout.readline().split()
        return int(wall), int(cpu)

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(10)


def p_case(case: str, ref_py: str, env: dict, url: str) -> None:
    target, n, desc = CASES[case]
    ours = Worker("/usr/bin/python3", "ours", case, url, env)
    ref = Worker(ref_py, "ref", case, url, pyvenv.clean_env())
    try:
        rows, cpu = [], []
        for i in range(PAIRS):
            if i % 2:
                r, o = ref.time(n), ours.time(n)
            else:
                o, r = ours.time(n), ref.time(n)
            rows.append((o[0] / r[0], o[0] / n, r[0] / n))
            cpu.append(o[1] / r[1] if r[1] else float("inf"))
        rows.sort()
        cpu.sort()
        ratio, fig, anc = rows[len(rows) // 2]
        run.emit(case, fig, anc, target, desc + f" (median of {PAIRS} alternating rounds of {n} calls)",
                 reference="cachekit==0.24.1", spread=[round(rows[0][0], 3), round(rows[-1][0], 3)],
                 cpu_ratio=round(cpu[len(cpu) // 2], 3), cpu_spread=[round(cpu[0], 3), round(cpu[-1], 3)])
    finally:
        ours.close()
        ref.close()


def callgrind_ir(python: str, env: dict, which: str, n: int) -> int:
    with tempfile.TemporaryDirectory(prefix="ck-d1-") as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(env, PYTHONHASHSEED="0")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, "-c",
                        D1_PROGRAM.format(here=HERE), which, str(n)], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for line in open(glob.glob(out + "*")[0]):
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("no callgrind summary")


def d1(ref_py: str, env: dict) -> None:
    import shutil
    if not shutil.which("valgrind"):
        print(json.dumps({"case": "D1", "skipped": "valgrind is not installed", "target": 0.85}))
        return
    per_call = {}
    for which, python, e in (("ours", "/usr/bin/python3", env), ("reference", ref_py, pyvenv.clean_env()),
                             ("msgpack", ref_py, pyvenv.clean_env()), ("pickle", "/usr/bin/python3", env)):
        per_call[which] = (callgrind_ir(python, e, which, 3000) - callgrind_ir(python, e, which, 1000)) / 2000
    print(json.dumps({"case": "D1", "figure": round(per_call["ours"]), "anchor": round(per_call["reference"]),
                      "unit": "instructions", "ratio": round(per_call["ours"] / per_call["reference"], 3),
                      "target": 0.85, "better": "lower",
                      "anchor_desc": "the reference's decoder (unpackb_bounded with its object_hook), instructions "
                                     "per decode of the 23.5 KB dict, callgrind",
                      "msgpack_unpackb": round(per_call["msgpack"]), "pickle_loads": round(per_call["pickle"]),
                      "reference": "cachekit==0.24.1"}), flush=True)


def main(argv: list[str]) -> int:
    wanted = argv or [*CASES, "D1"]
    for c in wanted:
        if c not in CASES and c != "D1":
            print(f"unknown case {c!r}; known: {', '.join([*CASES, 'D1'])}", file=sys.stderr)
            return 2
    run.setup_import()  # builds the wrapper's extensions against the bench build when needed
    build, out = run.build_paths()
    ref_py = reference_python(build)
    if ref_py is None:
        for c in wanted:
            print(json.dumps({"case": c, "skipped": "PyPI unreachable: cannot install the reference SDK"}))
        return 0
    env = ours_env(out)
    with run.bench_redis() as url:
        for c in wanted:
            if c == "D1":
                d1(ref_py, env)
            elif url is None:
                print(json.dumps({"case": c, "skipped": "no redis-server and no CACHEKIT_BENCH_REDIS_URL"}))
            else:
                p_case(c, ref_py, env, url)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
