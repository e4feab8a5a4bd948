"""Field-name similarity h_f: how well a provider's output field name matches a consumer's input name.

Names are embedded as words (``accessToken``/``access_token`` -> "access token") because sentence encoders
tokenize identifiers poorly. Used at build time (the compatibility relation's threshold tau) and for retrieval's
field-best provider selection; similarities are stored with each relation so queries never embed anything.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

import numpy as np

from libra.embeddings.embedders import Embedder, embed_cached

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@functools.lru_cache(maxsize=1 << 16)
def humanize(name: str) -> str:
    """``$.user.accessToken`` -> ``user access token``; path punctuation and ``[*]`` are dropped.

    Cached (a pure function of a short name): a build asks it about the same few thousand field names millions of
    times while ranking which values may fill an input."""
    name = re.sub(r"\[\*\]|\[\d+\]|\$", " ", name)
    name = _CAMEL.sub(" ", name)
    words = re.findall(r"[A-Za-z0-9]+", name)
    return " ".join(w.lower() for w in words) or name.lower()


class FieldEncoder:
    """Embeds field names once and answers cosine similarities between them."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vec: dict[str, np.ndarray] = {}

    def add(self, names: Iterable[str]) -> None:
        todo = sorted({n for n in names if n not in self._vec})
        if not todo:
            return
        vecs = embed_cached(self.embedder, [humanize(n) for n in todo])
        for n, v in zip(todo, vecs):
            self._vec[n] = v

    def similarity(self, a: str, b: str) -> float:
        self.add([a, b])
        return float(self._vec[a] @ self._vec[b])

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.add([x for p in pairs for x in p])
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        a = np.stack([self._vec[p[0]] for p in pairs])
        b = np.stack([self._vec[p[1]] for p in pairs])
        return np.einsum("ij,ij->i", a, b)
