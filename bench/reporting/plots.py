"""bench/report's plots (run in the matplotlib venv): `plots.py latest.json OUTDIR` draws
latency.png (each time case's figure beside its anchor, log scale), ratios.png (each
ratio against its target) and h1_curve.png (the L1's hit ratio against exact LRU and
W-TinyLFU by byte budget, on H1's trace shape)."""
from __future__ import annotations

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6}


def measured(doc: dict) -> list[dict]:
    return [c for c in doc["cases"] if c["status"] not in ("skipped", "error")]


def latency(doc: dict, path: str) -> None:
    rows = [c for c in measured(doc) if c.get("unit") in TO_NS and c.get("anchor")]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(rows) + 2), 5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [c["figure"] * TO_NS[c["unit"]] for c in rows], 0.4, label="cachekit (figure)")
    ax.bar([x + 0.2 for x in xs], [c["anchor"] * TO_NS[c["unit"]] for c in rows], 0.4, label="anchor")
    ax.set_yscale("log")
    ax.set_ylabel("ns per operation (log scale)")
    ax.set_xticks(list(xs), [c["case"] for c in rows], rotation=60, ha="right", fontsize=8)
    ax.set_title("Latency per case (tier, language) beside its anchor")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ratios(doc: dict, path: str) -> None:
    rows = [c for c in measured(doc) if c.get("ratio") is not None]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(7, max(4, 0.28 * len(rows) + 1.5)))
    ys = range(len(rows))
    colors = {"met": "tab:green", "not met": "tab:red", "report only": "tab:gray"}
    ax.barh(list(ys), [c["ratio"] for c in rows], color=[colors[c["status"]] for c in rows])
    for y, c in zip(ys, rows):
        if c.get("target"):
            ax.plot([c["target"]] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.set_xscale("log")
    ax.set_yticks(list(ys), [f"{c['case']} ({'<=' if c.get('better') == 'lower' else '>='})" for c in rows],
                  fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ratio figure / anchor (log); black tick = target; green met, red not met, grey report only")
    ax.set_title("Ratios against their targets")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def h1_curve(doc: dict, path: str) -> None:
    points = sorted(doc.get("curves", {}).get("H1", []), key=lambda p: p["budget_mib"])
    if not points:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    budgets = [p["budget_mib"] for p in points]
    for key, label in (("l1", "cachekit L1"), ("lru", "exact LRU"), ("wtinylfu", "cachekit L1, TinyLFU admission")):
        ax.plot(budgets, [p[key] for p in points], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("byte budget (MiB)")
    ax.set_ylabel("hit ratio")
    ax.set_title("L1 hit ratio on H1's trace shape (Zipf 1.0) by budget")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    with open(argv[1]) as f:
        doc = json.load(f)
    for name, draw in (("latency.png", latency), ("ratios.png", ratios), ("h1_curve.png", h1_curve)):
        draw(doc, os.path.join(argv[2], name))
        if os.path.exists(os.path.join(argv[2], name)):
            print(f"bench/report: drew {os.path.join(argv[2], name)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
