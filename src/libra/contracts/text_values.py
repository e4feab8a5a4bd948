"""Values inside text: what an export with ``from_text`` reads, and how to tell text that says "nothing" apart.

Most MCP tools (and many Python ones) answer with prose, not structured data: "Changes committed successfully with
hash 78526d8...", a JSON document printed as text, one file per line. A plain export reaches such a reply only as
one opaque string, so the identifier inside it can never feed the next call. An export's ``from_text`` names an
*extractor* applied to every string its path selects:

- ``json`` / ``literal``: the first JSON document (or Python literal: ``{'id': 3}``, ``[1, 2]``) embedded in the
  text, read further with the extractor's own JSONPath (``$[*].name``);
- ``lines``: every non-empty line, without list markers (``- ``, ``* ``, ``1. ``) or a leading tag (``[FILE] ``);
- a pattern, for identifiers as tools print them: ``hex_id`` (hashes, object ids), ``uuid``, ``path`` (absolute or
  ``./`` paths), ``url``, ``quoted`` (a value in quotes: ``Created branch 'feat'``).

Every extractor is generic: it reads the form a value is printed in, never what the value means, and the
offline proposer adds one only where a tool's observed successful output holds such a form (see
:func:`text_findings`). The same kinds are open to an LLM through the contract document's ``from_text`` field.

Empty results ("No matches found", ``[]`` printed as text, "0 results") are successes that name nothing:
:func:`is_empty_text` recognises them so that judges never take them as evidence (see
:mod:`libra.induction.judges`) and no such text is offered to another tool as a value.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import jsonpath

from libra.contracts.leaves import observed_leaves  # the same generic leaf paths as structured outputs get

#: The extractor kinds an export's ``from_text`` may name; the first two take a JSONPath into what they parse.
STRUCTURED_KINDS: tuple[str, ...] = ("json", "literal")
PATTERN_KINDS: tuple[str, ...] = ("hex_id", "uuid", "path", "url", "quoted")
TEXT_KINDS: tuple[str, ...] = (*STRUCTURED_KINDS, "lines", *PATTERN_KINDS)

_TRAILING = ".,;:!?)]}>\"'"
#: Identifiers as tools print them. Each is anchored so it never matches inside a longer token.
PATTERNS: dict[str, re.Pattern[str]] = {
    "uuid": re.compile(
        r"(?<![0-9A-Za-z-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z-])"
    ),
    "hex_id": re.compile(r"(?<![0-9A-Za-z_/.-])[0-9a-f]{6,64}(?![0-9A-Za-z_/-])"),
    "url": re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>`]+"),
    "path": re.compile(r"(?<![\w:/.~-])(?:~|\.{1,2})?/(?:[\w.@+-]+/)*[\w.@+-]+/?"),
    "quoted": re.compile(r"(?<!\w)(?:'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"|`([^`\n]{1,200})`)(?!\w)"),
}
#: A list marker or a leading tag a listing puts before each entry ("- x", "* main", "3. x", "[FILE] a.txt").
_LINE_PREFIX = re.compile(r"^\s*(?:[-*+\u2022]\s+|\d{1,4}[.)]\s+|\[[A-Za-z _-]{1,12}\]\s+)?")
#: At most this many values one extractor takes from one text (a listing of a thousand files is one kind of value).
MAX_VALUES = 50


#: A line reporting that something failed ("a.txt: Error - ENOENT: no such file ..."): a reply that succeeded as a
#: whole may still refuse some of what it was asked, line by line.
_ERROR_LINE = re.compile(
    r"(?i)\b(?:error|exception|failed|failure|denied|not found|no such|does not exist|enoent|eacces)\b"
)


def _without_errors(text: str) -> str:
    """The text without its error lines: an identifier quoted in an error names what was refused, not something
    the call produced."""
    if not _ERROR_LINE.search(text):
        return text
    return "\n".join(line for line in text.splitlines() if not _ERROR_LINE.search(line))


def _hex_like_id(token: str) -> bool:
    """A hex token that looks issued rather than written: a digit, a letter and at least four distinct characters
    (``3f2a9c``, a commit hash) -- not a word of hex letters (``facade``) nor a repetitive code (``c1ccccc1``)."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token) and len(set(token)) >= 4


@lru_cache(maxsize=4096)
def _patterns(kind: str, text: str) -> tuple[str, ...]:
    """Every distinct value of one pattern kind in ``text``, in order, outside lines that report an error
    (cached: a reply is read by several exports and again on every revision)."""
    out: list[str] = []
    for m in PATTERNS[kind].finditer(_without_errors(text)):
        if kind == "quoted":
            value = next(g for g in m.groups() if g is not None).strip()
        else:
            value = m.group(0).rstrip(_TRAILING) if kind in ("url", "path") else m.group(0)
        if kind == "hex_id" and not _hex_like_id(value):
            continue
        if kind == "path" and value.strip("/.~") == "":
            continue
        if value and value not in out:
            out.append(value)
    return tuple(out[:MAX_VALUES])


@lru_cache(maxsize=4096)
def _lines(text: str) -> tuple[str, ...]:
    """The entries of a listing: its lines without markers, when there are several or a marker says it is a
    list ("- k1a2b3" alone is a one-entry list; one plain line is just text)."""
    out: list[str] = []
    marked = False
    for line in _without_errors(text).splitlines():
        value = _LINE_PREFIX.sub("", line, count=1).strip()
        marked = marked or value != line.strip()
        if value and value not in out:
            out.append(value)
    return tuple(out[:MAX_VALUES]) if len(out) > 1 or marked and out else ()


def _jsonable(value: Any) -> Any:
    """A Python literal as JSON data: tuples and sets become lists, keys strings; other objects are dropped."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v) for v in value), key=repr)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return None


def _closing(text: str, start: int) -> int:
    """The index after the bracket that closes the one at ``start`` (quotes respected), or -1."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


@lru_cache(maxsize=4096)
def embedded(kind: str, text: str) -> Any | None:
    """The first non-empty JSON document (``kind="json"``) or Python literal (``"literal"``) in ``text``: the whole
    text when it parses, else the first bracketed part that does. None when there is none. The result is cached
    and shared: callers must not change it."""
    candidates = [text.strip()]
    for m in re.finditer(r"[\[{(]", text):
        end = _closing(text, m.start())
        if end > m.start() + 1:
            candidates.append(text[m.start() : end])
        if len(candidates) > 20:
            break
    for chunk in candidates:
        try:
            value = json.loads(chunk) if kind == "json" else _jsonable(ast.literal_eval(chunk))
        except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
            continue
        if isinstance(value, (dict, list)) and value:
            return value
    return None


def text_values(kind: str, text: str, path: str = "$") -> Iterator[tuple[str, Any, Any]]:
    """(location inside the text, value, jsonpath match or None) for every value ``kind`` reads from ``text``.

    Locations are ``|kind`` plus a JSONPath tail for structured kinds (``|json[0]['name']``) or an index
    (``|hex_id[0]``), so a value's path says where in the text it sat.
    """
    if kind in STRUCTURED_KINDS:
        data = embedded(kind, text)
        if data is None:
            return
        try:
            matches = list(jsonpath.finditer(path or "$", data))
        except jsonpath.JSONPathError:
            return
        for m in matches[:MAX_VALUES]:
            if isinstance(m.obj, (str, int, float, bool)):
                yield f"|{kind}{m.path[1:]}", m.obj, m
        return
    values = _lines(text) if kind == "lines" else _patterns(kind, text) if kind in PATTERNS else []
    for i, v in enumerate(values):
        yield f"|{kind}[{i}]", v, None


# ---------------------------------------------------------------------------------------------------------------
# What the offline proposer looks for in an observed output
# ---------------------------------------------------------------------------------------------------------------


def is_text(value: Any) -> bool:
    """A string that is text rather than one token: it has inner whitespace or is a printed JSON structure.

    A markup document (XML, HTML, SVG: it opens with ``<``) is not: it is content to pass on whole, and the
    attribute values inside it (namespaces, styles) are no identifiers a tool printed for a caller.
    """
    if not isinstance(value, str):
        return False
    s = value.strip()
    if not s or s.startswith("<"):
        return False
    return any(c.isspace() for c in s) or s[:1] in "[{" and embedded("json", s) is not None


def text_findings(text: str) -> list[tuple[str, str, list[str], str]]:
    """(kind, JSONPath into the parsed structure or "$", field labels, JSON type) for each extractor that reads
    something from an observed text. Only the form of the text is used, never a value (rule 32).

    An embedded JSON document (else a Python literal) is read field by field, its lists as ``[*]``; text that
    holds no structure offers its lines (two or more) and the identifier patterns it contains.
    """
    if is_empty_text(text):
        return []
    for kind in STRUCTURED_KINDS:
        data = embedded(kind, text)
        if data is not None:
            return [(kind, p, label, jt) for p, (label, jt) in sorted(observed_leaves(data).items())]
    out: list[tuple[str, str, list[str], str]] = []
    if _lines(text):
        out.append(("lines", "$", [], "string"))
    out.extend((kind, "$", [], "string") for kind in PATTERN_KINDS if _patterns(kind, text))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Empty results
# ---------------------------------------------------------------------------------------------------------------

#: Text that says a call found nothing: an empty structure printed as text (``[]``, ``{}``, ``None``, ``null``),
#: "No matches found", "No results for 'x'", "0 results", "Found 0 files", "Nothing found", "(empty)", a label
#: over nothing ("Notes: []"). "No such file" is a refusal, not an empty answer, and is left out.
EMPTY_TEXT = (
    r"(?is)^\W*(?:\[\s*\]|\{\s*\}|\(\s*\)|none|null|nil|n/?a|empty|\(empty\)|nothing found"
    r"|(?:no|zero|0)\s+(?!such\b)(?:[\w-]+\s+){0,3}?(?:results?|match(?:es)?|matching|entries|entry|items?|records?"
    r"|rows?|files?|hits?|data|documents?|objects?|entities|nodes|found)\b.*"
    r"|found\s+(?:no|0|zero)\b.*"
    r"|[a-z][\w ]{0,40}:\s*(?:\[\s*\]|\{\s*\}|\(\s*\)|none|null|nil))\W*$"
)
_EMPTY_RE = re.compile(EMPTY_TEXT)
#: Longer text is an answer that happens to mention nothing found, not an empty result.
MAX_EMPTY_TEXT = 120


def is_empty_text(value: Any) -> bool:
    """Whether a string is an empty result printed as text (see :data:`EMPTY_TEXT`)."""
    return (
        isinstance(value, str) and len(value.strip()) <= MAX_EMPTY_TEXT and _EMPTY_RE.match(value.strip()) is not None
    )
