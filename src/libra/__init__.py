"""libra: turn a flat catalog of executable tools into an executable tool library, and retrieve with it."""

from __future__ import annotations

from libra import _compat
from libra._util.version import VERSION as __version__

_compat.install()  # before anything imports a module by a name it had in an earlier release

from libra.catalog import Catalog, Tool
from libra.decorators import tool
from libra.errors import LibraError

__all__ = [
    "Catalog",
    "LibraError",
    "Prerequisite",
    "Result",
    "SearchOptions",
    "Searcher",
    "Tool",
    "__version__",
    "tool",
]

#: Names of :mod:`libra.search`, imported on first use: the command line imports this package for every
#: command, and most never search.
_SEARCH_NAMES = ("Prerequisite", "Result", "SearchOptions", "Searcher")


def __getattr__(name: str) -> object:
    if name in _SEARCH_NAMES:
        from libra.search import searcher

        return getattr(searcher, name)
    raise AttributeError(f"module 'libra' has no attribute {name!r}")
