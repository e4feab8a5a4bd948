"""Where libra keeps what it can rebuild (embeddings, search indexes, checked libraries, built libraries).

A module of its own, free of numpy and the models, so a server can find its cached search index before any of
them loads."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$LIBRA_CACHE_DIR``, else ``libra`` under ``$XDG_CACHE_HOME`` (default ``~/.cache``)."""
    root = os.environ.get("LIBRA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "libra"
    )
    return Path(root)
