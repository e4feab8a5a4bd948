"""Errors a user can act on.

Every error raised for bad input or a missing piece of set-up is a :class:`LibraError`; the CLI prints its
message as one line and exits non-zero, never a traceback. The message says what is wrong *and* what to do.
"""

from __future__ import annotations


class LibraError(Exception):
    """An error with a one-line, actionable message."""


class CatalogError(LibraError):
    """A catalog is malformed or unreadable."""


class ConfigError(LibraError):
    """An unknown benchmark, method, embedder or option."""


class MissingDependencyError(LibraError):
    """An optional dependency a command needs is not installed."""


class LibraryFormatError(LibraError):
    """A library file is unreadable, from another catalog, or in another format version."""
