#!/usr/bin/env python3
"""The demo's Python side: get_user(id) behind @cache in interop mode (namespace
"demo", operation "get_user"), so the C, Rust and Go sides of demo/ compute the
same keys and read the same entries.

  get_user.py ID...   calls get_user(ID) for every ID, then once more each;
                      one line per call: "python ID SOURCE MILLISECONDS"

The L2 comes from the environment (REDIS_URL, else CACHEKIT_FILE_CACHE_DIR)."""

import sys
import time

from cachekit import cache

loads = 0


@cache(namespace="demo", interop="get_user", ttl=300)
def get_user(user_id: int) -> dict:
    global loads
    loads += 1
    time.sleep(0.05)  # the "database"
    return {"id": user_id, "name": f"user-{user_id}"}


def call(user_id: int) -> None:
    before_loads, before = loads, get_user.cache_info()
    start = time.perf_counter()
    value = get_user(user_id)
    took = 1e3 * (time.perf_counter() - start)
    after = get_user.cache_info()
    if value != {"id": user_id, "name": f"user-{user_id}"}:
        sys.exit(f"get_user(python): unexpected value {value!r}")
    if loads > before_loads:
        source = "miss"
    elif after.l2_hits > before.l2_hits:
        source = "l2"
    elif after.l1_hits > before.l1_hits:
        source = "l1"
    else:
        source = "none"
    print(f"python {user_id} {source} {took:.4f}", flush=True)


ids = [int(a) for a in sys.argv[1:]]
if not ids:
    sys.exit("usage: get_user.py ID...")
for _ in range(2):
    for user_id in ids:
        call(user_id)
