"""The console every command prints its results to (failures are printed by :func:`libra.cli.main.main`)."""

from __future__ import annotations

from rich.console import Console

console = Console()


def fmt(x: float | None) -> str:
    """A score as the tables print it (one decimal), a dash for a figure the paper does not give."""
    return "–" if x is None else f"{x:.1f}"
