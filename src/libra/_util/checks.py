"""Checks of one value, shared by the command line's options and the project file's ``[build]`` table.

Why here: ``libra build --max-calls 0`` and ``max-calls = 0`` in a project file must be refused with the same
words, and the project file is read below the command line (:mod:`libra.sources.project`). Each check raises
:class:`ValueError` (or :class:`~libra.errors.ConfigError`) with the reason a value is refused; the caller adds
which option or key it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from libra._util.io import write_problem

Check = Callable[[Any], None]  # raises ValueError or ConfigError with the reason a value is refused


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


def _folder_exists(value: Path) -> None:
    """libra creates the file (or cache directory) an option names, never the folders above it: a typo in a path
    (``--out /nonexistent/dir/x.json``) is refused rather than made into a tree of folders."""
    parent = Path(value).expanduser().parent
    if not parent.exists():
        raise ValueError(f"cannot write {value}: the folder {parent} does not exist (create it first)")


def writable_file(value: Path) -> None:
    _folder_exists(value)
    problem = write_problem(value)
    if problem:
        raise ValueError(f"cannot write {value}: {problem}")


def writable_dir(value: Path) -> None:
    _folder_exists(value)
    problem = write_problem(value, directory=True)
    if problem:
        raise ValueError(f"cannot write into {value}: {problem}")


def existing_dir(value: Path) -> None:
    if not value.expanduser().is_dir():
        raise ValueError(f"{value} is not a directory")


def port_number(value: int) -> None:
    """0 asks the system for a free port (the one chosen is printed)."""
    if not 0 <= value <= 65535:
        raise ValueError(f"must be a port number from 0 to 65535, got {value}")
