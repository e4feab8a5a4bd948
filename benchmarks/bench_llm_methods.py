"""The paper's LLM retrieval methods against the scripted local endpoint: calls per tool and per task, wall time.

Starts the deterministic stub (:class:`libra.eval.baselines.scripted.MethodResponder`) on 127.0.0.1, runs
``libra eval BENCH`` with toolrex, tgr-adapt, ego-trip and toolreagt (base libra) and a fresh reply cache, then
runs it again on the same cache (expected: no call). The retrieval figures of these runs are NOT the methods'
quality -- the stub's answers are mechanical restatements of the metadata -- so they are not recorded; only the
costs are. Expected call counts for the other catalogs come from the same formulas:

    toolrex     2 calls per tool, +1 per rejected profile (at most 3 n)
    tgr-adapt   one call per labelled pair: at most n x neighbours (default 10); n(n-1)/2 for every pair
    ego-trip    1 call per tool
    toolreagt   1 call per agent iteration, at most 10 per task; plus its base method's construction

Writes benchmarks/results/llm-methods-<benchmark>.json. Run: python benchmarks/bench_llm_methods.py [bfcl]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import save
from libra.benchmarks.registry import get_benchmark
from libra.contracts.llm.stub_server import OpenAIStubServer
from libra.eval.baselines.scripted import MethodResponder
from libra.eval.baselines.tgr import DEFAULT_NEIGHBOURS, expected_pairs
from libra.eval.baselines.toolreagt import MAX_ITERATIONS

METHODS = ("toolrex", "tgr-adapt", "ego-trip", "toolreagt")
#: Catalog sizes the formulas are applied to (tools, tasks), as the adapters load them (paper Appendix C).
OTHER = ("appworld", "scitooleval")


def run_eval(url: str, cache: str, out: str, bench: str, method: str) -> tuple[dict, float]:
    cmd = [
        sys.executable,
        "-m",
        "libra.cli",
        "eval",
        bench,
        "--method",
        method,
        "--llm-base-url",
        url,
        "--llm-model",
        "stub-methods",
        "--llm-cache",
        cache,
        "--json",
        out,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{method} failed: {proc.stderr.strip()}")
    return json.loads(Path(out).read_text())["results"][0], wall


def expected(n_tools: int, n_tasks: int) -> dict:
    return {
        "tools": n_tools,
        "tasks": n_tasks,
        "toolrex": {"min": 2 * n_tools, "max": 3 * n_tools},
        "tgr-adapt": {
            "max_neighbour_pairs": expected_pairs(n_tools, DEFAULT_NEIGHBOURS),
            "all_pairs": expected_pairs(n_tools, 0),
            "neighbours": DEFAULT_NEIGHBOURS,
        },
        "ego-trip": n_tools,
        "toolreagt": {"max_per_task": MAX_ITERATIONS, "max_total": MAX_ITERATIONS * n_tasks},
    }


def sizes(name: str) -> tuple[int, int] | None:
    try:
        b = get_benchmark(name)
        return len(b.catalog()), len(b.tasks())
    except Exception as exc:  # a benchmark whose data is not installed here is reported, not guessed
        print(f"{name}: not available here ({exc.__class__.__name__}: {exc})", file=sys.stderr)
        return None


def main() -> None:
    bench = sys.argv[1] if len(sys.argv) > 1 else "bfcl"
    b = get_benchmark(bench)
    catalog, tasks = b.catalog(), b.tasks()
    server = OpenAIStubServer(MethodResponder(catalog), host="127.0.0.1", port=0).start()
    rows = {}
    try:
        with tempfile.TemporaryDirectory(prefix="libra-bench-llm-methods-") as tmp:
            for m in METHODS:
                before = server.count
                first, wall = run_eval(server.url, f"{tmp}/cache", f"{tmp}/{m}.json", bench, m)
                calls = server.count - before
                before = server.count
                _, wall2 = run_eval(server.url, f"{tmp}/cache", f"{tmp}/{m}-again.json", bench, m)
                rows[m] = {
                    "http_requests": calls,
                    # construction is paid per tool, the agent per task (its base's construction is not an LLM cost)
                    "calls_per_tool": round(calls / len(catalog), 3) if m != "toolreagt" else None,
                    "calls_per_task": round(calls / len(tasks), 3) if m == "toolreagt" else None,
                    "wall_seconds": round(wall, 2),
                    "llm": first["llm"],
                    "fallbacks": first["fallbacks"],
                    **{
                        k: first[k]
                        for k in (
                            "pairs_labelled",
                            "dependency_edges",
                            "triples",
                            "profiles",
                            "turns_per_task",
                            "searches_per_task",
                            "base",
                        )
                        if k in first
                    },
                    "rerun_http_requests": server.count - before,
                    "rerun_wall_seconds": round(wall2, 2),
                }
                print(f"{m}: {calls} requests ({wall:.1f} s), rerun {rows[m]['rerun_http_requests']} ({wall2:.1f} s)")
    finally:
        server.stop()
    payload = {
        "benchmark": bench,
        "tools": len(catalog),
        "tasks": len(tasks),
        "endpoint": "scripted stub (libra.eval.baselines.scripted): costs only, no retrieval quality",
        "methods": rows,
        "expected_calls": {
            bench: expected(len(catalog), len(tasks)),
            **{o: expected(*s) for o in OTHER if (s := sizes(o))},
        },
    }
    path = save(f"llm-methods-{bench}", payload)
    print(f"-> {path}")


if __name__ == "__main__":
    main()
