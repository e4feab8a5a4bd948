"""Offer counts per candidate pair (libra.induction.explore.pair_counts) count exactly what a dict keyed by the pair
counts."""

from __future__ import annotations

import pickle
import random

from libra.induction.explore.pair_counts import PairCounts


def test_counts_by_position_match_counts_by_pair_even_where_a_list_repeats_a_pair() -> None:
    rng = random.Random(5)
    index = {
        ("A.get", "id"): [("B.put", "id"), ("C.rm", "id"), ("B.put", "name")],
        ("A.get", "name"): [("B.put", "name"), ("C.rm", "path"), ("B.put", "name"), ("D.mv", "to"), ("C.rm", "path")],
        ("E.ls", "path"): [("D.mv", "from")],
    }
    counts, reference = PairCounts(), {}
    for _ in range(3000):
        provider = rng.choice(list(index))
        consumers = index[provider]
        row, slots = counts.row(provider, consumers), counts.slots(provider, consumers)
        at = rng.randrange(len(consumers))
        pair = (*provider, *consumers[at])
        slot = at if slots is None else slots[at]
        assert row[slot] == reference.get(pair, 0)
        if row[slot] < 8:  # the engine counts a pair only until it is spent
            row[slot] += 1
            reference[pair] = reference.get(pair, 0) + 1
    assert counts.slots(("A.get", "id"), index[("A.get", "id")]) is None  # no repeats: positions are their own
    assert len(counts) == len(reference) and counts.providers() == {p for p, *_ in reference}
    again = pickle.loads(pickle.dumps(counts))  # as a checkpoint keeps it
    assert again.rows == counts.rows and len(again) == len(counts)


def test_a_provider_whose_offers_were_all_skipped_is_not_counted_as_offered() -> None:
    counts = PairCounts()
    counts.row(("A.get", "id"), [("B.put", "id")])  # looked at, never offered
    assert counts.providers() == set() and len(counts) == 0
