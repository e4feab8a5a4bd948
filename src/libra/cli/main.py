"""The ``libra`` command line: the app, its commands and how a run ends.

Every command lives in the module of its group (:mod:`.evaluate`, :mod:`.library`, :mod:`.retrieve`,
:mod:`.serve`) as a plain function, and is registered here, by name, in the order ``libra --help`` lists them
(the everyday commands first, in the order a user meets them, then the research ones): nothing registers itself
as a side effect of being imported. Those modules import only typer, rich and the option definitions at import
time, so ``libra --help`` stays fast; each command imports what it runs.

Help is click's plain text (typer's rich help shows ``<bool>`` beside every flag and reads ``[[mcp]]`` in a help
text as markup), ``-h`` is ``--help``, ``--version`` prints the version, and ``libra`` alone prints the help.

Every user-facing failure is a :class:`~libra.errors.LibraError`; :func:`main` prints it as one line on stderr and
exits with status 2, never with a traceback. SIGTERM ends a command as Ctrl-C does (its ``finally`` blocks stop
worker processes and MCP servers and remove temporary folders), then says ``terminated`` and exits with 143.
"""

from __future__ import annotations

import signal
import sys

import typer

from libra.cli import evaluate, library, retrieve, serve
from libra.cli.console import console
from libra.errors import LibraError


def version_cmd() -> None:
    """Print the libra version."""
    from libra import __version__

    console.print(__version__)


def _version(value: bool) -> None:
    if value:
        from libra import __version__

        print(__version__)
        raise typer.Exit(0)


def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", help="print the libra version and exit", is_eager=True, callback=_version
    ),
) -> None:
    """Executable tool libraries and graph retrieval for LLM agents.

    Start with: libra build --tools my_tools.py --out my.lib.json, then libra show my.lib.json.
    """
    if ctx.invoked_subcommand is None:  # ``libra`` alone: the help is what was asked for
        print(ctx.get_help())
        raise typer.Exit(0)


#: The commands in the order ``libra --help`` lists them, with the line it shows: a library's life first (build it,
#: look at it, use it), then the research commands.
COMMANDS = (
    ("build", library.build_cmd, "Build a library of your tools, a project file or a benchmark."),
    ("show", library.show_cmd, "Print a library's relations and its build's health."),
    ("explain", library.explain_cmd, "A tool's providers and consumers, with the calls behind them."),
    ("retrieve", retrieve.retrieve_cmd, "The tools a library finds for requests."),
    ("serve", serve.serve_cmd, "Serve a library to agents over MCP."),
    ("eval", evaluate.eval_cmd, "Score retrieval methods on a benchmark or your own tasks."),
    ("contracts", library.contracts_cmd, "Check a catalog's contracts (research)."),
    ("analyze", evaluate.analyze_cmd, "The paper's analyses and tables (research)."),
    ("benchmarks", evaluate.benchmarks_cmd, "List the benchmarks."),
    ("version", version_cmd, "Print the libra version."),
)


def create_app() -> typer.Typer:
    """The ``libra`` app with every command."""
    new = typer.Typer(
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    new.callback(invoke_without_command=True)(_root)
    for name, command, line in COMMANDS:
        new.command(name, short_help=line)(command)
    return new


app = create_app()

#: Exit status of an interrupted command (128 + SIGINT, what shells report for a process Ctrl-C stopped).
EXIT_INTERRUPTED = 130
#: Exit status of a command ended by SIGTERM (128 + SIGTERM).
EXIT_TERMINATED = 143


class _Termination:
    """Whether SIGTERM arrived: it is raised as ``KeyboardInterrupt`` so the command unwinds as from Ctrl-C, and
    :func:`main` then reports it as what it was."""

    received = False

    @classmethod
    def handler(cls, signum: int, frame: object) -> None:
        cls.received = True
        raise KeyboardInterrupt


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


def main(argv: list[str] | None = None) -> None:
    """Run the command line: status 0 on success, 2 on bad input (one ``error:`` line, before any work), 1 when a
    result cannot be written after the work, 130 when interrupted (Ctrl-C) and 143 when terminated (SIGTERM);
    never a traceback for any of them."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _Termination.handler)
    try:
        code = app(args=argv, prog_name="libra", standalone_mode=False)
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
    if code == EXIT_INTERRUPTED and _Termination.received:
        print("terminated", file=sys.stderr)
        code = EXIT_TERMINATED
    elif code == EXIT_INTERRUPTED:
        print("interrupted", file=sys.stderr)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
