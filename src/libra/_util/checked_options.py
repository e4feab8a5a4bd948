"""Command-line options whose values are checked while the command line is parsed.

Why: a bad value must end in one ``error: Invalid value for '--ks': ...`` line before a command starts any work,
and an option must be refused the same way wherever it appears: on every command that takes it, and in a project
file's ``[build]`` table, which converts its values with the very same option definitions
(:mod:`libra.sources.build_options`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from libra._util.checks import Check
from libra.errors import ConfigError


def checked(check: Check) -> Callable[..., Any]:
    """A typer callback applying ``check`` to the value (each item of a list; None = option not given).

    The check is kept on the callback (``callback.check``), so two definitions of one option can be compared."""

    def callback(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
        if value is None or ctx.resilient_parsing:  # resilient parsing: shell completion, never refuse there
            return value
        for item in value if isinstance(value, (list, tuple)) else (value,):
            try:
                check(item)
            except (ValueError, ConfigError) as exc:
                raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None
        return value

    callback.check = check  # type: ignore[attr-defined]
    return callback


def option(default: Any, name: str, check: Check, help: str, *aliases: str) -> Any:
    """``typer.Option(default, name, *aliases)`` whose value goes through ``check``."""
    return typer.Option(default, name, *aliases, help=help, callback=checked(check))
