"""Literals a caller can construct from public information: what a parameter's name, schema and description
suggest as its value (rules 3, 7, 10 of the paper's contract rules).

Why a module of its own: the offline proposer fills every literal of a template from here, contract checking and
the exploration construct a value for an input nothing observed could fill, and retrieval asks which public
encoding a parameter carries. One answer per question keeps every part of a build agreeing. Only the tool's own
metadata is read (its name, schema and description), never a runtime value.
"""

from __future__ import annotations

import copy
import re
import zlib
from typing import Any

from libra._util.text import compounds, name_parts, words
from libra.schema import fits, schema_type

SENTINEL_STRING = "__libra_nonexistent__"


SENTINEL_INT = -1


# Addresses that reach a person; they name the person's record like a user name does, though "number" alone is a
# free quantity.
CONTACT_ADDRESS = {"phonenumber", "mobilenumber", "cellnumber", "phone", "emailaddress"}


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


def _described_options(description: str) -> list[str]:
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


def _format_example(description: str, fmt: str | None, name: str = "") -> str | None:
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
        return _email_for(name)
    if fmt in ("uri", "url", "iri") or re.search(r"https?://", d):
        return "https://example.com"
    return None


def stated_form(schema: dict[str, Any]) -> bool:
    """Whether a string input declares a form (a JSON Schema ``format`` or ``pattern``) or its description states
    one (``YYYY-MM-DD``, ``HH:MM``, a URL): a form the tool can check, unlike free text."""
    if schema.get("format") or schema.get("pattern"):
        return True
    return _format_example(str(schema.get("description", "")), None) is not None


# The first example anyone would give of a common kind of named thing: a stand-in for the general knowledge an
# LLM proposer brings (it would never write "hello" for a city). Keyed by the kind's word in the parameter's name,
# or in its description ("Name of the company").
ENTITY_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("currency", "USD"),
    ("city", "San Francisco"),
    ("country", "United States"),
    ("language", "English"),
    ("company", "Apple"),
    ("organization", "Apple"),
    ("color", "red"),
    ("colour", "red"),
    ("timezone", "UTC"),
)


def _entity_example(toks: set[str], description: str) -> str | None:
    for kind, example in ENTITY_EXAMPLES:
        if kind in toks:
            return example
    m = re.search(r"\bname of (?:the |a |an )?([a-z]+)", description or "", re.I)
    if m:
        kind = m.group(1).lower()
        for k, example in ENTITY_EXAMPLES:
            if k == kind:
                return example
    return None


def _qualifier(name: str, kind: set[str]) -> list[str]:
    """The parts of a parameter's name beyond its kind: ``sender`` in ``sender_email``, ``2`` in ``file2``."""
    parts = name_parts(name)
    glued = {a + b for a, b in zip(parts, parts[1:])}

    def is_kind(p: str) -> bool:
        singular = {p, p[:-1] if p.endswith("s") else p, p[:-2] if p.endswith("es") else p}
        return bool(singular & kind) or any(p in g and g in kind for g in glued)

    return [p for p in parts if not is_kind(p)]


def _email_for(name: str) -> str:
    """An e-mail address whose local part is the name's qualifier (``sender`` for ``sender_email``)."""
    q = _qualifier(name, {"email", "address", "emailaddress", "mail"})
    return ".".join(q) + "@example.com" if q else "user@example.com"


def field_text(name: str) -> str:
    """A free-text literal derived from the field's own name ("sample zip", "sample address 1").

    Why: one word for every free string ("hello") makes values coincide across fields, and the engine then
    credits relations by coincidence (an ``address1`` value "provides" a ``zip``). A literal spelled from the
    field's name is deterministic, distinct between differently named fields, and still shared by fields of the
    same name, which is where a shared value is meaningful.
    """
    return f"{TEXT_STEM} " + (" ".join(name_parts(name)) or "value")


#: The word every invented free text starts with (:func:`field_text`).
TEXT_STEM = "sample"


#: Words naming a term a search matches against text (not a name or an identifier it looks up).
SEARCH_TERMS = {"keyword", "keywords", "query", "search", "term", "terms"}


def search_term_literal(name: str) -> str | None:
    """The literal of a free-text search term: :data:`TEXT_STEM` alone, else None when ``name`` is no search term.

    Why: a search term spelled from its own name ("sample keyword") is contained in no record, so the search returns
    nothing and never reveals the records that exist. The texts the exploration itself writes are all spelled
    :func:`field_text` ("sample content", "sample message"); the bare stem is contained in every one of them, so a
    search that matches by containment finds what the exploration created, without copying any observed value into the
    call (a search fed an observed value only repeats what its supplier showed, and earns no credit for it).
    """
    return TEXT_STEM if compounds(words(name)) & SEARCH_TERMS else None


def _string_example(name: str, description: str) -> str:
    """A short plausible string chosen from the parameter's name (shortest literal that can work).

    Kinds with a conventional form (file names, e-mail addresses, phone numbers, URLs) keep that form; the
    words of the name beyond its kind (``source`` in ``source_file``) make the value distinct per field, for the
    same reason as :func:`field_text`.
    """
    toks = compounds(words(name))
    if toks & {"file", "filename"}:
        q = _qualifier(name, {"file", "filename", "name", "new", "path", "to", "of"})
        return "_".join(q + ["file"]) + ".txt" if q else "new_file.txt"
    if toks & {"dir", "dirname", "directory", "folder"}:
        q = _qualifier(name, {"dir", "dirname", "directory", "folder", "name", "new", "path", "to", "of"})
        return "_".join(q + ["folder"]) if q else "new_folder"
    if toks & {"email"}:
        return _email_for(name)
    if toks & CONTACT_ADDRESS:
        q = _qualifier(name, {"phone", "number", "mobile", "cell", "phonenumber", "mobilenumber", "cellnumber"})
        # a reserved-looking ten-digit number, digits only as most systems store them; distinct per qualifier
        return "555010" + (f"{zlib.crc32('_'.join(q).encode()) % 10000:04d}" if q else "0000")
    if toks & {"url", "uri", "link"}:
        q = _qualifier(name, {"url", "uri", "link"})
        return "https://example.com" + ("/" + "-".join(q) if q else "")
    if toks & {"date"}:
        return "2024-01-01"
    if toks & {"password", "passwd", "secret", "passcode"}:
        return "Str0ng-pass"
    if toks & {"username", "user", "login"}:
        q = _qualifier(name, {"username", "user", "login", "name", "new", "id", "ids"})
        return "_".join(q + ["user"]) if q else "new_user"
    entity = _entity_example(toks, description)
    if entity is not None:
        return entity
    term = search_term_literal(name)
    if term is not None:
        return term
    if toks & {"key"}:
        return "sample_" + "_".join(name_parts(name))
    return field_text(name)


def _described_bound(description: str) -> float | None:
    """The upper end of a range stated in prose ("between 0 and 1", "from 0 to 100").

    F7: for a bounded degree, the effect-complete value is the completing boundary.
    """
    m = re.search(
        r"(?:between|from)\s+(-?\d+(?:\.\d+)?)\s*(?:\([^)]*\))?\s+(?:and|to)\s+(-?\d+(?:\.\d+)?)",
        description or "",
        re.I,
    )
    return float(m.group(2)) if m else None


def _number_in_range(schema: dict[str, Any], base: float) -> float:
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    v = base
    if lo is not None and v <= lo:
        v = lo + 1 if "exclusiveMinimum" in schema else lo
    if hi is not None and v >= hi:
        v = hi - 1 if "exclusiveMaximum" in schema else hi
    return v


def literal_for(name: str, schema: dict[str, Any], description: str = "", _depth: int = 0, option: int = 0) -> Any:
    """A literal the caller can construct from public information (rules 3, 7, 10).

    Order: declared enum/const, a usable default, declared examples, options listed in prose, a declared or
    described format, then a short value by type and parameter name. The result is checked against the schema
    and falls back to the plainest value of the type.
    """
    description = description or schema.get("description", "")
    t = schema_type(schema)
    candidates = _declared_values(schema, option)
    if t in (None, "string"):
        candidates.extend(_string_candidates(name, schema, description, option))
    elif t in ("integer", "number"):
        candidates.extend(_number_candidates(schema, description, t))
    elif t == "boolean":
        candidates.append(True)
    elif t == "array" and _depth < 4:
        candidates.extend(_array_candidates(name, schema, description, _depth))
    elif t == "object" and _depth < 4:
        candidates.extend(_object_candidates(schema, _depth))
    candidates.extend(["hello", 1, 1.0, True, [], {}])
    for c in candidates:
        if fits(schema, c):
            return copy.deepcopy(c)
    return candidates[0]


def _declared_values(schema: dict[str, Any], option: int) -> list[Any]:
    """The values the schema itself offers, in the order :func:`literal_for` tries them: its const, its enum's
    ``option``-th value, a usable default, its first example."""
    out: list[Any] = []
    if "const" in schema:
        out.append(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        out.append(schema["enum"][option % len(schema["enum"])])
    default = schema.get("default")
    if "default" in schema and default is not None and default != "None":
        out.append(default)
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        out.append(schema["examples"][0])
    return out


def _string_candidates(name: str, schema: dict[str, Any], description: str, option: int) -> list[Any]:
    """A string input's candidates: an option its description lists, its declared or described format, then a
    short value spelled from its name."""
    out: list[Any] = []
    opts = _described_options(description)
    if opts:
        out.append(opts[option % len(opts)])
    fmt = _format_example(description, schema.get("format"), name)
    if fmt:
        out.append(fmt)
    out.append(_string_example(name, description))
    return out


def _number_candidates(schema: dict[str, Any], description: str, t: str) -> list[Any]:
    """A number's candidates: a stated range's completing boundary, else 2 -- small, positive and not an identity
    element (1 is a degenerate logarithm base or exponent)."""
    bound = _described_bound(description)
    if t == "integer":
        return ([int(bound)] if bound is not None else []) + [int(_number_in_range(schema, 2))]
    return ([float(bound)] if bound is not None else []) + [float(_number_in_range(schema, 2.0))]


def _array_candidates(name: str, schema: dict[str, Any], description: str, depth: int) -> list[Any]:
    """A list's candidates: the first option its description lists, as many items as it needs at least, none."""
    out: list[Any] = []
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    opts = _described_options(description)
    if opts and schema_type(items) in (None, "string"):
        out.append(opts[:1])
    n = max(1, int(schema.get("minItems", 1)))
    out.append([literal_for(name, items, items.get("description", ""), depth + 1) for _ in range(n)])
    out.append([])
    return out


def _object_candidates(schema: dict[str, Any], depth: int) -> list[Any]:
    """An object's candidates: its required properties (else its first one) filled, then the empty object."""
    props = schema.get("properties", {}) or {}
    chosen = list(schema.get("required", [])) or list(props)[:1]
    return [
        {p: literal_for(p, props.get(p, {}), props.get(p, {}).get("description", ""), depth + 1) for p in chosen},
        {},
    ]


def sentinel_for(schema: dict[str, Any]) -> Any | None:
    """A schema-valid value that cannot name an existing record, for the expected-failure template."""
    t = schema_type(schema)
    if t == "array":
        inner = sentinel_for(schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"})
        cands: list[Any] = [[inner]] if inner is not None else []
    else:
        cands = {"integer": [SENTINEL_INT, 987654321], "number": [SENTINEL_INT, 987654321.0]}.get(
            t or "string", [SENTINEL_STRING]
        )
    return next((c for c in cands if fits(schema, c)), None)
