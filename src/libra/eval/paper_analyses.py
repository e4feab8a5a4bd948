"""One ``libra analyze`` run: the paper's analyses of one benchmark and its library, as one report.

Why apart from the command line: which methods are scored, on which scores the graph analyses run and what the
JSON holds is the analysis itself; the command only parses its options, calls :func:`run_analyses`, prints the
:class:`AnalysisReport` as tables and has :func:`write_analyses` write the files it was asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libra.retrieval.documents import DEFAULT_DOCUMENT

#: The methods of Table 4 (graph ablation: ``schema-only`` against ``libra-dense``, both over the dense base, as in
#: the paper), the retrieval default (``libra``) and Table 2's hybrid rows, in the order they are printed.
ANALYZED_METHODS = ("bm25", "dense", "schema-only", "libra-dense", "libra", "hybrid", "libra-hybrid")


@dataclass
class AnalyzeRequest:
    """Everything ``libra analyze`` was given, by its option names (None: not given)."""

    benchmark: str | None
    tasks_path: Path | None = None
    library: Path | None = None
    k: int | None = None
    embedder: str = "minilm"
    document: str = DEFAULT_DOCUMENT
    json_path: Path | None = None
    plot: Path | None = None


@dataclass
class AnalysisReport:
    """Table 4 / Table 2 (``methods``), Table 3 (``breakdown``), Table 6 (``sensitivity``) and Figure 3's cases."""

    bench: Any
    k: int
    n_tasks: int
    methods: list[Any]  # libra.eval.runner.MethodResult, in the order of ANALYZED_METHODS
    breakdown: Any  # libra.eval.analysis.Breakdown
    sensitivity: list[dict[str, Any]]
    cases: list[dict[str, Any]]
    score_space: str
    graph_edges: int
    schema_only_edges: int
    library_stats: dict[str, Any]

    def paper(self, method: str) -> tuple[float, float, float] | None:
        """The paper's P/R/NDCG of ``method``, when it published them at this K."""
        return self.bench.paper.get(method) if self.k == self.bench.default_k else None

    def results(self) -> list[dict[str, Any]]:
        return [{"method": r.method, **r.scores.as_dict(), **r.extra} for r in self.methods]

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.bench.name,
            "k": self.k,
            "n_tasks": self.n_tasks,
            "results": self.results(),
            "paper": {m: list(v) for m, v in self.bench.paper.items()} if self.k == self.bench.default_k else {},
            "table3": self.breakdown.to_dict(),
            "table6": self.sensitivity,
            "cases": self.cases,
            "score_space": self.score_space,
            "graph": {"edges": self.graph_edges, "schema_only_edges": self.schema_only_edges},
            "library_stats": self.library_stats,
        }


def run_analyses(request: AnalyzeRequest) -> AnalysisReport:
    """Score :data:`ANALYZED_METHODS`, then run the graph analyses on the dense base's scores (the paper's)."""
    from libra.eval.analysis import recovered_cases, recovery_breakdown, sensitivity, tool_causes
    from libra.eval.libraries import candidate_edges, library_edges, obtain_library
    from libra.eval.methods import EvalOptions
    from libra.eval.runner import run_method
    from libra.eval.targets import eval_target
    from libra.retrieval.dense import DenseRetriever
    from libra.retrieval.graph import PropagationGraph, propagation_scores

    bench = eval_target(request.benchmark, request.tasks_path, request.library)
    k = bench.default_k if request.k is None else request.k
    catalog, tasks = bench.catalog(), bench.tasks()
    library = str(request.library) if request.library else None

    def options() -> EvalOptions:
        return EvalOptions(k=k, embedder=request.embedder, document=request.document, library=library)

    lib = obtain_library(bench, catalog, options())
    dense = DenseRetriever(request.embedder, document=request.document).fit(catalog)
    similarity = dense.score([t.query for t in tasks])
    base, space = propagation_scores(dense, similarity)
    spaces = {"probability": base, "similarity (paper)": similarity} if space == "probability" else {}
    graph = PropagationGraph.build(catalog, library_edges(lib))
    schema_graph = PropagationGraph.build(catalog, candidate_edges(lib))
    methods = [run_method(m, bench, catalog, tasks, options()) for m in ANALYZED_METHODS]
    causes = tool_causes((lib.stats.get("health") or {}).get("no_relation")) or None
    return AnalysisReport(
        bench=bench,
        k=k,
        n_tasks=len(tasks),
        methods=methods,
        breakdown=recovery_breakdown(graph, catalog, tasks, base, k, causes=causes),
        sensitivity=sensitivity(graph, tasks, catalog, base, k, spaces),
        cases=recovered_cases(graph, catalog, tasks, base, k),
        score_space=space,
        graph_edges=graph.n_edges,
        schema_only_edges=schema_graph.n_edges,
        library_stats=lib.stats,
    )


def write_analyses(report: AnalysisReport, request: AnalyzeRequest) -> None:
    """The files ``request`` asked for: the analyses as JSON, a bar chart of the methods."""
    from libra._util.io import atomic_write_json

    if request.json_path:
        atomic_write_json(request.json_path, report.to_json())
    if request.plot:
        from libra.eval.analysis import plot_methods

        plot_methods(report.results(), f"{report.bench.name}@{report.k}", str(request.plot))
