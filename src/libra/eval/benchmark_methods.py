"""Retrieval methods that only make sense on one benchmark, wrapping that benchmark's own retrieval function.

Why apart from :mod:`libra.eval.methods`: these import a benchmark's module (its data, numpy) when they run, and
the benchmark knows nothing of evaluation: it offers a plain function, the method here checks that it is asked
on the right benchmark and passes the evaluation options on.
"""

from __future__ import annotations

from typing import Any

from libra.benchmarks.base import Benchmark
from libra.catalog import Catalog
from libra.errors import ConfigError
from libra.eval.methods import EvalOptions


def scitoolkg(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """SciToolKG retrieval over the graph released with SciToolEval (see docs/scitooleval.md)."""
    if bench.name != "scitooleval":
        raise ConfigError(
            f"method 'scitoolkg' needs the SciToolKG graph of benchmark 'scitooleval', not {bench.name!r}"
        )
    from libra.benchmarks.scitooleval.adapter import scitoolkg_retriever

    extra = opts.extra or {}
    return scitoolkg_retriever(
        catalog,
        embedder=opts.embedder,
        top_seeds=int(extra.get("kg_seeds", 5)),
        hops=int(extra.get("kg_hops", 3)),
        max_tools=int(extra.get("kg_max_tools", 10)),
    )
