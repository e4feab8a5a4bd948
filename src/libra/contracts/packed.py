"""Inputs that pack several values into one string, repaired from the tool's rejection message.

Tools that take one text input often pack several values into it ("two sequences separated by a comma", "a path
and a line number"). The proposer binds such an input to one observed value of its kind, the tool rejects it, and its
message says what is missing: "expected two sequences separated by a comma, got 1", "missing line: pack it after
the path, separated by a comma". These helpers read the two common shapes of such a message and build the packed
value the message asks for, from the rejected value and other values of the same kind -- the paper's feedback loop
applied to an input's structure rather than to its form. Without it such a tool is never seen succeeding, its
response is never observed, and nothing it returns can be offered to another tool.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from libra._util.text import words

_COUNTS = {"two": 2, "2": 2, "three": 3, "3": 3, "both": 2, "pair": 2}

#: "expected two X", "pass two X", "needs at least 2 X", "a pair of X": how many values the input should hold.
#: A count of characters or digits ("at least 2 characters", "a 2-letter code") is about one value's length.
_MANY = re.compile(
    (
        r"\b(?:expected|expects|pass|give|provide|needs?|requires?|takes?|at least|a)\s+(?:at "
        r"least\s+|exactly\s+)?(two|2|three|3|pair)\b(?!-)"
        r"(?!\s+(?:characters?|chars?|letters?|digits?|symbols?|bytes?|words?|decimals?|decimal "
        r"places)\b)"
    ),
    re.IGNORECASE,
)
#: "missing line", "missing 'position'": a named part the packed value lacks.
_MISSING_PART = re.compile(r"\bmissing\s+(?:the\s+)?['\"`]?([A-Za-z_][A-Za-z0-9_]*)['\"`]?", re.IGNORECASE)
#: "separated by a comma", "separated by '.'", "comma-separated".
_SEPARATOR = re.compile(
    (
        r"\b(?:separated|delimited|split)\s+by\s+(?:an?\s+|the\s+)?"
        r"(?:['\"`]([^'\"`\s]{1,3})['\"`]|(comma|semicolon|colon|space|pipe|tab|slash|dot|period))"
        r"|\b(comma|semicolon|space|tab|pipe)[- "
        r"]separated\b"
    ),
    re.IGNORECASE,
)
_NAMED_SEPARATORS = {
    "comma": ",",
    "semicolon": ";",
    "colon": ":",
    "space": " ",
    "pipe": "|",
    "tab": "\t",
    "slash": "/",
    "dot": ".",
    "period": ".",
}
#: Words naming a position or a count: such a part is a small whole number.
_INDEX_WORDS = frozenset(
    {"idx", "index", "position", "pos", "count", "number", "num", "n", "line", "row", "column", "col", "offset"}
)


def separator(*texts: str) -> str | None:
    """The separator the first of ``texts`` that names one names (the message, then the input's description);
    a comma when several are named and a comma is among them (the common reading of "'.' or a comma")."""
    for text in texts:
        found = list(_SEPARATOR.finditer(text or ""))
        if not found:
            continue
        seps = [m.group(1) or _NAMED_SEPARATORS[(m.group(2) or m.group(3)).lower()] for m in found]
        return "," if "," in seps or re.search(r"\bcommas?\b", text, re.IGNORECASE) else seps[0]
    return None


def wanted_count(message: str) -> int | None:
    """How many values a rejection says the input should hold, when it says so (2 or 3)."""
    m = _MANY.search(message)
    return _COUNTS[m.group(1).lower()] if m else None


def _part_literal(name: str, current: str, sep: str) -> str:
    """A value for a missing named part: a position or count is the next small whole number not yet used by a
    numeric part of the value (so two indexes packed side by side differ); any other part is a word made from its
    name, as the proposer's literals are."""
    if set(words(name)) & _INDEX_WORDS or re.search(r"(?:idx|index)\d*$", name, re.IGNORECASE):
        used = {p.strip() for p in current.split(sep)}
        return next(str(i) for i in range(1, 100) if str(i) not in used)
    return "sample " + " ".join(words(name))


def packed_value(current: str, message: str, description: str = "", others: Sequence[str] = ()) -> str | None:
    """The packed value a rejection of ``current`` asks for, or None when the message is not about packing.

    Two shapes are read. A count ("expected two X separated by a comma, got 1"): ``current`` joined with
    ``others`` (other observed values of the same kind, best first) by the separator the message or the
    input's ``description`` names, a comma when neither does; with no other value, ``current`` itself fills the
    missing places (a pair of one value is still a well-formed pair). A missing named part ("missing position:
    pack it after the sequence, separated by a comma"): ``current`` with a literal for the part appended. Only
    string values are packed, and never a value that already holds as many parts as the message wants.
    """
    if not isinstance(current, str) or not current:
        return None
    sep = separator(message, description)
    missing = _MISSING_PART.search(message)
    if missing is not None and sep is not None:
        return current + sep + _part_literal(missing.group(1), current, sep)
    count = wanted_count(message)
    if count is None:
        return None
    sep = sep or ","
    have = [p for p in current.split(sep) if p.strip()]
    if len(have) >= count:
        return None
    fill = [o for o in dict.fromkeys(others) if isinstance(o, str) and o and o != current and sep not in o]
    parts = have + (fill + [current] * count)[: count - len(have)]
    return sep.join(parts)


__all__ = ["packed_value", "separator", "wanted_count"]
