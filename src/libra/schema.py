"""Generic JSON Schema helpers: the one type a schema declares, whether a value fits, local references inlined.

Every part of a build asks these questions of a parameter's schema (the offline proposer, the engine, retrieval,
the library check); answering them in one module keeps every part agreeing on the answers. What a parameter's
name and description suggest as a value is the contracts' business (:mod:`libra.values.generator`).
"""

from __future__ import annotations

import functools
import json
from typing import Any

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
