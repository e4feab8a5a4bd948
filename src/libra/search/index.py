"""What a search needs from a library, small enough to load in milliseconds, cached per library file.

A library file holds far more than search uses: every relation's full call records, the contracts, millions of
candidate compositions (AppWorld: 2.1 M). Parsing and checking all of it costs seconds, and so does rebuilding the
catalog's tools and embedding them, which a server (``libra serve``) pays on every start while its client waits.
Search only needs, per tool, its name, description and input schema and its embedding, and per relation its
edge and one line of evidence. :class:`SearchIndex` is that, stored as one JSON file and one ``.npy`` file under
``$LIBRA_CACHE_DIR/search``, named by a hash of the library file's exact bytes, the embedder, the document style
and the code that builds the index. The first open of a library loads it the slow way (checked whole, see
:mod:`libra.library.check`) and writes the index; every later open of the same bytes reads only the index. Any
edit to the library, or another embedder, gives another name, so a stale index is never read.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from libra._util.io import atomic_write_bytes
from libra.library.evidence import evidence_line
from libra.retrieval.graph import Edge, library_edges
from libra.search.index_key import INDEX_VERSION, index_key, index_paths

__all__ = [
    "INDEX_VERSION",
    "Prerequisite",
    "SearchIndex",
    "index_key",
    "index_paths",
    "load_index",
    "prerequisites_of",
    "save_index",
]

KIND_ORDER = {"provenance": 0, "compatibility": 1, "state": 2}


@dataclass(frozen=True)
class Prerequisite:
    """A tool the library found another tool needs, with what the executions showed."""

    tool: str
    kind: str  # provenance | compatibility | state
    provider_field: str | None  # the provider's output field that fed ...
    consumer_input: str | None  # ... this input of the consumer (None for a state relation)
    evidence: str  # one line from the relation's recorded calls

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchIndex:
    names: list[str]
    descriptions: list[str]
    input_schemas: list[dict[str, Any]]
    edges: list[Edge]
    prerequisites: dict[str, list[Prerequisite]] = field(default_factory=dict)  # per consumer, strongest first
    vectors: np.ndarray | None = None  # the dense embeddings of the tools, in catalog order
    #: the MCP servers the catalog came from (``[[mcp]]`` tables, the library's ``meta.mcp_servers``): what a
    #: gateway starts to forward calls; empty for other catalogs
    servers: list[dict[str, Any]] = field(default_factory=list)
    #: what BM25 indexes per tool (:meth:`libra.catalog.Tool.text`), so a lexical or fused base opens from the
    #: index too
    texts: list[str] = field(default_factory=list)

    @classmethod
    def from_library(cls, library: Any, vectors: np.ndarray | None = None) -> SearchIndex:
        catalog = library.catalog
        return cls(
            names=list(catalog.names),
            descriptions=[t.description for t in catalog],
            input_schemas=[t.parameters for t in catalog],
            edges=library_edges(library),
            prerequisites=prerequisites_of(library.relations),
            vectors=vectors,
            servers=list(library.meta.get("mcp_servers") or []),
            texts=[t.text() for t in catalog],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": INDEX_VERSION,
            "names": self.names,
            "descriptions": self.descriptions,
            "input_schemas": self.input_schemas,
            "edges": [[e.provider, e.consumer, e.input, e.similarity] for e in self.edges],
            "prerequisites": {
                c: [[p.tool, p.kind, p.provider_field, p.consumer_input, p.evidence] for p in ps]
                for c, ps in self.prerequisites.items()
            },
            "servers": self.servers,
            "texts": self.texts,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], vectors: np.ndarray | None) -> SearchIndex:
        return cls(
            names=d["names"],
            descriptions=d["descriptions"],
            input_schemas=d["input_schemas"],
            edges=[Edge(*e) for e in d["edges"]],
            prerequisites={c: [Prerequisite(*p) for p in ps] for c, ps in d["prerequisites"].items()},
            vectors=vectors,
            servers=d.get("servers", []),
            texts=d.get("texts", []),
        )


def prerequisites_of(relations: Sequence[Any]) -> dict[str, list[Prerequisite]]:
    """Per consumer, one prerequisite per (provider, input): value relations before state ones (they say which
    input a value goes to), then the best-aligned field first. A provider that is both a value and a state
    prerequisite is listed once, with its value relation."""
    out: dict[str, list[Prerequisite]] = {}
    ordered = sorted(
        relations, key=lambda r: (r.consumer, KIND_ORDER.get(r.kind, 3), -(r.similarity or 0.0), r.provider)
    )
    seen: set[tuple[str, str]] = set()
    for r in ordered:
        if r.provider == r.consumer or (r.consumer, r.provider) in seen:
            continue
        seen.add((r.consumer, r.provider))
        line = evidence_line(r.provider, r.consumer, r.kind, r.provider_field, r.consumer_input, r.evidence)
        out.setdefault(r.consumer, []).append(
            Prerequisite(r.provider, r.kind, r.provider_field, r.consumer_input, line)
        )
    return out


def load_index(folder: Path, key: str) -> SearchIndex | None:
    """The cached index named ``key``, or None when there is none (or it cannot be read: it is rebuilt)."""
    meta, vec = index_paths(folder, key)
    try:
        d = json.loads(meta.read_bytes())
        vectors = np.load(vec) if vec.exists() else None
        index = SearchIndex.from_json(d, vectors)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if d.get("version") != INDEX_VERSION or (vectors is not None and vectors.shape[0] != len(index.names)):
        return None
    return index


def save_index(folder: Path, key: str, index: SearchIndex) -> None:
    """Written atomically, vectors first: a reader that finds the JSON finds the vectors it names. A cache that
    cannot be written only costs the next start its speed."""
    meta, vec = index_paths(folder, key)
    try:
        if index.vectors is not None:
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(index.vectors, dtype=np.float32))
            atomic_write_bytes(vec, buf.getvalue())
        atomic_write_bytes(meta, json.dumps(index.to_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except OSError:
        pass
