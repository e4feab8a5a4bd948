"""The value generator: one place that decides what to pass for a parameter nothing observed can fill.

Contract checking, the offline proposer and the exploration all ask it. It draws in layers, in this order, and
says which layer each value came from (a contract records it; a build's health counts them):

1. ``observed``: values the sandbox produced. These are the exploration's own pool and never come from here; the
   layer is named so that records can say so.
2. ``documented``: what the schema and the documentation state: a ``const``, an ``enum`` value, a default, a
   declared example, values the description lists ("either 'x' or 'y'", "e.g. a, b"), its stated format
   ("YYYY-MM-DD"), a stated range's bound (:mod:`.prose`).
3. ``realistic``: a realistic value of the kind the name says (an e-mail, a password, a city), drawn by Faker,
   seeded (:mod:`.realistic`); dates near the sandbox's pinned clock.
4. ``conventional``: a value spelled from the name where nothing above applies (free text, file names,
   :mod:`.conventions`).
5. ``typed``: a value built from the JSON Schema by Hypothesis, for structures and rules the layers above cannot
   satisfy (a pattern, nested models, ``minItems``) (:mod:`.typed`).
6. ``repaired``: a value reshaped after the tool refused one for its form (:mod:`.repair`).

Every string any layer proposes is first reshaped to what the documentation states (length, characters, prefix:
:mod:`.constraints`) and every value must fit the schema; the first that does is the literal.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
import uuid
from dataclasses import dataclass
from typing import Any

from libra._util.text import compounds, words
from libra.schema import fits, schema_type
from libra.values import realistic, typed
from libra.values.constraints import Constraints, read_constraints
from libra.values.conventions import conventional
from libra.values.prose import described_bound, described_options, empty_means_all, format_example

#: A value no record is named by, for the template that is expected to fail.
SENTINEL_STRING = "__libra_nonexistent__"
SENTINEL_INT = -1

LAYERS = ("observed", "documented", "realistic", "conventional", "typed", "repaired")

#: The sandbox's pinned clock (the Python runtime's and the MCP servers' "now"): dates are drawn around it, so a
#: booking's start is in the future and a birth date in the past, as validation expects.
SANDBOX_NOW = dt.datetime(2025, 1, 1, 12, 0, 0)


@dataclass(frozen=True)
class Drawn:
    """A value and the layer it came from."""

    value: Any
    layer: str


def literal_for(
    name: str, schema: dict[str, Any], description: str = "", _depth: int = 0, option: int = 0, *, tool: str = ""
) -> Any:
    """The literal for parameter ``name`` (see :func:`drawn_for`)."""
    return drawn_for(name, schema, description, _depth, option, tool=tool).value


def drawn_for(
    name: str, schema: dict[str, Any], description: str = "", _depth: int = 0, option: int = 0, *, tool: str = ""
) -> Drawn:
    """The first value the layers propose for ``name`` that fits its schema and its documented constraints;
    ``option`` asks for the option-th alternative where a layer has several (an enum's values, listed choices,
    another realistic draw). Realistic values are drawn per ``tool`` and parameter: two tools asking for an
    e-mail address usually mean two people (an organizer and an invitee), and a value they must share comes
    from an earlier call, not from the generator."""
    schema = _effective(schema)
    description = description or schema.get("description", "")
    rules = read_constraints(schema, description)
    fallback: Drawn | None = None
    for drawn in _candidates(name, schema, description, _depth, option, rules, tool):
        value = _shaped(drawn.value, rules)
        if value is None:
            continue
        if (
            fits(schema, value)
            and format_holds(value, schema.get("format") or rules.format)
            and (rules.accepts(value) or drawn.layer == "documented")
        ):
            return Drawn(copy.deepcopy(value), drawn.layer)
        fallback = fallback or drawn
    return fallback or Drawn("hello", "conventional")


def _effective(schema: dict[str, Any]) -> dict[str, Any]:
    """The branch of a union a caller would fill (its first one that is not ``null``), with the union's own
    description and default: what an ``Optional[datetime]`` inside a model looks like to a value generator."""
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not isinstance(branches, list) or "type" in schema:
        return schema
    chosen = next((b for b in branches if isinstance(b, dict) and b.get("type") != "null" and "$ref" not in b), None)
    if chosen is None:
        return schema
    outer = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
    return {**chosen, **outer}


def format_holds(value: Any, fmt: str | None) -> bool:
    """Whether a string has the stated format (dates, times, durations, e-mail addresses, URLs, UUIDs): a value in
    another form would be refused by the validation the format stands for (a Python expression given as a
    docstring's example is no ISO date)."""
    if not isinstance(value, str) or not fmt:
        return True
    checks = {
        "date": lambda v: dt.date.fromisoformat(v),
        "date-time": lambda v: dt.datetime.fromisoformat(v.replace("Z", "+00:00")),
        "time": lambda v: dt.time.fromisoformat(v),
        "duration": lambda v: re.fullmatch(r"-?P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?", v) or 1 / 0,
        "email": lambda v: re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", v) or 1 / 0,
        "uuid": lambda v: uuid.UUID(v),
        "uri": lambda v: re.match(r"[a-z][a-z0-9+.-]*://\S+$", v, re.I) or 1 / 0,
    }
    check = checks.get(fmt)
    if check is None:
        return True
    try:
        check(value)
    except (ValueError, ZeroDivisionError):
        return False
    return True


def _shaped(value: Any, rules: Constraints) -> Any:
    if isinstance(value, str) and not rules.empty:
        return rules.shape(value) if not rules.accepts(value) else value
    return value


def _candidates(
    name: str, schema: dict[str, Any], description: str, depth: int, option: int, rules: Constraints, tool: str
):
    yield from (Drawn(v, "documented") for v in _declared(schema, option))
    t = schema_type(schema)
    if t in (None, "string"):
        yield from _string_candidates(name, schema, description, option, rules, tool)
    elif t in ("integer", "number"):
        yield from _number_candidates(schema, description, t, rules)
    elif t == "boolean":
        yield Drawn(True, "conventional")
    elif t == "array" and depth < 4:
        yield from _array_candidates(name, schema, description, depth, tool)
    elif t == "object" and depth < 4:
        yield from _object_candidates(schema, depth, tool)
    if t in ("array", "object") or rules.pattern:
        seed = realistic.seed_of("typed", name, option)
        yield from (Drawn(v, "typed") for v in typed.from_schema(schema, seed))
    yield from (Drawn(v, "conventional") for v in ("hello", 1, 1.0, True, [], {}))


def _declared(schema: dict[str, Any], option: int) -> list[Any]:
    """The values the schema itself offers: its const, its enum's ``option``-th value, a usable default, its
    first example."""
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


def _string_candidates(name: str, schema: dict[str, Any], description: str, option: int, rules: Constraints, tool: str):
    if option == 0 and empty_means_all(description):
        yield Drawn("", "documented")
    opts = described_options(description)
    if opts:
        yield Drawn(opts[option % len(opts)], "documented")
    fmt = format_example(description, schema.get("format"), name)
    temporal = _temporal(name, schema.get("format") or rules.format, fmt, option, description)
    if temporal is not None:
        yield Drawn(temporal, "realistic")
    if fmt:
        yield Drawn(fmt, "documented")
    kind = realistic.kind_of(name, "string", description)
    if kind is not None:
        seed = realistic.seed_of(tool, name, option) if tool else realistic.seed_of(name, option)
        yield Drawn(realistic.draw(kind, seed), "realistic")
    yield Drawn(conventional(name), "conventional")


#: Words of a date parameter that ends a span (it must come after the one that starts it: a check-out after a
#: check-in, an end after a start).
END_WORDS = frozenset(
    {"end", "ends", "to", "until", "till", "out", "checkout", "departure", "return", "finish", "stop"}
)
BIRTH_WORDS = frozenset({"birth", "birthday", "birthdate", "dob", "born"})
#: What a description says of a date that must not lie ahead of the clock: an event that has happened ("when the
#: item was dropped off; defaults to today. Cannot be after today", "defaults to now. May not be in the future").
NOT_AHEAD = re.compile(
    r"\bdefaults? to (?:today|now)\b"
    r"|\b(?:not|never|cannot|can't|may not|must not)\b[^.;]{0,40}?\b(?:in the future|after (?:today|now))\b",
    re.IGNORECASE,
)


def _temporal(name: str, fmt: str | None, example: str | None, option: int, description: str = "") -> str | None:
    """A date, time or duration near the sandbox's clock, in the form stated: a birth date in the past, today (or
    a day before) where the description says the date may not lie ahead of the clock, any other date a few days
    ahead (bookings and deadlines must not lie in the past), the end of a span after its start,
    shifted by ``option``; written exactly as a documented pattern says ("YYYY-MM-DD HH:MM") where there is one."""
    toks = compounds(words(name))
    pattern = documented_pattern(description)
    if fmt == "time" or (fmt is None and example == "10:00" and pattern is None):
        return ("10:00:00", "14:30:00", "09:15:00")[option % 3]
    if fmt == "duration":
        return ("PT1H", "PT30M", "PT2H")[option % 3]
    is_date = (
        fmt in ("date", "date-time")
        or example in ("2024-01-01", "2024-01-01T00:00:00Z")
        or "date" in toks
        or (pattern is not None and "%Y" in pattern)
    )
    if not is_date:
        return None
    if toks & BIRTH_WORDS:
        day = dt.date(1990, 5, 17) - dt.timedelta(days=365 * option)
    elif NOT_AHEAD.search(description or ""):
        day = SANDBOX_NOW.date() - dt.timedelta(days=(0, 1, 7)[option % 3])
    else:
        ahead = (14, 30, -30)[option % 3] + (3 if toks & END_WORDS else 0)
        day = SANDBOX_NOW.date() + dt.timedelta(days=ahead)
    hour = 11 if toks & END_WORDS else 10
    moment = dt.datetime.combine(day, dt.time(hour, 0))
    if pattern is not None:
        return moment.strftime(pattern)
    if fmt == "date-time" or example == "2024-01-01T00:00:00Z":
        return moment.isoformat()
    return day.isoformat()


#: Pieces of a date or time pattern as documentation writes them, and what strftime writes for each.
_PATTERN_PIECES = (("YYYY", "%Y"), ("MM", "%m"), ("DD", "%d"), ("HH", "%H"), ("mm", "%M"), ("SS", "%S"), ("ss", "%S"))
_PATTERN = re.compile(
    r"\b(?:YYYY|DD|MM)(?:[-/.]?(?:YYYY|MM|DD))+(?:[T ]HH:(?:MM|mm)(?::(?:SS|ss))?)?\b|\bHH:(?:MM|mm)(?::(?:SS|ss))?\b"
)


def documented_pattern(description: str) -> str | None:
    """The strftime form of a date or time pattern a description writes out ("YYYY-MM-DD HH:MM" ->
    ``%Y-%m-%d %H:%M``, "DD/MM/YYYY" -> ``%d/%m/%Y``), or None. Minutes are the ``MM`` after ``HH:``."""
    m = _PATTERN.search(description or "")
    if not m:
        return None
    text = m.group(0)
    date_part, sep, time_part = text.partition("HH")
    out = date_part
    for piece, code in _PATTERN_PIECES[:3]:
        out = out.replace(piece, code)
    if sep:
        clock = "HH" + time_part
        clock = (
            clock.replace("HH", "%H").replace("MM", "%M").replace("mm", "%M").replace("SS", "%S").replace("ss", "%S")
        )
        out += clock
    return out


def _number_candidates(schema: dict[str, Any], description: str, t: str, rules: Constraints):
    """A stated range's completing boundary, else 2 (small, positive and not an identity element: 1 is a
    degenerate logarithm base or exponent), moved into the stated range."""
    bound = described_bound(description)
    cast = int if t == "integer" else float
    if bound is not None:
        yield Drawn(cast(bound), "documented")
    yield Drawn(cast(_in_range(schema, rules, 2)), "conventional")


def _in_range(schema: dict[str, Any], rules: Constraints, base: float) -> float:
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    v = base
    if lo is not None and v <= lo:
        v = lo + 1 if "exclusiveMinimum" in schema else lo
    if hi is not None and v >= hi:
        v = hi - 1 if "exclusiveMaximum" in schema else hi
    if rules.minimum is not None and v < rules.minimum:
        v = rules.minimum
    if rules.maximum is not None and v > rules.maximum:
        v = rules.maximum
    return v


def _array_candidates(name: str, schema: dict[str, Any], description: str, depth: int, tool: str):
    """The first option its description lists, as many items as it needs at least, none."""
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    opts = described_options(description)
    if opts and schema_type(items) in (None, "string"):
        yield Drawn(opts[:1], "documented")
    n = max(1, int(schema.get("minItems", 1)))
    item_text = items.get("description", "") or description  # "the participants' e-mail addresses"
    inner = [drawn_for(name, items, item_text, depth + 1, tool=tool) for _ in range(n)]
    yield Drawn([d.value for d in inner], _weakest(d.layer for d in inner))
    yield Drawn([], "conventional")


def _object_candidates(schema: dict[str, Any], depth: int, tool: str):
    """Its required properties (else its first one) filled; a map (an object of free keys) with one entry, since
    an empty one is what validation most often refuses ("needs at least one device"); then the empty object."""
    props = schema.get("properties", {}) or {}
    chosen = list(schema.get("required", [])) or list(props)[:1]
    inner = {
        p: drawn_for(p, props.get(p, {}), props.get(p, {}).get("description", ""), depth + 1, tool=tool) for p in chosen
    }
    extra = schema.get("additionalProperties")
    if not props and isinstance(extra, dict):
        key = drawn_for("key", {"type": "string"}, schema.get("description", ""), depth + 1, tool=tool)
        value = drawn_for("value", extra, extra.get("description", ""), depth + 1, tool=tool)
        yield Drawn({key.value: value.value}, _weakest((key.layer, value.layer)))
    else:
        yield Drawn({p: d.value for p, d in inner.items()}, _weakest(d.layer for d in inner.values()))
    yield Drawn({}, "conventional")


def _weakest(layers: Any) -> str:
    """The layer a structure is said to come from: the last-resort one among its parts."""
    found = list(layers)
    return max(found, key=LAYERS.index) if found else "conventional"


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
