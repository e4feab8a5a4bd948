"""The options of ``libra build`` that a project file's ``[build]`` table may set too, each defined once.

Why here: a project file is read and checked below the command line, yet ``max-calls = 0`` in its ``[build]``
table must be refused exactly as ``--max-calls 0`` is, with the same words, before any work. So the definitions
of these options (their types, defaults and checks) live here, the ``build`` command declares its options with
these factories, and :func:`build_option_params` converts a ``[build]`` value with the very same parameters
(``tests/test_build_options.py`` checks that the two declarations agree).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import typer

from libra._util.checked_options import option
from libra._util.checks import http_url, non_negative_int, one_of, positive_int, some_text, unit_interval, writable_dir

PROPOSERS = ("offline", "llm")
CREDITS = ("origin", "export")
known_proposer = one_of(PROPOSERS)
known_credit = one_of(CREDITS)


def known_embedder(value: str) -> None:
    from libra.embeddings.embedders import parse_embedder

    parse_embedder(value)


def executor_spec(value: str) -> None:
    """``local``, ``ray`` or ``ray:ADDRESS``; ``ray`` without Ray installed is refused here, before any work."""
    from libra.runtime.workers.ray import ExecutorSpec

    ExecutorSpec.parse(value)


# -- the options ---------------------------------------------------------------------------------------------------
def workers_option(help: str) -> Any:
    return option(None, "--workers", non_negative_int, help)


def executor_option() -> Any:
    return option(
        "local",
        "--executor",
        executor_spec,
        (
            "where tool calls run: local (worker processes here, default), ray (a private local Ray) or "
            "ray:ADDRESS (an existing Ray cluster; needs libra-tools[ray])"
        ),
    )


def proposer_option() -> Any:
    return option("offline", "--proposer", known_proposer, "offline (default, no LLM) or llm")


def llm_base_url_option() -> Any:
    return option(None, "--llm-base-url", http_url, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")


def llm_model_option() -> Any:
    return option(None, "--llm-model", some_text, "model name served at --llm-base-url")


def llm_cache_option() -> Any:
    return option(None, "--llm-cache", writable_dir, "directory caching LLM replies (a rebuild makes no calls)")


def llm_concurrency_option() -> Any:
    return option(4, "--llm-concurrency", positive_int, "LLM requests in flight at once")


def embedder_option(help: str = "minilm (default, offline), hash[-N], st:<model>, openai:<model>[@url]") -> Any:
    return option("minilm", "--embedder", known_embedder, help)


def tau_option() -> Any:
    return option(0.75, "--tau", unit_interval, "field alignment threshold for compatibility relations")


def credit_option() -> Any:
    return option(
        "origin",
        "--credit",
        known_credit,
        (
            "who provides a value: origin (the call that introduced it) or export (every call that exports it, "
            "as in the paper)"
        ),
    )


def max_calls_option(help: str) -> Any:
    return option(None, "--max-calls", positive_int, help)


def max_depth_option(help: str) -> Any:
    return option(None, "--max-depth", non_negative_int, help)


def max_retry_calls_option(help: str) -> Any:
    return option(None, "--max-retry-calls", non_negative_int, help)


def no_resume_option() -> Any:
    return typer.Option(False, "--no-resume", help="ignore an existing checkpoint")


def quiet_option() -> Any:
    return typer.Option(False, "--quiet", help="no progress bar")


# -- the [build] table -------------------------------------------------------------------------------------------
def build_file_options(
    workers: int | None = workers_option("worker processes"),
    executor: str = executor_option(),
    proposer: str = proposer_option(),
    llm_base_url: str | None = llm_base_url_option(),
    llm_model: str | None = llm_model_option(),
    llm_cache: Path | None = llm_cache_option(),
    llm_concurrency: int = llm_concurrency_option(),
    embedder: str = embedder_option(),
    tau: float = tau_option(),
    credit: str = credit_option(),
    max_calls: int | None = max_calls_option("budget: tool invocations"),
    max_depth: int | None = max_depth_option("budget: longest chain of state-changing calls"),
    max_retry_calls: int | None = max_retry_calls_option("budget: tool invocations of retries"),
    no_resume: bool = no_resume_option(),
    quiet: bool = quiet_option(),
) -> None:
    """The keys of ``[build]``, in the order the ``build`` command declares them (an unknown key's message lists
    them in this order). Never called: typer reads the signature, as it reads the command's."""


@functools.lru_cache(maxsize=1)
def _file_command() -> Any:
    app = typer.Typer(add_completion=False)
    app.command()(build_file_options)
    return typer.main.get_command(app)


def build_option_params() -> dict[str, Any]:
    """The options a ``[build]`` table may set: file key (the option without ``--``) -> click parameter."""
    return {
        param.opts[0][2:]: param
        for param in _file_command().params
        if param.opts[0].startswith("--") and param.name != "help"
    }


def convert_build_value(param: Any, raw: Any) -> Any:
    """``raw`` converted and checked as the command line converts and checks the option's value; a refused value
    raises :class:`typer.BadParameter` with the command line's message."""
    return param.process_value(typer.Context(_file_command()), raw)
