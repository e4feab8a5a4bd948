"""Retrieval methods by name, so the CLI, the runner and benchmarks share one list.

A method factory receives the benchmark and the evaluation options and returns a fitted retriever. Every method
is named in one static table, :data:`METHODS`, with where its factory lives: the names are known (to check
``--method`` and to write its help) without importing any implementation, a benchmark's least of all, and a
factory is imported when its method is used. Benchmarks never import evaluation: a method that needs a
benchmark's own data (``scitoolkg``) is a factory here wrapping the benchmark's plain function.

The methods that need an executable library (``libra``, ``libra-hybrid``, ``schema-only``) are defined here too,
over the library helpers of :mod:`libra.eval.libraries`: evaluation depends on retrieval, never the reverse, so
the two modules import each other in one direction only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from libra.benchmarks.base import Benchmark
from libra.catalog import Catalog
from libra.errors import ConfigError
from libra.retrieval.documents import DEFAULT_DOCUMENT


@dataclass
class EvalOptions:
    k: int = 15
    embedder: str = "minilm"
    document: str = DEFAULT_DOCUMENT  # what dense methods embed per tool: text or json (see retrieval.documents)
    library: str | None = None
    workers: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    llm: Any = None  # a libra.llm.client.ChatConfig: the endpoint of the LLM methods (None = not given)


MethodFactory = Callable[[Benchmark, Catalog, EvalOptions], Any]

#: Every method: name -> its factory, as ``module:function`` (imported on use).
METHODS: dict[str, str] = {
    "bm25": "libra.eval.methods:bm25",
    "dense": "libra.eval.methods:dense",
    "hybrid": "libra.eval.methods:hybrid",
    "libra": "libra.eval.methods:libra_propagation",
    "libra-dense": "libra.eval.methods:libra_dense",
    "libra-hybrid": "libra.eval.methods:libra_hybrid",
    "schema-only": "libra.eval.methods:schema_only",
    "toolrex": "libra.eval.methods:toolrex",
    "tgr-adapt": "libra.eval.methods:tgr_adapt",
    "ego-trip": "libra.eval.methods:ego_trip",
    "toolreagt": "libra.eval.methods:toolreagt",
    "scitoolkg": "libra.eval.benchmark_methods:scitoolkg",
}


def bm25(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    from libra.retrieval.bm25 import BM25Retriever

    return BM25Retriever().fit(catalog)


def dense(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    from libra.retrieval.dense import DenseRetriever

    return DenseRetriever(opts.embedder, document=opts.document).fit(catalog)


def hybrid(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    from libra.retrieval.hybrid import bm25_dense

    return bm25_dense(opts.embedder, opts.document).fit(catalog)


def _graph_retriever(
    name: str, base: Any, edges_of: Callable[[Any], Any], bench: Benchmark, catalog: Catalog, opts: EvalOptions
) -> Any:
    """Propagation (paper Algorithm 2) over ``base`` and the edges ``edges_of`` takes from the benchmark's library."""
    from libra.eval.libraries import graph_options, obtain_library
    from libra.retrieval.graph import GraphRetriever

    lib = obtain_library(bench, catalog, opts)
    return GraphRetriever(base, edges_of(lib), name=name, **graph_options(opts.extra)).fit(catalog)


def libra_propagation(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """The retrieval default (:mod:`libra.retrieval.defaults`, what ``libra retrieve`` and ``libra serve`` rank
    by): its base, then propagation over the library's retained relations."""
    from libra.eval.libraries import library_edges
    from libra.retrieval.defaults import DEFAULT_BASE, DEFAULT_FUSION_WEIGHT, DEFAULT_SCORE_SPACE
    from libra.retrieval.named import base_retriever

    space = opts.extra.get("score_space") or DEFAULT_SCORE_SPACE
    base = base_retriever(DEFAULT_BASE, opts.embedder, opts.document, space, DEFAULT_FUSION_WEIGHT)
    return _graph_retriever("libra", base, library_edges, bench, catalog, opts)


def libra_dense(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """The paper's LIBRA: dense seeds + propagation over the library's retained relations."""
    from libra.eval.libraries import library_edges
    from libra.retrieval.dense import DenseRetriever

    return _graph_retriever(
        "libra-dense", DenseRetriever(opts.embedder, document=opts.document), library_edges, bench, catalog, opts
    )


def libra_hybrid(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """The same propagation over a hybrid base (reciprocal rank fusion of BM25 and dense)."""
    from libra.eval.libraries import library_edges
    from libra.retrieval.hybrid import bm25_dense

    return _graph_retriever(
        "libra-hybrid", bm25_dense(opts.embedder, opts.document), library_edges, bench, catalog, opts
    )


def schema_only(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """Propagation over every schema-compatible candidate composition, before execution filtering (Table 4)."""
    from libra.eval.libraries import candidate_edges
    from libra.retrieval.dense import DenseRetriever

    return _graph_retriever(
        "schema-only", DenseRetriever(opts.embedder, document=opts.document), candidate_edges, bench, catalog, opts
    )


# -- the paper's LLM-built methods (libra.eval.baselines) --------------------------------------------------
def _llm_run(name: str, opts: EvalOptions) -> Any:
    """A fresh run (own counters and fallbacks) on the configured endpoint; refuses at once without one."""
    from dataclasses import replace

    from libra.eval.baselines import ENABLE_HINT
    from libra.eval.baselines.common import LLMRun

    if opts.llm is None:
        raise ConfigError(f"method {name} {ENABLE_HINT}")
    return LLMRun(replace(opts.llm))


def toolrex(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """Dense retrieval over each tool's document plus an LLM-written, LLM-checked profile (ToolREX)."""
    from libra.eval.baselines.toolrex import ToolRexRetriever

    return ToolRexRetriever(_llm_run("toolrex", opts), opts.embedder, opts.document).fit(catalog)


def tgr_adapt(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """Dense retrieval over tool embeddings convolved along LLM-labelled dependencies (TGR-Adapt)."""
    from libra.eval.baselines.tgr import DEFAULT_NEIGHBOURS, TGRRetriever

    neighbours = int(opts.extra.get("tgr_neighbours", DEFAULT_NEIGHBOURS))
    return TGRRetriever(_llm_run("tgr-adapt", opts), opts.embedder, opts.document, neighbours).fit(catalog)


def ego_trip(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """Tools of the ego graphs a dense search matches in an LLM-extracted knowledge graph (Ego-Trip)."""
    from libra.eval.baselines.egotrip import EgoTripRetriever

    return EgoTripRetriever(_llm_run("ego-trip", opts), opts.embedder, opts.document).fit(catalog)


DEFAULT_AGENT_BASE = "libra"


def toolreagt(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    """A ReAct agent searching with ``tool_retriever`` backed by ``--base`` (default libra) for up to 10 turns."""
    from libra.eval.baselines.toolreagt import MAX_ITERATIONS, ToolReAGtRetriever
    from libra.retrieval.base import retrieve_names

    run = _llm_run("toolreagt", opts)  # refuse before the base is built
    base_name = str(opts.extra.get("agent_base") or DEFAULT_AGENT_BASE)
    check_agent_base(base_name)
    base = get_method(base_name)(bench, catalog, opts)
    iterations = int(opts.extra.get("iterations", MAX_ITERATIONS))
    return ToolReAGtRetriever(run, base, base_name, lambda qs, d: retrieve_names(base, catalog, qs, d), iterations).fit(
        catalog
    )


def check_agent_base(name: str) -> None:
    """The agent's retriever: any method except an agent itself."""
    from libra.eval.baselines import AGENTIC_METHODS

    check_method(name)
    if name.strip().lower() in AGENTIC_METHODS:
        raise ConfigError(
            f"--base {name} is an agent itself: choose one of "
            f"{', '.join(m for m in sorted(METHODS) if m not in AGENTIC_METHODS)}"
        )


def method_help() -> str:
    """The ``--method`` help: every method, the LLM ones with the line that says how to enable them."""
    from libra.eval.baselines import ENABLE_HINT, LLM_METHODS

    plain = [m for m in sorted(METHODS) if m not in LLM_METHODS]
    return (
        f"retrieval method (repeatable): {', '.join(plain)}; the LLM methods {', '.join(LLM_METHODS)} each "
        f"{ENABLE_HINT}"
    )


def available_methods() -> list[str]:
    return sorted(METHODS)


def check_method(name: str) -> str:
    """The method's key in :data:`METHODS` (case and surrounding blanks ignored); nothing is imported."""
    key = name.strip().lower()
    if key not in METHODS:
        raise ConfigError(f"unknown method {name!r}: choose from {', '.join(sorted(METHODS))}")
    return key


def get_method(name: str) -> MethodFactory:
    """The factory of method ``name``, imported from where :data:`METHODS` says it lives."""
    module, function = METHODS[check_method(name)].split(":")
    return getattr(importlib.import_module(module), function)
