"""Dense retrieval ("QTS" in the paper): s_q(t) = (1 + cos(h(q), h(t))) / 2 over L2-normalised embeddings.

Scores are kept in [0, 1] because graph propagation (paper Eq. 4-5) averages them. When the embedder declares the
temperature it was trained with, :meth:`DenseRetriever.probabilities` turns a query's scores into the model's own
distribution over the catalog, which is what LIBRA averages by default (see :mod:`.graph`). What gets embedded for
each tool is the ``document`` style of :mod:`.documents` (prose by default, the paper's JSON on request).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from libra.catalog import Catalog
from libra.embeddings.embedders import DEFAULT_EMBEDDER, Embedder, embed_cached, get_embedder
from libra.retrieval.documents import DEFAULT_DOCUMENT, check_style, tool_document


class DenseRetriever:
    name = "dense"

    def __init__(
        self, embedder: Embedder | str = DEFAULT_EMBEDDER, cache: bool = True, document: str = DEFAULT_DOCUMENT
    ) -> None:
        self.document = check_style(document)
        self.embedder = get_embedder(embedder) if isinstance(embedder, str) else embedder
        self.cache = cache
        self.tool_vectors: np.ndarray | None = None

    def fit(self, catalog: Catalog) -> DenseRetriever:
        texts = [tool_document(t, self.document) for t in catalog]
        self.tool_vectors = embed_cached(self.embedder, texts) if self.cache else self.embedder.embed(texts)
        return self

    def score(self, queries: Sequence[str]) -> np.ndarray:
        if self.tool_vectors is None:
            raise RuntimeError("call fit(catalog) before score()")
        q = embed_cached(self.embedder, list(queries)) if self.cache else self.embedder.embed(list(queries))
        return (1.0 + q @ self.tool_vectors.T) / 2.0

    @property
    def temperature(self) -> float | None:
        return getattr(self.embedder, "temperature", None)

    def probabilities(self, scores: np.ndarray, temperature: float | None = None) -> np.ndarray:
        """softmax(cos / T) over the catalog, per query: the distribution a contrastively trained encoder was fit to.

        Cosines are not on a scale where averaging means much (a gap of 0.05 is noise to an average of two cosines
        but a factor of e to a model trained at T = 0.05), so averaging these probabilities instead lets a
        prerequisite inherit a share of its consumer's confidence. The map is strictly increasing per query: the
        dense ranking is unchanged.
        """
        t = self.temperature if temperature is None else temperature
        if t is None:
            raise ValueError("probabilities need a temperature: the embedder declares none")
        return score_probabilities(scores, t)


def score_probabilities(scores: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(cos / T) per row, for dense scores s = (1 + cos) / 2."""
    if not temperature > 0:
        raise ValueError(f"the temperature must be positive, got {temperature}")
    z = (2.0 * np.atleast_2d(np.asarray(scores, dtype=np.float64)) - 1.0) / temperature
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)
