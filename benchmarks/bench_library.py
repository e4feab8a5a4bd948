"""Size of each benchmark's library file and the time to load it and make it ready for retrieval.

Loading is what every `libra eval --method libra` and `libra retrieve` pays before the first query. Uses the cached
library of each benchmark (built first if missing). Writes benchmarks/results/library.json.

`load_seconds` is a load of a file checked before (the usual case: the check is skipped for bytes that passed
once); `check_seconds` is what the first load of a file adds, the whole check against the library schema.

    python benchmarks/bench_library.py bfcl scitooleval appworld
"""

from __future__ import annotations

import gzip
import json
import sys
import time

from _common import save
from libra.benchmarks.registry import get_benchmark
from libra.eval.libraries import default_library_path, library_edges, obtain_library
from libra.eval.methods import EvalOptions
from libra.library.artifact import Library
from libra.library.check import check_library
from libra.retrieval.graph import PropagationGraph


def measure(name: str, repeat: int = 3) -> dict:
    bench = get_benchmark(name)
    catalog = bench.catalog()
    path = default_library_path(bench, catalog)
    if not path.exists():
        obtain_library(bench, catalog, EvalOptions())
    best_load = best_graph = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        lib = Library.load(path, catalog=catalog)
        t1 = time.perf_counter()
        PropagationGraph.build(catalog, library_edges(lib))
        t2 = time.perf_counter()
        best_load, best_graph = min(best_load, t1 - t0), min(best_graph, t2 - t1)
    raw = path.read_bytes()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    version = doc.get("format_version")
    best_check = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        check_library(doc, str(path))
        best_check = min(best_check, time.perf_counter() - t0)
    return {
        "file_mb": round(len(raw) / 1e6, 2),
        "format_version": version,
        "relations": len(lib.relations),
        "candidates": len(lib.candidates),
        "load_seconds": round(best_load, 3),
        "check_seconds": round(best_check, 3),
        "graph_seconds": round(best_graph, 4),
    }


def main(names: list[str]) -> None:
    rows = {}
    for name in names:
        rows[name] = measure(name)
        print(name, rows[name], flush=True)
    print(f"-> {save('library', {'benchmarks': rows})}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["bfcl"])
