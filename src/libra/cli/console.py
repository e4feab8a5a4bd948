"""The console every command prints its results to (failures are printed by :func:`libra.cli.main.main`).

Why a console of its own: output piped to a file or another program must not be wrapped at 80 columns (rich's
width when it sees no terminal), which breaks JSON evidence mid-string and splits tool names across lines. In a
terminal rich wraps at the terminal's width (or ``COLUMNS``); elsewhere lines are written whole, at ``COLUMNS``
when it is set and without a limit otherwise. Warnings go to stderr, each once (:func:`warn`).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console

#: The width of output that is not a terminal and has no ``COLUMNS``: wide enough that no line wraps.
UNWRAPPED = 1 << 16


def make_console(stream: TextIO | None = None) -> Console:
    """A console on ``stream`` (stdout by default) that wraps only in a terminal, or at ``COLUMNS`` when given."""
    stream = stream or sys.stdout
    is_tty = hasattr(stream, "isatty") and stream.isatty()
    if is_tty:
        return Console(file=stream if stream is not sys.stdout else None)
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else UNWRAPPED
    return Console(
        file=stream if stream is not sys.stdout else None, width=width, soft_wrap=not columns, highlight=False
    )


console = make_console()
_warned: set[str] = set()


def warn(message: str) -> None:
    """``warning: ...`` on stderr, once per message however many times a run reaches it."""
    if message in _warned:
        return
    _warned.add(message)
    print(f"warning: {message}", file=sys.stderr, flush=True)


def fmt(x: float | None) -> str:
    """A score as the tables print it (one decimal), a dash for a figure the paper does not give."""
    return "–" if x is None else f"{x:.1f}"
