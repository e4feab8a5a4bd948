"""Who provides a value: ``--credit origin`` (the default) against ``--credit export`` (the paper's Algorithm 1).

``origin`` credits a value to the call that put it into the sandbox; ``export`` credits every successful call that
exports it, so a read that hands back the file name it was given "provides" that name to the next reader, and a
no-op update "provides" the id it addressed. The first is what a dependency is; the second gives the graph more
edges, and in particular edges out of tools that only pass values along, which changes Table 3's "no edge" share
(the share of dense misses that have no outgoing edge at all).

For BFCL and SciToolEval (AppWorld takes too long to build twice here) and for the generalization suite, builds
the library under each credit and reports relations, dense/LIBRA R and NDCG, the Table 3 shares and, for the
suite, designed relations found and excluded relations hit. Writes ``benchmarks/results/credit.json``.
``python benchmarks/bench_credit.py [BENCH ...]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, save

sys.path.insert(0, str(ROOT))

CREDITS = ("origin", "export")


def _benchmark_row(name: str, credit: str, workdir: Path) -> dict:
    from libra.benchmarks.registry import get_benchmark
    from libra.eval.analysis import recovery_breakdown
    from libra.eval.libraries import library_edges
    from libra.eval.methods import EvalOptions
    from libra.eval.runner import run_method
    from libra.induction.build import BuildOptions, build_library
    from libra.induction.config import BuildConfig
    from libra.retrieval.dense import DenseRetriever
    from libra.retrieval.graph import PropagationGraph, propagation_scores

    bench = get_benchmark(name)
    catalog, tasks = bench.catalog(), bench.tasks()
    out = workdir / f"{name}-{credit}.json.gz"
    t0 = time.perf_counter()
    lib = build_library(bench, out, BuildOptions(config=BuildConfig(credit=credit), progress=False, resume=False))
    build_s = time.perf_counter() - t0
    k = bench.default_k
    rows = {}
    for method in ("dense", "libra"):
        r = run_method(method, bench, catalog, tasks, EvalOptions(k=k, library=str(out)))
        rows[method] = {"recall": r.scores.recall, "ndcg": r.scores.ndcg}
    opts = EvalOptions(k=k)
    dense = DenseRetriever(opts.embedder, document=opts.document).fit(catalog)
    base, _space = propagation_scores(dense, dense.score([t.query for t in tasks]))
    bd = recovery_breakdown(PropagationGraph.build(catalog, library_edges(lib)), catalog, tasks, base, k)
    stats = lib.stats
    return {
        "benchmark": name,
        "credit": credit,
        "k": k,
        "value_relations": stats.get("value_relations"),
        "state_relations": stats.get("state_relations"),
        "build_s": round(build_s, 1),
        **rows,
        "table3": bd.to_dict(),
    }


def _suite_row(credit: str) -> dict:
    from tests import generalization as gen

    from libra.induction.config import BuildConfig

    designed = found = hit = total = 0
    hits: list = []
    for name in gen.CATALOGS:
        s = gen.build(name, BuildConfig(credit=credit)).summary()
        designed += s["designed"]
        found += s["found"]
        hit += s["excluded_hit"]
        total += s["relations_total"]
        hits += [[name, *h] for h in s["excluded_relations_found"]]
    return {
        "credit": credit,
        "designed": designed,
        "found": found,
        "excluded_hit": hit,
        "relations_total": total,
        "excluded_relations_found": hits,
    }


def main(argv: list[str]) -> None:
    names = argv or ["bfcl", "scitooleval"]
    rows, suite = [], []
    with tempfile.TemporaryDirectory(prefix="libra-credit-") as tmp:
        for name in names:
            for credit in CREDITS:
                row = _benchmark_row(name, credit, Path(tmp))
                rows.append(row)
                pct = row["table3"]["percent"]
                print(
                    f"{name:<12} {credit:<7} value {row['value_relations']:>5} state "
                    f"{row['state_relations']:>4}  dense "
                    f"{row['dense']['recall']:.1f}/{row['dense']['ndcg']:.1f}"
                    f"  libra {row['libra']['recall']:.1f}/{row['libra']['ndcg']:.1f}  no edge {pct['no_edge']:.1f}%"
                )
    for credit in CREDITS:
        s = _suite_row(credit)
        suite.append(s)
        print(f"suite        {credit:<7} designed {s['designed']} found {s['found']} excluded hit {s['excluded_hit']}")
    path = save("credit", {"benchmarks": rows, "suite": suite})
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
