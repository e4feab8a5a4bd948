"""Cost of graph propagation per query on top of the dense ranking (targets, so that retrieval stays interactive:
<= 1 ms on BFCL, <= 5 ms on a synthetic library of 10,000 tools and 50,000 edges).

Dense scores are computed once; the timed part is exactly what LIBRA adds: turning the query's similarities into
the encoder's probabilities (the default score space), seeds, provider selection, Eq. 4-5 and the final ranking,
against the plain dense ranking. Writes benchmarks/results/propagation.json.
"""

from __future__ import annotations

import time

import numpy as np

from _common import save
from libra.catalog import Catalog, Tool
from libra.embeddings.embedders import MiniLMEmbedder
from libra.retrieval.base import rank
from libra.retrieval.dense import score_probabilities
from libra.retrieval.graph import Edge, PropagationGraph, propagate


def per_query_ms(graph: PropagationGraph, scores: np.ndarray, k: int = 20, repeat: int = 3) -> tuple[float, float]:
    """(dense ranking ms, dense ranking + propagation ms) per query, best of ``repeat``."""
    best_dense, best_libra = float("inf"), float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for row in scores:
            rank(row, k)
        t1 = time.perf_counter()
        for row in scores:
            rank(propagate(graph, to_probabilities(row[None, :])[0], ks=15), k)
        t2 = time.perf_counter()
        best_dense = min(best_dense, (t1 - t0) / len(scores) * 1000)
        best_libra = min(best_libra, (t2 - t1) / len(scores) * 1000)
    return best_dense, best_libra


def to_probabilities(row: np.ndarray) -> np.ndarray:
    """The default encoder's probabilities, as LIBRA averages them by default."""
    return score_probabilities(row, MiniLMEmbedder.temperature)  # type: ignore[arg-type]


def synthetic(n_tools: int = 10_000, n_edges: int = 50_000, n_queries: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    catalog = Catalog([Tool(name=f"t{i}") for i in range(n_tools)])
    edges = []
    for _ in range(n_edges):
        p, c = rng.integers(0, n_tools, size=2)
        if rng.random() < 0.2:
            edges.append(Edge(f"t{p}", f"t{c}"))
        else:
            edges.append(Edge(f"t{p}", f"t{c}", f"in{rng.integers(0, 4)}", float(rng.random())))
    scores = rng.random((n_queries, n_tools)) * 0.3 + 0.4
    return catalog, edges, scores


def main() -> None:
    rows = {}
    try:
        from libra.benchmarks.registry import get_benchmark
        from libra.eval.libraries import library_edges, obtain_library
        from libra.eval.methods import EvalOptions
        from libra.retrieval.dense import DenseRetriever

        bench = get_benchmark("bfcl")
        catalog, tasks = bench.catalog(), bench.tasks()
        lib = obtain_library(bench, catalog, EvalOptions(workers=0))
        graph = PropagationGraph.build(catalog, library_edges(lib))
        scores = DenseRetriever().fit(catalog).score([t.query for t in tasks])
        dense_ms, libra_ms = per_query_ms(graph, scores)
        rows["bfcl"] = {
            "tools": len(catalog),
            "edges": graph.n_edges,
            "queries": len(tasks),
            "dense_ms": round(dense_ms, 4),
            "dense_plus_propagation_ms": round(libra_ms, 4),
            "added_ms": round(libra_ms - dense_ms, 4),
            "target_added_ms": 1.0,
        }
    except Exception as exc:  # noqa: BLE001 - the synthetic case still runs without bfcl-eval
        rows["bfcl"] = {"skipped": f"{type(exc).__name__}: {exc}"}
    catalog, edges, scores = synthetic()
    graph = PropagationGraph.build(catalog, edges)
    dense_ms, libra_ms = per_query_ms(graph, scores)
    rows["synthetic"] = {
        "tools": len(catalog),
        "edges": graph.n_edges,
        "queries": len(scores),
        "dense_ms": round(dense_ms, 4),
        "dense_plus_propagation_ms": round(libra_ms, 4),
        "added_ms": round(libra_ms - dense_ms, 4),
        "target_added_ms": 5.0,
    }
    path = save("propagation", rows)
    for name, r in rows.items():
        print(name, r)
    print(f"-> {path}")


if __name__ == "__main__":
    main()
