"""BM25 exactly as the paper specifies it (Appendix F).

Lowercase; tokens = ``[A-Za-z0-9_]+``; k1 = 1.5, b = 0.75; idf = log(1 + (N - n + 0.5) / (n + 0.5)) (the
non-negative "Lucene" form); documents = each tool's serialized public metadata. ``bm25s`` implements exactly
this variant (``method="lucene"``) with all scoring precomputed at index time, so we use it with our own
tokenizer rather than re-deriving sparse scoring by hand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import bm25s
import numpy as np

from libra.catalog import Catalog

TOKEN_RE = re.compile(r"[A-Za-z0-9_]+")


def tokenize(text: str) -> list[str]:
    return TOKEN_RE.findall(text.lower())


class BM25Retriever:
    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._model: bm25s.BM25 | None = None
        self._vocab: dict[str, int] = {}
        self._n = 0

    def _ids(self, tokens: list[str], grow: bool) -> list[int]:
        out = []
        for tok in tokens:
            i = self._vocab.get(tok)
            if i is None and grow:
                i = self._vocab[tok] = len(self._vocab)
            if i is not None:
                out.append(i)
        return out

    def fit(self, catalog: Catalog) -> BM25Retriever:
        return self.fit_texts([t.text() for t in catalog])

    def fit_texts(self, texts: Sequence[str]) -> BM25Retriever:
        """Index these documents, one per tool in catalog order (a search index keeps them without the catalog)."""
        self._vocab = {}
        corpus_ids = [self._ids(tokenize(t), grow=True) for t in texts]
        self._n = len(texts)
        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene", idf_method="lucene")
        model.index(bm25s.tokenization.Tokenized(ids=corpus_ids, vocab=dict(self._vocab)), show_progress=False)
        self._model = model
        return self

    def score(self, queries: Sequence[str]) -> np.ndarray:
        if self._model is None:
            raise RuntimeError("call fit(catalog) before score()")
        out = np.zeros((len(queries), self._n), dtype=np.float64)
        for qi, q in enumerate(queries):
            ids = self._ids(tokenize(q), grow=False)
            if ids:
                # bm25s' lucene variant drops the constant (k1 + 1) numerator factor; restore it so scores equal
                # the textbook formula (rankings are unaffected, hybrids are not).
                out[qi] = self._model.get_scores(ids) * (self.k1 + 1.0)
        return out
