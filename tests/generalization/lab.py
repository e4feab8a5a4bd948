"""A small sequence lab: text-in, text-out helpers of the kind a web form or a command line calls.

Every sequence input is a string and is checked in code, with the message a developer writes: a sequence may hold
only the letters A, C, G and T, and two tools take several values packed into one string (two sequences separated
by a comma; a sequence and a position). What it exercises
(engine rules, generic):

- A literal the tool rejects for its form is repaired from the message: "use the letters A, C, G, T" gives a
  word of those letters (:func:`libra.values.repair.repair_literal`).
- A packed input bound to one value is repacked from the message: "expected two sequences separated by a comma,
  got 1" joins two values, "missing position: pack it after the sequence, separated by a comma" appends one
  (:mod:`libra.contracts.packed`). Without these, three of the four tools never succeed.

Designed relation: ``random_sequence -> reverse_complement`` (sequence): a generated sequence is one the
complement takes; so would any other valid sequence, hence either kind (``VALUE``).
"""

from __future__ import annotations

import random

from . import VALUE

_BASES = "ACGT"
_PAIRS = {"A": "T", "C": "G", "G": "C", "T": "A"}


def _checked(sequence: str) -> str:
    seq = sequence.strip().upper()
    if not seq or any(c not in _BASES for c in seq):
        raise ValueError(f"invalid sequence {sequence!r}: use the letters A, C, G, T")
    return seq


def random_sequence(length: int) -> dict:
    """Generate a random DNA sequence.

    :param length: How many bases to generate.
    :returns: The generated sequence.
    """
    n = int(length)
    if not 1 <= n <= 1000:
        raise ValueError("length must be between 1 and 1000")
    return {"sequence": "".join(random.choice(_BASES) for _ in range(n))}


def reverse_complement(sequence: str) -> dict:
    """The reverse complement of a DNA sequence.

    :param sequence: The DNA sequence.
    :returns: The reverse complement.
    """
    seq = _checked(sequence)
    return {"reverse_complement": "".join(_PAIRS[c] for c in reversed(seq))}


def compare_sequences(pair: str) -> dict:
    """Percent identity of two DNA sequences, position by position over the shorter one.

    :param pair: The two sequences to compare.
    :returns: The percent identity.
    """
    parts = [p for p in pair.split(",") if p.strip()]
    if len(parts) != 2:
        raise ValueError(f"expected two sequences separated by a comma, got {len(parts)}")
    a, b = (_checked(p) for p in parts)
    n = min(len(a), len(b))
    return {"identity": round(100.0 * sum(x == y for x, y in zip(a, b)) / n, 2)}


def base_at(query: str) -> dict:
    """The base at a position of a DNA sequence.

    :param query: The sequence and the position (counted from 1).
    :returns: The base found there.
    """
    parts = [p.strip() for p in query.split(",")]
    seq = _checked(parts[0])
    if len(parts) < 2 or not parts[1]:
        raise ValueError("missing position: pack it after the sequence, separated by a comma")
    if not parts[1].isdigit() or not 1 <= int(parts[1]) <= len(seq):
        raise ValueError(f"position must be between 1 and {len(seq)}")
    return {"base": seq[int(parts[1]) - 1]}


DESIGNED = [
    ("lab.random_sequence", "lab.reverse_complement", VALUE, "sequence", "sequence"),
]

EXCLUDED = [
    # A percent identity is no length and no sequence.
    ("lab.compare_sequences", None, None, None, None),
]
