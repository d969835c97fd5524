"""The demo's table (per language: misses, L2 hits, L1 hits with median
latencies) and its check that every language after the first read the first
one's entries."""
from __future__ import annotations

SOURCES = ("miss", "l2", "l1", "waited", "none")


def _cell(times: list[float]) -> str:
    if not times:
        return "-"
    median = sorted(times)[len(times) // 2]
    return f"{len(times)} x {median:8.3f} ms" if median >= 1 else f"{len(times)} x {1e3 * median:8.1f} us"


def print_table(results) -> None:
    print(f"{'language':<9} {'misses (ran get_user)':<22} {'L2 hits':<22} {'L1 hits':<22}")
    for lang, calls in results:
        cells = [_cell([ms for _, s, ms in calls if s == source]) for source in ("miss", "l2", "l1")]
        print(f"{lang:<9} {cells[0]:<22} {cells[1]:<22} {cells[2]:<22}")
    print("(count x median latency of a call, timed in the language; each language calls every id twice: "
          "the first call of an id is a miss or an L2 hit, the second an L1 hit)")


def check_sharing(results, ids: int) -> bool:
    """The first language misses every id, the others hit L2 for each; every
    second call is an L1 hit. Prints what differs."""
    ok = True
    for n, (lang, calls) in enumerate(results):
        want = ["miss" if n == 0 else "l2"] * ids + ["l1"] * ids
        got = [s for _, s, _ in calls]
        if got != want:
            print(f"demo: {lang}: expected {want}, got {got}")
            ok = False
    return ok
