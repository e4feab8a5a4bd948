"""The ``libra`` command line.

Every user-facing failure is a :class:`~libra.errors.LibraError`; :func:`main` prints it as one line on stderr and
exits with status 2, never with a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from libra.cli import options as opts
from libra.errors import ConfigError, LibraError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Executable tool libraries and graph retrieval for LLM agents.",
)
console = Console()
err_console = Console(stderr=True)


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _method_help() -> str:
    from libra.eval.methods import method_help

    return method_help()


@app.command("eval")
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
    ks: int | None = opts.ks_option(None, "graph methods: seed size Ks (default 15)"),
    kc: int | None = opts.kc_option(
        None, "graph methods: candidate set size Kc, the tools returned per task and scored at K (default max(K, 20))"
    ),
    selection: str | None = opts.selection_option(None, "graph methods: provider selection both|field|dense|all"),
    hops: int | None = opts.hops_option(None, "graph methods: hop depth (default 1)"),
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
    from libra.eval.libraries import GRAPH_METHODS, build_options_for, default_library_path, obtain_library
    from libra.eval.methods import EvalOptions
    from libra.eval.runner import results_json, run_method, write_json, write_runs

    llm = _llm_settings(
        method, llm_base_url, llm_model, llm_cache, llm_concurrency, base, iterations, tgr_neighbours, plot
    )
    bench = eval_target(benchmark, tasks_path, library)
    kk = bench.default_k if k is None else k
    catalog = bench.catalog()
    tasks = bench.tasks()
    extra = {
        key: v
        for key, v in (
            ("ks", ks),
            ("kc", kc),
            ("selection", selection),
            ("hops", hops),
            ("score_space", score_space),
            ("temperature", temperature),
            ("agent_base", base),
            ("iterations", iterations),
            ("tgr_neighbours", tgr_neighbours),
        )
        if v is not None
    }
    options = EvalOptions(
        k=kk,
        embedder=embedder,
        document=document,
        library=str(library) if library else None,
        workers=workers,
        extra=extra,
        llm=llm,
    )
    results = []
    needs_library = [m.strip().lower() for m in method] + (
        [(base or "libra")] if any(m.strip().lower() == "toolreagt" for m in method) else []
    )
    if library is None and any(m in GRAPH_METHODS for m in needs_library):
        path = default_library_path(bench, catalog, options=build_options_for(options))
        if not path.exists():  # build before the spinner starts, so the build's own progress shows alone
            console.print(f"building {bench.name}'s library once; later runs reuse {path}")
            obtain_library(bench, catalog, options)
    if library is not None and any(m in GRAPH_METHODS for m in needs_library):
        obtain_library(
            bench, catalog, options
        )  # a bad --library is refused before any method runs (the methods reuse it)
    for m in method:
        with console.status(f"running {m} on {bench.name} ({len(tasks)} tasks)..."):
            results.append(run_method(m, bench, catalog, tasks, options))
    table = Table(title=f"{bench.name}@{kk}: {len(tasks)} tasks, {len(catalog)} tools")
    with_paper = bool(bench.paper)  # your own tasks have no published figures to stand beside
    for col in ("method", "P", "R", "NDCG", *(("paper P", "paper R", "paper NDCG") if with_paper else ()), "seconds"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for r in results:
        paper = bench.paper.get(r.method) if kk == bench.default_k else None
        table.add_row(
            r.method,
            _fmt(r.scores.precision),
            _fmt(r.scores.recall),
            _fmt(r.scores.ndcg),
            *((_fmt(x) for x in (paper or (None, None, None))) if with_paper else ()),
            f"{r.seconds:.1f}",
        )
    console.print(table)
    notes = getattr(bench, "paper_notes", {})
    for r in results:
        if r.method in notes and kk == bench.default_k:
            console.print(f"[dim]{r.method}: {notes[r.method]}[/dim]")
    for r in results:
        if "llm" in r.extra:
            s = r.extra["llm"]
            console.print(
                f"[dim]{r.method}: {s['calls']} LLM calls, {s['cache_hits']} from the cache, "
                f"{r.extra['fallbacks']} fallback(s) recorded[/dim]"
            )
    if json_path:
        write_json(json_path, results_json(bench, kk, len(tasks), results))
    if runs:
        write_runs(runs, tasks, results, kk)
    if plot:
        from libra.eval.plots import plot_iterations

        plot_iterations(plot, bench.name, kk, results)


def _llm_settings(
    methods: list[str],
    base_url: str | None,
    model: str | None,
    cache: Path | None,
    concurrency: int,
    base: str | None,
    iterations: int | None,
    tgr_neighbours: int | None,
    plot: Path | None,
) -> Any:
    """The endpoint of the LLM methods, checked before any work: they need one, the other methods take none."""
    from libra.eval.baselines import AGENTIC_METHODS, ENABLE_HINT, LLM_METHODS
    from libra.llm.client import ChatConfig

    chosen = [m.strip().lower() for m in methods]
    llm_chosen = [m for m in chosen if m in LLM_METHODS]
    agentic = any(m in AGENTIC_METHODS for m in chosen)
    for flag, value, applies in (
        ("--base", base, agentic),
        ("--iterations", iterations, agentic),
        ("--plot", plot, agentic),
        ("--tgr-neighbours", tgr_neighbours, "tgr-adapt" in chosen),
    ):
        if value is not None and not applies:
            raise ConfigError(
                f"{flag} only applies with --method {'tgr-adapt' if flag == '--tgr-neighbours' else 'toolreagt'}"
            )
    if not llm_chosen:
        if base_url or model or cache:
            raise ConfigError(
                f"--llm-base-url/--llm-model/--llm-cache only apply to the LLM methods ({', '.join(LLM_METHODS)})"
            )
        return None
    if not base_url or not model:
        raise ConfigError(f"method {llm_chosen[0]} {ENABLE_HINT}")
    return ChatConfig(base_url=base_url, model=model, cache_path=str(cache) if cache else None, concurrency=concurrency)


def eval_target(benchmark: str | None, tasks_path: Path | None, library: Path | None) -> Any:
    """The benchmark ``eval`` and ``analyze`` score: a named one (with its tasks, or those of ``--tasks``), or, with
    ``--tasks``
    and ``--library`` and no name, the library's own catalog. Gold names are checked against the catalog here,
    before any method runs."""
    from libra.benchmarks.registry import get_benchmark

    if tasks_path is None:
        if benchmark is None:
            raise ConfigError(
                "give a benchmark name, or --library LIB with --tasks FILE to score your own tasks on the "
                "library's catalog"
            )
        return get_benchmark(benchmark)
    from libra.eval.tasks_file import check_gold, read_tasks
    from libra.sources.user import LibraryBenchmark, TasksOnBenchmark

    tasks = read_tasks(tasks_path)
    if benchmark is not None:
        bench: Any = TasksOnBenchmark(get_benchmark(benchmark), tasks)
    elif library is None:
        raise ConfigError(
            "--tasks without a benchmark needs --library LIB: the tasks are scored on the library's own catalog"
        )
    else:
        bench = LibraryBenchmark(library, tasks)
    check_gold(tasks, bench.catalog(), str(tasks_path))
    return bench


@app.command("benchmarks")
def benchmarks_cmd() -> None:
    """List the available benchmarks."""
    from libra.benchmarks.registry import available

    for name in available():
        console.print(name)


@app.command("version")
def version_cmd() -> None:
    """Print the libra version."""
    from libra import __version__

    console.print(__version__)


def _register_optional_commands() -> None:
    for mod in ("libra.cli.library", "libra.cli.retrieve", "libra.cli.serve"):
        try:
            __import__(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


#: Exit status of an interrupted command (128 + SIGINT, what shells report for a process Ctrl-C stopped).
EXIT_INTERRUPTED = 130


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


def main(argv: list[str] | None = None) -> None:
    """Run the command line: status 0 on success, 2 on bad input (one ``error:`` line, before any work), 1 when a
    result cannot be written after the work, 130 when interrupted (Ctrl-C); never a traceback for any of them."""
    try:
        _register_optional_commands()
        code = app(args=argv, standalone_mode=False)
    except LibraError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # outside typer's own handling (while commands register)
        code = EXIT_INTERRUPTED
    except typer.Exit as exc:
        code = exc.exit_code
    except typer.Abort:
        code = 1
    except typer.TyperException as exc:
        # Usage errors (unknown option or command, a value refused by its option's check) from typer's bundled
        # click: its own message, as one line.
        print(f"error: {_one_line(exc.format_message())}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2))
    # Without standalone mode typer turns Ctrl-C into a returned 130 (and ``typer.Exit(n)`` into n): the command
    # has already unwound (its ``finally`` blocks closed worker pools), so only the status is left to give.
    if code == EXIT_INTERRUPTED:
        print("interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    # Run the canonical module's main: commands from cli_library register on `libra.cli.main.app`, not on `__main__`.
    from libra.cli.main import main as _main

    _main()
