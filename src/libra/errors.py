"""Errors a user can act on.

Every error raised for bad input or a missing piece of set-up is a :class:`LibraError`; the CLI prints its
message as one line and exits non-zero, never a traceback. The message says what is wrong *and* what to do.
"""

from __future__ import annotations


class LibraError(Exception):
    """An error with a one-line, actionable message; the CLI exits with ``exit_code`` (2: bad input or set-up)."""

    exit_code: int = 2


class CatalogError(LibraError):
    """A catalog is malformed or unreadable."""


class ConfigError(LibraError):
    """An unknown benchmark, method, embedder or option."""


class MissingDependencyError(LibraError):
    """An optional dependency a command needs is not installed."""


class LibraryFormatError(LibraError):
    """A library file is unreadable, from another catalog, or in another format version."""


class OutputError(LibraError, OSError):
    """A result could not be written (disk full, a directory removed meanwhile, no permission).

    Also an ``OSError``, so code that tolerates an unwritable cache keeps catching it. The CLI exits with status 1
    for it: output paths are checked before any work (bad ones end in status 2 then), so this failure comes after
    the work, from the system rather than from the user's input.
    """

    exit_code = 1

    @classmethod
    def of(cls, path: object, exc: OSError) -> OutputError:
        err = cls(f"cannot write {path}: {exc.strerror or exc}")
        err.errno = exc.errno
        return err
