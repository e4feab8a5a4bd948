"""The command line's options, each defined once with the check of its value.

Every command that takes ``--ks`` (or ``--embedder``, ``--json``...) gets it from one factory here, so the option
means the same and is refused the same way everywhere. Checks run while the command line is parsed, before a
command starts any work: a bad value ends in one ``error: Invalid value for '--ks': ...`` line and exit status 2
(see :func:`libra.cli.main.main`). Checks that already exist beside what they check (document styles, retrieval
methods, embedder names) are called from here, not repeated.

Checks of one option alone live here; a rule that ties options together (``--proposer llm`` needs
``--llm-base-url``) stays in its command, still before any work.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import typer

from libra._util.io import write_problem
from libra.errors import ConfigError

Check = Callable[[Any], None]  # raises ValueError or ConfigError with the reason a value is refused


def _callback(check: Check) -> Callable[..., Any]:
    """A typer callback applying ``check`` to the value (each item of a list; None = option not given)."""

    def callback(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is None or ctx.resilient_parsing:  # resilient parsing: shell completion, never refuse there
            return value
        for item in value if isinstance(value, (list, tuple)) else (value,):
            try:
                check(item)
            except (ValueError, ConfigError) as exc:
                raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None
        return value

    return callback


# -- checks of one value ---------------------------------------------------------------------------------------
def positive_int(value: int) -> None:
    if value < 1:
        raise ValueError(f"must be a positive integer, got {value}")


def non_negative_int(value: int) -> None:
    if value < 0:
        raise ValueError(f"must be 0 or more, got {value}")


def positive_number(value: float) -> None:
    """Finite too: an infinite temperature flattens every score to one value and ranks nothing."""
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a positive finite number, got {value}")


def unit_interval(value: float) -> None:
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"must be between 0 and 1, got {value}")


def one_of(choices: Sequence[str]) -> Check:
    def check(value: str) -> None:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}; got {value!r}")

    return check


def some_text(value: str) -> None:
    """Empty or blank text would be taken as a real request and answered with arbitrary tools."""
    if not value.strip():
        raise ValueError("must not be empty")


def http_url(value: str) -> None:
    parts = urlparse(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"must be an http:// or https:// URL, got {value!r}")


def writable_file(value: Path) -> None:
    problem = write_problem(value)
    if problem:
        raise ValueError(f"cannot write {value}: {problem}")


def writable_dir(value: Path) -> None:
    problem = write_problem(value, directory=True)
    if problem:
        raise ValueError(f"cannot write into {value}: {problem}")


def png_file(value: Path) -> None:
    """The plot is drawn after every analysis: a missing plotting library must fail before them."""
    if importlib.util.find_spec("matplotlib") is None:
        raise ConfigError("--plot needs matplotlib: pip install 'libra-tools[plot]'")
    writable_file(value)


def existing_dir(value: Path) -> None:
    if not value.expanduser().is_dir():
        raise ValueError(f"{value} is not a directory")


def library_file(value: Path) -> None:
    """Existence only: what is inside is checked when the library is loaded."""
    if value.is_dir():
        raise ValueError(f"{value} is a directory, not a library file")
    if not value.exists():
        raise ValueError(f"no library file at {value}: build one with `libra build BENCHMARK --out {value}`")


def known_benchmark(value: str) -> None:
    from libra.benchmarks.registry import available

    if value.strip().lower() not in available():
        raise ConfigError(f"unknown benchmark {value!r}: choose one of {', '.join(available())}")


def known_method(value: str) -> None:
    from libra.eval.methods import get_method

    get_method(value)


def known_agent_base(value: str) -> None:
    from libra.eval.methods import check_agent_base

    check_agent_base(value)


def known_embedder(value: str) -> None:
    from libra.embeddings.embedders import parse_embedder

    parse_embedder(value)


def known_document(value: str) -> None:
    from libra.retrieval.documents import check_style

    check_style(value)


def known_base(value: str) -> None:
    from libra.search.explain import check_base

    check_base(value)


def _selection(value: str) -> None:
    from libra.retrieval.graph import SELECTIONS

    one_of(SELECTIONS)(value)


def _score_space(value: str) -> None:
    from libra.retrieval.graph import SCORE_SPACES

    one_of(SCORE_SPACES)(value)


def port_number(value: int) -> None:
    """0 asks the system for a free port (the one chosen is printed)."""
    if not 0 <= value <= 65535:
        raise ValueError(f"must be a port number from 0 to 65535, got {value}")


def tools_source(value: str) -> None:
    """Imports the source and finds its tools: a missing module or object, a module without tools or a tool
    without type hints must fail here, before a build starts."""
    from libra.sources.python import parse_spec, resolve

    resolve(parse_spec(value))


def executor_spec(value: str) -> None:
    """``local``, ``ray`` or ``ray:ADDRESS``; ``ray`` without Ray installed is refused here, before any work."""
    from libra.runtime.workers.ray import ExecutorSpec

    ExecutorSpec.parse(value)


def project_file(value: Path) -> None:
    """The whole file is read and checked (keys, sources, build options) before the build starts."""
    from libra.sources.project import load_project

    load_project(value)


def tasks_file(value: Path) -> None:
    """Every line is checked here; whether gold names exist is checked against the catalog by the command."""
    from libra.eval.tasks_file import read_tasks

    read_tasks(value)


PROPOSERS = ("offline", "llm")
TRANSPORTS = ("stdio", "http")
RETRIEVE_FORMATS = ("table", "json", "anthropic", "openai")
CREDITS = ("origin", "export")


# -- options and arguments -------------------------------------------------------------------------------------
def _opt(default: Any, name: str, check: Check, help: str, *aliases: str) -> Any:
    return typer.Option(default, name, *aliases, help=help, callback=_callback(check))


def benchmark_arg(help: str = "benchmark name", required: bool = True) -> Any:
    return typer.Argument(... if required else None, help=help, callback=_callback(known_benchmark), show_default=False)


def library_arg(help: str = "library file") -> Any:
    return typer.Argument(..., help=help, callback=_callback(library_file))


def queries_arg(help: str = "one or more requests") -> Any:
    return typer.Argument(..., help=help, callback=_callback(some_text))


def tool_arg(help: str = "fully qualified tool name") -> Any:
    return typer.Argument(..., help=help, callback=_callback(some_text))


def k_option(default: int | None, help: str) -> Any:
    return _opt(default, "--k", positive_int, help)


def ks_option(default: int | None, help: str = "seed size Ks") -> Any:
    return _opt(default, "--ks", positive_int, help)


def kc_option(default: int | None, help: str = "candidate set size Kc") -> Any:
    return _opt(default, "--kc", positive_int, help)


def hops_option(default: int | None, help: str = "hop depth") -> Any:
    return _opt(default, "--hops", positive_int, help)


def selection_option(default: str | None, help: str = "provider selection both|field|dense|all") -> Any:
    return _opt(default, "--selection", _selection, help)


def score_space_option(default: str | None, help: str) -> Any:
    return _opt(default, "--score-space", _score_space, help)


def temperature_option(help: str = "softmax temperature over cosines (default: the embedder's own)") -> Any:
    return _opt(None, "--temperature", positive_number, help)


def embedder_option(help: str = "minilm (default, offline), hash[-N], st:<model>, openai:<model>[@url]") -> Any:
    return _opt("minilm", "--embedder", known_embedder, help)


def document_option(help: str = "what dense retrieval embeds per tool: text or json") -> Any:
    from libra.retrieval.documents import DEFAULT_DOCUMENT

    return _opt(DEFAULT_DOCUMENT, "--document", known_document, help)


def methods_option(default: list[str], help: str = "retrieval method (repeatable)") -> Any:
    return _opt(default, "--method", known_method, help, "-m")


def base_option(help: str = "base retriever: dense (default) or hybrid (BM25 + dense)") -> Any:
    return _opt("dense", "--base", known_base, help)


def agent_base_option(
    help: str = "toolreagt: the method behind the agent's tool_retriever (default libra, the paper's agentic row)",
) -> Any:
    return _opt(None, "--base", known_agent_base, help)


def iterations_option(help: str = "toolreagt: most agent iterations per task (default 10)") -> Any:
    return _opt(None, "--iterations", positive_int, help)


def tgr_neighbours_option(
    help: str = (
        "tgr-adapt: label each tool's pairs with its N nearest tools by dense cosine (default 10; 0 = every "
        "pair, quadratic)"
    ),
) -> Any:
    return _opt(None, "--tgr-neighbours", non_negative_int, help)


def library_option(help: str) -> Any:
    return _opt(None, "--library", library_file, help)


def workers_option(help: str) -> Any:
    return _opt(None, "--workers", non_negative_int, help)


def executor_option() -> Any:
    return _opt(
        "local",
        "--executor",
        executor_spec,
        (
            "where tool calls run: local (worker processes here, default), ray (a private local Ray) or "
            "ray:ADDRESS (an existing Ray cluster; needs libra-tools[ray])"
        ),
    )


def json_option(help: str) -> Any:
    return _opt(None, "--json", writable_file, help)


def runs_option(help: str = "write per-task rankings (TREC for .trec/.run, else JSONL)") -> Any:
    return _opt(None, "--runs", writable_file, help)


def plot_option(help: str = "write a PNG comparing P/R/NDCG across methods") -> Any:
    return _opt(None, "--plot", png_file, help)


def out_option(default: Any, help: str) -> Any:
    return _opt(default, "--out", writable_file, help)


def proposer_option() -> Any:
    return _opt("offline", "--proposer", one_of(PROPOSERS), "offline (default, no LLM) or llm")


def llm_base_url_option() -> Any:
    return _opt(None, "--llm-base-url", http_url, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")


def llm_model_option() -> Any:
    return _opt(None, "--llm-model", some_text, "model name served at --llm-base-url")


def llm_cache_option() -> Any:
    return _opt(None, "--llm-cache", writable_dir, "directory caching LLM replies (a rebuild makes no calls)")


def llm_concurrency_option() -> Any:
    return _opt(4, "--llm-concurrency", positive_int, "LLM requests in flight at once")


def tau_option() -> Any:
    return _opt(0.75, "--tau", unit_interval, "field alignment threshold for compatibility relations")


def credit_option() -> Any:
    return _opt(
        "origin",
        "--credit",
        one_of(CREDITS),
        (
            "who provides a value: origin (the call that introduced it) or export (every call that exports it, "
            "as in the paper)"
        ),
    )


def max_calls_option(help: str) -> Any:
    return _opt(None, "--max-calls", positive_int, help)


def max_depth_option(help: str) -> Any:
    return _opt(None, "--max-depth", non_negative_int, help)


def max_retry_calls_option(help: str) -> Any:
    return _opt(None, "--max-retry-calls", non_negative_int, help)


def transport_option() -> Any:
    return _opt(
        "stdio",
        "--transport",
        one_of(TRANSPORTS),
        "stdio (default: the client starts the server) or http (Streamable HTTP at /mcp)",
    )


def host_option() -> Any:
    return _opt("127.0.0.1", "--host", some_text, "address to listen on with --transport http")


def port_option() -> Any:
    return _opt(
        8000, "--port", port_number, "port to listen on with --transport http (0 = any free port, printed on stderr)"
    )


def retrieve_format_option() -> Any:
    return _opt(
        "table",
        "--format",
        one_of(RETRIEVE_FORMATS),
        (
            "table (default), json (results with prerequisites), anthropic (tool_reference blocks) or openai (a "
            "tool_search_output item); one JSON line per request"
        ),
    )


def tools_option(
    help: str = "your own tools: [NAMESPACE=]MODULE[:OBJECT] or [NAMESPACE=]path/to/file.py[:OBJECT] (repeatable)",
) -> Any:
    return _opt(None, "--tools", tools_source, help)


def workdir_option(help: str) -> Any:
    return _opt(None, "--workdir", existing_dir, help)


def config_option(help: str = "project file: libra.toml, or pyproject.toml with a tool.libra table") -> Any:
    return _opt(None, "--config", project_file, help)


def tasks_option(help: str = 'your own tasks: JSON lines {"id", "query", "gold"}') -> Any:
    return _opt(None, "--tasks", tasks_file, help)
