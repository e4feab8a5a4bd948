"""libra: turn a flat catalog of executable tools into an executable tool library, and retrieve with it."""

from __future__ import annotations

__version__ = "0.1.0"

from .catalog import Catalog, Tool
from .errors import LibraError
from .search import Prerequisite, Result, Searcher, SearchOptions

__all__ = ["Catalog", "LibraError", "Prerequisite", "Result", "SearchOptions", "Searcher", "Tool", "__version__"]
