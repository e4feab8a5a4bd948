"""Fusion of several base retrievers: by reciprocal ranks (``hybrid``) or by normalised scores (``fusion``).

Reciprocal rank fusion (RRF): score(t) = Σ_r 1 / (c + rank_r(t)), rank 1-based, with c = 60, the constant of
Cormack, Clarke and Büttcher (SIGIR 2009) that search engines use by default. Fusing ranks rather than scores
needs no calibration between retrievers whose scores live on different scales (BM25 is unbounded, dense is a
cosine), and it has no parameter to fit to a benchmark.

Normalised-score fusion (CombSUM over min-max normalised scores, Fox and Shaw 1994; Lee 1997): each retriever's
scores for a query are mapped onto [0, 1] (its best tool 1, its worst 0) and the maps are averaged, equally by
default. Unlike ranks, it keeps how far apart a retriever puts two tools: a request that repeats one tool's
identifiers gives that tool a BM25 score far above the rest, which RRF flattens to one rank step.

Lexical and dense retrieval miss different tools: BM25 matches the exact identifiers a request repeats, the
encoder matches paraphrases. A fused score is a base score like any other, so graph propagation runs on top of
it (``libra-hybrid``). It declares no temperature, so propagation averages the fused scores themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from libra.catalog import Catalog
from libra.retrieval.base import ranks

RRF_CONSTANT = 60


def bm25_dense(embedder: str = "minilm", document: str | None = None) -> HybridRetriever:
    """The hybrid every command means by ``hybrid``: BM25 and dense by reciprocal ranks (unfitted)."""
    return HybridRetriever(_bm25_and_dense(embedder, document))


def bm25_dense_fusion(
    embedder: str = "minilm", document: str | None = None, dense_weight: float = 0.5, space: str = "similarity"
) -> ScoreFusion:
    """Dense and BM25 by normalised scores, the dense part weighted ``dense_weight`` and entering as ``space``
    (unfitted): the ``fusion`` base."""
    bm25, dense = _bm25_and_dense(embedder, document)
    return ScoreFusion([dense, bm25], [dense_weight, 1.0 - dense_weight], space)


def _bm25_and_dense(embedder: str, document: str | None) -> list[Any]:
    from libra.retrieval.bm25 import BM25Retriever
    from libra.retrieval.dense import DenseRetriever
    from libra.retrieval.documents import DEFAULT_DOCUMENT

    return [BM25Retriever(), DenseRetriever(embedder, document=document or DEFAULT_DOCUMENT)]


def rrf_scores(score_rows: Sequence[np.ndarray], constant: int = RRF_CONSTANT) -> np.ndarray:
    """Σ_r 1 / (c + rank_r) over the retrievers' score matrices (each (queries, tools))."""
    out: np.ndarray | None = None
    for scores in score_rows:
        fused = 1.0 / (constant + ranks(np.asarray(scores, dtype=np.float64)))
        out = fused if out is None else out + fused
    assert out is not None
    return out


def minmax(scores: np.ndarray) -> np.ndarray:
    """Each row mapped onto [0, 1], its best tool 1 and its worst 0; a row with one value throughout (BM25 for a
    request that shares no word with any tool) says nothing and maps to 0."""
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    lo = s.min(axis=1, keepdims=True)
    span = s.max(axis=1, keepdims=True) - lo
    return np.divide(s - lo, span, out=np.zeros_like(s), where=span > 0)


def normalised_fusion(score_rows: Sequence[np.ndarray], weights: Sequence[float] | None = None) -> np.ndarray:
    """Σ_r w_r minmax(scores_r), the weights summing to 1 (equal when not given)."""
    if weights is None:
        weights = [1.0 / len(score_rows)] * len(score_rows)
    if len(weights) != len(score_rows) or not np.isclose(sum(weights), 1.0) or min(weights) < 0:
        raise ValueError("normalised fusion needs one non-negative weight per retriever, summing to 1")
    return sum(w * minmax(s) for w, s in zip(weights, score_rows))  # type: ignore[return-value]


class HybridRetriever:
    name = "hybrid"

    def __init__(self, parts: Sequence[Any], constant: int = RRF_CONSTANT) -> None:
        if not parts:
            raise ValueError("a hybrid needs at least one base retriever")
        self.parts = list(parts)
        self.constant = constant

    def fit(self, catalog: Catalog) -> HybridRetriever:
        for p in self.parts:
            p.fit(catalog)
        return self

    def score(self, queries: Sequence[str]) -> np.ndarray:
        queries = list(queries)
        return rrf_scores([p.score(queries) for p in self.parts], self.constant)


class ScoreFusion:
    """Normalised-score fusion of several base retrievers (see the module docstring).

    ``space``: what a part that declares a temperature (a dense encoder) enters as, its similarities or its
    probabilities softmax(cos / T) (:func:`libra.retrieval.dense.score_probabilities`). Min-max keeps each part's
    best tool at 1 either way, but on the probability scale a tool the encoder is unsure of sits near 0 rather than
    a few hundredths below the best, so the fused score follows the encoder where it is confident and BM25 where
    it is not.
    """

    name = "fusion"

    def __init__(self, parts: Sequence[Any], weights: Sequence[float] | None = None, space: str = "similarity") -> None:
        if not parts:
            raise ValueError("a fusion needs at least one base retriever")
        if space not in ("probability", "similarity"):
            raise ValueError(f"space must be probability or similarity, got {space!r}")
        self.parts = list(parts)
        self.weights = list(weights) if weights is not None else None
        self.space = space
        normalised_fusion([np.zeros((1, 1))] * len(self.parts), self.weights)  # refuse bad weights now

    def fit(self, catalog: Catalog) -> ScoreFusion:
        for p in self.parts:
            p.fit(catalog)
        return self

    def score(self, queries: Sequence[str]) -> np.ndarray:
        queries = list(queries)
        return normalised_fusion([self._part_scores(p, queries) for p in self.parts], self.weights)

    def _part_scores(self, part: Any, queries: list[str]) -> np.ndarray:
        scores = np.asarray(part.score(queries))
        temperature = getattr(part, "temperature", None)
        if self.space == "probability" and temperature is not None and hasattr(part, "probabilities"):
            return part.probabilities(scores)
        return scores
