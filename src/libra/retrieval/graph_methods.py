"""Retrieval methods that use an executable library, registered into :mod:`libra.eval.methods`.

- ``libra``: dense seeds + propagation over the library's retained relations (paper Algorithm 2).
- ``schema-only``: the same propagation over every schema-compatible candidate composition, before execution
  filtering (paper Table 4 ablation).
- ``libra-hybrid``: the same propagation as ``libra`` over a hybrid base (reciprocal rank fusion of BM25 and
  dense, see :mod:`.hybrid`) instead of dense alone.

When no ``--library`` is given the benchmark's library is built once and cached under
``$LIBRA_CACHE_DIR/libraries`` keyed by the catalog fingerprint, so later evaluations reuse it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..benchmarks.base import Benchmark
from ..catalog import Catalog
from ..eval.methods import EvalOptions, register_method
from ..library import Library
from .dense import DenseRetriever
from .embedders import cache_dir
from .graph import Edge, GraphRetriever

OPTION_KEYS = ("ks", "kc", "selection", "hops", "score_space", "temperature")
GRAPH_METHODS = ("libra", "libra-hybrid", "schema-only")  # the methods that need a library


def default_library_path(bench: Benchmark, catalog: Catalog, proposer: str = "offline") -> Path:
    """Keyed by catalog content and engine version, so a changed catalog or engine never reuses a stale build."""
    from ..induction.engine import CHECKPOINT_VERSION

    return cache_dir() / "libraries" / f"{bench.name}-{proposer}-{catalog.fingerprint()[:16]}-e{CHECKPOINT_VERSION}.json.gz"


def obtain_library(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Library:
    """The library given by ``--library``, else the cached build for this catalog (built now if missing)."""
    if opts.library:
        return Library.load(opts.library, catalog=catalog)
    path = default_library_path(bench, catalog)
    if path.exists():
        return Library.load(path, catalog=catalog)
    from ..induction.build import BuildOptions, build_library

    return build_library(bench, path, BuildOptions(workers=opts.workers, embedder=opts.embedder))


def library_edges(library: Library) -> list[Edge]:
    return [Edge(r.provider, r.consumer, r.consumer_input if r.kind != "state" else None, r.similarity) for r in library.relations]


def candidate_edges(library: Library) -> list[Edge]:
    return [Edge(c.provider, c.consumer, c.consumer_input, c.similarity) for c in library.candidates]


def _graph_options(opts: EvalOptions) -> dict[str, Any]:
    return {k: opts.extra[k] for k in OPTION_KEYS if k in opts.extra}


@register_method("libra")
def _libra(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> GraphRetriever:
    lib = obtain_library(bench, catalog, opts)
    base = DenseRetriever(opts.embedder, document=opts.document)
    return GraphRetriever(base, library_edges(lib), name="libra", **_graph_options(opts)).fit(catalog)


@register_method("libra-hybrid")
def _libra_hybrid(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> GraphRetriever:
    from .hybrid import bm25_dense

    lib = obtain_library(bench, catalog, opts)
    base = bm25_dense(opts.embedder, opts.document)
    return GraphRetriever(base, library_edges(lib), name="libra-hybrid", **_graph_options(opts)).fit(catalog)


@register_method("schema-only")
def _schema_only(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> GraphRetriever:
    lib = obtain_library(bench, catalog, opts)
    base = DenseRetriever(opts.embedder, document=opts.document)
    return GraphRetriever(base, candidate_edges(lib), name="schema-only", **_graph_options(opts)).fit(catalog)
