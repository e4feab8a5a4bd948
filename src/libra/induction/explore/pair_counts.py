"""How many values the exploration offered per candidate pair, held as one array of counts per provider field.

Why: the engine counts offers per (provider, export, consumer, input) so that a pair stops receiving offers after a
few (``BuildConfig.offers_per_pair``). A large build touches a large share of its candidate pairs (AppWorld: 2.1 M
candidates, 440 k pairs counted after 34 k calls), and as a dict of 4-tuples each counted pair cost about 120 bytes
(the tuple and the dict's entry). The pairs a provider field can be offered to are fixed when the engine indexes
the candidates (``InputRules.by_provider``, :mod:`.inputs`), so a count needs no key of its own: it is the element
of an unsigned 32-bit array at the pair's position in that index, four bytes per pair of a provider field that
produced a value.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

__all__ = ["PairCounts"]


class PairCounts:
    """Counts per candidate pair: ``row(provider, consumers)[i]`` counts the pair of ``provider`` and
    ``consumers[i]``, where ``consumers`` is the provider's list in the candidate index (the same list every time).

    A list that names a consumer input twice counts it once: :meth:`slots` maps each position to the first
    position of its pair, as counts keyed by the pair itself would.
    """

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], array] = {}
        self._slots: dict[tuple[str, str], list[int] | None] = {}

    def row(self, provider: tuple[str, str], consumers: Sequence[tuple[str, str]]) -> array:
        """The counts of ``provider``'s pairs (all zero at first), in the order of ``consumers``."""
        counts = self.rows.get(provider)
        if counts is None:
            counts = self.rows[provider] = array("I", bytes(4 * len(consumers)))
        return counts

    def slots(self, provider: tuple[str, str], consumers: Sequence[tuple[str, str]]) -> list[int] | None:
        """Where each position's count is kept: None when every position is its own (no pair repeats)."""
        if provider not in self._slots:
            first: dict[tuple[str, str], int] = {}
            slots = [first.setdefault(pair, i) for i, pair in enumerate(consumers)]
            self._slots[provider] = None if len(first) == len(consumers) else slots
        return self._slots[provider]

    def providers(self) -> set[str]:
        """The provider tools offered to at least once."""
        return {provider[0] for provider, counts in self.rows.items() if any(counts)}

    def __len__(self) -> int:
        """The pairs offered to at least once."""
        return sum(len(counts) - counts.count(0) for counts in self.rows.values())
