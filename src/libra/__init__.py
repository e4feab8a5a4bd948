"""libra: turn a flat catalog of executable tools into an executable tool library, and retrieve with it."""

from __future__ import annotations

__version__ = "0.1.0"

from .catalog import Catalog, Tool
from .decorators import tool
from .errors import LibraError

__all__ = ["Catalog", "Tool", "LibraError", "tool", "__version__"]
