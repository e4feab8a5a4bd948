"""Retrieval with a built library that says why each tool is there.

An agent (or its developer) shown ``update_alarm, phone.login, ...`` wants to know that ``login`` came in as a
prerequisite of ``update_alarm`` and not because the request mentioned it. :func:`explained_retrieval` returns,
per request, the top-k tools with their rank under the base retriever alone and the seeds that promoted them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from libra.retrieval.defaults import (
    DEFAULT_BASE,
    DEFAULT_DECAY,
    DEFAULT_HOPS,
    DEFAULT_KS,
    DEFAULT_SCORE_SPACE,
    DEFAULT_SELECTION,
)
from libra.retrieval.documents import DEFAULT_DOCUMENT
from libra.retrieval.named import BASES, base_retriever, check_base

__all__ = ["BASES", "RetrievedTool", "base_retriever", "check_base", "explained_retrieval"]


@dataclass
class RetrievedTool:
    rank: int
    tool: str
    base_rank: int  # its rank under the base retriever alone
    promoted_by: list[str] = field(default_factory=list)  # seeds that raised its score, best-ranked first

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def explained_retrieval(
    library: Any,
    queries: Sequence[str],
    k: int = 10,
    base: str = DEFAULT_BASE,
    embedder: str = "minilm",
    document: str = DEFAULT_DOCUMENT,
    ks: int = DEFAULT_KS,
    selection: str = DEFAULT_SELECTION,
    hops: int = DEFAULT_HOPS,
    score_space: str = DEFAULT_SCORE_SPACE,
    temperature: float | None = None,
    decay: float = DEFAULT_DECAY,
) -> list[list[RetrievedTool]]:
    """Top-``k`` tools of ``library``'s catalog per query, each with its base rank and the seeds that promoted it
    (the short form of :meth:`libra.search.searcher.Searcher.search_many`, which also gives descriptions, schemas and
    prerequisites)."""
    from libra.search.searcher import Searcher, SearchOptions

    opts = SearchOptions(base, embedder, document, ks, selection, hops, score_space, temperature, decay)
    found = Searcher.from_library(library, opts).search_many(list(queries), k)
    return [[RetrievedTool(r.rank, r.tool, r.base_rank, r.promoted_by) for r in rows] for rows in found]
