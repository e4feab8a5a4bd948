"""The retriever interface: score every catalog tool for a query.

Retrievers return full score vectors (one score per catalog tool, in catalog order) so that graph propagation,
hybrids and analyses can work on any base retriever; :func:`rank` turns scores into a ranking with ties broken by
catalog order, which keeps every evaluation reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from libra.catalog import Catalog


@runtime_checkable
class Retriever(Protocol):
    name: str

    def fit(self, catalog: Catalog) -> Retriever:
        """Precompute everything query-independent (the index)."""
        ...

    def score(self, queries: Sequence[str]) -> np.ndarray:
        """Scores of shape (len(queries), len(catalog)); higher is better."""
        ...


def rank(scores: np.ndarray, k: int | None = None) -> np.ndarray:
    """Indices of the top-k scores per row, descending, ties broken by lower index (stable)."""
    scores = np.atleast_2d(scores)
    order = np.argsort(-scores, axis=1, kind="stable")
    return order if k is None else order[:, :k]


def ranks(scores: np.ndarray) -> np.ndarray:
    """1-based rank of every tool per row, consistent with :func:`rank` (ties by catalog order)."""
    scores = np.atleast_2d(scores)
    order = rank(scores)
    out = np.empty_like(order)
    out[np.arange(order.shape[0])[:, None], order] = np.arange(1, order.shape[1] + 1)
    return out


def rankings_to_names(order: np.ndarray, catalog: Catalog) -> list[list[str]]:
    names = catalog.names
    return [[names[i] for i in row] for row in order]


def retrieve_names(retriever: object, catalog: Catalog, queries: Sequence[str], depth: int) -> list[list[str]]:
    """Top-``depth`` tool names per query; a retriever may offer ``retrieve`` itself (graph methods do)."""
    own = getattr(retriever, "retrieve", None)
    if own is not None:
        return [list(r)[:depth] for r in own(list(queries), depth)]
    scores = np.asarray(retriever.score(list(queries)))  # type: ignore[attr-defined]
    names = catalog.names
    return [[names[i] for i in row] for row in rank(scores, depth)]
