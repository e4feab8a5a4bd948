"""One home for JSON-Schema helpers: types, fits, constructed literals and sentinels, and the word tokenizer.

The offline proposer, the engine and retrieval all ask the same questions of a parameter's schema (which type is
it, does this value fit, what is a plausible literal, what value can name no existing record); answering them in
one module keeps every part of a build agreeing on the answers.
"""

from __future__ import annotations

import copy
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




def _fits(schema: dict[str, Any], value: Any) -> bool:
    try:
        return jsonschema.Draft202012Validator(schema).is_valid(value)
    except Exception:  # noqa: BLE001 - an unusable parameter schema accepts nothing we can prove
        return False


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


# ---------------------------------------------------------------------------------------------------------------
# Literals repaired from a tool's own rejection message
# ---------------------------------------------------------------------------------------------------------------
# A tool that validates its inputs says what it wanted ("must start with '+'", "must be one of: a, b", "must be
# after 1980"). These helpers read the common shapes of such messages, so the revision loop can replace a literal
# the tool rejected for its form with one the message describes -- the paper's feedback loop, without an LLM.

_QUOTED = re.compile(r"""['"`\u2018\u2019\u201c\u201d]([^'"`\u2018\u2019\u201c\u201d]{1,60})['"`\u2018\u2019\u201c\u201d]""")
_AFFIX = re.compile(r"\b(?:(?:must|should|has to|needs? to)\s+(?:start|begin|end)\s+with|(?:be\s+)?(?:prefixed|suffixed)\s+(?:with|by))\s+(?:an?\s+|the\s+)?(?:['\"`]([^'\"`]{1,10})['\"`]|([^\w\s'\"`]{1,3}))(?=[\s.,;)]|$)", re.I)
_OPTIONS_CUE = re.compile(
    r"\b(?:one of|expected|allowed(?: values| options| units)?|valid(?: values| options| choices| units)?|supported(?: values| options| units)?|choose from|options|accepted values|must be either|must be)\b\s*(?:are|is|include)?\s*[:=]?\s*(.+)",
    re.I,
)
_ONE_OF = re.compile(r"\b(?:one of|options(?: are)?|choose from|allowed values|valid values|accepted values|supported \w+(?: are)?)\s*[:=]?\s*\[?([^\]\n]+)", re.I)
_BOUND = re.compile(
    r"\b(after|later than|greater than|more than|above|over|exceeds?|at least|no (?:less|earlier) than|minimum(?: of| is)?|not before"
    r"|before|earlier than|less than|below|under|at most|no (?:more|later) than|maximum(?: of| is)?|not after)\s*:?\s*"
    r"(-?\d{4}-\d{2}-\d{2}(?:[T ][\d:]+)?|-?\d+(?:\.\d+)?)",
    re.I,
)
_EXAMPLE = re.compile(r"\b(?:e\.g\.|for example|such as|like)\s*,?\s*(?:['\"`]([^'\"`]{1,60})['\"`]|([^\s,;)]+))", re.I)
_STRICT = ("after", "later than", "greater than", "more than", "above", "over", "exceed", "before", "earlier than", "less than", "below", "under")
_LOWER = ("after", "later", "greater", "more", "above", "over", "exceed", "at least", "no less", "no earlier", "minimum", "not before")


def message_parameter(message: str, literals: dict[str, Any]) -> str | None:
    """Which of a call's literal parameters a rejection message is about.

    The parameter named in the message (``phone_number`` or "phone number", longest name first), else the one
    whose value the message quotes, else the only literal there is.
    """
    text = f" {' '.join(words(message))} "
    named = [(len(words(p)), p) for p in literals if words(p) and f" {' '.join(words(p))} " in text]
    if named:
        return max(named)[1]
    quoted = {q.strip() for q in _QUOTED.findall(message)}
    by_value = [p for p, v in literals.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v) in quoted]
    if len(by_value) == 1:
        return by_value[0]
    return next(iter(literals)) if len(literals) == 1 else None


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
            secs = date.replace(tzinfo=_dt.timezone.utc).timestamp()
            return int(secs) if t == "integer" else float(secs)
        if isinstance(current, str) and "T" in current:
            return date.strftime("%Y-%m-%dT%H:%M:%S")
        return date.strftime("%Y-%m-%d")
    num = float(token)
    if t == "integer" or (t is None and float(num).is_integer()):
        return int(num) + step
    return num + step if t == "number" else None


def repair_literal(name: str, schema: dict[str, Any], current: Any, message: str) -> Any | None:
    """A literal for ``name`` that answers the tool's rejection ``message``, or None when the message says
    nothing usable. Tried in order: a required prefix or suffix, a listed set of allowed values, a stated
    format, an example the message gives, a stated bound; the first candidate that fits the parameter's schema
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
            candidates.extend(lead.group(0) + o for o in options if isinstance(o, str) and not o.startswith(lead.group(0)))
    candidates.extend(o for o in options if o != current)
    low = message.lower()
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
