"""The command line's options, each defined once with the check of its value.

Every command that takes ``--ks`` (or ``--embedder``, ``--json``...) gets it from one factory here, so the option
means the same and is refused the same way everywhere. Checks run while the command line is parsed, before a
command starts any work: a bad value ends in one ``error: Invalid value for '--ks': ...`` line and exit status 2
(see :func:`libra.cli.main.main`). Checks that already exist beside what they check (document styles, retrieval
methods, embedder names) are called from here, not repeated. Checks of one plain value live in
:mod:`libra._util.checks`, and the options a project file's ``[build]`` table may set too are defined in
:mod:`libra.sources.build_options` (the project file is read below the command line): both are used from here.

Checks of one option alone live here; a rule that ties options together (``--proposer llm`` needs
``--llm-base-url``) stays in its command, still before any work.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import typer

from libra._util.checked_options import checked, option
from libra._util.checks import (
    existing_dir,
    non_negative_int,
    one_of,
    port_number,
    positive_int,
    positive_number,
    some_text,
    unit_interval,
    writable_file,
)
from libra.errors import ConfigError

# The options a project file's [build] table may set too, defined below the command line; used from here like
# every other option.
from libra.sources.build_options import (  # noqa: F401
    CREDITS,
    PROPOSERS,
    credit_option,
    embedder_option,
    executor_option,
    llm_base_url_option,
    llm_cache_option,
    llm_concurrency_option,
    llm_model_option,
    max_calls_option,
    max_depth_option,
    max_retry_calls_option,
    no_resume_option,
    proposer_option,
    quiet_option,
    tau_option,
    workers_option,
)


def png_file(value: Path) -> None:
    """The plot is drawn after every analysis: a missing plotting library must fail before them."""
    if importlib.util.find_spec("matplotlib") is None:
        raise ConfigError("--plot needs matplotlib: pip install 'libra-tools[plot]'")
    writable_file(value)


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
    from libra.eval.methods import check_method

    check_method(value)


def known_agent_base(value: str) -> None:
    from libra.eval.methods import check_agent_base

    check_agent_base(value)


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


def tools_source(value: str) -> None:
    """Imports the source and finds its tools: a missing module or object, a module without tools or a tool
    without type hints must fail here, before a build starts."""
    from libra.sources.python import parse_spec, resolve

    resolve(parse_spec(value))


def project_file(value: Path) -> None:
    """The whole file is read and checked (keys, sources, build options) before the build starts."""
    from libra.sources.project import load_project

    load_project(value)


def tasks_file(value: Path) -> None:
    """Every line is checked here; whether gold names exist is checked against the catalog by the command."""
    from libra.eval.tasks_file import read_tasks

    read_tasks(value)


TRANSPORTS = ("stdio", "http")
RETRIEVE_FORMATS = ("table", "json", "anthropic", "openai")
DEFINITION_FORMATS = ("anthropic", "openai")


# -- options and arguments -------------------------------------------------------------------------------------
def benchmark_arg(help: str = "benchmark name", required: bool = True) -> Any:
    return typer.Argument(... if required else None, help=help, callback=checked(known_benchmark), show_default=False)


def library_arg(help: str = "library file") -> Any:
    return typer.Argument(..., help=help, callback=checked(library_file))


def queries_arg(help: str = "one or more requests") -> Any:
    return typer.Argument(..., help=help, callback=checked(some_text))


def tool_arg(help: str = "fully qualified tool name") -> Any:
    return typer.Argument(..., help=help, callback=checked(some_text))


def k_option(default: int | None, help: str) -> Any:
    return option(default, "--k", positive_int, help)


def ks_option(default: int | None, help: str = "seed size Ks") -> Any:
    return option(default, "--ks", positive_int, help)


def kc_option(default: int | None, help: str = "candidate set size Kc") -> Any:
    return option(default, "--kc", positive_int, help)


def hops_option(default: int | None, help: str = "hop depth") -> Any:
    return option(default, "--hops", positive_int, help)


def selection_option(default: str | None, help: str = "provider selection both|field|dense|all") -> Any:
    return option(default, "--selection", _selection, help)


def score_space_option(default: str | None, help: str) -> Any:
    return option(default, "--score-space", _score_space, help)


def temperature_option(help: str = "softmax temperature over cosines (default: the embedder's own)") -> Any:
    return option(None, "--temperature", positive_number, help)


def document_option(help: str = "what dense retrieval embeds per tool: text or json") -> Any:
    from libra.retrieval.documents import DEFAULT_DOCUMENT

    return option(DEFAULT_DOCUMENT, "--document", known_document, help)


def methods_option(default: list[str], help: str = "retrieval method (repeatable)") -> Any:
    return option(default, "--method", known_method, help, "-m")


def base_option(
    help: str = "base retriever: dense, bm25, hybrid (BM25 + dense by reciprocal ranks) or fusion (by normalised "
    "scores)",
) -> Any:
    from libra.retrieval.defaults import DEFAULT_BASE

    return option(DEFAULT_BASE, "--base", known_base, help)


def decay_option(
    default: float | None,
    help: str = "what a hop past the first keeps of its gain, from 0 to 1 (with --hops 2 or more)",
) -> Any:
    return option(default, "--decay", unit_interval, help)


def agent_base_option(
    help: str = "toolreagt: the method behind the agent's tool_retriever (default libra, the paper's agentic row)",
) -> Any:
    return option(None, "--base", known_agent_base, help)


def iterations_option(help: str = "toolreagt: most agent iterations per task (default 10)") -> Any:
    return option(None, "--iterations", positive_int, help)


def tgr_neighbours_option(
    help: str = (
        "tgr-adapt: label each tool's pairs with its N nearest tools by dense cosine (default 10; 0 = every "
        "pair, quadratic)"
    ),
) -> Any:
    return option(None, "--tgr-neighbours", non_negative_int, help)


def library_option(help: str) -> Any:
    return option(None, "--library", library_file, help)


def json_option(help: str) -> Any:
    return option(None, "--json", writable_file, help)


def runs_option(help: str = "write per-task rankings (TREC for .trec/.run, else JSONL)") -> Any:
    return option(None, "--runs", writable_file, help)


def plot_option(help: str = "write a PNG comparing P/R/NDCG across methods") -> Any:
    return option(None, "--plot", png_file, help)


def out_option(default: Any, help: str) -> Any:
    return option(default, "--out", writable_file, help)


def transport_option() -> Any:
    return option(
        "stdio",
        "--transport",
        one_of(TRANSPORTS),
        "stdio (default: the client starts the server) or http (Streamable HTTP at /mcp)",
    )


def host_option() -> Any:
    return option("127.0.0.1", "--host", some_text, "address to listen on with --transport http")


def port_option() -> Any:
    return option(
        8000, "--port", port_number, "port to listen on with --transport http (0 = any free port, printed on stderr)"
    )


def retrieve_format_option() -> Any:
    return option(
        "table",
        "--format",
        one_of(RETRIEVE_FORMATS),
        (
            "table (default), json (results with prerequisites), anthropic (tool_reference blocks, names mapped to "
            "^[a-zA-Z0-9_-]{1,64}$ as show --definitions anthropic declares them) or openai (a tool_search_output "
            "item); one JSON line per request"
        ),
    )


def call_id_option() -> Any:
    return option(
        None,
        "--call-id",
        some_text,
        (
            "with --format openai: the call_id of the model's tool_search_call the item answers (repeatable: one per "
            "request, in order)"
        ),
    )


def definitions_option() -> Any:
    return option(
        None,
        "--definitions",
        one_of(DEFINITION_FORMATS),
        (
            "print every tool's definition for a client request instead, with defer_loading: anthropic (the tools "
            "retrieve --format anthropic's tool_reference blocks name) or openai (function tools in a namespace per "
            "app); one JSON array"
        ),
    )


def tools_option(
    help: str = "your own tools: [NAMESPACE=]MODULE[:OBJECT] or [NAMESPACE=]path/to/file.py[:OBJECT] (repeatable)",
) -> Any:
    return option(None, "--tools", tools_source, help)


def workdir_option(help: str) -> Any:
    return option(None, "--workdir", existing_dir, help)


def update_option(
    help: str = "a library an earlier build of the same tools wrote: build again only what changed since",
) -> Any:
    return option(None, "--update", library_file, help)


def config_option(help: str = "project file: libra.toml, or pyproject.toml with a tool.libra table") -> Any:
    return option(None, "--config", project_file, help)


def tasks_option(help: str = 'your own tasks: JSON lines {"id", "query", "gold"}') -> Any:
    return option(None, "--tasks", tasks_file, help)


def _split(value: str) -> None:
    from libra.benchmarks.splits import check_split

    check_split(value)


def split_option(help: str = "which tasks: all, or the benchmark's fixed development (dev) or test half") -> Any:
    return option("all", "--split", _split, help)
