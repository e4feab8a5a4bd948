"""Reciprocal rank fusion (RRF) of several base retrievers.

score(t) = Σ_r 1 / (c + rank_r(t)), rank 1-based, with c = 60, the constant of Cormack, Clarke and Büttcher
(SIGIR 2009) that search engines use by default. Fusing ranks rather than scores needs no calibration between
retrievers whose scores live on different scales (BM25 is unbounded, dense is a cosine), and it has no parameter
to fit to a benchmark. Lexical and dense retrieval miss different tools: BM25 matches the exact identifiers a
request repeats, the encoder matches paraphrases.

The fused score is a base score like any other, so graph propagation runs on top of it (``libra-hybrid``). It
declares no temperature, so propagation averages the fused scores themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from libra.catalog import Catalog
from libra.retrieval.base import ranks

RRF_CONSTANT = 60


def bm25_dense(embedder: str = "minilm", document: str | None = None) -> HybridRetriever:
    """The hybrid every command means by ``hybrid``: BM25 and dense (unfitted)."""
    from libra.retrieval.bm25 import BM25Retriever
    from libra.retrieval.dense import DenseRetriever
    from libra.retrieval.documents import DEFAULT_DOCUMENT

    return HybridRetriever([BM25Retriever(), DenseRetriever(embedder, document=document or DEFAULT_DOCUMENT)])


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
        out: np.ndarray | None = None
        for p in self.parts:
            fused = 1.0 / (self.constant + ranks(np.asarray(p.score(queries), dtype=np.float64)))
            out = fused if out is None else out + fused
        assert out is not None
        return out
