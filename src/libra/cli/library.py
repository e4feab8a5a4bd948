"""``libra contracts``, ``build``, ``show`` and ``explain``: check contracts, build a library, print what it holds
(``retrieve`` is in :mod:`libra.cli.retrieve`, ``analyze`` in :mod:`libra.cli.evaluate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from libra._util.io import atomic_write_json
from libra.cli import options as opts
from libra.cli.console import console
from libra.cli.render import call_line, health_lines, relation_lines, server_lines, summary_line
from libra.errors import ConfigError
from libra.induction.config import (
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_DEPTH,
    DEFAULT_RETRY_SHARE,
)


def _proposer(
    bench: Any, proposer: str, base_url: str | None, model: str | None, cache: Path | None, concurrency: int
) -> Any:
    if proposer == "offline":
        if base_url or model:
            raise ConfigError("--llm-base-url/--llm-model only apply with --proposer llm")
        return "offline"
    if not base_url or not model:
        raise ConfigError(
            "--proposer llm needs --llm-base-url URL and --llm-model NAME (an OpenAI-compatible endpoint)"
        )
    from libra.contracts.llm.proposer import make_llm_proposer

    return make_llm_proposer(
        base_url,
        model,
        cache_path=str(cache) if cache else None,
        concurrency=concurrency,
        rules=getattr(bench, "contract_rules", "shared"),
        calling_convention=getattr(bench, "calling_convention", "signature"),
    )


_PROPOSER_OPT = opts.proposer_option()
_URL_OPT = opts.llm_base_url_option()
_MODEL_OPT = opts.llm_model_option()
_CACHE_OPT = opts.llm_cache_option()
_CONC_OPT = opts.llm_concurrency_option()


def contracts_cmd(
    benchmark: str | None = opts.benchmark_arg(
        "benchmark name (or give --tools / --config for your own tools)", required=False
    ),
    tools: list[str] | None = opts.tools_option(),
    config: Path | None = opts.config_option(),
    out: Path | None = opts.out_option(None, "write the contracts (JSON)"),
    json_path: Path | None = opts.json_option("write the summary (JSON)"),
    workers: int | None = opts.workers_option("isolated worker processes (0 = in-process for trusted runtimes)"),
    proposer: str = _PROPOSER_OPT,
    llm_base_url: str | None = _URL_OPT,
    llm_model: str | None = _MODEL_OPT,
    llm_cache: Path | None = _CACHE_OPT,
    llm_concurrency: int = _CONC_OPT,
) -> None:
    """Propose a contract per tool, check every template against the runtime, revise from feedback.

    Of a benchmark, of your own Python tools (--tools, repeatable) or of a project file (--config), as libra build.
    """
    from libra.contracts.check import check_contracts
    from libra.contracts.persist import save_contracts
    from libra.induction.build import open_runtime

    bench = _build_target(benchmark, tools, config)
    prop = _proposer(bench, proposer, llm_base_url, llm_model, llm_cache, llm_concurrency)
    catalog = bench.catalog()
    runtime = open_runtime(bench, workers)
    try:
        with console.status(f"checking contracts of {len(catalog)} tools..."):
            initial = prop.propose_all(catalog) if hasattr(prop, "propose_all") else None
            summary = check_contracts(catalog, runtime, initial, proposer=prop, fixtures=bench.fixtures())
    finally:
        runtime.close()
    counts = summary.counts()
    table = Table(title=f"{bench.name}: contracts")
    for col in ("tools", "templates", "matched", "revised", "invalid", "unbound"):
        table.add_column(col, justify="right")
    table.add_row(*(str(counts[c]) for c in ("tools", "templates", "matched", "revised", "invalid", "unbound")))
    console.print(table)
    if counts["templates"]:
        console.print(
            "templates whose observed outcome matched the expected one: "
            f"{100 * counts['matched'] / counts['templates']:.1f}%"
        )
    if out:
        save_contracts(out, summary.contracts, catalog)
    if json_path:
        payload = summary.to_dict()
        if hasattr(prop, "stats"):
            payload["proposer"] = prop.stats.to_dict() if hasattr(prop.stats, "to_dict") else dict(prop.stats)
        atomic_write_json(json_path, payload)


def build_cmd(
    ctx: typer.Context,
    benchmark: str | None = opts.benchmark_arg(
        "benchmark name (or give --tools / --config for your own tools)", required=False
    ),
    out: Path = opts.out_option(..., "library file to write (.json or .json.gz)"),
    tools: list[str] | None = opts.tools_option(),
    config: Path | None = opts.config_option(),
    workers: int | None = opts.workers_option(
        "isolated worker processes (default: CPU count, or the Ray cluster's CPUs with --executor ray; 0 = "
        "in-process for trusted runtimes)"
    ),
    executor: str = opts.executor_option(),
    proposer: str = _PROPOSER_OPT,
    llm_base_url: str | None = _URL_OPT,
    llm_model: str | None = _MODEL_OPT,
    llm_cache: Path | None = _CACHE_OPT,
    llm_concurrency: int = _CONC_OPT,
    embedder: str = opts.embedder_option(
        "field-name encoder h_f: minilm (default), hash[-N], st:<model>, openai:<model>[@url]"
    ),
    tau: float = opts.tau_option(),
    credit: str = opts.credit_option(),
    max_calls: int | None = opts.max_calls_option(
        "budget: tool invocations executed in total, checked between waves; memoised repeats are free "
        f"(default: {DEFAULT_MAX_CALLS:,})"
    ),
    max_depth: int | None = opts.max_depth_option(
        f"budget: longest chain of state-changing calls explored from the fresh state (default: {DEFAULT_MAX_DEPTH})"
    ),
    max_retry_calls: int | None = opts.max_retry_calls_option(
        "budget: tool invocations that retries of failed calls with other equally named values may execute, "
        f"on top of --max-calls (default: {DEFAULT_RETRY_SHARE:.0%} of --max-calls; 0 = no retries)"
    ),
    no_resume: bool = opts.no_resume_option(),
    quiet: bool = opts.quiet_option(),
    update: Path | None = opts.update_option(),
) -> None:
    """Build the executable library: contracts, candidate compositions, counterfactual tests.

    Of a benchmark, of your own Python tools (--tools, repeatable) or of a project file (--config). Options given on the
    command line win over the project file's build table. With --update LIB, only the tools that changed since LIB
    was built are built again; the relations between the others are kept with their evidence.
    """
    from libra.induction.build import BuildOptions, build_library
    from libra.induction.explore.engine import BuildConfig
    from libra.library.artifact import Library

    old = Library.load(update) if update is not None else None  # (a bad library ends the command before any work)
    bench = _build_target(benchmark, tools, config)
    v = _with_project_options(ctx, config)
    prop = _proposer(bench, v["proposer"], v["llm_base_url"], v["llm_model"], v["llm_cache"], v["llm_concurrency"])
    budgets = {k: v[k] for k in ("max_calls", "max_depth", "max_retry_calls") if v[k] is not None}
    build_config = BuildConfig(tau=v["tau"], credit=v["credit"], **budgets)
    build_opts = BuildOptions(
        proposer=prop,
        workers=v["workers"],
        executor=v["executor"],
        embedder=v["embedder"],
        config=build_config,
        resume=not v["no_resume"],
        progress=not v["quiet"],
    )
    lib = build_library(bench, out, build_opts, log=lambda m: console.print(m, style="dim", markup=False), update=old)
    _print_lines([summary_line(bench.name, lib.stats)])
    _print_update(lib.stats.get("update"))
    health = lib.stats.get("health")
    if isinstance(health, dict) and health:
        _print_lines(health_lines(health, with_warning=False))  # the build printed its warning on stderr
    console.print(f"library written to {out}", markup=False, highlight=False)


def _build_target(benchmark: str | None, tools: list[str] | None, config: Path | None) -> Any:
    """What ``build`` builds: a benchmark, ``--tools`` sources or a project file (exactly one of them)."""
    given = [name for name, value in (("a benchmark", benchmark), ("--tools", tools), ("--config", config)) if value]
    if len(given) != 1:
        what = " and ".join(given) if given else "nothing"
        raise ConfigError(f"give one of a benchmark name, --tools MODULE[:OBJECT] or --config libra.toml (got {what})")
    if benchmark:
        from libra.benchmarks.registry import get_benchmark

        return get_benchmark(benchmark)
    if tools:
        from libra.sources.python import PythonSource, parse_spec

        return PythonSource([parse_spec(t) for t in tools])
    from libra.sources.project import load_project

    return load_project(config).source()  # type: ignore[arg-type]


def _with_project_options(ctx: typer.Context, config: Path | None) -> dict[str, Any]:
    """The command's option values, with the project file's ``[build]`` values where the command line gave none."""
    values = dict(ctx.params)
    if config is None:
        return values
    from libra.sources.project import load_project

    for name, value in load_project(config).build.items():
        source = ctx.get_parameter_source(name)
        if source is None or source.name == "DEFAULT":
            values[name] = value
    return values


def _print_lines(lines: list[str]) -> None:
    """Plain lines, never read as rich markup (tool names and messages may hold [brackets])."""
    for line in lines:
        console.print(line, markup=False, highlight=False)


def _print_update(update: Any) -> None:
    """What an update rebuilt and what it kept (nothing for a build that was not one)."""
    if not isinstance(update, dict):
        return
    if update.get("refused"):
        _print_lines([f"update refused, everything built again: {update['refused']}"])
        return
    _print_lines(
        [
            f"update: {update.get('count', 0)} tools added, removed or changed; pairs re-tested "
            f"{update.get('pairs_retested', 0):,}, kept {update.get('pairs_kept', 0):,}; relations kept "
            f"{update.get('relations_kept', 0):,}"
        ]
    )


def show_cmd(
    library: Path = opts.library_arg(),
    json_path: Path | None = opts.json_option("write {stats, meta, edges} as JSON"),
    definitions: str | None = opts.definitions_option(),
    tools: list[str] | None = opts.tools_option("compare with these tools: which changed since the library was built"),
    config: Path | None = opts.config_option("compare with this project file's tools: which changed since the build"),
) -> None:
    """Print a library's relations, grouped by the tool that needs them, and the build's health (with --tools or
    --config: which tools changed since it was built).

    With --definitions, print its tools' definitions for an agent client's request instead (see libra retrieve
    --format).
    """
    from libra.library.artifact import Library

    lib = Library.load(library)
    changes = _changes_since(lib, tools, config) if tools or config else None
    if definitions:
        import json

        from libra.search.formats import definitions as tool_definitions

        tools_ = list(lib.catalog)
        names, about, schemas = (
            [t.name for t in tools_],
            [t.description for t in tools_],
            [t.parameters for t in tools_],
        )
        found = tool_definitions(definitions, names, about, schemas)
        print(json.dumps(found, ensure_ascii=False), flush=True)
        if json_path:
            atomic_write_json(json_path, {"stats": lib.stats, "meta": lib.meta, "edges": lib.edges_json()})
        return
    counts = lib.relation_counts()
    lines = [
        summary_line(lib.meta.get("benchmark", lib.catalog.name), lib.stats),
        "relations: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
        *relation_lines(lib.relations),
    ]
    health = lib.stats.get("health")
    if isinstance(health, dict) and health:
        lines += health_lines(health)
    lines += server_lines(lib.stats.get("mcp_servers"))
    if changes is not None:
        lines.append(changes.summary())
    _print_lines(lines)
    if json_path:
        doc = {"stats": lib.stats, "meta": lib.meta, "edges": lib.edges_json()}
        if changes is not None:
            doc["changes"] = changes.to_dict()
        atomic_write_json(json_path, doc)


def _changes_since(lib: Any, tools: list[str] | None, config: Path | None) -> Any:
    """How the tools given differ from those ``lib`` was built from (:class:`CatalogChanges`)."""
    from libra.induction.fingerprints import tool_fingerprints
    from libra.library.fingerprints import BuildFingerprints

    if lib.fingerprints is None:
        raise ConfigError(
            "this library records no fingerprints (built by an older libra), so it cannot say which tools "
            "changed: rebuild it with `libra build`"
        )
    return BuildFingerprints.from_dict(lib.fingerprints).changes(tool_fingerprints(_build_target(None, tools, config)))


#: How many similar tool names an unknown name's error suggests.
SUGGESTIONS = 5


def similar_names(name: str, names: list[str], limit: int = SUGGESTIONS) -> list[str]:
    """Names a mistyped ``name`` may have meant: close spellings first (difflib, so ``Shop.lgoin`` finds
    ``Shop.login``), then names containing it (so ``login`` finds ``Shop.login``), case-insensitively."""
    import difflib

    lowered = {n.lower(): n for n in names}
    close = [lowered[n] for n in difflib.get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.6)]
    # A qualified name's last part alone (``tail`` for ``GorillaFileSystem.tail``) is compared too.
    short = {n.rsplit(".", 1)[-1].lower(): n for n in names}
    close += [short[n] for n in difflib.get_close_matches(name.lower(), list(short), n=limit, cutoff=0.75)]
    close += [n for n in names if name.lower() in n.lower()]
    return list(dict.fromkeys(close))[:limit]


def explain_cmd(
    library: Path = opts.library_arg(),
    tool: str = opts.tool_arg(),
    evidence: bool = typer.Option(True, "--evidence/--no-evidence", help="print the calls behind each relation"),
) -> None:
    """A tool's providers and consumers, with the executions that support each relation."""
    from libra.library.artifact import Library

    lib = Library.load(library)
    if tool not in lib.catalog:
        close = similar_names(tool, lib.catalog.names)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"no tool named {tool!r} in this library{hint}")
    for title, rels, other in (
        ("providers", lib.providers_of(tool), "provider"),
        ("consumers", lib.consumers_of(tool), "consumer"),
    ):
        console.print(f"{title} of {tool} ({len(rels)})", style="bold", markup=False, highlight=False)
        for r in rels:
            field = f" {r.provider_field} -> {r.consumer_input}" if r.provider_field else ""
            sim = f" (field similarity {r.similarity:.2f})" if r.similarity is not None else ""
            console.print(f"  {getattr(r, other)}  [{r.kind}]{field}{sim}", markup=False, highlight=False)
            if evidence:
                for key, label in (
                    ("provider_call", "provider"),
                    ("consumer_call", "consumer"),
                    ("control_call", "control"),
                    ("before_call", "before"),
                    ("after_call", "after"),
                ):
                    if key in r.evidence:
                        console.print(f"      {label:>8}: {call_line(r.evidence[key])}", markup=False, highlight=False)
