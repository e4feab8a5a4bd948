"""AgentDojo's four task suites as a user would meet them: a plain wrapper, default options, no hints.

Per suite: the default build (wall time, relations, tools that never succeeded, and which of those a ground-truth
call uses), then bm25 / dense / libra at K = 5 and 10 on every user task, and the same scores on the tasks whose
gold holds a tool the request never names (``libra.eval.hidden``), where prerequisites matter. Writes
benchmarks/results/agentdojo.json. Run: make bench-agentdojo [SUITES="banking slack"]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import save

SUITES = ("banking", "slack", "travel", "workspace")
METHODS = ("bm25", "dense", "hybrid", "libra-dense", "libra")  # (libra: the default, on the hybrid base)
KS = (5, 10)


def _libra(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "libra.cli", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"libra {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def _recall(ranking: list[str], gold: list[str], k: int) -> float:
    return len(set(ranking[:k]) & set(gold)) / len(set(gold)) if gold else 0.0


def _hidden_scores(runs: Path, queries: dict[str, str], k: int) -> dict[str, dict[str, float]]:
    """Mean recall@k and the share of complete gold sets per method, on the tasks with a hidden gold tool."""
    from libra.eval.hidden import hidden_gold

    per: dict[str, list[tuple[float, bool]]] = {}
    for line in runs.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not hidden_gold(queries[row["task"]], row["gold"]):
            continue
        r = _recall(row["ranking"], row["gold"], k)
        per.setdefault(row["method"], []).append((r, set(row["gold"]) <= set(row["ranking"][:k])))
    return {
        m: {
            "tasks": len(v),
            "R": round(100 * sum(r for r, _ in v) / len(v), 1),
            "complete_percent": round(100 * sum(c for _, c in v) / len(v), 1),
        }
        for m, v in per.items()
        if v
    }


def suite(name: str, work: Path) -> dict:
    from libra.benchmarks.registry import get_benchmark
    from libra.library import Library

    bench_name = f"agentdojo-{name}"
    lib_path = work / f"{bench_name}.json.gz"
    t0 = time.perf_counter()
    _libra("build", bench_name, "--out", str(lib_path), "--quiet", "--no-resume")
    build_s = time.perf_counter() - t0
    lib = Library.load(lib_path)
    tasks = get_benchmark(bench_name).tasks()
    queries = {t.id: t.query for t in tasks}
    gold_tools = sorted({g for t in tasks for g in t.gold})
    never = list(lib.stats.get("health", {}).get("tools_never_succeeded", []))
    scores: dict[str, dict] = {}
    for k in KS:
        out, runs = work / f"{name}-{k}.json", work / f"{name}-{k}.jsonl"
        methods = [a for m in METHODS for a in ("--method", m)]
        _libra("eval", bench_name, *methods, "--k", str(k), "--library", str(lib_path), "--json", str(out))
        _libra("eval", bench_name, *methods, "--k", str(k), "--library", str(lib_path), "--runs", str(runs))
        rows = json.loads(out.read_text(encoding="utf-8"))["results"]
        scores[str(k)] = {
            "all": {
                r["method"]: {m: round(r[key], 1) for m, key in (("P", "precision"), ("R", "recall"), ("NDCG", "ndcg"))}
                for r in rows
            },
            "hidden": _hidden_scores(runs, queries, k),
        }
    return {
        "tools": len(lib.catalog.names),
        "tasks": len(tasks),
        "build_seconds": round(build_s, 1),
        "relations": lib.stats.get("relations", {}),
        "tools_never_succeeded": never,
        "gold_tools_never_succeeded": [t for t in never if t in gold_tools],
        "scores": scores,
    }


def main(argv: list[str]) -> None:
    names = argv or list(SUITES)
    unknown = sorted(set(names) - set(SUITES))
    if unknown:
        raise SystemExit(f"unknown suite(s) {unknown}: choose from {', '.join(SUITES)}")
    with tempfile.TemporaryDirectory(prefix="libra-agentdojo-") as tmp:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        suites = {n: suite(n, Path(tmp)) for n in names}
    avg = {
        k: {m: round(sum(s["scores"][k]["all"][m]["R"] for s in suites.values()) / len(suites), 1) for m in METHODS}
        for k in map(str, KS)
    }
    path = save("agentdojo", {"suites": suites, "mean_R": avg})
    for n, s in suites.items():
        line = "  ".join(
            f"R@{k} " + "/".join(f"{s['scores'][k]['all'][m]['R']:.1f}" for m in METHODS) for k in map(str, KS)
        )
        never = len(s["tools_never_succeeded"])
        print(f"{n:<10} {sum(s['relations'].values()):>4} relations  never {never:>2}  {line}")
    print(f"mean R (bm25/dense/libra): {avg} -> {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
