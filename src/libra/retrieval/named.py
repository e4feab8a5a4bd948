"""The base retrievers graph propagation runs over (``--base``): dense, or hybrid (BM25 + dense by rank fusion)."""

from __future__ import annotations

from typing import Any

from libra.errors import ConfigError
from libra.retrieval.documents import DEFAULT_DOCUMENT

BASES: tuple[str, ...] = ("dense", "hybrid")


def base_retriever(name: str = "dense", embedder: str = "minilm", document: str = DEFAULT_DOCUMENT) -> Any:
    """The unfitted base retriever called ``name``: ``dense`` or ``hybrid`` (BM25 + dense by rank fusion)."""
    from libra.retrieval.dense import DenseRetriever
    from libra.retrieval.hybrid import bm25_dense

    check_base(name)
    return DenseRetriever(embedder, document=document) if name == "dense" else bm25_dense(embedder, document)


def check_base(name: str) -> None:
    if name not in BASES:
        raise ConfigError(f"--base must be one of {', '.join(BASES)}; got {name!r}")
