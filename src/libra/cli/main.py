"""The ``libra`` command line: the app, its commands and how a run ends.

Every command lives in the module of its group (:mod:`.evaluate`, :mod:`.library`, :mod:`.retrieve`,
:mod:`.serve`) as a plain function, and is registered here, by name, in the order ``libra --help`` lists them:
nothing registers itself as a side effect of being imported. Those modules import only typer, rich and the
option definitions at import time, so ``libra --help`` stays fast; each command imports what it runs.

Every user-facing failure is a :class:`~libra.errors.LibraError`; :func:`main` prints it as one line on stderr and
exits with status 2, never with a traceback.
"""

from __future__ import annotations

import sys

import typer

from libra.cli import evaluate, library, retrieve, serve
from libra.cli.console import console
from libra.errors import LibraError


def version_cmd() -> None:
    """Print the libra version."""
    from libra import __version__

    console.print(__version__)


def create_app() -> typer.Typer:
    """The ``libra`` app with every command."""
    new = typer.Typer(
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        help="Executable tool libraries and graph retrieval for LLM agents.",
    )
    for name, command in (
        ("eval", evaluate.eval_cmd),
        ("benchmarks", evaluate.benchmarks_cmd),
        ("version", version_cmd),
        ("contracts", library.contracts_cmd),
        ("build", library.build_cmd),
        ("show", library.show_cmd),
        ("explain", library.explain_cmd),
        ("analyze", evaluate.analyze_cmd),
        ("retrieve", retrieve.retrieve_cmd),
        ("serve", serve.serve_cmd),
    ):
        new.command(name)(command)
    return new


app = create_app()

#: Exit status of an interrupted command (128 + SIGINT, what shells report for a process Ctrl-C stopped).
EXIT_INTERRUPTED = 130


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


def main(argv: list[str] | None = None) -> None:
    """Run the command line: status 0 on success, 2 on bad input (one ``error:`` line, before any work), 1 when a
    result cannot be written after the work, 130 when interrupted (Ctrl-C); never a traceback for any of them."""
    try:
        code = app(args=argv, standalone_mode=False)
    except LibraError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # outside typer's own handling
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
    main()
