"""The exports of a proposed contract: the caller's arguments, every scalar leaf of the public response schema, and
the identifiers printed in a reply declared as free text (rules 19-25)."""

from __future__ import annotations

import copy
import re
from typing import Any

from libra._util.text import words
from libra.catalog import Tool
from libra.contracts.leaves import child_path
from libra.contracts.model import Export, FromText
from libra.contracts.offline.vocabulary import NON_PROPAGATING, READ_VERBS, STATUS_TEXT_CUES, has_phrase
from libra.schema import schema_type


def should_propagate(name: str, schema: dict[str, Any]) -> bool:
    """Rules 22-25: reusable identities, content, attributes and money propagate; acks, flags, counters don't.

    Judged from the field's name, type and description only, never from a runtime value (rule 25).
    """
    t = schema_type(schema)
    if t == "boolean":
        return False
    toks = set(words(name))
    desc = schema.get("description", "") or ""
    if toks & {
        "id",
        "ids",
        "token",
        "uuid",
        "key",
        "code",
        "handle",
        "name",
        "path",
        "url",
        "address",
        "email",
        "date",
        "time",
    }:
        return True
    if toks & NON_PROPAGATING:
        return False
    if has_phrase(desc, STATUS_TEXT_CUES):
        return False
    return True


def leaf_schema(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    t = schema_type(schema)
    if t:
        out["type"] = t
    for k in ("enum", "format", "description"):
        if k in schema:
            out[k] = copy.deepcopy(schema[k])
    return out


def _leaves(
    schema: dict[str, Any], path: str, label: list[str], depth: int = 0
) -> list[tuple[str, list[str], dict[str, Any]]]:
    """Scalar leaves declared by a schema: (JSONPath, field-label chain, leaf schema); arrays use ``[*]`` (rule 21)."""
    if depth > 6 or not isinstance(schema, dict):
        return []
    t = schema_type(schema)
    if t == "object":
        out = []
        for key, sub in (schema.get("properties") or {}).items():
            out.extend(_leaves(sub, child_path(path, key), label + [key], depth + 1))
        if not schema.get("properties"):
            out.extend(_map_keys(schema, path, label))
        return out
    if t == "array":
        items = schema.get("prefixItems") or schema.get("items")
        if isinstance(items, list):
            # a positional item the type names (a NamedTuple's field: pydantic gives each item its title) keeps
            # that name; the position is all an unnamed one has
            out = []
            for i, sub in enumerate(items):
                title = sub.get("title") if isinstance(sub, dict) else None
                name = "_".join(words(title)) if isinstance(title, str) and words(title) else str(i)
                out.extend(_leaves(sub, f"{path}[{i}]", label + [name], depth + 1))
            return out
        if isinstance(items, dict):
            return _leaves(items, f"{path}[*]", label, depth + 1)
        return [(f"{path}[*]", label, {})]
    if t in ("string", "integer", "number", "boolean") or t is None and not schema.get("properties"):
        return [(path, label, leaf_schema(schema))]
    return []


_MAP_BY = re.compile(r"\b(?:grouped|keyed|indexed|organi[sz]ed) by (?:the )?([a-z]+)", re.I)


_MAP_WORDS = re.compile(r"\b(?:mapping|map of|dictionary of|dict of)\b", re.I)


def _map_keys(schema: dict[str, Any], path: str, label: list[str]) -> list[tuple[str, list[str], dict[str, Any]]]:
    """The keys of an object the metadata describes as a map ("messages grouped by receiver"): there the keys are
    the identifiers (``[~]`` selects them), named after what they are keyed by when the description says."""
    desc = schema.get("description") or ""
    by = _MAP_BY.search(desc)
    if by:
        name = by.group(1).lower()
    elif _MAP_WORDS.search(desc):
        name = "_".join([*label, "key"]) if label else "key"
    else:
        return []
    return [(f"{path}[~]", [name], {"type": "string", "description": f"a key of {'.'.join(label) or 'the response'}"})]


def export_name(label: list[str], taken: set[str], fallback: str, prefix: str = "") -> str:
    """The field's own label, lengthened with its parents, then the source prefix, only when needed to stay
    unique (rule 21 labels); a response field echoing an argument name becomes ``response_<name>``."""
    parts = [p for p in label if not p.isdigit()] or [fallback]
    for n in range(1, len(parts) + 1):
        cand = "_".join(parts[-n:])
        if cand not in taken:
            return cand
    if prefix and f"{prefix}_{'_'.join(parts)}" not in taken:
        return f"{prefix}_{'_'.join(parts)}"
    base, i = "_".join(parts), 2
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"


def scalar_response_name(tool: Tool) -> str:
    """Name of a response export that has no field name of its own -- a scalar response, or the elements of a bare
    list of scalars: what the docstring's ``Returns`` section calls it ("A session token" -> ``session_token``,
    "The id of the new note" -> ``note_id``), else the tool name minus a read verb (``get_zipcode`` -> ``zipcode``,
    ``show_genres`` -> ``genres``), else ``response_value``.

    Why: the name is what the exploration ranks offers by and what propagation picks providers by (field
    similarity to the consumer's input); ``response_value`` resembles no input, so a bare reply's value would go
    last everywhere, while the documentation and the tool's own name say what it returns."""
    described = returns_name(str((tool.response_schema or {}).get("description") or ""))
    if described:
        return described
    toks = words(tool.short_name)
    if len(toks) > 1 and toks[0] in READ_VERBS:
        return "_".join(toks[1:])
    return "response_value"


#: Words that open a Returns text without naming the thing returned ("A new ...", "The unique ...").
_RETURNS_FILLER = frozenset(
    {
        "a",
        "an",
        "the",
        "new",
        "newly",
        "created",
        "generated",
        "opaque",
        "unique",
        "valid",
        "fresh",
        "its",
        "their",
        "your",
        "this",
        "that",
        "one",
        "single",
        "string",
        "str",
        "int",
        "integer",
        "value",
        "returned",
    }
)
#: Words that name a handle on a record ("the id of the note" names a note's id).
_HANDLE_WORDS = frozenset({"id", "identifier", "name", "number", "key", "token", "code", "path", "url", "handle"})
#: Words of a Returns text that name a container of the things returned ("a list of note ids").
_CONTAINER_WORDS = frozenset({"list", "array", "set", "sequence", "collection", "dict", "mapping", "tuple", "pair"})
#: Where the noun phrase of a Returns text ends: a clause, a relative clause, a purpose, a parenthesis.
_RETURNS_CUT = re.compile(r"[.;:,()\[]|\s[-–]\s|\b(?:which|that|to|for|used|with|as|if|when|or|and)\b", re.I)


def returns_name(text: str) -> str | None:
    """The name a Returns text gives what a tool returns, as an export name (None when it names nothing: "True if
    the call worked", a type alone)."""
    text = re.sub(r"^\s*[\w\[\]., |]+:\s+", "", (text or "").strip())  # "str: the new user id"
    if not text or re.match(r"(?:true|false|whether|none|nothing)\b", text, re.I):
        return None
    head = _RETURNS_CUT.split(text, maxsplit=1)[0]
    handle, _, owner = head.partition(" of ")
    handle_words = [w for w in words(handle) if w not in _RETURNS_FILLER]
    owner_words = [w for w in words(owner) if w not in _RETURNS_FILLER]
    if owner_words and (not handle_words or handle_words[-1] in _CONTAINER_WORDS):
        return "_".join(owner_words[-2:])  # "a list of note ids" names note ids
    if owner_words and handle_words[-1] in _HANDLE_WORDS:
        return f"{owner_words[-1]}_{handle_words[-1]}"
    return "_".join(handle_words[-2:]) or None


def argument_exports(tool: Tool) -> list[Export]:
    """Caller arguments stay observable after the call: mechanical ``$.param`` exports (rule 20)."""
    out = []
    for p in tool.param_names:
        s = tool.param_schema(p)
        t = schema_type(s)
        path = child_path("$", p)
        if t == "array":
            items = s.get("items") if isinstance(s.get("items"), dict) else {}
            out.append(
                Export(
                    p,
                    "arguments",
                    f"{path}[*]",
                    leaf_schema(items),
                    should_propagate(p, {**items, "description": s.get("description", "")}),
                )
            )
        elif t == "object":
            continue  # a structured argument is an input bundle, not a reusable scalar
        else:
            out.append(Export(p, "arguments", path, leaf_schema(s), should_propagate(p, s)))
    return out


#: The identifier forms read from a reply declared as free text before any call is seen (see
#: :func:`identifier_exports`).
DECLARED_TEXT_KINDS = ("hex_id", "uuid", "path", "url")


def identifier_exports(tool: Tool, taken: set[str]) -> list[Export]:
    """For a reply declared as free text -- a plain string without a closed set or a format -- exports of the
    identifiers printed in it (hashes, uuids, paths, URLs). An undeclared reply gets none: it may be anything
    (a number, a single token), and revision adds what an observed text holds (:func:`text_exports`).

    Why: a tool that only succeeds after others ran (a commit after staging) is never seen succeeding while its
    contract is checked, so revision cannot learn what its text holds; yet the id it prints ("committed with hash
    ...") is what the next call needs. These forms are recognisable in any text, and extraction reads them only
    from text (a reply with inner whitespace): a reply that is a single token is already the ``$`` export's value.
    """
    r = tool.response_schema
    if r is None or schema_type(r) != "string" or "enum" in r or "format" in r or "const" in r:
        return []
    out = []
    for kind in DECLARED_TEXT_KINDS:
        name = export_name([kind], taken, kind, prefix="text")
        taken.add(name)
        out.append(
            Export(
                name,
                "response",
                "$",
                {"type": "string", "description": f"a {kind.replace('_', ' ')} printed in the reply"},
                True,
                FromText(kind),
            )
        )
    return out


def response_exports(tool: Tool, taken: set[str]) -> list[Export]:
    """Every scalar leaf of the public response schema (rule 21), or one ``$`` export for a scalar response."""
    r = tool.response_schema
    out: list[Export] = []
    if r is None or schema_type(r) not in ("object", "array"):
        name = export_name([scalar_response_name(tool)], taken, "response_value")
        taken.add(name)
        schema = leaf_schema(r) if r else {}
        return [Export(name, "response", "$", schema, should_propagate(name, schema)), *identifier_exports(tool, taken)]
    for path, label, leaf in _leaves(r, "$", []):
        name = export_name(label or [scalar_response_name(tool)], taken, "response_value", prefix="response")
        taken.add(name)
        out.append(Export(name, "response", path, leaf, should_propagate(label[-1] if label else name, leaf)))
    return out
