"""One home for JSON-Schema helpers: types, fits, constructed literals and sentinels, and the word tokenizer.

The offline proposer, the engine and retrieval all ask the same questions of a parameter's schema (which type is
it, does this value fit, what is a plausible literal, what value can name no existing record); answering them in
one module keeps every part of a build agreeing on the answers.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import jsonschema

SENTINEL_STRING = "__libra_nonexistent__"
SENTINEL_INT = -1

# Addresses that reach a person; they name the person's record like a user name does, though "number" alone is a
# free quantity.
CONTACT_ADDRESS = {"phonenumber", "mobilenumber", "cellnumber", "phone", "emailaddress"}

def words(text: str) -> list[str]:
    """Lower-case word tokens of an identifier or sentence (snake_case, camelCase and trailing digits split)."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
    return [w for w in re.split(r"[^a-zA-Z]+", text.lower()) if w]


def _compounds(tokens: list[str]) -> set[str]:
    """Tokens plus adjacent pairs glued together, so ``user_name`` and ``username`` look alike."""
    out = set(tokens)
    out.update(a + b for a, b in zip(tokens, tokens[1:]))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Schema helpers
# ---------------------------------------------------------------------------------------------------------------

_TYPE_ALIASES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "int": "integer", "str": "string", "bool": "boolean"}


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
        return bool(jsonschema.Draft202012Validator(schema, format_checker=_FORMATS).is_valid(value))
    except Exception:  # noqa: BLE001 - see the docstring: a broken schema proves nothing, it does not raise
        return False


def _fits(schema: dict[str, Any], value: Any) -> bool:
    """The proposer's name for :func:`fits` (kept so every part of a build gives the same verdict)."""
    return fits(schema, value)


_FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER

# Keywords whose value is a schema, a list of schemas, or a map of names to schemas: where references can hide.
_ONE_SCHEMA = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
_DEFS = ("$defs", "definitions")
# Keywords that describe rather than constrain: a reference's siblings of this kind override the target's.
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"})
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


def _resolver(root: Any) -> Any:
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
    """Allowed values a description lists in prose ("[Enum]: a, b", "Options are: a, b", "e.g., 'x'")."""
    m = re.search(r"\[enum\]\s*:?\s*\[?([^\]\n]+)\]?", description, re.I) or re.search(r"options(?: are)?\s*:\s*([^.\n]+)", description, re.I)
    if m:
        items = [s.strip().strip("'\"` ") for s in m.group(1).split(",")]
        return [s for s in items if s]
    m = re.search(r"e\.g\.,?\s*['\"]([^'\"]+)['\"]", description, re.I)
    return [m.group(1)] if m else []


# Short, valid examples of public encodings (ethanol, a short peptide, ...), for when a call needs one.
ENCODED_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("inchikey", "LFQSCWFLJHTTHZ-UHFFFAOYSA-N"),
    ("inchi", "InChI=1S/C2H6O/c1-2-3/h3H,2H2,1H3"),
    ("selfies", "[C][C][O]"),
    ("smiles", "CCO"),
    ("smarts", "[OX2H]"),
    ("sybyl line notation", "CH3CH2OH"),
    ("sln", "CH3CH2OH"),
    ("protein sequence", "MKTAYIAKQR"),
    ("amino acid sequence", "MKTAYIAKQR"),
    ("peptide", "MKTAYIAKQR"),
    ("rna sequence", "AUGGCCAUUGUA"),
    ("dna sequence", "ATGGCCATTGTA"),
    ("nucleotide sequence", "ATGGCCATTGTA"),
    ("molecular formula", "C2H6O"),
    ("chemical formula", "C2H6O"),
)


def encoded_format(name: str, description: str) -> str | None:
    """The public encoding a string parameter carries, if its name or description names one."""
    text = " ".join(words(name)) + " " + " ".join(words(description or ""))
    squashed = " " + text + " "
    for key, example in ENCODED_EXAMPLES:
        if f" {key} " in squashed or (" " not in key and key in {w for w in squashed.split()}):
            return example
    return None


def _format_example(description: str, fmt: str | None, name: str = "") -> str | None:
    """A value for a declared or described date/time/address format (rule 10: dates are constructible)."""
    encoded = encoded_format(name, description)
    if encoded is not None:
        return encoded
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
        return "user@example.com"
    if fmt in ("uri", "url", "iri") or re.search(r"https?://", d):
        return "https://example.com"
    return None


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


def _string_example(name: str, description: str) -> str:
    """A short plausible string chosen from the parameter's name (shortest literal that can work)."""
    toks = _compounds(words(name))
    if toks & {"file", "filename"}:
        return "new_file.txt"
    if toks & {"dir", "dirname", "directory", "folder"}:
        return "new_folder"
    if toks & {"email"}:
        return "user@example.com"
    if toks & CONTACT_ADDRESS:
        return "5550100000"  # a reserved-looking ten-digit number, digits only as most systems store them
    if toks & {"url", "uri", "link"}:
        return "https://example.com"
    if toks & {"date"}:
        return "2024-01-01"
    if toks & {"password", "passwd", "secret", "passcode"}:
        return "Str0ng-pass"
    if toks & {"username", "user", "login"}:
        return "new_user"
    travel = bool(toks & {"travel", "flight", "trip", "airport"}) or bool(re.search(r"\b(travel|flight|trip|airport|location)\b", description, re.I))
    if travel and toks & {"from", "origin", "departure", "source"}:
        return "JFK"  # a travel origin is conventionally written as an airport code
    if travel and toks & {"to", "destination", "arrival"}:
        return "LAX"
    if toks & {"class"} and travel:
        return "economy"
    entity = _entity_example(toks, description)
    if entity is not None:
        return entity
    if toks & {"title", "subject"}:
        return "Example"
    if toks & {"key"}:
        return "example_key"
    if toks & {"name"}:
        return "example"
    return "hello"


def _described_bound(description: str) -> float | None:
    """The upper end of a range stated in prose ("between 0 and 1", "from 0 to 100").

    F7: for a bounded degree, the effect-complete value is the completing boundary.
    """
    m = re.search(r"(?:between|from)\s+(-?\d+(?:\.\d+)?)\s*(?:\([^)]*\))?\s+(?:and|to)\s+(-?\d+(?:\.\d+)?)", description or "", re.I)
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
        candidates.append({p: literal_for(p, props.get(p, {}), props.get(p, {}).get("description", ""), _depth + 1) for p in chosen})
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
        cands = {"integer": [SENTINEL_INT, 987654321], "number": [SENTINEL_INT, 987654321.0]}.get(t or "string", [SENTINEL_STRING])
    return next((c for c in cands if _fits(schema, c)), None)
