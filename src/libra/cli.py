"""The ``libra`` command line.

Every user-facing failure is a :class:`~libra.errors.LibraError`; :func:`main` prints it as one line on stderr and
exits with status 2, never with a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from .errors import ConfigError, LibraError
from .retrieval.documents import DEFAULT_DOCUMENT

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, help="Executable tool libraries and graph retrieval for LLM agents.")
console = Console()
err_console = Console(stderr=True)


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


@app.command("eval")
def eval_cmd(
    benchmark: str = typer.Argument(..., help="benchmark name, e.g. bfcl"),
    method: List[str] = typer.Option(["bm25", "dense"], "--method", "-m", help="retrieval method (repeatable)"),
    k: Optional[int] = typer.Option(None, "--k", help="cutoff K (default: the benchmark's, 15 for BFCL)"),
    embedder: str = typer.Option("minilm", "--embedder", help="minilm (default, offline), hash, st:<model>, openai:<model>[@url]"),
    document: str = typer.Option(DEFAULT_DOCUMENT, "--document", help="what dense methods embed per tool: text (metadata as prose) or json (the paper's serialization)"),
    library: Optional[Path] = typer.Option(None, "--library", help="executable library for graph methods (built when omitted)"),
    json_path: Optional[Path] = typer.Option(None, "--json", help="write the results as JSON"),
    runs: Optional[Path] = typer.Option(None, "--runs", help="write per-task rankings (TREC for .trec/.run, else JSONL)"),
    workers: Optional[int] = typer.Option(None, "--workers", help="worker processes when a library must be built"),
    ks: Optional[int] = typer.Option(None, "--ks", help="graph methods: seed size Ks (default 15)"),
    kc: Optional[int] = typer.Option(None, "--kc", help="graph methods: candidate set size Kc (default 20)"),
    selection: Optional[str] = typer.Option(None, "--selection", help="graph methods: provider selection both|field|dense|all"),
    hops: Optional[int] = typer.Option(None, "--hops", help="graph methods: hop depth (default 1)"),
    score_space: Optional[str] = typer.Option(None, "--score-space", help="graph methods: average the base retriever's probabilities (default, when it declares a temperature) or its similarities (the paper's)"),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="graph methods: softmax temperature over cosine similarities (default: the embedder's own, 0.05 for minilm)"),
) -> None:
    """Evaluate retrieval methods on a benchmark: P/R/NDCG@K, with the paper's figures beside ours."""
    from .benchmarks.registry import get_benchmark
    from .eval.methods import EvalOptions, get_method
    from .eval.runner import results_json, run_method, write_json, write_runs
    from .retrieval.documents import check_style
    from .retrieval.graph_methods import GRAPH_METHODS, build_options_for, default_library_path, obtain_library

    check_style(document)
    bench = get_benchmark(benchmark)
    for m in method:
        get_method(m)  # fail fast on an unknown method, before any work
    kk = bench.default_k if k is None else k
    if kk < 1:
        raise ConfigError(f"--k must be a positive integer, got {kk}")
    catalog = bench.catalog()
    tasks = bench.tasks()
    extra = {key: v for key, v in (("ks", ks), ("kc", kc), ("selection", selection), ("hops", hops), ("score_space", score_space), ("temperature", temperature)) if v is not None}
    check_graph_options(selection, score_space, temperature)
    opts = EvalOptions(k=kk, embedder=embedder, document=document, library=str(library) if library else None, workers=workers, extra=extra)
    results = []
    if library is None and any(m.strip().lower() in GRAPH_METHODS for m in method):
        path = default_library_path(bench, catalog, options=build_options_for(opts))
        if not path.exists():  # build before the spinner starts, so the build's own progress shows alone
            console.print(f"building {bench.name}'s library once; later runs reuse {path}")
            obtain_library(bench, catalog, opts)
    if library is not None and any(m.strip().lower() in GRAPH_METHODS for m in method):
        obtain_library(bench, catalog, opts)  # a bad --library is refused before any method runs (the methods reuse it)
    for m in method:
        with console.status(f"running {m} on {bench.name} ({len(tasks)} tasks)..."):
            results.append(run_method(m, bench, catalog, tasks, opts))
    table = Table(title=f"{bench.name}@{kk}: {len(tasks)} tasks, {len(catalog)} tools")
    for col in ("method", "P", "R", "NDCG", "paper P", "paper R", "paper NDCG", "seconds"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for r in results:
        paper = bench.paper.get(r.method) if kk == bench.default_k else None
        table.add_row(
            r.method,
            _fmt(r.scores.precision),
            _fmt(r.scores.recall),
            _fmt(r.scores.ndcg),
            *(_fmt(x) for x in (paper or (None, None, None))),
            f"{r.seconds:.1f}",
        )
    console.print(table)
    notes = getattr(bench, "paper_notes", {})
    for r in results:
        if r.method in notes and kk == bench.default_k:
            console.print(f"[dim]{r.method}: {notes[r.method]}[/dim]")
    if json_path:
        write_json(json_path, results_json(bench, kk, len(tasks), results))
    if runs:
        write_runs(runs, tasks, results, kk)


def check_graph_options(selection: str | None, score_space: str | None, temperature: float | None) -> None:
    """One-line errors for the propagation options shared by ``eval`` and ``retrieve``."""
    from .retrieval.graph import SCORE_SPACES, SELECTIONS

    if selection is not None and selection not in SELECTIONS:
        raise ConfigError(f"--selection must be one of {', '.join(SELECTIONS)}; got {selection!r}")
    if score_space is not None and score_space not in SCORE_SPACES:
        raise ConfigError(f"--score-space must be {' or '.join(SCORE_SPACES)}; got {score_space!r}")
    if temperature is not None and not temperature > 0:
        raise ConfigError(f"--temperature must be a positive number, got {temperature}")


@app.command("benchmarks")
def benchmarks_cmd() -> None:
    """List the available benchmarks."""
    from .benchmarks.registry import available

    for name in available():
        console.print(name)


@app.command("version")
def version_cmd() -> None:
    """Print the libra version."""
    from . import __version__

    console.print(__version__)


def _register_optional_commands() -> None:
    for mod in ("libra.cli_library", "libra.cli_retrieve"):
        try:
            __import__(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


def main(argv: list[str] | None = None) -> None:
    _register_optional_commands()
    try:
        app(args=argv, standalone_mode=False)
    except LibraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        # Usage errors (unknown option or command, bad value) come from typer's bundled click: print its own
        # message, never a traceback.
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            exc.show()
            sys.exit(exc.exit_code)
        if type(exc).__name__ == "Abort":
            sys.exit(1)
        raise


if __name__ == "__main__":
    # Run the canonical module's main: commands from cli_library register on `libra.cli.app`, not on `__main__`.
    from libra.cli import main as _main

    _main()
