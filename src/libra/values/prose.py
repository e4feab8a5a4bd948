"""What a parameter's documentation writes out: the values it lists, the encoding it names, the format it states.

Why: developers document choices, examples and formats in prose far more often than in JSON Schema keywords
("either 'no longer needed' or 'ordered by mistake'", "e.g. dermatology, cardiology", "as YYYY-MM-DD"), and a value
the tool's own text names is far likelier to be accepted than an invented one. This is the documented layer of
the value generator (:mod:`libra.values.generator`); :mod:`libra.values.constraints` reads the rules a value must
satisfy from the same text.
"""

from __future__ import annotations

import re
from typing import Any

from libra._util.text import words
from libra.values.conventions import email_for

# Phrases that introduce the complete set of allowed values ("[Enum]: a, b", "Options are: a, b", "one of: a, b",
# "either 'x' or 'y'") and phrases that introduce examples only ("e.g. a, b", "such as a or b", "for example 'x'").
_CLOSED_CUES = re.compile(
    r"\[enum\]\s*:?|\boptions?(?:\s+are|\s+include)?\s*:|\bone of\b\s*:?|\beither\b|\bmust be one of\b\s*:?", re.I
)


_EXAMPLE_CUES = re.compile(r"\be\.\s?g\.?\s*,?|\bfor (?:example|instance)\s*,?|\bsuch as\b", re.I)

#: A value in quotes (straight, back or typographic), as descriptions and rejection messages quote the values
#: they name.
QUOTED = re.compile(
    r"""['"`\u2018\u2019\u201c\u201d]([^'"`\u2018\u2019\u201c\u201d]{1,60})['"`\u2018\u2019\u201c\u201d]"""
)


def _clause_after(text: str) -> str:
    """The text a cue introduces: up to the end of its sentence, line, parenthesis or semicolon."""
    text = text.lstrip(" :[")
    m = re.search(r"\.(?:\s|$)|[\n;)\]]", text)
    return text[: m.start()] if m else text


def _listed_values(clause: str) -> list[str]:
    """The values a clause lists: its quoted strings when it quotes any, else its comma/or/and-separated words.

    Unquoted items longer than three words are prose, not values, and make the whole clause prose.
    """
    quoted = [next(g for g in m.groups() if g is not None).strip() for m in QUOTED.finditer(clause)]
    if quoted:
        return [q for q in quoted if q]
    items = [i.strip().strip("'\"` ") for i in re.split(r",|\bor\b|\band\b|/", clause)]
    items = [i for i in items if i]
    if not items or any(len(i.split()) > 3 or len(i) > 40 for i in items):
        return []
    return items


def described_choices(description: str) -> tuple[list[str], bool]:
    """Values a description writes out for a parameter, and whether they are the complete allowed set.

    Why: developers document choices in prose far more often than in an ``enum`` ("either 'no longer needed' or
    'ordered by mistake'", "one of: daily, weekly", "e.g. dermatology, cardiology"). A value the tool's own text
    names is far likelier to be accepted than an invented word, and a lookup with an invented key returns nothing
    to learn from. A closed cue ("one of", "either ... or", "options are") lists every allowed value (so the
    parameter is a caller's choice among them); an example cue ("e.g.", "such as") lists some accepted values only.
    A closed list needs at least two values, so "one of the user's accounts" is not read as a choice. Without a
    cue, quoted values joined by "or" are read as the closed set (:func:`quoted_alternatives`).
    """
    description = description or ""
    for cue, closed in ((_CLOSED_CUES, True), (_EXAMPLE_CUES, False)):
        for m in cue.finditer(description):
            clause = _clause_after(description[m.end() :])
            if m.group(0).lower().startswith("either"):
                clause = re.split(r"(?<=['\"`\w])\s*[,.;](?=\s)", clause)[0]
            values = _listed_values(clause)
            if len(values) >= (2 if closed else 1):
                return values, closed
    values = quoted_alternatives(description)
    return values, bool(values)


def quoted_alternatives(description: str) -> list[str]:
    """The quoted values a sentence offers as alternatives: two or more, the last introduced by "or".

    Why: a description often glosses each allowed value and quotes it, with no cue word before the list
    ("whether to list local branches ('local'), remote branches ('remote') or all branches ('all')", "sort
    'asc' or 'desc'"). Quoting marks the literal a caller passes and "or" closes the set, so the sentence names
    every allowed value. Sentences with an example cue are left to :data:`_EXAMPLE_CUES` (their quotes are
    examples, not the set), one quoted word is a mention, not a choice, and quoted punctuation ("absolute,
    starting with '/', or relative, starting with '~/'") is a form a value takes, not a value.
    """
    for sentence in re.split(r"(?<=[.!?])\s+|\n", description or ""):
        if _EXAMPLE_CUES.search(sentence):
            continue
        quotes = list(_STRICT_QUOTED.finditer(sentence))
        if len(quotes) < 2 or not re.search(r"\bor\b", sentence[quotes[-2].end() : quotes[-1].start()], re.I):
            continue
        values = [next(g for g in m.groups() if g is not None).strip() for m in quotes]
        values = list(dict.fromkeys(v for v in values if v))
        if len(values) >= 2 and all(re.search(r"\w", v) for v in values):
            return values
    return []


# A quoted value for :func:`quoted_alternatives`: the quote marks stand apart from words, so the apostrophe of
# "user's" opens nothing, and the value itself names something (a prefix such as '/' or '~/' is no choice).
_STRICT_QUOTED = re.compile(r"(?<![\w'\"`])(?:'([^'\n]{1,60})'|\"([^\"\n]{1,60})\"|`([^`\n]{1,60})`)(?![\w'\"`])")


def described_options(description: str) -> list[str]:
    """Values a description lists in prose, closed sets and examples alike (see :func:`described_choices`)."""
    return described_choices(description)[0]


# Public encodings of structures and sequences, named by the words a parameter's name or description uses for
# them. Naming the encoding is generic knowledge (a SMILES string is a payload some tool produced, rule H10b of the
# proposer); a valid example value of one is not, so examples come from the catalog as JSON Schema ``examples``.
ENCODED_KINDS: tuple[str, ...] = (
    "inchikey",
    "inchi",
    "selfies",
    "smiles",
    "smarts",
    "sybyl line notation",
    "sln",
    "protein sequence",
    "amino acid sequence",
    "peptide",
    "rna sequence",
    "dna sequence",
    "nucleotide sequence",
    "molecular formula",
    "chemical formula",
)


#: Names of a parameter that measures something rather than holding it ("length", "count"): a "sequence
#: length" is a number, not a sequence.
_MEASURE_WORDS = frozenset({"length", "len", "count", "size", "num", "number", "total", "width", "height"})


def encoded_format(name: str, description: str) -> str | None:
    """The public encoding a string parameter carries (one of :data:`ENCODED_KINDS`), if its name or description
    names one.

    A parameter whose name ends in a measure word (``length``, ``count``, ``size``) carries none, whatever its
    description names: "length of the DNA sequence" describes how long a sequence is to be, and giving it a sequence
    as its value makes every call fail the tool's own check that it is a number.
    """
    if words(name) and words(name)[-1] in _MEASURE_WORDS:
        return None
    text = " ".join(words(name)) + " " + " ".join(words(description or ""))
    squashed = " " + text + " "
    for key in ENCODED_KINDS:
        if f" {key} " in squashed or (" " not in key and key in {w for w in squashed.split()}):
            return key
    return None


def format_example(description: str, fmt: str | None, name: str = "") -> str | None:
    """A value for a declared or described date/time/address format (rule 10: dates are constructible)."""
    fmt = (fmt or "").lower()
    d = description or ""
    if fmt == "date" or re.search(r"yyyy-mm-dd", d, re.I):
        return "2024-01-01"
    if fmt == "date-time":
        return "2024-01-01T00:00:00Z"
    if re.search(r"mm/yyyy", d, re.I):
        return "01/2030"
    if fmt == "time" or re.search(r"hh:mm", d, re.I):
        return "10:00"
    if fmt == "email":
        return email_for(name)
    if fmt in ("uri", "url", "iri") or re.search(r"https?://", d):
        return "https://example.com"
    return None


def stated_form(schema: dict[str, Any]) -> bool:
    """Whether a string input declares a form (a JSON Schema ``format`` or ``pattern``) or its description states
    one (``YYYY-MM-DD``, ``HH:MM``, a URL): a form the tool can check, unlike free text."""
    if schema.get("format") or schema.get("pattern"):
        return True
    return format_example(str(schema.get("description", "")), None) is not None


def described_bound(description: str) -> float | None:
    """The upper end of a range stated in prose ("between 0 and 1", "from 0 to 100").

    F7: for a bounded degree, the effect-complete value is the completing boundary.
    """
    m = re.search(
        r"(?:between|from)\s+(-?\d+(?:\.\d+)?)\s*(?:\([^)]*\))?\s+(?:and|to)\s+(-?\d+(?:\.\d+)?)",
        description or "",
        re.I,
    )
    return float(m.group(2)) if m else None


#: A description saying that an empty value selects everything ("If empty, all emails are returned", "leave blank to
#: list all"): the empty string is then the documented way to reveal the records a search covers.
_EMPTY_MEANS_ALL = re.compile(
    r"\bif\s+(?:it\s+is\s+|left\s+|the\s+\w+\s+is\s+)?(?:empty|blank)\b[^.]*\b(?:all|every|any)\b"
    r"|\b(?:empty|blank)\s+(?:string|value|query|text)?\s*(?:returns|lists|matches|selects|for)\s+(?:all|every)\b"
    r"|\bleave\s+(?:it\s+)?(?:empty|blank)\b",
    re.I,
)


def empty_means_all(description: str) -> bool:
    """Whether the description says an empty value selects every record (see :data:`_EMPTY_MEANS_ALL`)."""
    return bool(_EMPTY_MEANS_ALL.search(description or ""))
