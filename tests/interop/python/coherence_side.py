"""One long-lived process of the L1 coherence interop scenario (tests/interop/coherence_interop.py).

`python coherence_side.py <name>` under either package named `cachekit`, zero-config from
CACHEKIT_REDIS_URL (ours: the build tree's wrapper, `?l1_coherence=auto` on the URL; the
reference SDK with CACHEKIT_INVALIDATION_LISTENER_ENABLED set). Reads commands on stdin, one
a line: `call <n>` (prints the value get_user(n) returned and whether this process ran the
body), `invalidate <n>`; each answer is one JSON line on stdout.
"""
from __future__ import annotations

import json
import sys

from cachekit import cache

NAME = sys.argv[1]
RUNS = {"count": 0}


def get_user(user_id):
    RUNS["count"] += 1
    return {"writer": NAME, "run": RUNS["count"], "user": user_id}


# Zero-config on both sides (CACHEKIT_REDIS_URL, keys under t:default:): the reference runs its
# invalidation listener only on that tenant-scoped backend.
fn = cache(namespace="coh", ttl=300)(get_user)

for line in sys.stdin:
    op, arg = line.split()
    if op == "call":
        before = RUNS["count"]
        value = fn(int(arg))
        print(json.dumps({"value": value, "ran": RUNS["count"] != before}), flush=True)
    elif op == "invalidate":
        fn.invalidate_cache(int(arg))
        print(json.dumps({"ok": True}), flush=True)
