"""Dense retrieval ("QTS" in the paper): s_q(t) = (1 + cos(h(q), h(t))) / 2 over L2-normalised embeddings.

Scores are kept in [0, 1] because graph propagation (paper Eq. 4-5) averages them. What gets embedded for each
tool is the ``document`` style of :mod:`.documents` (prose by default, the paper's JSON on request).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..catalog import Catalog
from .documents import DEFAULT_DOCUMENT, check_style, tool_document
from .embedders import DEFAULT_EMBEDDER, Embedder, embed_cached, get_embedder


class DenseRetriever:
    name = "dense"

    def __init__(self, embedder: Embedder | str = DEFAULT_EMBEDDER, cache: bool = True, document: str = DEFAULT_DOCUMENT) -> None:
        self.document = check_style(document)
        self.embedder = get_embedder(embedder) if isinstance(embedder, str) else embedder
        self.cache = cache
        self.tool_vectors: np.ndarray | None = None

    def fit(self, catalog: Catalog) -> "DenseRetriever":
        texts = [tool_document(t, self.document) for t in catalog]
        self.tool_vectors = embed_cached(self.embedder, texts) if self.cache else self.embedder.embed(texts)
        return self

    def score(self, queries: Sequence[str]) -> np.ndarray:
        if self.tool_vectors is None:
            raise RuntimeError("call fit(catalog) before score()")
        q = embed_cached(self.embedder, list(queries)) if self.cache else self.embedder.embed(list(queries))
        return (1.0 + q @ self.tool_vectors.T) / 2.0
