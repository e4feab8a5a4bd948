"""What a parameter's documentation says a valid value looks like: length, characters, prefix, range, format.

Why: validation in ordinary code checks exactly what its docstring states ("username: 3-20 letters or digits",
"password: at least 8 characters", "minutes between 1 and 10080", "date as YYYY-MM-DD", "must start with '+'").
A value drawn from any other layer (a realistic e-mail, a value built from the type) is only worth a call when it
satisfies that text too, and most values that do not can be reshaped until they do (drop the characters the text
excludes, pad to the stated length). The same reading applies to JSON Schema keywords (``minLength``,
``pattern``, ``minimum``), which MCP servers and pydantic models state instead of prose.

:func:`read_constraints` reads them; :meth:`Constraints.accepts` checks a value and :meth:`Constraints.shape`
reshapes a string into one that passes, or says it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from libra.schema import schema_type

_NUM = r"(-?\d+(?:\.\d+)?)"
_UNIT = r"(?:characters?|chars?|letters?|digits?|symbols?|alphanumerics?|long|in length)"
# "3-20 letters or digits", "3 to 20 characters", "between 3 and 20 characters"
_LEN_RANGE = re.compile(rf"(?:between\s+)?(\d+)\s*(?:-|–|to|and)\s*(\d+)\s+(?:\w+\s+){{0,3}}?{_UNIT}", re.I)
# "at least 8 characters", "minimum of 8 characters", "8 or more characters", "8+ characters"
_LEN_MIN = re.compile(
    rf"(?:at\s+least|minimum(?:\s+of)?|min\.?|no\s+(?:less|fewer)\s+than)\s+(\d+)\s+(?:\w+\s+){{0,2}}?{_UNIT}"
    rf"|(\d+)\s*(?:\+|or\s+more)\s+(?:\w+\s+){{0,2}}?{_UNIT}",
    re.I,
)
# "at most 50 characters", "up to 50 characters", "no longer than 50 characters", "maximum 50 characters"
_LEN_MAX = re.compile(
    rf"(?:at\s+most|up\s+to|maximum(?:\s+of)?|max\.?|no\s+(?:more|longer)\s+than)\s+(\d+)\s+(?:\w+\s+){{0,2}}?{_UNIT}"
    rf"|(?:no\s+longer\s+than|at\s+most|up\s+to)\s+(\d+)\b",
    re.I,
)
# "exactly 4 digits", "a 6-digit code", "4 digits"
_LEN_EXACT = re.compile(
    r"(?:exactly\s+(\d+)\s+(?:\w+\s+){0,2}?" + _UNIT + r")|\b(\d+)-(?:digit|character|letter)\b", re.I
)
# "between 1 and 10080", "from 0 to 100", "1-5 (inclusive)"; the length patterns above are read first
_RANGE = re.compile(rf"(?:between|from)\s+{_NUM}\s*(?:\([^)]*\))?\s+(?:and|to)\s+{_NUM}", re.I)
# "25-300", "(1-14)", "1 to 5": a range written bare, not part of a date ("2024-01-01") or an identifier
_BARE_RANGE = re.compile(rf"(?<![\w.\-]){_NUM}\s*(?:-|–|to)\s*(\d+(?:\.\d+)?)(?![\w\-]|\.\d)")
_LOWER_BOUND = re.compile(rf"(?:at\s+least|>=|no\s+less\s+than|minimum(?:\s+of|\s+is)?)\s+{_NUM}(?!\s*{_UNIT})", re.I)
_UPPER_BOUND = re.compile(rf"(?:at\s+most|<=|no\s+more\s+than|maximum(?:\s+of|\s+is)?)\s+{_NUM}(?!\s*{_UNIT})", re.I)
_PREFIX = re.compile(
    r"(?:must|should|has\s+to|needs?\s+to)?\s*(?:start|begin)s?\s+with\s+(?:an?\s+|the\s+)?['\"`‘“]([^'\"`’”]{1,10})['\"`’”]"
    r"|(?:starting|beginning|prefixed)\s+(?:with|by)\s+['\"`‘“]([^'\"`’”]{1,10})['\"`’”]",
    re.I,
)
_FORMATS = (
    ("date-time", re.compile(r"YYYY-MM-DD[T ]HH:MM|ISO[- ]?8601\s+(?:date[- ]?time|timestamp)|date[- ]?time", re.I)),
    ("date", re.compile(r"YYYY-MM-DD|ISO[- ]?8601\s+date|\bISO\s+date\b", re.I)),
    ("time", re.compile(r"\bHH:MM(?::SS)?\b|24-hour\s+time", re.I)),
    ("email", re.compile(r"\be-?mail\s+address\b|\bvalid\s+e-?mail\b", re.I)),
    ("uri", re.compile(r"\bhttps?://|\bURL\b", re.I)),
    ("e164", re.compile(r"E\.164|country\s+code|international\s+format", re.I)),
    ("uuid", re.compile(r"\bUUID\b|\bGUID\b", re.I)),
)


@dataclass(frozen=True)
class Constraints:
    """The documented shape of one parameter's value. ``charset`` is a set of classes a string's characters must
    come from ("letters", "digits", "lower", "upper", "underscore", "hyphen", "dot", "space"), empty for any;
    ``requires`` the classes at least one character must come from (a password's digit)."""

    min_len: int | None = None
    max_len: int | None = None
    charset: frozenset[str] = frozenset()
    requires: frozenset[str] = frozenset()
    no_spaces: bool = False
    prefix: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    format: str | None = None
    sources: tuple[str, ...] = field(default=(), compare=False)

    @property
    def empty(self) -> bool:
        return self == Constraints()

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` satisfies everything stated (a value of another type is left to the schema)."""
        if isinstance(value, bool):
            return True
        if isinstance(value, (int, float)):
            return (self.minimum is None or value >= self.minimum) and (self.maximum is None or value <= self.maximum)
        if not isinstance(value, str):
            return True
        if self.min_len is not None and len(value) < self.min_len:
            return False
        if self.max_len is not None and len(value) > self.max_len:
            return False
        if self.prefix and not value.startswith(self.prefix):
            return False
        body = value[len(self.prefix) :] if self.prefix else value
        if self.charset and not all(_in_classes(c, self.charset) for c in body):
            return False
        if self.no_spaces and any(c.isspace() for c in value):
            return False
        if any(not any(_in_classes(c, {cls}) for c in body) for cls in self.requires):
            return False
        return not (self.pattern and re.search(self.pattern, value) is None)

    def shape(self, value: str) -> str | None:
        """``value`` changed as little as possible to satisfy the stated characters, prefix and length: excluded
        characters dropped, required classes and the prefix added, too short padded with its own letters or
        digits, too long cut. None when no reshaping satisfies the constraints (a pattern it does not match)."""
        if self.accepts(value):
            return value
        body = value[len(self.prefix) :] if self.prefix and value.startswith(self.prefix) else value
        if self.charset:
            body = "".join(c for c in body if _in_classes(c, self.charset))
            if "lower" in self.charset and "upper" not in self.charset and "letters" not in self.charset:
                body = body.lower()
        if self.no_spaces:
            body = "".join(c for c in body if not c.isspace())
        for cls in sorted(self.requires):
            if not any(_in_classes(c, {cls}) for c in body):
                body += _SAMPLE[cls]
        prefix = self.prefix or ""
        lo = (self.min_len or 0) - len(prefix)
        filler = next(
            (_SAMPLE[c] for c in ("lower", "letters", "digits") if not self.charset or c in self.charset), "x"
        )
        while len(body) < lo:
            body += (body or filler)[: lo - len(body)] or filler
        if self.max_len is not None:
            body = body[: max(0, self.max_len - len(prefix))]
        out = prefix + body
        return out if out and self.accepts(out) else None

    def merged(self, other: Constraints) -> Constraints:
        """Both sets of constraints at once (the tighter bound of each pair)."""

        def tighter(a: Any, b: Any, pick: Any) -> Any:
            return b if a is None else a if b is None else pick(a, b)

        return replace(
            self,
            min_len=tighter(self.min_len, other.min_len, max),
            max_len=tighter(self.max_len, other.max_len, min),
            charset=(self.charset & other.charset) if self.charset and other.charset else self.charset or other.charset,
            requires=self.requires | other.requires,
            no_spaces=self.no_spaces or other.no_spaces,
            prefix=self.prefix or other.prefix,
            minimum=tighter(self.minimum, other.minimum, max),
            maximum=tighter(self.maximum, other.maximum, min),
            pattern=self.pattern or other.pattern,
            format=self.format or other.format,
            sources=self.sources + other.sources,
        )


_SAMPLE = {
    "letters": "a",
    "lower": "a",
    "upper": "A",
    "digits": "1",
    "underscore": "_",
    "hyphen": "-",
    "dot": ".",
    "space": " ",
    "special": "!",
}


def _in_classes(c: str, classes: set[str] | frozenset[str]) -> bool:
    return (
        ("letters" in classes and c.isalpha() and c.isascii())
        or ("lower" in classes and c.islower() and c.isascii())
        or ("upper" in classes and c.isupper() and c.isascii())
        or ("digits" in classes and c.isdigit() and c.isascii())
        or ("underscore" in classes and c == "_")
        or ("hyphen" in classes and c == "-")
        or ("dot" in classes and c == ".")
        or ("space" in classes and c == " ")
        or ("special" in classes and not c.isalnum() and not c.isspace())
    )


# "letters or digits", "alphanumeric", "only lowercase letters", "letters, digits and underscores", "digits only"
_CLASS_WORDS = {
    "alphanumeric": {"letters", "digits"},
    "alphanumerics": {"letters", "digits"},
    "letter": {"letters"},
    "letters": {"letters"},
    "alphabetic": {"letters"},
    "digit": {"digits"},
    "digits": {"digits"},
    "numeric": {"digits"},
    "numbers": {"digits"},
    "lowercase": {"lower"},
    "uppercase": {"upper"},
    "underscore": {"underscore"},
    "underscores": {"underscore"},
    "hyphen": {"hyphen"},
    "hyphens": {"hyphen"},
    "dash": {"hyphen"},
    "dashes": {"hyphen"},
    "dot": {"dot"},
    "dots": {"dot"},
    "period": {"dot"},
    "periods": {"dot"},
    "spaces": {"space"},
}
# a class list: "letters or digits", "only letters, digits and underscores", "digits only", "alphanumeric"
_CLASS_LIST = re.compile(
    r"\b(?:only\s+|just\s+)?((?:(?:lowercase|uppercase|alphanumeric|alphabetic|numeric)\s+)?"
    r"(?:letters?|digits?|alphanumerics?|numbers|characters)"
    r"(?:\s*(?:,|or|and|and/or|/)\s*(?:lowercase\s+|uppercase\s+)?"
    r"(?:letters?|digits?|numbers|underscores?|hyphens?|dashes|dots|periods|spaces))*)(\s+only)?\b",
    re.I,
)
_REQUIRES = re.compile(
    r"(?:contain|include|have|with)s?\s+(?:at\s+least\s+)?(?:one|a|an|1)\s+"
    r"(digit|number|uppercase(?:\s+letter)?|lowercase(?:\s+letter)?|letter|special\s+character|symbol)",
    re.I,
)


def _class_constraints(text: str) -> tuple[frozenset[str], frozenset[str], bool]:
    """Allowed character classes, required ones, and whether spaces are excluded, as the text states them."""
    allowed: set[str] = set()
    for m in _CLASS_LIST.finditer(text):
        phrase = m.group(1).lower()
        words = re.findall(r"[a-z]+", phrase)
        # "8 characters" alone states a length, not a class; a class list names letters or digits
        if not ({"letters", "letter", "digits", "digit", "alphanumeric", "alphanumerics", "numbers"} & set(words)):
            continue
        before = text[max(0, m.start() - 30) : m.start()].lower()
        if re.search(r"(?:at least|contain|include|with|have)\s+(?:one|a|an|1)?\s*$", before):
            continue  # "contains at least one digit" requires, it does not restrict
        restricting = (
            m.group(2)
            or re.match(r"(?:only|just)\b", m.group(0), re.I)
            or re.search(r"(?:\b(?:of|from|be|only|use|using|made of|consist of)|\d)\s*[:,]?\s*$", before)
        )
        if not restricting:
            continue  # a mention ("the user's letters") without a restricting cue
        for w in words:
            allowed |= _CLASS_WORDS.get(w, set())
        if "lowercase" in words and "uppercase" not in words:
            allowed = (allowed - {"letters"}) | {"lower"}
        if "uppercase" in words and "lowercase" not in words:
            allowed = (allowed - {"letters"}) | {"upper"}
    requires = set()
    for m in _REQUIRES.finditer(text):
        w = m.group(1).lower()
        requires.add(
            "digits"
            if w in ("digit", "number")
            else "upper"
            if w.startswith("uppercase")
            else "lower"
            if w.startswith("lowercase")
            else "special"
            if w in ("special character", "symbol")
            else "letters"
        )
    no_spaces = bool(re.search(r"\bno\s+(?:spaces|whitespace)\b|\bwithout\s+(?:spaces|whitespace)\b", text, re.I))
    return frozenset(allowed), frozenset(requires), no_spaces


def _lengths(text: str) -> tuple[int | None, int | None]:
    lo = hi = None
    m = _LEN_EXACT.search(text)
    if m:
        n = int(m.group(1) or m.group(2))
        return n, n
    m = _LEN_RANGE.search(text)
    if m:
        lo, hi = sorted((int(m.group(1)), int(m.group(2))))
    m = _LEN_MIN.search(text)
    if m and lo is None:
        lo = int(m.group(1) or m.group(2))
    m = _LEN_MAX.search(text)
    if m and hi is None:
        hi = int(m.group(1) or m.group(2))
    return lo, hi


def _bounds(text: str) -> tuple[float | None, float | None]:
    m = _RANGE.search(text) or _BARE_RANGE.search(text)
    if m:
        a, b = sorted((float(m.group(1)), float(m.group(2))))
        return a, b
    lo = _LOWER_BOUND.search(text)
    hi = _UPPER_BOUND.search(text)
    low = float(lo.group(1)) if lo else None
    if low is None and re.search(r"\b(?:positive|greater than zero|> ?0)\b", text, re.I):
        low = 1.0
    if low is None and re.search(r"\bnon-?negative\b", text, re.I):
        low = 0.0
    return low, float(hi.group(1)) if hi else None


def read_text(text: str, numeric: bool = False) -> Constraints:
    """The constraints a description (or a rejection message) states in prose; ``numeric`` reads ranges as the
    value's bounds rather than its length."""
    text = text or ""
    if not text.strip():
        return Constraints()
    if numeric:
        lo, hi = _bounds(text)
        return Constraints(minimum=lo, maximum=hi, sources=("text",) if lo is not None or hi is not None else ())
    min_len, max_len = _lengths(text)
    charset, requires, no_spaces = _class_constraints(text)
    m = _PREFIX.search(text)
    prefix = (m.group(1) or m.group(2)) if m else None
    fmt = next((name for name, rx in _FORMATS if rx.search(text)), None)
    out = Constraints(min_len, max_len, charset, requires, no_spaces, prefix, format=fmt)
    return out if out.empty else replace(out, sources=("text",))


def read_schema(schema: dict[str, Any]) -> Constraints:
    """The constraints JSON Schema keywords state (what pydantic models and MCP input schemas declare)."""
    t = schema_type(schema)
    out = Constraints(
        min_len=schema.get("minLength"),
        max_len=schema.get("maxLength"),
        minimum=schema.get("minimum", schema.get("exclusiveMinimum")),
        maximum=schema.get("maximum", schema.get("exclusiveMaximum")),
        pattern=schema.get("pattern") if t in (None, "string") else None,
        format=schema.get("format"),
    )
    return out if out.empty else replace(out, sources=("schema",))


#: Character classes as they are written in a regular expression's bracket.
_CLASS_REGEX = {
    "letters": "A-Za-z",
    "lower": "a-z",
    "upper": "A-Z",
    "digits": "0-9",
    "underscore": "_",
    "hyphen": "\\-",
    "dot": ".",
    "space": " ",
}


def documented_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with what its description states added as JSON Schema keywords it lacks (a length, a character
    class or prefix as a pattern, a range, a format): what a validator of the input should check before a value is
    offered to it, since the tool's own validation checks what its documentation says."""
    if not isinstance(schema, dict) or not schema.get("description"):
        return schema
    t = schema_type(schema)
    rules = read_text(str(schema["description"]), numeric=t in ("integer", "number"))
    if rules.empty:
        return schema
    out = dict(schema)
    if t in ("integer", "number"):
        for key, value in (("minimum", rules.minimum), ("maximum", rules.maximum)):
            if value is not None and key not in out and f"exclusive{key.title()}" not in out:
                out[key] = value
        return out
    if t not in (None, "string"):
        return out
    if rules.min_len is not None:
        out.setdefault("minLength", rules.min_len)
    if rules.max_len is not None:
        out.setdefault("maxLength", rules.max_len)
    if rules.format in ("date", "date-time", "time", "email", "uuid", "uri") and "format" not in out:
        out["format"] = rules.format
    if "pattern" not in out and (rules.charset or rules.prefix):
        body = f"[{''.join(_CLASS_REGEX[c] for c in sorted(rules.charset))}]*" if rules.charset else ".*"
        out["pattern"] = f"^{re.escape(rules.prefix or '')}{body}$"
    return out


def read_constraints(schema: dict[str, Any], description: str = "") -> Constraints:
    """Everything stated about one parameter: its schema's keywords and its description's prose."""
    description = description or str(schema.get("description", "") or "")
    numeric = schema_type(schema) in ("integer", "number")
    return read_schema(schema).merged(read_text(description, numeric))
