"""Where a build's CPU goes: the caller (the engine's own bookkeeping) and its workers (the tool calls).

Why CPU seconds and not only wall time: on a shared machine the wall time says how busy the machine was; the CPU
seconds of the caller and of the workers say what the build costs, and which side stops a larger pool of workers
from helping (the caller's work is serial). Writes benchmarks/results/build-cpu-<benchmark>[-<calls>].json.

Run: python benchmarks/bench_build_cpu.py appworld --max-calls 40000 [--workers 2] [--keep LIB.json.gz]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT, save

TICKS = os.sysconf("SC_CLK_TCK")


def _descendants_cpu(root: int, seen: dict[int, float]) -> None:
    """Add the CPU seconds of every live descendant of ``root`` to ``seen`` (the largest value per process)."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / TICKS
    for pid, seconds in cpu.items():
        p, hops = pid, 0
        while p in parent and p != root and hops < 32:
            p, hops = parent[p], hops + 1
        if p == root and pid != root:
            seen[pid] = max(seen.get(pid, 0.0), seconds)


def child(report: str, argv: list[str]) -> None:
    """Run ``libra build`` in this process; write its caller and worker CPU seconds to ``report``."""
    from libra.cli.main import main

    seen: dict[int, float] = {}

    def watch() -> None:
        while True:
            _descendants_cpu(os.getpid(), seen)
            time.sleep(5)

    threading.Thread(target=watch, daemon=True).start()
    t0 = time.perf_counter()
    code = 0
    try:
        main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    wall = time.perf_counter() - t0
    me = resource.getrusage(resource.RUSAGE_SELF)
    main_thread = resource.getrusage(resource.RUSAGE_THREAD)
    Path(report).write_text(
        json.dumps(
            {
                "exit_status": code,
                "process_wall_seconds": round(wall, 1),
                # the main thread is the engine; the process total adds the embedder's threads and this script's watcher
                "caller_cpu_seconds": round(main_thread.ru_utime + main_thread.ru_stime, 1),
                "caller_process_cpu_seconds": round(me.ru_utime + me.ru_stime, 1),
                "worker_cpu_seconds": round(sum(seen.values()), 1),
                "worker_processes": len(seen),
                "caller_max_rss_mb": round(me.ru_maxrss / 1024, 1),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("benchmark", nargs="?", default="bfcl")
    ap.add_argument("--max-calls", type=int, default=None)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument(
        "--keep", metavar="PATH", default=None, help="also keep the library built at PATH (to compare relations)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="libra-bench-cpu-") as tmp:
        out, report, show = (os.path.join(tmp, n) for n in ("lib.json.gz", "cpu.json", "show.json"))
        argv = ["build", args.benchmark, "--out", out, "--quiet", "--no-resume"]
        if args.max_calls is not None:
            argv += ["--max-calls", str(args.max_calls)]
        if args.workers is not None:
            argv += ["--workers", str(args.workers)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
        subprocess.run([sys.executable, __file__, "--child", report, *argv], check=True, env=env)
        cpu = json.loads(Path(report).read_text())
        if cpu["exit_status"] != 0:
            sys.exit(f"libra build failed with status {cpu['exit_status']}")
        subprocess.run(
            [sys.executable, "-m", "libra.cli", "show", out, "--json", show], check=True, capture_output=True, env=env
        )
        stats = json.loads(Path(show).read_text())["stats"]
        if args.keep:
            shutil.copyfile(out, args.keep)
    calls = stats["engine"]["executed_calls"]
    payload = {
        "benchmark": args.benchmark,
        "command": "libra " + " ".join(a for a in argv if not a.startswith(tmp)),
        **cpu,
        "executed_calls": calls,
        "caller_cpu_ms_per_call": round(1000 * cpu["caller_cpu_seconds"] / max(1, calls), 2),
        "worker_cpu_ms_per_call": round(1000 * cpu["worker_cpu_seconds"] / max(1, calls), 2),
        "stats": stats,
    }
    name = f"build-cpu-{args.benchmark}" + (f"-{args.max_calls}" if args.max_calls else "")
    path = save(name, payload)
    print(
        f"{args.benchmark}: {calls:,} calls, caller {cpu['caller_cpu_seconds']:.0f} s CPU, workers "
        f"{cpu['worker_cpu_seconds']:.0f} s CPU, wall {cpu['process_wall_seconds']:.0f} s -> {path}"
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
    else:
        main()
