"""``libra contracts``, ``build``, ``show`` and ``explain``: check contracts, build a library, print what it holds
(``retrieve`` is in :mod:`libra.cli.retrieve`, ``analyze`` in :mod:`libra.cli.evaluate`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from libra._util.io import atomic_write_json
from libra.cli import options as opts
from libra.cli.console import console
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
    benchmark: str = opts.benchmark_arg(),
    out: Path | None = opts.out_option(None, "write the contracts (JSON)"),
    json_path: Path | None = opts.json_option("write the summary (JSON)"),
    workers: int | None = opts.workers_option("isolated worker processes (0 = in-process for trusted runtimes)"),
    proposer: str = _PROPOSER_OPT,
    llm_base_url: str | None = _URL_OPT,
    llm_model: str | None = _MODEL_OPT,
    llm_cache: Path | None = _CACHE_OPT,
    llm_concurrency: int = _CONC_OPT,
) -> None:
    """Propose a contract per tool, check every template against the runtime, revise from feedback."""
    from libra.benchmarks.registry import get_benchmark
    from libra.contracts.check import check_contracts
    from libra.contracts.persist import save_contracts
    from libra.induction.build import open_runtime

    bench = get_benchmark(benchmark)
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
) -> None:
    """Build the executable library: contracts, candidate compositions, counterfactual tests.

    Of a benchmark, of your own Python tools (--tools, repeatable) or of a project file (--config). Options given on the
    command line win over the project file's build table.
    """
    from libra.induction.build import BuildOptions, build_library
    from libra.induction.explore.engine import BuildConfig

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
    lib = build_library(bench, out, build_opts, log=lambda m: console.print(f"[dim]{m}[/dim]"))
    _print_stats(bench.name, lib.stats)
    _print_health(lib.stats.get("health"))
    console.print(f"library written to {out}")


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


def _print_stats(name: str, stats: dict[str, Any]) -> None:
    table = Table(title=f"{name}: library construction (paper Table 5 columns)")
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


#: How many never-succeeded tools and rejection messages ``libra show`` names before summarising the rest.
HEALTH_LIST_LIMIT = 5


def _named_list(names: list[str], limit: int = HEALTH_LIST_LIMIT) -> str:
    """``a, b, c and 4 more``: a long list stays one readable line."""
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def _one_line(message: str, width: int = 120) -> str:
    """A rejection message as one terminal line: tracebacks and long payloads must not flood the summary."""
    text = " ".join(message.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def health_lines(health: dict[str, Any]) -> list[tuple[str, str]]:
    """The build health summary as (text, rich style) lines; keys a library does not record are skipped, so a
    summary written by an older or newer build still prints what it has."""
    lines: list[tuple[str, str]] = []
    never = list(health.get("tools_never_succeeded") or [])
    if "tools" in health:
        lines.append((f"  tools: {health['tools']}, never called successfully: {len(never)}", ""))
    if never:
        lines.append((f"    {_named_list(never)}", ""))
    if "templates" in health:
        lines.append((f"  templates matched: {health.get('templates_matched', 0)} of {health['templates']}", ""))
    if "inconclusive_tests" in health:
        lines.append((f"  inconclusive tests: {health['inconclusive_tests']}", ""))
    no_relation = health.get("no_relation")
    if isinstance(no_relation, dict) and no_relation.get("causes"):
        causes = {str(c): list(tools) for c, tools in no_relation["causes"].items()}  # in the build's order of causes
        lines.append((f"  tools with no outgoing relation: {sum(len(t) for t in causes.values())}, by cause:", ""))
        for cause, tools in causes.items():
            lines.append((f"    {len(tools):>5} x {cause.replace('_', ' ')}: {_named_list(tools)}", ""))
    conflicts = health.get("hint_conflicts") or {}
    if conflicts:
        lines.append(("  annotations contradicted by what the tools did:", ""))
        for tool, what in list(conflicts.items())[:HEALTH_LIST_LIMIT]:
            lines.append((f"    {tool}: {what}", ""))
    rejections = list(health.get("top_rejections") or [])
    if rejections:
        lines.append(("  most common rejections:", ""))
        for message, count in rejections[:HEALTH_LIST_LIMIT]:
            lines.append((f"    {count:>5} x {_one_line(str(message))}", ""))
    if health.get("warning"):
        lines.append((f"  warning: {health['warning']}", "bold yellow"))
    return lines


def _print_health(health: Any) -> None:
    """The ``Build health`` block of ``libra show`` (nothing for libraries built before builds recorded it)."""
    if not isinstance(health, dict) or not health:
        return
    from rich.text import Text

    console.print(Text("Build health", style="bold"))
    for text, style in health_lines(health):
        console.print(Text(text, style=style))  # Text: tool names and messages may hold [brackets], never markup


def _print_servers(servers: Any) -> None:
    """The ``MCP servers`` block of ``libra show`` (``stats.mcp_servers``): whether restores restart each server, who
    decided (the project file's option, what the build learned, or the safe default) and why."""
    if not isinstance(servers, dict) or not servers:
        return
    from rich.text import Text

    console.print(Text("MCP servers", style="bold"))
    for name, s in servers.items():
        restart = "restarted on restore" if s.get("restart_on_restore") else "not restarted on restore"
        console.print(Text(f"  {name}: {restart} ({s.get('decided_by', '?')}: {s.get('why', '')})"))


def show_cmd(
    library: Path = opts.library_arg(),
    json_path: Path | None = opts.json_option("write {stats, edges} as JSON"),
) -> None:
    """Print a library's statistics and relation counts."""
    from libra.library.artifact import Library

    lib = Library.load(library)
    _print_stats(lib.meta.get("benchmark", lib.catalog.name), lib.stats)
    counts = lib.relation_counts()
    console.print("relations: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    _print_health(lib.stats.get("health"))
    _print_servers(lib.stats.get("mcp_servers"))
    if json_path:
        atomic_write_json(json_path, {"stats": lib.stats, "meta": lib.meta, "edges": lib.edges_json()})


def _call_line(call: dict[str, Any]) -> str:
    args = json.dumps(call.get("arguments", {}), ensure_ascii=False)
    rec = call.get("record", {})
    out = json.dumps(rec.get("output"), ensure_ascii=False, default=str)
    if len(out) > 120:
        out = out[:117] + "..."
    return f"{call.get('tool')}({args}) -> {rec.get('status')} {out}"


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
        console.print(f"[bold]{title} of {tool}[/bold] ({len(rels)})")
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
                        console.print(f"      {label:>8}: {_call_line(r.evidence[key])}", markup=False, highlight=False)
