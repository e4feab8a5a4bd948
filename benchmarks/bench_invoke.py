"""Invocations per second of the BFCL runtime: isolated worker pool vs trusted in-process.

The mix is cheap read calls from the fresh state (the common case while inducing contracts) plus a few writes, so
the figure measures the runtime's overhead rather than the tools. Writes results/invoke.json atomically.

    python benchmarks/bench_invoke.py [--calls 6000] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from libra._util.io import atomic_write_json
from libra.benchmarks.bfcl.runtime import make_bfcl_runtime

READS: list[tuple[str, dict[str, Any]]] = [
    ("GorillaFileSystem.ls", {}),
    ("GorillaFileSystem.pwd", {}),
    ("MathAPI.add", {"a": 3, "b": 4}),
    ("MathAPI.mean", {"numbers": [1.0, 2.0, 3.0]}),
    ("VehicleControlAPI.check_tire_pressure", {}),
    ("VehicleControlAPI.get_outside_temperature_from_google", {}),
    ("TradingBot.get_watchlist", {}),
    ("TradingBot.get_current_time", {}),
    ("TwitterAPI.get_user_stats", {"username": "john"}),
    ("TicketAPI.get_ticket", {"ticket_id": 1}),
    ("MessageAPI.list_users", {}),
    ("TravelAPI.list_all_airports", {}),
]
WRITES: list[tuple[str, dict[str, Any]]] = [
    ("GorillaFileSystem.touch", {"file_name": "bench.txt"}),
    ("VehicleControlAPI.lockDoors", {"unlock": False, "door": ["driver"]}),
]


def _mix(n: int, with_writes: bool) -> list[tuple[str, dict[str, Any]]]:
    pool = READS + (WRITES if with_writes else [])
    return [pool[i % len(pool)] for i in range(n)]


def _rate(runtime: Any, calls: list[tuple[str, dict[str, Any]]], batched: bool) -> tuple[float, dict[str, int]]:
    state = runtime.fresh()
    statuses: dict[str, int] = {}
    t0 = time.perf_counter()
    if batched:
        results = runtime.invoke_many([(state, tool, args) for tool, args in calls])
    else:
        results = [runtime.invoke(state, tool, args) for tool, args in calls]
    elapsed = time.perf_counter() - t0
    for record, _ in results:
        statuses[record.status] = statuses.get(record.status, 0) + 1
    return len(calls) / elapsed, statuses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=6000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--memory-mb", type=float, default=1024)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "invoke.json"))
    opts = ap.parse_args(argv)

    rows: list[dict[str, Any]] = []
    inproc = make_bfcl_runtime(isolated=False)
    for mix_name, writes in (("reads", False), ("reads+writes", True)):
        calls = _mix(opts.calls, writes)
        _rate(inproc, calls[:200], batched=False)  # warm-up
        rate, statuses = _rate(inproc, calls, batched=False)
        rows.append(
            {
                "mode": "in-process (trusted)",
                "mix": mix_name,
                "workers": 0,
                "calls": len(calls),
                "calls_per_s": round(rate, 1),
                "statuses": statuses,
            }
        )
    inproc.close()

    t0 = time.perf_counter()
    iso = make_bfcl_runtime(isolated=True, n_workers=opts.workers, timeout_s=opts.timeout, memory_mb=opts.memory_mb)
    startup = time.perf_counter() - t0
    isolation = iso.network_isolation
    try:
        for mix_name, writes in (("reads", False), ("reads+writes", True)):
            calls = _mix(opts.calls, writes)
            iso.invoke_many([(iso.fresh(), t, a) for t, a in calls[:200]])  # warm-up: workers cache the fresh state
            for batched in (True, False):
                rate, statuses = _rate(iso, calls if batched else calls[: max(1, len(calls) // 3)], batched=batched)
                rows.append(
                    {
                        "mode": "isolated, invoke_many" if batched else "isolated, invoke (one at a time)",
                        "mix": mix_name,
                        "workers": opts.workers,
                        "calls": len(calls) if batched else max(1, len(calls) // 3),
                        "calls_per_s": round(rate, 1),
                        "statuses": statuses,
                    }
                )
    finally:
        iso.close()

    result = {
        "benchmark": "bfcl invoke throughput",
        "settings": {
            "workers": opts.workers,
            "timeout_s": opts.timeout,
            "memory_mb": opts.memory_mb,
            "allow_network": False,
            "network_isolation": isolation,
            "context": "forkserver",
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "worker_startup_s": round(startup, 3),
        },
        "results": rows,
    }
    atomic_write_json(opts.out, result)
    width = max(len(r["mode"]) for r in rows)
    print(f"{'mode':<{width}}  {'mix':<13} {'workers':>7} {'calls':>6} {'calls/s':>9}")
    for r in rows:
        print(f"{r['mode']:<{width}}  {r['mix']:<13} {r['workers']:>7} {r['calls']:>6} {r['calls_per_s']:>9.0f}")
    print(f"worker start-up {startup:.2f}s; network isolation: {isolation}; wrote {opts.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
