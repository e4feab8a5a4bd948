"""Dependency-aware tool search: the one API behind ``libra retrieve``, ``libra serve`` and Python callers.

Agent clients rank tools one by one. A search here answers with each tool and the prerequisites the library
found by executing the catalog, each with one line of evidence, so an agent that finds ``shop.add_item`` also
learns that it fails with 'not signed in' until ``shop.login`` ran::

    from libra import Searcher

    searcher = Searcher.open("shop.json.gz")
    for r in searcher.search("add a lamp to the shop", k=5):
        print(r.rank, r.tool, r.via, [p.tool for p in r.prerequisites])

Ranking is the library's graph propagation (paper Algorithm 2, :mod:`libra.retrieval.graph`) over a dense (or
hybrid) base. A result is ``retrieved`` when the base scores alone put it there and ``promoted`` when
propagation raised its score, with the seeds that raised it in ``promoted_by``.

:meth:`Searcher.open` with the default dense base reads a compact index cached per library file
(:mod:`libra.search.index`), so a server starts in a fraction of the time the full library takes to
load; the embedding model itself loads on the first search, or ahead of it with :meth:`Searcher.warm`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from libra.errors import ConfigError
from libra.search.index import Prerequisite, SearchIndex
from libra.search.options import SearchOptions

__all__ = ["MAX_PREREQUISITES", "Prerequisite", "Result", "SearchOptions", "Searcher"]

#: Memory the cache of recent queries' base scores may hold: an agent repeats its searches (the same task
#: phrased the same way, a retry after an error), and a repeated query then skips the embedding model, which
#: is most of a search's time. Bounded in bytes, so a catalog ten times larger keeps a tenth of the queries.
QUERY_CACHE_BYTES = 32 * 1024 * 1024

#: Prerequisites listed per result at most (the rest are counted in ``more_prerequisites``): a tool can have
#: dozens of providers in a large library, and each costs the agent tokens to read.
MAX_PREREQUISITES = 5


@dataclass
class Result:
    """One tool found for a query."""

    rank: int
    tool: str
    description: str
    input_schema: dict[str, Any]
    score: float  # after propagation, in the space it averaged (probability by default)
    base_rank: int  # its rank under the base retriever alone
    via: Literal["retrieved", "promoted"]
    promoted_by: list[str] = field(default_factory=list)  # seeds that raised its score, best-ranked first
    prerequisites: list[Prerequisite] = field(default_factory=list)  # those among the results first
    more_prerequisites: int = 0  # held by the library beyond the ones listed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Searcher:
    """Ranks a library's tools for queries; safe to share between threads once built."""

    def __init__(self, index: SearchIndex, retriever: Callable[[], Any], options: SearchOptions | None = None) -> None:
        from libra.retrieval.graph import PropagationGraph

        self.index = index
        self.options = options or SearchOptions()
        self._make_retriever = retriever
        self._retriever: Any = None
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()  # query -> base scores, oldest first
        self._recent_lock = threading.Lock()
        self.graph = PropagationGraph.build(_Names(index.names), index.edges)  # type: ignore[arg-type]

    # -- construction ----------------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, options: SearchOptions | None = None, **kwargs: Any) -> Searcher:
        """A searcher over the library file ``path`` (options as :class:`SearchOptions` or its fields by name).

        The dense base reads the library's cached search index when these exact bytes were indexed before;
        otherwise the library is loaded and checked whole, and the index written for the next open.
        """
        from libra.embeddings.embedders import cache_dir
        from libra.library.artifact import Library, read_library_bytes
        from libra.search.index import index_key, load_index, save_index

        opts = (options or SearchOptions(**kwargs)).check()
        path = Path(path)
        raw = read_library_bytes(path)
        if opts.base == "bm25":
            return cls.from_library(Library.load(path, raw=raw), opts)
        folder = cache_dir() / "search"
        key = index_key(raw, opts.embedder, opts.document)
        index = load_index(folder, key)
        if index is None or index.vectors is None or (opts.base != "dense" and len(index.texts) != len(index.names)):
            library = Library.load(path, raw=raw)
            searcher = cls.from_library(library, opts)
            save_index(folder, key, searcher.index)
            return searcher
        return cls(index, lambda: _over_index(opts, index), opts)

    @classmethod
    def from_library(cls, library: Any, options: SearchOptions | None = None, **kwargs: Any) -> Searcher:
        """A searcher over a loaded :class:`~libra.library.artifact.Library` (fits the base retriever now)."""
        from libra.retrieval.named import base_retriever

        opts = (options or SearchOptions(**kwargs)).check()
        retriever = base_retriever(opts.base, opts.embedder, opts.document, opts.score_space, opts.fusion_weight).fit(
            library.catalog
        )
        vectors = None
        for part in _parts(retriever):
            if hasattr(part, "tool_vectors"):
                vectors = part.tool_vectors
                part.cache = False  # queries are one-offs: never write a cache file per request
        searcher = cls(SearchIndex.from_library(library, vectors), lambda: retriever, opts)
        searcher._retriever = retriever
        return searcher

    def warm(self) -> None:
        """Load the embedding model now rather than on the first search."""
        self._base()

    def _base(self) -> Any:
        with self._lock:
            if self._retriever is None:
                self._retriever = self._make_retriever()
            return self._retriever

    # -- search ----------------------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """How many tools the library holds."""
        return len(self.index.names)

    def search(self, query: str, k: int = 10) -> list[Result]:
        """The top-``k`` tools for ``query`` (all of them when ``k`` exceeds the library)."""
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Result]]:
        """:meth:`search` for several queries at once (one embedding batch)."""
        from libra.retrieval.base import ranks
        from libra.retrieval.graph import propagate, propagation_scores

        if isinstance(queries, str):
            raise ConfigError("search_many takes a list of queries, not one string: use search(query)")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        for q in queries:
            if not isinstance(q, str) or not q.strip():
                raise ConfigError("every query must be non-empty text")
        if not queries:
            return []
        o = self.options
        base = self._base()
        scores, _ = propagation_scores(base, self._base_scores(base, list(queries)), o.score_space, o.temperature)
        out = []
        for row in scores:
            new, trace = propagate(  # type: ignore[misc]
                self.graph, row, ks=o.ks, selection=o.selection, hops=o.hops, trace=True, decay=o.decay
            )
            before, after = ranks(row)[0], ranks(new)[0]
            top = np.argsort(after, kind="stable")[:k]
            out.append(self._results([int(i) for i in top], row, new, before, after, trace.contributors))
        return out

    def is_cached(self, query: str) -> bool:
        """Whether ``query`` was searched recently, so searching it again needs no embedding (see
        :data:`QUERY_CACHE_BYTES`)."""
        with self._recent_lock:
            return query in self._recent

    def _base_scores(self, base: Any, queries: list[str]) -> np.ndarray:
        """The base retriever's scores for ``queries``: recent ones from the cache (see
        :data:`QUERY_CACHE_BYTES`), the others in one batch, then remembered."""
        with self._recent_lock:
            rows = {q: self._recent[q] for q in queries if q in self._recent}
            for q in rows:
                self._recent.move_to_end(q)
        missing = list(dict.fromkeys(q for q in queries if q not in rows))
        if missing:
            fresh = np.asarray(base.score(missing))
            rows.update(zip(missing, fresh))
            keep = max(1, QUERY_CACHE_BYTES // max(1, fresh[0].nbytes))
            with self._recent_lock:
                for q, row in zip(missing, fresh):
                    self._recent[q] = row.copy()  # not a view: it would keep the whole batch alive
                while len(self._recent) > keep:
                    self._recent.popitem(last=False)
        return np.stack([rows[q] for q in queries])

    def _results(
        self,
        top: list[int],
        row: np.ndarray,
        new: np.ndarray,
        before: np.ndarray,
        after: np.ndarray,
        contributors: dict[int, set[int]],
    ) -> list[Result]:
        names, idx = self.index.names, self.index
        shown = {names[i] for i in top}
        results = []
        for i in top:
            promoted = bool(new[i] > row[i])
            seeds = [names[t] for t in sorted(contributors.get(i, ()), key=lambda t: before[t])] if promoted else []
            prereqs = idx.prerequisites.get(names[i], [])
            prereqs = sorted(prereqs, key=lambda p: p.tool not in shown)  # stable: the library's order otherwise
            results.append(
                Result(
                    rank=int(after[i]),
                    tool=names[i],
                    description=idx.descriptions[i],
                    input_schema=idx.input_schemas[i],
                    score=float(new[i]),
                    base_rank=int(before[i]),
                    via="promoted" if promoted else "retrieved",
                    promoted_by=seeds,
                    prerequisites=prereqs[:MAX_PREREQUISITES],
                    more_prerequisites=max(0, len(prereqs) - MAX_PREREQUISITES),
                )
            )
        return results


class _Names:
    """The one thing :meth:`PropagationGraph.build` reads from a catalog (its names and size), without the
    catalog's tools: the index holds names, not :class:`~libra.catalog.Tool` objects."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def __len__(self) -> int:
        return len(self.names)


def _parts(retriever: Any) -> list[Any]:
    """The retrievers a base is made of: a fusion's parts, else the base itself."""
    return list(getattr(retriever, "parts", None) or [retriever])


def _over_index(opts: SearchOptions, index: SearchIndex) -> Any:
    """The base over a cached index: the dense part takes the stored tool vectors (loading the embedding model,
    embedding nothing else), a lexical part indexes the stored documents (milliseconds)."""
    from libra.retrieval.named import base_retriever

    retriever = base_retriever(opts.base, opts.embedder, opts.document, opts.score_space, opts.fusion_weight)
    for part in _parts(retriever):
        if hasattr(part, "tool_vectors"):
            part.cache = False
            part.tool_vectors = index.vectors
        else:
            part.fit_texts(index.texts)
    return retriever
