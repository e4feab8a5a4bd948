"""How a :class:`~libra.search.searcher.Searcher` ranks, in a module free of numpy: ``libra serve`` names the cached
search index of these options before anything heavy loads (see :mod:`libra.search.index_key`)."""

from __future__ import annotations

from dataclasses import dataclass

from libra.errors import ConfigError
from libra.retrieval.defaults import (
    DEFAULT_BASE,
    DEFAULT_DECAY,
    DEFAULT_FUSION_WEIGHT,
    DEFAULT_HOPS,
    DEFAULT_KS,
    DEFAULT_SCORE_SPACE,
    DEFAULT_SELECTION,
)
from libra.retrieval.documents import DEFAULT_DOCUMENT


@dataclass(frozen=True)
class SearchOptions:
    """How a :class:`~libra.search.searcher.Searcher` ranks: the same knobs as ``libra retrieve`` (see its
    ``--help``); the defaults are :mod:`libra.retrieval.defaults`, the same as ``libra eval --method libra``."""

    base: str = DEFAULT_BASE
    embedder: str = "minilm"
    document: str = DEFAULT_DOCUMENT
    ks: int = DEFAULT_KS
    selection: str = DEFAULT_SELECTION
    hops: int = DEFAULT_HOPS
    score_space: str = DEFAULT_SCORE_SPACE
    temperature: float | None = None
    decay: float = DEFAULT_DECAY
    fusion_weight: float = DEFAULT_FUSION_WEIGHT  # base "fusion": the dense part's weight (BM25 has the rest)

    def check(self) -> SearchOptions:
        """Refuse a bad option before anything loads."""
        from libra.embeddings.embedders import parse_embedder
        from libra.retrieval.documents import check_style
        from libra.retrieval.graph import SCORE_SPACES, SELECTIONS
        from libra.retrieval.named import check_base

        check_base(self.base)
        parse_embedder(self.embedder)
        check_style(self.document)
        for name, value, allowed in (
            ("selection", self.selection, SELECTIONS),
            ("score_space", self.score_space, SCORE_SPACES),
        ):
            if value not in allowed:
                raise ConfigError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        for name, n in (("ks", self.ks), ("hops", self.hops)):
            if not isinstance(n, int) or n < 1:
                raise ConfigError(f"{name} must be a positive integer, got {n!r}")
        for name, x in (("decay", self.decay), ("fusion_weight", self.fusion_weight)):
            if isinstance(x, bool) or not isinstance(x, int | float) or not 0 <= x <= 1:
                raise ConfigError(f"{name} must be a number from 0 to 1, got {x!r}")
        return self
