"""Literals repaired from a tool's own rejection message.

A tool that validates its inputs says what it wanted ("must start with '+'", "must be one of: a, b", "must be
after 1980"). These helpers read the common shapes of such messages, so the revision loop (and contract checking,
for a value it constructed) can replace a literal the tool rejected for its form with one the message describes
-- the paper's feedback loop, without an LLM.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from libra._util.text import words
from libra.schema import fits, schema_type
from libra.values.constraints import read_constraints, read_text
from libra.values.prose import QUOTED

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
    quoted = {q.strip() for q in QUOTED.findall(message)}
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
        quoted = [q.strip() for q in QUOTED.findall(m.group(1))]
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
    if isinstance(current, (dict, list)):
        return _repair_inside(name, schema, current, message)
    options = [v for v in (_typed(schema, o) for o in _options_in(message)) if v is not None]
    candidates = _taken_variant(schema, current, message)
    candidates.extend(_affixed(message, options, current))
    candidates.extend(_allowed(options, current))
    candidates.extend(_reformed(message, current))
    for ex in _EXAMPLE.finditer(message):
        val = _typed(schema, (ex.group(1) or ex.group(2)).strip())
        if val is not None:
            candidates.append(val)
    candidates.extend(_beyond_bounds(name, schema, current, message))
    candidates.extend(_stated_shape(schema, current, message))
    for c in candidates:
        if c != current and c is not None and fits(schema or {}, c):
            return c
    return None


#: A refusal saying the value names something that exists already: a new record needs a value of its own.
_TAKEN = re.compile(
    r"\balready\s+(?:exists?|taken|registered|in\s+use|used|present|defined)\b|\bduplicate\b|\bnot\s+unique\b"
    r"|\bis\s+taken\b|\bexists\s+already\b",
    re.I,
)


def _taken_variant(schema: dict[str, Any], current: Any, message: str) -> list[Any]:
    """After "SKU 'BOLT-M8-40' already exists" or "username 'demo' is already taken", a value of the same shape
    that differs: its trailing number counted on, else a digit added (kept within the documented rules)."""
    if not _TAKEN.search(message):
        return []
    if isinstance(current, int) and not isinstance(current, bool):
        return [current + 1, current + 7]
    if not isinstance(current, str) or not current:
        return []
    m = re.search(r"(\d+)$", current)
    if m:
        n = int(m.group(1))
        stem = current[: m.start()]
        out = [f"{stem}{n + k:0{len(m.group(1))}d}" for k in (1, 7)]
    else:
        sep = "-" if "-" in current else "_" if "_" in current else ""
        out = [f"{current}{sep}2", f"{current}{sep}7"]
    rules = read_constraints(schema)
    shaped = [rules.shape(v) if not rules.accepts(v) else v for v in out]
    return [v for v in shaped if v is not None and v != current]


def _repair_inside(name: str, schema: dict[str, Any], current: Any, message: str) -> Any | None:
    """A structured literal (a model's object, a list of lines) with the one leaf the message is about repaired:
    the leaf whose field the message names, else the leaf whose value it quotes."""
    leaves = list(_leaves(current, schema, ()))
    text = f" {' '.join(words(message))} "
    named = [leaf for leaf in leaves if leaf[1] and f" {' '.join(words(leaf[1]))} " in text]
    quoted = [leaf for leaf in leaves if isinstance(leaf[2], (str, int)) and str(leaf[2]) in message]
    for path, key, value, leaf_schema in (named or quoted)[:1]:
        fixed = repair_literal(key or name, leaf_schema, value, message)
        if fixed is not None:
            return _with(current, path, fixed)
    return None


def _leaves(value: Any, schema: dict[str, Any], path: tuple[Any, ...], key: str = ""):
    """(path, field name, value, schema) of every scalar inside ``value``, the schema followed where it says."""
    schema = schema if isinstance(schema, dict) else {}
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for k, v in value.items():
            yield from _leaves(v, props.get(k, {}), (*path, k), str(k))
    elif isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        for i, v in enumerate(value):
            yield from _leaves(v, items, (*path, i), key)
    else:
        yield path, key, value, schema


def _with(value: Any, path: tuple[Any, ...], leaf: Any) -> Any:
    """A copy of ``value`` with the leaf at ``path`` replaced."""
    if not path:
        return leaf
    out = list(value) if isinstance(value, list) else dict(value)
    out[path[0]] = _with(value[path[0]], path[1:], leaf)
    return out


def _stated_shape(schema: dict[str, Any], current: Any, message: str) -> list[Any]:
    """The rejected value reshaped to what the message states, read like documentation (a length, characters, a
    prefix, a range: "username must be 3-20 letters or digits", "weight must be between 25 and 300")."""
    numeric = schema_type(schema) in ("integer", "number") or (
        isinstance(current, (int, float)) and not isinstance(current, bool)
    )
    rules = read_text(message, numeric=numeric)
    if rules.empty:
        return []
    if numeric:
        lo, hi = rules.minimum, rules.maximum
        if lo is None and hi is None:
            return []
        value = lo if lo is not None else hi
        if lo is not None and hi is not None:
            value = lo + (hi - lo) / 2
        return [int(value) if schema_type(schema) == "integer" or isinstance(current, int) else float(value)]
    if isinstance(current, str):
        shaped = rules.shape(current)
        return [shaped] if shaped is not None else []
    return []


def _affixed(message: str, options: list[Any], current: Any) -> list[Any]:
    """The allowed values, then the rejected value, with the prefix or suffix the message requires (none when it
    requires none). "One of a, b ... prefixed with +": the affix goes on an allowed value, not on the rejected one."""
    m = _AFFIX.search(message)
    if not m:
        return []
    affix = m.group(1) or m.group(2)
    ends = re.search(r"\b(?:end\s+with|suffixed)", m.group(0), re.I)

    def apply(v: str) -> str:
        return v + affix if ends else affix + v.lstrip("+-")

    out: list[Any] = [apply(o) for o in options if isinstance(o, str)]
    if isinstance(current, str):
        out.append(apply(current))
    return out


def _allowed(options: list[Any], current: Any) -> list[Any]:
    """The allowed values a message lists, other than the rejected one; a form an earlier repair gave the value
    (a leading "+") is kept on the allowed value that replaces it, tried first."""
    out: list[Any] = []
    if options and isinstance(current, str):
        lead = re.match(r"^[^\w\s]+", current)
        if lead:
            out.extend(lead.group(0) + o for o in options if isinstance(o, str) and not o.startswith(lead.group(0)))
    out.extend(o for o in options if o != current)
    return out


def _reformed(message: str, current: Any) -> list[Any]:
    """Values of the form a message asks for: the rejected words joined when it forbids spaces, a word of the
    characters it lists, a value of the date or time format it names."""
    out: list[Any] = []
    if isinstance(current, str) and re.search(r"\s", current.strip()) and _NO_SPACES.search(message):
        # "references cannot contain spaces": the same words joined, so the value keeps its meaning and only
        # loses the characters the message forbids (names used as keys, refs and identifiers often refuse them).
        out.append(re.sub(r"\s+", "_", current.strip()))
    alphabet = alphabet_value(message)
    if alphabet is not None:
        out.append(alphabet)
    low = message.lower()
    if re.search(r"iso[ -]?8601|iso format|yyyy-mm-dd[t ]hh", low):
        out.append("2024-01-01T00:00:00")
    elif "yyyy-mm-dd" in low:
        out.append("2024-01-01")
    elif "mm/yyyy" in low:
        out.append("01/2030")
    elif "hh:mm" in low:
        out.append("10:00")
    return out


def _beyond_bounds(name: str, schema: dict[str, Any], current: Any, message: str) -> list[Any]:
    """A value beyond each bound the message states (:func:`_bound_value`), in the order it states them."""
    out: list[Any] = []
    for b in _BOUND.finditer(message):
        try:
            val = _bound_value(b.group(1), b.group(2), name, schema, current)
        except (ValueError, OverflowError):
            val = None
        if val is not None:
            out.append(val)
    return out
