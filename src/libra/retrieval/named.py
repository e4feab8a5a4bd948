"""The base retrievers graph propagation runs over (``--base``): dense, BM25, or the two fused, by reciprocal ranks
(``hybrid``) or by normalised scores (``fusion``, see :mod:`.hybrid`)."""

from __future__ import annotations

from typing import Any

from libra.errors import ConfigError
from libra.retrieval.defaults import DEFAULT_FUSION_WEIGHT
from libra.retrieval.documents import DEFAULT_DOCUMENT

BASES: tuple[str, ...] = ("dense", "bm25", "hybrid", "fusion")


def base_retriever(
    name: str = "dense",
    embedder: str = "minilm",
    document: str = DEFAULT_DOCUMENT,
    score_space: str = "similarity",
    dense_weight: float = DEFAULT_FUSION_WEIGHT,
) -> Any:
    """The unfitted base retriever called ``name`` (see the module docstring); ``score_space`` and
    ``dense_weight`` shape ``fusion`` only (what its dense part enters as, and its weight)."""
    from libra.retrieval.bm25 import BM25Retriever
    from libra.retrieval.dense import DenseRetriever
    from libra.retrieval.hybrid import bm25_dense, bm25_dense_fusion

    check_base(name)
    if name == "dense":
        return DenseRetriever(embedder, document=document)
    if name == "bm25":
        return BM25Retriever()
    if name == "hybrid":
        return bm25_dense(embedder, document)
    return bm25_dense_fusion(embedder, document, dense_weight, score_space)


def check_base(name: str) -> None:
    if name not in BASES:
        raise ConfigError(f"--base must be one of {', '.join(BASES)}; got {name!r}")
