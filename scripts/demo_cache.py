#!/usr/bin/env python3
"""The demo, part 1: a slow function behind @cache on the embedded default L2
(the file backend: several processes on one machine share it), then the
stored entry as the C tool sees it."""

import json
import os
import subprocess
import sys
import time

import msgpack

from cachekit import cache

tool = sys.argv[1]
calls = []


@cache(ttl=300, namespace="demo")
def get_user(user_id: int) -> dict:
    calls.append(user_id)
    time.sleep(0.2)  # a slow database
    return {"id": user_id, "name": f"user-{user_id}", "roles": ["reader", "writer"], "active": True}


def timed(label, fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    print(f"{label:<34} {1e3 * (time.perf_counter() - start):8.3f} ms  -> {value}")
    return value


if len(sys.argv) > 2 and sys.argv[2] == "--second-process":
    timed("another process (L2 hit from files)", get_user, 42)
    print(f"   ... and there the function ran {len(calls)} times; cache_info(): l2_hits={get_user.cache_info().l2_hits}")
    sys.exit(0)

print("== @cache(ttl=300, namespace='demo') on the embedded default L2 (files) ==")
timed("first call (computes, stores L1+L2)", get_user, 42)
timed("second call (L1 hit)", get_user, 42)
get_user.invalidate_cache(42)
timed("after invalidate_cache(42)", get_user, 42)
print("cache_info():", get_user.cache_info())
print(f"the function ran {len(calls)} times")
subprocess.run([sys.executable, __file__, tool, "--second-process"], check=True)

# The same key computed by the C tool (the reference SDK's auto-mode key), and
# what was stored under it, as any other process reads it.
request = {"op": "key.auto", "namespace": "demo", "module": __name__, "qualname": "get_user",
           "args": msgpack.packb([[42], {}], use_bin_type=True).hex(), "integrity": True, "serializer": "s"}
reply = subprocess.run([tool, "codec"], input=json.dumps(request) + "\n", capture_output=True, text=True, check=True)
key = json.loads(reply.stdout)["key"]
url = "file://" + os.environ["CACHEKIT_FILE_CACHE_DIR"]
print(f"\n== cachekit inspect {key} --backend {url} ==")
subprocess.run([tool, "inspect", key, "--backend", url], check=True)
