"""Wall time of `libra eval bfcl --method bm25 --method dense`, cold and warm embedding cache.

Writes benchmarks/results/eval.json with the times and the P/R/NDCG the run printed. Run: make bench-eval
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from _common import save


def run(cache: str, out_json: str) -> float:
    env = dict(os.environ, LIBRA_CACHE_DIR=cache, HF_HUB_OFFLINE="1")
    cmd = [
        sys.executable,
        "-m",
        "libra.cli",
        "eval",
        "bfcl",
        "--method",
        "bm25",
        "--method",
        "dense",
        "--json",
        out_json,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"libra eval failed: {proc.stderr.strip()}")
    return dt


def main() -> None:
    cache = tempfile.mkdtemp(prefix="libra-bench-cache-")
    out_json = os.path.join(cache, "res.json")
    try:
        cold = run(cache, out_json)
        warm = [run(cache, out_json) for _ in range(3)]
        results = json.load(open(out_json))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    payload = {
        "command": "libra eval bfcl --method bm25 --method dense",
        "cold_seconds": round(cold, 2),
        "warm_seconds": round(min(warm), 2),
        "warm_runs": [round(w, 2) for w in warm],
        "target_warm_seconds": 10,
        "results": results,
    }
    path = save("eval", payload)
    print(f"cold {cold:.2f}s, warm {min(warm):.2f}s -> {path}")
    for r in results["results"]:
        print(f"  {r['method']:<8} P {r['precision']:.1f}  R {r['recall']:.1f}  NDCG {r['ndcg']:.1f}")


if __name__ == "__main__":
    main()
