"""Library construction cost (paper Table 5 columns): ``libra build BENCHMARK`` on this machine.

Writes benchmarks/results/build-<benchmark>.json with the library statistics and the wall time, plus the
relations a user of these APIs knows (well-known prerequisites found or not). Run: make bench-build [BENCH=bfcl]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from _common import save, speed_probe

# Relations a user of these APIs knows; reported (not asserted) so a regression shows up in the results file.
EXPECTED = {
    "bfcl": [
        ("GorillaFileSystem.touch", "GorillaFileSystem.tail", "state"),
        ("VehicleControlAPI.lockDoors", "VehicleControlAPI.startEngine", "state"),
        ("VehicleControlAPI.pressBrakePedal", "VehicleControlAPI.startEngine", "state"),
        ("TravelAPI.authenticate_travel", "TravelAPI.book_flight", "provenance"),
        ("MessageAPI.message_login", "MessageAPI.send_message", None),
        ("TwitterAPI.authenticate_twitter", "TwitterAPI.post_tweet", None),
        ("TicketAPI.ticket_login", "TicketAPI.create_ticket", None),
        ("TradingBot.trading_login", "TradingBot.fund_account", None),
    ],
    "scitooleval": [("SELFIEStoSMILES", "GetNPR2", "provenance")],
    "appworld": [
        ("phone.login", "phone.update_alarm", None),
        ("supervisor.show_account_passwords", "phone.login", "provenance"),
        ("supervisor.show_account_passwords", "venmo.login", "provenance"),
        ("supervisor.show_account_passwords", "todoist.login", "provenance"),
        ("spotify.login", "spotify.like_song", "provenance"),
    ],
}
PAPER = {
    "bfcl": {
        "tools": 128,
        "candidates": 12762,
        "value_relations": 595,
        "state_relations": 77,
        "wall": "4:28",
        "cpus": 96,
    },
    "scitooleval": {
        "tools": 477,
        "candidates": 163608,
        "value_relations": 732,
        "state_relations": 0,
        "wall": "20:45",
        "cpus": 96,
    },
    "appworld": {
        "tools": 473,
        "candidates": 581690,
        "value_relations": 1946,
        "state_relations": 0,
        "wall": "260:40",
        "cpus": 96,
    },
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("benchmark", nargs="?", default="bfcl")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument(
        "--existing",
        action="store_true",
        help=(
            "record the library already built at the default path instead of building it (its own build "
            "statistics are kept; the process wall time is not re-measured)"
        ),
    )
    args = ap.parse_args()
    from libra.benchmarks.registry import get_benchmark
    from libra.eval.libraries import default_library_path

    bench = get_benchmark(args.benchmark)
    # The library goes where `libra eval/analyze` look for it, so the retrieval benchmarks use this very build.
    out = str(default_library_path(bench, bench.catalog()))
    with tempfile.TemporaryDirectory(prefix="libra-bench-build-") as tmp:
        show = os.path.join(tmp, "show.json")
        cmd = [sys.executable, "-m", "libra.cli", "build", args.benchmark, "--out", out, "--quiet", "--no-resume"]
        if args.workers is not None:
            cmd += ["--workers", str(args.workers)]
        wall: float | None = None
        probe: float | None = None
        cpu: float | None = None
        if args.existing:
            if not os.path.exists(out):
                sys.exit(f"no library at {out}: run without --existing to build it")
        else:
            probe = speed_probe()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            # CPU of the build and of every process it reaped (workers; servers they reaped): less sensitive to
            # a busy machine than the wall time
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if proc.returncode != 0:
                sys.exit(f"libra build failed: {proc.stderr.strip()}")
        subprocess.run(
            [sys.executable, "-m", "libra.cli", "show", out, "--json", show], check=True, capture_output=True
        )
        data = json.load(open(show))
    edges = data["edges"]
    found = []
    for p, c, kind in EXPECTED.get(args.benchmark, []):
        kinds = sorted({e["kind"] for e in edges if e["provider"] == p and e["consumer"] == c})
        found.append(
            {
                "provider": p,
                "consumer": c,
                "expected_kind": kind,
                "found_kinds": kinds,
                "ok": bool(kinds) and (kind is None or kind in kinds),
            }
        )
    stats = data["stats"]
    # Peak resident memory: the build's own figures (caller, largest worker, sampled total; see
    # libra.induction.peak), and the largest process this script waited for, measured by the kernel.
    peak = stats.get("peak_rss_mb")
    waited = None if wall is None else round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    payload = {
        "benchmark": args.benchmark,
        "command": " ".join(["libra"] + cmd[3:]),
        "process_wall_seconds": None if wall is None else round(wall, 1),
        "process_cpu_seconds": None if cpu is None else round(cpu, 1),
        # the machine's speed just before the build (benchmarks/_common.speed_probe): compare builds as wall / probe
        "speed_probe_seconds": probe,
        "wall_per_probe": None if wall is None or not probe else round(wall / probe, 1),
        "peak_rss_mb": peak,
        "largest_process_max_rss_mb": waited,
        "target_peak_rss_mb": 2048,
        "stats": stats,
        "expected_relations": found,
        "paper_table5": PAPER.get(args.benchmark),
        "target_wall_seconds": {"bfcl": 60, "scitooleval": 600, "appworld": 3600}.get(args.benchmark),
    }
    path = save(f"build-{args.benchmark}", payload)
    print(
        f"{args.benchmark}: {stats['tools']} tools, {stats['candidate_compositions']:,} candidates, "
        f"{stats['value_relations']} value + {stats['state_relations']} state relations, wall "
        f"{stats['wall_seconds']:.1f}s -> {path}"
    )
    if peak:
        print(
            f"  peak resident memory: caller {peak['caller']:.0f} MB, largest worker {peak['worker']:.0f} "
            f"MB, total {peak['total']:.0f} MB"
        )
    for f in found:
        print(f"  {'ok ' if f['ok'] else 'MISSING'} {f['provider']} -> {f['consumer']} {f['found_kinds']}")


if __name__ == "__main__":
    main()
