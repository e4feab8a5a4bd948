"""Public names of a package that live in its submodules, imported when first used.

Why: a package's ``__init__`` is imported before any of its submodules, so one that imported its public classes
eagerly would make every light submodule heavy (``libra.search.options`` must not pull numpy into ``libra
serve``'s start). The names still read as ``from libra.search import Searcher``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``names`` maps a public name to the submodule (relative to
    the package, e.g. ``".searcher"``) that defines it."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(names[name], package), name)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
