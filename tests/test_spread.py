"""Which elements of a long list a call contributes to the pool (libra.induction.explore.values.spread)."""

from libra.induction.explore.values import representatives, spread


def test_spread_by_hand():
    assert spread(0, 3) == []
    assert spread(2, 3) == [0, 1]
    assert spread(3, 3) == [0, 1, 2]
    # first and last always; the middle one rounded
    assert spread(8, 3) == [0, 4, 7]
    assert spread(5, 3) == [0, 2, 4]
    assert spread(100, 4) == [0, 33, 66, 99]
    assert spread(9, 1) == [0]
    assert spread(9, 0) == []


def test_a_sorted_listing_offers_its_last_kind_too():
    """Seven folders then one file: the file is among the three offered."""
    entries = [(f"d{i}/", None, f"d{i}/", "") for i in range(7)] + [("d6/a.txt", None, "d6/a.txt", "")]
    picked = [e[0] for e in representatives(entries, 3)]
    assert picked == ["d0/", "d4/", "d6/a.txt"]


def test_elements_labelled_for_groups_keep_more():
    entries = [(i, None, i, "billing" if i % 2 else "") for i in range(40)]
    assert len(representatives(entries, 3)) == 24
