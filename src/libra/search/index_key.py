"""Where a library's cached search index lives, and a look at it, without numpy or the search machinery.

``libra serve`` decides at launch whether a library opens from its cached index (milliseconds, and nothing in
it can be refused: it was written from a library that loaded and checked whole) or must be loaded the slow way
first. Only this module is imported for that decision, so when the index is cached the server answers the MCP
handshake before numpy, the index and the embedding model load (:mod:`libra.search.index` holds the
index itself).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

#: Bumped when the stored form changes (the source hash below also covers it; this documents intent).
INDEX_VERSION = 2
#: The modules (relative to the libra package) that decide what an index holds (the embedders and the fused model graph
#: decide
#: its tool vectors): a change to any of them builds it again.
INDEX_MODULES = (
    "search/index.py",
    "search/index_key.py",
    "library/evidence.py",
    "retrieval/documents.py",
    "embeddings/embedders.py",
    "embeddings/onnx_fusion.py",
)


def _code_hash() -> bytes:
    h = hashlib.sha256()
    for name in INDEX_MODULES:
        h.update((Path(__file__).parents[1] / name).read_bytes())
    return h.digest()


def index_key(library_bytes: bytes, embedder: str, document: str) -> str:
    """The cache name of the index of these exact library bytes for this embedder and document style."""
    h = hashlib.sha256()
    h.update(library_bytes)
    h.update(_code_hash())
    h.update(f"\0{INDEX_VERSION}\0{embedder}\0{document}".encode())
    return h.hexdigest()[:40]


def index_paths(folder: Path, key: str) -> tuple[Path, Path]:
    """The index's JSON file and its ``.npy`` file of tool vectors."""
    return folder / f"{key}.json", folder / f"{key}.npy"


def peek_index(folder: Path, key: str) -> dict[str, Any] | None:
    """The JSON part of the cached index named ``key`` when both of its files are there (a dense search index
    always has vectors), else None. A file that cannot be read or parsed is None too: the caller then opens the
    library the slow way, which rebuilds it."""
    meta, vec = index_paths(folder, key)
    try:
        if not vec.is_file():
            return None
        d = json.loads(meta.read_bytes())
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) and d.get("version") == INDEX_VERSION and isinstance(d.get("names"), list) else None
