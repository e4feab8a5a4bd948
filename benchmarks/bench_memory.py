"""Peak resident memory of a build whose states are large: the synthetic apps of synthetic_apps.py.

Builds the catalog with isolated workers and records the build's own figures: peak resident memory of the caller
and of the largest worker (stats.peak_rss_mb), the memo store's rows and size on disk, and what the exploration
held in memory at the end (stats.held). Writes benchmarks/results/memory.json. Run: make bench-memory
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from _common import save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-calls", type=int, default=12000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    from libra.induction.build import BuildOptions, build_library
    from libra.induction.config import BuildConfig
    from synthetic_apps import SynthBenchmark

    with tempfile.TemporaryDirectory(prefix="libra-bench-memory-") as tmp:
        t0 = time.perf_counter()
        options = BuildOptions(
            workers=args.workers, progress=False, resume=False, config=BuildConfig(max_calls=args.max_calls)
        )
        lib = build_library(SynthBenchmark(), os.path.join(tmp, "lib.json"), options)
        wall = time.perf_counter() - t0
    s = lib.stats
    payload = {
        "catalog": "synthetic-apps (8 apps, one ~150 KB value each)",
        "max_calls": args.max_calls,
        "workers": args.workers,
        "wall_seconds": round(wall, 1),
        "executed_calls": s["engine"]["executed_calls"],
        "relations": {"value": s["value_relations"], "state": s["state_relations"]},
        "peak_rss_mb": s["peak_rss_mb"],
        "memo_store": s["memo_store"],
        "held": s["held"],
    }
    path = save("memory", payload)
    peak = s["peak_rss_mb"]
    print(
        f"synthetic apps: {s['engine']['executed_calls']:,} calls, peak caller {peak['caller']:.0f} MB, "
        f"largest worker {peak['worker']:.0f} MB, "
        f"memo store {s['memo_store']['disk_mb']:.0f} MB on disk -> {path}"
    )


if __name__ == "__main__":
    main()
