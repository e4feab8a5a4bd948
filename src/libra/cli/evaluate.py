"""``libra eval``, ``libra analyze`` and ``libra benchmarks``: score retrieval methods, run the paper's analyses,
list the benchmarks. The runs themselves are :mod:`libra.eval.evaluation` and :mod:`libra.eval.paper_analyses`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

from libra.cli import options as opts
from libra.cli.console import console, fmt, warn
from libra.retrieval.defaults import DEFAULT_DECAY, DEFAULT_HOPS, DEFAULT_KS


def _method_help() -> str:
    from libra.eval.methods import method_help

    return method_help()


def eval_cmd(
    benchmark: str | None = opts.benchmark_arg(
        "benchmark name, e.g. bfcl (omit with --library and --tasks: the library's own catalog)", required=False
    ),
    tasks_path: Path | None = opts.tasks_option(
        'your own tasks, JSON lines {"id", "query", "gold"}: scored on the benchmark\'s catalog, or on '
        "--library's own without a benchmark"
    ),
    method: list[str] = opts.methods_option(["bm25", "dense"], _method_help()),
    k: int | None = opts.k_option(None, "cutoff K (default: the benchmark's, 15 for BFCL)"),
    split: str = opts.split_option(),
    embedder: str = opts.embedder_option(),
    document: str = opts.document_option(
        "what dense methods embed per tool: text (metadata as prose) or json (the paper's serialization)"
    ),
    library: Path | None = opts.library_option("executable library for graph methods (built when omitted)"),
    json_path: Path | None = opts.json_option("write the results as JSON"),
    runs: Path | None = opts.runs_option(),
    workers: int | None = opts.workers_option(
        "worker processes when a library must be built (0 = in-process for trusted runtimes)"
    ),
    ks: int | None = opts.ks_option(None, f"graph methods: seed size Ks (default {DEFAULT_KS})"),
    kc: int | None = opts.kc_option(
        None, "graph methods: candidate set size Kc, the tools returned per task and scored at K (default max(K, 20))"
    ),
    selection: str | None = opts.selection_option(None, "graph methods: provider selection both|field|dense|all"),
    hops: int | None = opts.hops_option(None, f"graph methods: hop depth (default {DEFAULT_HOPS})"),
    score_space: str | None = opts.score_space_option(
        None,
        (
            "graph methods: average the base retriever's probabilities (default, when it declares a temperature) "
            "or its similarities (the paper's)"
        ),
    ),
    temperature: float | None = opts.temperature_option(
        "graph methods: softmax temperature over cosine similarities (default: the embedder's own, 0.05 for minilm)"
    ),
    decay: float | None = opts.decay_option(
        None, f"graph methods: what a hop past the first keeps of its gain (default {DEFAULT_DECAY:g})"
    ),
    llm_base_url: str | None = opts.llm_base_url_option(),
    llm_model: str | None = opts.llm_model_option(),
    llm_cache: Path | None = opts.llm_cache_option(),
    llm_concurrency: int = opts.llm_concurrency_option(),
    base: str | None = opts.agent_base_option(),
    iterations: int | None = opts.iterations_option(),
    tgr_neighbours: int | None = opts.tgr_neighbours_option(),
    plot: Path | None = opts.plot_option(
        "toolreagt: write a PNG of Recall and NDCG@K after each agent iteration (Figure 2)"
    ),
) -> None:
    """Evaluate retrieval methods on a benchmark or on your own tasks: P/R/NDCG@K, with the paper's figures beside
    ours."""
    from libra.eval.evaluation import EvalRequest, Progress, run_eval, write_eval_outputs

    request = EvalRequest(
        benchmark=benchmark,
        methods=method,
        tasks_path=tasks_path,
        k=k,
        split=split,
        embedder=embedder,
        document=document,
        library=library,
        workers=workers,
        graph={
            "ks": ks,
            "kc": kc,
            "selection": selection,
            "hops": hops,
            "score_space": score_space,
            "temperature": temperature,
            "decay": decay,
        },
        llm_base_url=llm_base_url,
        llm_model=llm_model,
        llm_cache=llm_cache,
        llm_concurrency=llm_concurrency,
        agent_base=base,
        iterations=iterations,
        tgr_neighbours=tgr_neighbours,
        json_path=json_path,
        runs=runs,
        plot=plot,
    )
    report = run_eval(request, Progress(log=console.print, status=console.status))
    _print_eval(report)
    for message in eval_warnings(report, request):
        warn(message)
    write_eval_outputs(report, request)


def eval_warnings(report: Any, request: Any) -> list[str]:
    """What makes a run's scores say nothing: a cutoff K that reaches the whole catalog (every method returns every
    tool, so recall is 100 for all of them), and a library with no relation (a graph method then ranks exactly like
    its base retriever)."""
    out = []
    if report.k >= report.n_tools:
        out.append(
            f"K = {report.k} is at least the catalog's {report.n_tools} tools: every method returns the whole "
            f"catalog, so the scores cannot tell the methods apart; give --k below {report.n_tools}"
        )
    from libra.eval.libraries import GRAPH_METHODS

    if request.library is not None and any(m in GRAPH_METHODS for m in request.chosen()):
        from libra.library.artifact import Library

        if not Library.load(request.library).relations:
            out.append(
                f"{request.library} has 0 relations: libra ranks exactly like its base retriever (dense); libra show "
                f"{request.library} says why the build found none"
            )
    return out


def _print_eval(report: Any) -> None:
    table = Table(title=report.title)
    paper_cols = ("paper P", "paper R", "paper NDCG") if report.with_paper else ()
    for col in ("method", "P", "R", "NDCG", *paper_cols, "seconds"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for r in report.results:
        paper = (fmt(x) for x in (report.paper(r.method) or (None, None, None))) if report.with_paper else ()
        table.add_row(
            r.method,
            fmt(r.scores.precision),
            fmt(r.scores.recall),
            fmt(r.scores.ndcg),
            *paper,
            f"{r.seconds:.1f}",
        )
    console.print(table)
    for line in (*report.notes(), *report.llm_usage()):
        console.print(f"[dim]{line}[/dim]")


def benchmarks_cmd() -> None:
    """List the available benchmarks."""
    from libra.benchmarks.registry import available

    for name in available():
        console.print(name)


#: "no edge" tools ``libra analyze`` prints (all of them are in its JSON, ``table3.no_edge_tools``)
NO_EDGE_SHOWN = 8


def _no_edge_tool(row: dict[str, Any]) -> str:
    """``tool x3 (cause)``: one "no edge" tool of Table 3, its occurrences and, when recorded, why it provides
    nothing."""
    cause = row.get("cause")
    return f"{row['tool']} x{row['occurrences']}" + (f" ({cause.replace('_', ' ')})" if cause else "")


def analyze_cmd(
    benchmark: str | None = opts.benchmark_arg(
        "benchmark name (omit with --library and --tasks: the library's own catalog)", required=False
    ),
    tasks_path: Path | None = opts.tasks_option(),
    library: Path | None = opts.library_option("library file (built when omitted)"),
    k: int | None = opts.k_option(None, "cutoff K (default: the benchmark's)"),
    embedder: str = opts.embedder_option(),
    document: str = opts.document_option(),
    json_path: Path | None = opts.json_option("write the analyses as JSON"),
    plot: Path | None = opts.plot_option(),
) -> None:
    """The paper's analyses: Table 3 (recovery breakdown), Table 4 (graph ablation), Table 6 (sensitivity), Figure 3
    cases.

    Table 2 also lists the hybrid base (BM25 + dense by reciprocal rank fusion) with and without propagation; the
    other tables analyse the dense base, as the paper does.
    """
    from libra.eval.paper_analyses import AnalyzeRequest, run_analyses, write_analyses

    request = AnalyzeRequest(benchmark, tasks_path, library, k, embedder, document, json_path, plot)
    report = run_analyses(request)
    _print_construction(report.bench.name, report.library_stats)
    _print_methods(report)
    _print_breakdown(report)
    _print_sensitivity(report)
    _print_cases(report)
    write_analyses(report, request)


def _print_construction(name: str, stats: dict[str, Any]) -> None:
    """Table 5 of the paper: the library's construction (``libra build`` and ``show`` say it in plain words)."""
    table = Table(title=f"Table 5: {name} library construction")
    for col in (
        "tools",
        "candidate compositions",
        "value relations",
        "state relations",
        "wall (min:s)",
        "s / 1k candidates",
    ):
        table.add_column(col, justify="right")
    wall = float(stats.get("wall_seconds", 0.0))
    table.add_row(
        str(stats.get("tools")),
        f"{stats.get('candidate_compositions', 0):,}",
        str(stats.get("value_relations")),
        str(stats.get("state_relations")),
        f"{int(wall // 60)}:{wall % 60:04.1f}",
        f"{stats.get('seconds_per_1000_candidates', 0):.2f}",
    )
    console.print(table)


def _print_methods(report: Any) -> None:
    t4 = Table(title=f"Table 4 / Table 2: {report.bench.name}@{report.k}")
    for col in ("method", "P", "R", "NDCG", "paper P", "paper R", "paper NDCG"):
        t4.add_column(col, justify="right")
    for r in report.methods:
        paper = report.paper(r.method)
        t4.add_row(
            r.method,
            f"{r.scores.precision:.1f}",
            f"{r.scores.recall:.1f}",
            f"{r.scores.ndcg:.1f}",
            *(f"{x:.1f}" for x in paper) if paper else ("–",) * 3,
        )
    console.print(t4)


def _print_breakdown(report: Any) -> None:
    from libra.eval.analysis import OUTCOMES

    bd = report.breakdown
    t3 = Table(title=f"Table 3: gold tools outside the dense top-{report.k} ({bd.occurrences} occurrences)")
    for o in OUTCOMES:
        t3.add_column(o.replace("_", " "), justify="right")
    pct = bd.percent()
    t3.add_row(*(f"{pct[o]:.1f}%" for o in OUTCOMES))
    console.print(t3)
    if bd.no_edge_causes:
        console.print(
            "  no edge, by why the tool provides no relation: "
            + ", ".join(f"{c.replace('_', ' ')} {v}" for c, v in bd.no_edge_causes.items())
        )
    if bd.no_edge_tools:
        console.print(
            "  no edge, most frequent tools: " + ", ".join(_no_edge_tool(r) for r in bd.no_edge_tools[:NO_EDGE_SHOWN])
        )


def _print_sensitivity(report: Any) -> None:
    t6 = Table(title="Table 6: sensitivity (R / NDCG)")
    for col in ("setting", "variant", "R", "NDCG"):
        t6.add_column(col)
    for r in report.sensitivity:
        t6.add_row(r["setting"], str(r["variant"]), f"{r['recall']:.1f}", f"{r['ndcg']:.1f}")
    console.print(t6)


def _print_cases(report: Any) -> None:
    tc = Table(title="Figure 3-style cases: providers moved into the top K")
    for col in ("provider", "dense rank", "consumer", "consumer dense rank", "provider rank after"):
        tc.add_column(col)
    for c in report.cases:
        tc.add_row(
            c["provider"],
            str(c["provider_dense_rank"]),
            c["consumer"],
            str(c["consumer_dense_rank"]),
            str(c["provider_rank_after"]),
        )
    console.print(tc)
