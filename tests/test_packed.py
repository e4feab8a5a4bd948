"""Inputs that pack several values into one string: the repair read from the tool's rejection
(:mod:`libra.contracts.packed`), and the measure-word rule of :func:`libra.values.prose.encoded_format`."""

from __future__ import annotations

import pytest

from libra.contracts.packed import packed_value, separator, wanted_count
from libra.values.prose import encoded_format


@pytest.mark.parametrize(
    ("current", "message", "description", "others", "expected"),
    [
        # a count: join with another observed value of the kind, by the separator named
        ("CCO", "expected two SMILES (separated by '.' or a comma), got 1", "", ["CCN"], "CCO,CCN"),
        ("a.txt", "pass two paths separated by a semicolon", "", ["b.txt"], "a.txt;b.txt"),
        ("x", "needs at least 2 items, got 1", "Items, comma-separated.", ["y", "z"], "x,y"),
        # no other value: the rejected one fills the missing place
        ("CCO", "expected at least 2 SMILES separated by commas (or '.'), got 1", "", [], "CCO,CCO"),
        # the separator may only be in the description; a value already packed enough is left alone
        ("a", "expected two names", "Two names separated by a pipe.", ["b"], "a|b"),
        ("a,b", "expected two names separated by a comma", "", ["c"], None),
        # a missing named part: a position is the next small number not yet used
        ("ACGT", "missing position: pack it after the sequence, separated by a comma", "", [], "ACGT,1"),
        ("CCO,1", "missing atom_idx2: pack it after the SMILES, separated by a comma", "", [], "CCO,1,2"),
        ("ACGT", "missing label: append it, separated by a colon", "", [], "ACGT:sample label"),
        # not about packing
        ("CCO", "Invalid access token", "", ["CCN"], None),
        ("CCO", "missing access token", "", [], None),
        ("", "expected two values", "", ["a"], None),
        # a count of characters is about one value's length, not about packing
        ("ab", "name must be at least 2 characters, separated by nothing", "", ["cd"], None),
        ("x", "expected a 2-letter country code", "", ["y"], None),
    ],
)
def test_packed_value(current, message, description, others, expected) -> None:
    assert packed_value(current, message, description, others) == expected


def test_separator_and_count() -> None:
    assert separator("separated by '.' or a comma") == ","
    assert separator("separated by '.'") == "."
    assert separator("nothing here", "tab-separated values") == "\t"
    assert separator("nothing", "") is None
    assert wanted_count("expected two SMILES") == 2
    assert wanted_count("a pair of names") == 2
    assert wanted_count("pass three numbers") == 3
    assert wanted_count("Invalid value") is None


def test_a_measure_of_an_encoding_is_not_the_encoding() -> None:
    assert encoded_format("sequence", "DNA sequence") == "dna sequence"
    assert encoded_format("length", "DNA Sequence length") is None
    assert encoded_format("smiles_count", "How many SMILES to generate") is None
