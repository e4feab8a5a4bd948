"""One home for JSON-Schema helpers: types, fits, constructed literals and sentinels, and the word tokenizer.

The offline proposer, the engine and retrieval all ask the same questions of a parameter's schema (which type is
it, does this value fit, what is a plausible literal, what value can name no existing record); answering them in
one module keeps every part of a build agreeing on the answers.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import zlib
from collections.abc import Iterable
from typing import Any

SENTINEL_STRING = "__libra_nonexistent__"
SENTINEL_INT = -1

# Addresses that reach a person; they name the person's record like a user name does, though "number" alone is a
# free quantity.
CONTACT_ADDRESS = {"phonenumber", "mobilenumber", "cellnumber", "phone", "emailaddress"}


def words(text: str) -> list[str]:
    """Lower-case word tokens of an identifier or sentence (snake_case, camelCase and trailing digits split)."""
    return list(_word_tuple(text or ""))


@functools.lru_cache(maxsize=1 << 16)
def _word_tuple(text: str) -> tuple[str, ...]:
    """:func:`words`, cached per text. Why: a build tokenizes the same few thousand field names and descriptions
    millions of times (every binding scores every pooled value by name), and the regular expressions cost more
    than everything else in that scoring."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return tuple(w for w in re.split(r"[^a-zA-Z]+", text.lower()) if w)


def _compounds(tokens: list[str]) -> set[str]:
    """Tokens plus adjacent pairs glued together, so ``user_name`` and ``username`` look alike."""
    out = set(tokens)
    out.update(a + b for a, b in zip(tokens, tokens[1:]))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Schema helpers
# ---------------------------------------------------------------------------------------------------------------

_TYPE_ALIASES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
}


def schema_type(schema: dict[str, Any] | None) -> str | None:
    """The single JSON type a schema declares (first of a type list, Python-ish names mapped), or None."""
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if isinstance(t, str):
        return _TYPE_ALIASES.get(t, t)
    if "properties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    return None


def fits(schema: dict[str, Any] | bool, value: Any) -> bool:
    """Whether ``value`` is valid under ``schema``, formats included; False for a schema that cannot be used.

    Formats are checked (an email without ``@``, a date that is not one) because a value of the right type but
    the wrong form is one a careful tool rejects: offering it would prove nothing. A broken schema (unknown
    type, a reference to nowhere) accepts nothing we can prove, and must never stop a build.
    """
    try:
        validator = _validator_class()
        return bool(validator(schema, format_checker=validator.FORMAT_CHECKER).is_valid(value))
    except Exception:  # noqa: BLE001 - see the docstring: a broken schema proves nothing, it does not raise
        return False


# Phrases that introduce the complete set of allowed values ("[Enum]: a, b", "Options are: a, b", "one of: a, b",
# "either 'x' or 'y'") and phrases that introduce examples only ("e.g. a, b", "such as a or b", "for example 'x'").
_CLOSED_CUES = re.compile(
    r"\[enum\]\s*:?|\boptions?(?:\s+are|\s+include)?\s*:|\bone of\b\s*:?|\beither\b|\bmust be one of\b\s*:?", re.I
)
_EXAMPLE_CUES = re.compile(r"\be\.\s?g\.?\s*,?|\bfor (?:example|instance)\s*,?|\bsuch as\b", re.I)
_QUOTED = re.compile(r"'([^']{1,60})'|\"([^\"]{1,60})\"|`([^`]{1,60})`")


def _clause_after(text: str) -> str:
    """The text a cue introduces: up to the end of its sentence, line, parenthesis or semicolon."""
    text = text.lstrip(" :[")
    m = re.search(r"\.(?:\s|$)|[\n;)\]]", text)
    return text[: m.start()] if m else text


def _listed_values(clause: str) -> list[str]:
    """The values a clause lists: its quoted strings when it quotes any, else its comma/or/and-separated words.

    Unquoted items longer than three words are prose, not values, and make the whole clause prose.
    """
    quoted = [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(clause)]
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


def _fits(schema: dict[str, Any], value: Any) -> bool:
    """The proposer's name for :func:`fits` (kept so every part of a build gives the same verdict)."""
    return fits(schema, value)


@functools.cache
def _validator_class() -> Any:
    """jsonschema's 2020-12 validator, imported on first use: the library loads in a tenth of a second less
    for commands that never check a value (``libra serve``'s startup is what a client waits for)."""
    import jsonschema

    return jsonschema.Draft202012Validator


# Keywords whose value is a schema, a list of schemas, or a map of names to schemas: where references can hide.
_ONE_SCHEMA = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
_DEFS = ("$defs", "definitions")
# Keywords that describe rather than constrain: a reference's siblings of this kind override the target's.
_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)
# How many references one path may pass through before the rest is cut to "any value".
REF_DEPTH = 16


def has_ref(schema: Any) -> bool:
    """Whether the schema may hold a ``$ref``: False is certain, True may be a string that merely contains one.

    A text search of the serialized schema is the cheapest sure answer for the common case (no references),
    and a false alarm only costs the full walk of :func:`dereference`, which leaves such a schema as it is.
    """
    try:
        return '"$ref"' in json.dumps(schema)
    except (TypeError, ValueError):
        return True


def dereference(schema: Any, root: Any = None, max_depth: int = REF_DEPTH) -> Any:
    """``schema`` with every local reference (``#/$defs/...``, ``#/definitions/...``, any ``#`` pointer) inlined.

    A sub-schema taken out of its document (a parameter's schema out of the tool's ``parameters``) loses the
    ``$defs`` its references point into, so each consumer (fit checks, literal construction, retrieval text)
    would fail or see an opaque ``$ref``. Inlining against ``root`` (the document the schema came from; the
    schema itself by default) makes the sub-schema self-contained. A recursive model is cut where a reference
    repeats on its own path, and any path through more than ``max_depth`` references is cut too: the cut is the
    empty schema ("any value"), which keeps the result finite and loosens rather than rejects. A reference that
    cannot be resolved (remote, or pointing nowhere) also becomes the empty schema. ``$defs`` are dropped from
    the result since nothing refers to them any more.
    """
    root = schema if root is None else root
    if not has_ref(schema):
        return schema
    resolver = _resolver(root)
    return _inline(schema, resolver, (), max_depth)


class _PointerResolver:
    """Resolves ``#/a/b`` JSON pointers within one document: all a schema without ``$id`` s or anchors can
    refer to (pydantic's output, most tools' schemas). Same answers as ``referencing`` there, without importing
    it (a fifth of a second a server's startup would otherwise wait for)."""

    class _Found:
        def __init__(self, contents: Any) -> None:
            self.contents = contents

    def __init__(self, root: Any) -> None:
        self.root = root

    def lookup(self, ref: str) -> Any:
        node = self.root
        for part in ref[2:].split("/") if ref.startswith("#/") else ():
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        if not ref.startswith("#/") and ref != "#":
            raise LookupError(ref)
        return self._Found(node)


def _plain_pointers_only(node: Any) -> bool:
    """No ``$id``, anchor or dynamic reference anywhere, and every ``$ref`` a local JSON pointer."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "id"):
                if key != "id" or isinstance(value, str):
                    return False
            if key == "$ref" and not (isinstance(value, str) and (value == "#" or value.startswith("#/"))):
                return False
            if not _plain_pointers_only(value):
                return False
    elif isinstance(node, list):
        return all(_plain_pointers_only(v) for v in node)
    return True


def _resolver(root: Any) -> Any:
    if _plain_pointers_only(root):
        return _PointerResolver(root)
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012, specification_with

    dialect = root.get("$schema", "") if isinstance(root, dict) else ""
    try:
        spec = specification_with(dialect, default=DRAFT202012)
    except Exception:  # noqa: BLE001 - an unknown dialect: read it as the current draft
        spec = DRAFT202012
    resource = spec.create_resource(root)
    base = resource.id() or ""
    return Registry().with_resource(base, resource).resolver(base_uri=base)


def _inline(node: Any, resolver: Any, path: tuple[str, ...], max_depth: int) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        siblings = _inline({k: v for k, v in node.items() if k != "$ref"}, resolver, path, max_depth)
        target: Any = {}
        if ref.startswith("#") and ref not in path and len(path) < max_depth:
            try:
                target = resolver.lookup(ref).contents
            except Exception:  # noqa: BLE001 - a reference to nowhere: "any value" (see dereference)
                target = {}
            target = _inline(target, resolver, (*path, ref), max_depth)
        return _merge_ref(target, siblings)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DEFS:
            continue
        if key in _ONE_SCHEMA and isinstance(value, dict):
            value = _inline(value, resolver, path, max_depth)
        elif key in _ONE_SCHEMA + _SCHEMA_LISTS and isinstance(value, list):
            value = [_inline(v, resolver, path, max_depth) for v in value]
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {k: _inline(v, resolver, path, max_depth) for k, v in value.items()}
        out[key] = value
    branches = node.get("anyOf")
    if isinstance(branches, list) and any(isinstance(b, dict) and "$ref" in b for b in branches):
        # an optional record (``anyOf: [{$ref}, {type: null}]``) could not be folded while it was a reference
        folded = fold_union(out["anyOf"])
        if folded is not None and not set(folded) & (set(out) - {"anyOf"}):
            out = {**folded, **{k: v for k, v in out.items() if k != "anyOf"}}
    return out


def fold_union(branches: list[Any]) -> dict[str, Any] | None:
    """One schema equal to ``anyOf: branches`` when that is simple to write, else None.

    Two shapes fold: branches that each only name a type (``int | str``), and one typed branch plus ``null``
    (``Optional[list[str]]``, an optional record), where ``null`` joins the type list (and the enum). The folded
    form accepts the same values, and it is the form :func:`schema_type` and literal construction read.
    """
    if not branches or not all(isinstance(b, dict) for b in branches):
        return None
    if all(set(b) == {"type"} and isinstance(b["type"], str) for b in branches):
        return {"type": list(dict.fromkeys(b["type"] for b in branches))}
    others = [b for b in branches if b != {"type": "null"}]
    if len(others) != 1 or len(others) == len(branches):
        return None
    b = others[0]
    if not isinstance(b.get("type"), (str, list)) or "const" in b or "$ref" in b:
        return None
    typ = [b["type"]] if isinstance(b["type"], str) else list(b["type"])
    out = {**b, "type": [*typ, "null"] if "null" not in typ else typ}
    if isinstance(b.get("enum"), list) and None not in b["enum"]:
        out["enum"] = [*b["enum"], None]
    return out


def _merge_ref(target: Any, siblings: dict[str, Any]) -> Any:
    """A reference's target with its sibling keywords: merged when they only annotate, else both required."""
    if not siblings:
        return target
    if target is True or target == {}:
        return siblings
    if not isinstance(target, dict):
        return {**siblings, "allOf": [target]}
    if set(siblings) & set(target) - _ANNOTATIONS:
        return {**siblings, "allOf": [target]}
    return {**target, **siblings}


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


def name_parts(name: str) -> list[str]:
    """Lower-case parts of an identifier with its digits kept (``address1`` -> ``address``, ``1``)."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name or "").lower()
    return re.findall(r"[a-z]+|[0-9]+", text)


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

    Why: a search term spelled from its own name ("sample keyword") is contained in no record, so the search
    returns nothing and never reveals the records that exist (issue 18, defect 5). The texts the exploration
    itself writes are all spelled :func:`field_text` ("sample content", "sample message"); the bare stem is
    contained in every one of them, so a search that matches by containment finds what the exploration created,
    without copying any observed value into the call (a search fed an observed value only repeats what its
    supplier showed, and earns no credit for it).
    """
    return TEXT_STEM if _compounds(words(name)) & SEARCH_TERMS else None


def _string_example(name: str, description: str) -> str:
    """A short plausible string chosen from the parameter's name (shortest literal that can work).

    Kinds with a conventional form (file names, e-mail addresses, phone numbers, URLs) keep that form; the
    words of the name beyond its kind (``source`` in ``source_file``) make the value distinct per field, for the
    same reason as :func:`field_text`.
    """
    toks = _compounds(words(name))
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
    candidates: list[Any] = []
    if "const" in schema:
        candidates.append(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        candidates.append(schema["enum"][option % len(schema["enum"])])
    default = schema.get("default")
    if "default" in schema and default is not None and default != "None":
        candidates.append(default)
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        candidates.append(schema["examples"][0])
    if t in (None, "string"):
        opts = _described_options(description)
        if opts:
            candidates.append(opts[option % len(opts)])
        fmt = _format_example(description, schema.get("format"), name)
        if fmt:
            candidates.append(fmt)
        candidates.append(_string_example(name, description))
    # Numbers: a stated range's completing boundary, else 2 -- small, positive and not an identity element
    # (1 is a degenerate logarithm base or exponent).
    bound = _described_bound(description) if t in ("integer", "number") else None
    if t == "integer":
        if bound is not None:
            candidates.append(int(bound))
        candidates.append(int(_number_in_range(schema, 2)))
    if t == "number":
        if bound is not None:
            candidates.append(float(bound))
        candidates.append(float(_number_in_range(schema, 2.0)))
    if t == "boolean":
        candidates.append(True)
    if t == "array" and _depth < 4:
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        opts = _described_options(description)
        if opts and schema_type(items) in (None, "string"):
            candidates.append(opts[:1])
        n = max(1, int(schema.get("minItems", 1)))
        candidates.append([literal_for(name, items, items.get("description", ""), _depth + 1) for _ in range(n)])
        candidates.append([])
    if t == "object" and _depth < 4:
        props = schema.get("properties", {}) or {}
        chosen = list(schema.get("required", [])) or list(props)[:1]
        candidates.append(
            {p: literal_for(p, props.get(p, {}), props.get(p, {}).get("description", ""), _depth + 1) for p in chosen}
        )
        candidates.append({})
    candidates.extend(["hello", 1, 1.0, True, [], {}])
    for c in candidates:
        if _fits(schema, c):
            return copy.deepcopy(c)
    return candidates[0]


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
    return next((c for c in cands if _fits(schema, c)), None)


# ---------------------------------------------------------------------------------------------------------------
# Literals repaired from a tool's own rejection message
# ---------------------------------------------------------------------------------------------------------------
# A tool that validates its inputs says what it wanted ("must start with '+'", "must be one of: a, b", "must be
# after 1980"). These helpers read the common shapes of such messages, so the revision loop can replace a literal
# the tool rejected for its form with one the message describes -- the paper's feedback loop, without an LLM.

_QUOTED = re.compile(
    r"""['"`\u2018\u2019\u201c\u201d]([^'"`\u2018\u2019\u201c\u201d]{1,60})['"`\u2018\u2019\u201c\u201d]"""
)
_AFFIX = re.compile(
    (
        r"\b(?:(?:must|should|has to|needs? "
        r"to)\s+(?:start|begin|end)\s+with|(?:be\s+)?(?:prefixed|suffixed)\s+(?:with|by))\s+(?:an?\s+|the\s+)?(?:['\"`]([^'\"`]{1,10})['\"`]|([^\w\s'\"`]{1,3}))(?=[\s.,;)]|$)"
    ),
    re.I,
)
_OPTIONS_CUE = re.compile(
    (
        r"\b(?:one of|expected|allowed(?: values| options| units)?|valid(?: values| options| choices| "
        r"units)?|supported(?: values| options| units)?|choose from|options|accepted values|must be either|must "
        r"be)\b\s*(?:are|is|include)?\s*[:=]?\s*(.+)"
    ),
    re.I,
)
_ONE_OF = re.compile(
    (
        r"\b(?:one of|options(?: are)?|choose from|allowed values|valid values|accepted values|supported \w+(?: "
        r"are)?)\s*[:=]?\s*\[?([^\]\n]+)"
    ),
    re.I,
)
_BOUND = re.compile(
    r"\b(after|later than|greater than|more than|above|over|exceeds?|at least|no (?:less|earlier) "
    r"than|minimum(?: of| is)?|not before"
    r"|before|earlier than|less than|below|under|at most|no (?:more|later) than|maximum(?: of| is)?|not after)\s*:?\s*"
    r"(-?\d{4}-\d{2}-\d{2}(?:[T ][\d:]+)?|-?\d+(?:\.\d+)?)",
    re.I,
)
_EXAMPLE = re.compile(r"\b(?:e\.g\.|for example|such as|like)\s*,?\s*(?:['\"`]([^'\"`]{1,60})['\"`]|([^\s,;)]+))", re.I)
_STRICT = (
    "after",
    "later than",
    "greater than",
    "more than",
    "above",
    "over",
    "exceed",
    "before",
    "earlier than",
    "less than",
    "below",
    "under",
)
_LOWER = (
    "after",
    "later",
    "greater",
    "more",
    "above",
    "over",
    "exceed",
    "at least",
    "no less",
    "no earlier",
    "minimum",
    "not before",
)


def message_parameter(message: str, literals: dict[str, Any], others: Iterable[str] = ()) -> str | None:
    """Which of a call's literal parameters a rejection message is about.

    The parameter named in the message (``phone_number`` or "phone number", longest name first), else the one
    whose value the message quotes, else the only literal there is. ``others`` are the call's parameters that
    are not literals: a message that names one of them (and no literal) is about that input, and no literal is
    to blame -- repairing one anyway would write the other input's rule into an unrelated field (a phone
    number's "+" prefix into a message's text).
    """
    text = f" {' '.join(words(message))} "
    named = [(len(words(p)), p) for p in literals if words(p) and f" {' '.join(words(p))} " in text]
    if named:
        return max(named)[1]
    if any(words(p) and f" {' '.join(words(p))} " in text for p in others if p not in literals):
        return None
    quoted = {q.strip() for q in _QUOTED.findall(message)}
    by_value = [
        p
        for p, v in literals.items()
        if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v) in quoted
    ]
    if len(by_value) == 1:
        return by_value[0]
    if len(literals) == 1:
        return next(iter(literals))
    # A value the message embeds in a longer token ("Invalid reference 'refs/heads/sample name'"): the tool
    # rewrote the value into its own form before rejecting it, so the value still tells which input it was.
    inside = [p for p, v in literals.items() if isinstance(v, str) and len(v) >= 3 and v in message]
    return inside[0] if len(inside) == 1 else None


def _options_in(message: str) -> list[str]:
    """Allowed values a message lists: quoted after a cue ("expected 'c' or 'f'"), or a bare list after "one of"."""
    m = _OPTIONS_CUE.search(message)
    if m:
        quoted = [q.strip() for q in _QUOTED.findall(m.group(1))]
        if quoted:
            return quoted
    m = _ONE_OF.search(message)
    if m:
        parts = re.split(r",|\||\bor\b|\band\b|/", m.group(1).split(".")[0] if ". " in m.group(1) else m.group(1))
        return [p.strip().strip("'\"`[]() ") for p in parts if p.strip().strip("'\"`[]() .")]
    return []


def _typed(schema: dict[str, Any], text: str) -> Any:
    """A message token as a value of the parameter's type (numbers stay numbers)."""
    t = schema_type(schema)
    try:
        if t == "integer":
            return int(float(text))
        if t == "number":
            return float(text)
    except ValueError:
        return None
    if t == "boolean":
        return {"true": True, "false": False}.get(text.lower())
    return text


def _temporal(name: str, schema: dict[str, Any]) -> bool:
    toks = set(words(name)) | set(words(schema.get("description", "") or ""))
    return bool(toks & {"timestamp", "time", "date", "epoch", "datetime", "when", "seconds", "since", "until"})


def _bound_value(kind: str, token: str, name: str, schema: dict[str, Any], current: Any) -> Any:
    """A value beyond the stated bound, in the parameter's own form (number, epoch seconds or ISO date)."""
    import datetime as _dt

    kind = kind.lower()
    lower = any(kind.startswith(w) for w in _LOWER)
    strict = any(kind.startswith(w) for w in _STRICT)
    step = (1 if lower else -1) if strict else 0
    t = schema_type(schema)
    date = None
    if re.fullmatch(r"-?\d{4}-\d{2}-\d{2}.*", token):
        try:
            date = _dt.datetime.fromisoformat(token.replace(" ", "T"))
        except ValueError:
            date = None
        else:
            date = date + _dt.timedelta(days=step)
    elif re.fullmatch(r"(19|20)\d\d", token) and (_temporal(name, schema) or t in (None, "string")):
        date = _dt.datetime(int(token) + step, 1, 1) if step >= 0 else _dt.datetime(int(token) - 1, 12, 31)
    if date is not None:
        if t in ("integer", "number"):
            secs = date.replace(tzinfo=_dt.UTC).timestamp()
            return int(secs) if t == "integer" else float(secs)
        if isinstance(current, str) and "T" in current:
            return date.strftime("%Y-%m-%dT%H:%M:%S")
        return date.strftime("%Y-%m-%d")
    num = float(token)
    if t == "integer" or (t is None and float(num).is_integer()):
        return int(num) + step
    return num + step if t == "number" else None


#: A message saying a value may not hold whitespace ("cannot contain spaces", "no whitespace allowed").
_NO_SPACES = re.compile(r"\b(?:spaces?|whitespace|blanks?)\b", re.IGNORECASE)
#: A message naming the characters a value may hold ("use the letters A, C, G, T", "only characters 0, 1").
_ALPHABET = re.compile(
    r"\b(?:letters|characters|symbols|alphabet|digits)\b\s*(?:are\s+|is\s+)?[:=]?\s*((?:['\"`]?[A-Za-z0-9]['\"`]?(?:\s*(?:,|/|\bor\b|\band\b)\s*|\s+|$)){2,})",
    re.IGNORECASE,
)


def alphabet_value(message: str, length: int = 12) -> str | None:
    """A value made only of the characters a rejection lists ("use the letters A, C, G, T" gives
    ``ACGTACGTACGT``), or None when it lists none.

    Why: a tool that checks its input's alphabet (a sequence, a binary string, a code) says which characters it
    takes; any word of those characters passes that check, and cycling through all of them (to a length of 12,
    which splits into pairs, triples and quads) is a value a parser of groups of characters accepts too.
    """
    m = _ALPHABET.search(message)
    if not m:
        return None
    letters = [c for c in re.findall(r"(?<![A-Za-z0-9])([A-Za-z0-9])(?![A-Za-z0-9])", m.group(1))]
    letters = list(dict.fromkeys(letters))
    if len(letters) < 2:
        return None
    return "".join(letters[i % len(letters)] for i in range(max(length, len(letters))))


def repair_literal(name: str, schema: dict[str, Any], current: Any, message: str) -> Any | None:
    """A literal for ``name`` that answers the tool's rejection ``message``, or None when the message says
    nothing usable. Tried in order: a required prefix or suffix, a listed set of allowed values, a word of the
    characters the message lists (:func:`alphabet_value`), a stated format, an example the message gives, a
    stated bound; the first candidate that fits the parameter's schema
    and differs from the rejected value wins."""
    candidates: list[Any] = []
    options = [v for v in (_typed(schema, o) for o in _options_in(message)) if v is not None]
    m = _AFFIX.search(message)
    if m:
        affix = m.group(1) or m.group(2)
        ends = re.search(r"\b(?:end\s+with|suffixed)", m.group(0), re.I)

        def apply(v: str) -> str:
            return v + affix if ends else affix + v.lstrip("+-")

        # "one of a, b ... prefixed with +": the affix goes on an allowed value, not on the rejected one
        candidates.extend(apply(o) for o in options if isinstance(o, str))
        if isinstance(current, str):
            candidates.append(apply(current))
    if options and isinstance(current, str):
        # a form an earlier repair gave the value (a leading "+") is kept on the allowed value that replaces it
        lead = re.match(r"^[^\w\s]+", current)
        if lead:
            candidates.extend(
                lead.group(0) + o for o in options if isinstance(o, str) and not o.startswith(lead.group(0))
            )
    candidates.extend(o for o in options if o != current)
    low = message.lower()
    if isinstance(current, str) and re.search(r"\s", current.strip()) and _NO_SPACES.search(message):
        # "references cannot contain spaces": the same words joined, so the value keeps its meaning and only
        # loses the characters the message forbids (names used as keys, refs and identifiers often refuse them).
        candidates.append(re.sub(r"\s+", "_", current.strip()))
    alphabet = alphabet_value(message)
    if alphabet is not None:
        candidates.append(alphabet)
    if re.search(r"iso[ -]?8601|iso format|yyyy-mm-dd[t ]hh", low):
        candidates.append("2024-01-01T00:00:00")
    elif "yyyy-mm-dd" in low:
        candidates.append("2024-01-01")
    elif "mm/yyyy" in low:
        candidates.append("01/2030")
    elif "hh:mm" in low:
        candidates.append("10:00")
    for ex in _EXAMPLE.finditer(message):
        val = _typed(schema, (ex.group(1) or ex.group(2)).strip())
        if val is not None:
            candidates.append(val)
    for b in _BOUND.finditer(message):
        try:
            val = _bound_value(b.group(1), b.group(2), name, schema, current)
        except (ValueError, OverflowError):
            val = None
        if val is not None:
            candidates.append(val)
    for c in candidates:
        if c != current and c is not None and _fits(schema or {}, c):
            return c
    return None
