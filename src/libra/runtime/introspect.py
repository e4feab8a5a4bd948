"""Tool documents from Python signatures, type hints and docstrings.

This is how a plain Python class or module becomes a catalog without anyone writing JSON by hand: the signature
gives the parameters, the type hints their JSON Schema, and the docstring the descriptions. Docstrings are read
in the two styles found in practice (Google ``Args:`` sections and reST ``:param x:`` fields); a small parser is
used because the project must not grow a dependency for it.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from typing import Any, Callable

from .base import json_type, to_jsonable

_NONE = type(None)
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?|Response)\s*:\s*$")
_GOOGLE_PARAM = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_REST_FIELD = re.compile(r"^\s*:\w+")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google- or reST-style docstring.

    The description is the first paragraph, which is what a retriever should index: later paragraphs tend to be
    implementation notes.
    """
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    lines = text.splitlines()
    para: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line) or _REST_FIELD.match(line):
            if para:
                break
            if line.strip():
                break
            continue
        para.append(line.strip())
    description = " ".join(para)

    params: dict[str, str] = {}
    # Google style: an "Args:" header, then "name (type): text" lines with indented continuations.
    in_args = False
    base_indent: int | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            in_args = header.group(1) in ("Args", "Arguments", "Parameters", "Params")
            base_indent, current = None, None
            continue
        if not in_args:
            continue
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if base_indent is None:
            base_indent = indent
        if indent == 0 and base_indent > 0:
            in_args = False
            continue
        m = _GOOGLE_PARAM.match(line)
        if indent <= base_indent and m:
            current = m.group(1)
            params[current] = m.group(3).strip()
        elif current is not None:
            params[current] = (params[current] + " " + line.strip()).strip()
    # reST style: ":param [type] name: text" fields, continuation lines indented.
    current = None
    for line in lines:
        m = _REST_PARAM.match(line)
        if m:
            current = m.group(1)
            params[current] = m.group(2).strip()
        elif current is not None and line.strip() and not _REST_FIELD.match(line) and line[:1].isspace():
            params[current] = (params[current] + " " + line.strip()).strip()
        else:
            current = None
    return description, params


def type_schema(tp: Any) -> tuple[dict[str, Any], bool]:
    """(JSON Schema, nullable) of a type hint; unknown or missing hints give the empty (any) schema."""
    if tp is inspect.Parameter.empty or tp is Any:
        return {}, False
    if tp is None or tp is _NONE:
        return {"type": "null"}, True
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        non_none = [a for a in args if a is not _NONE]
        nullable = len(non_none) != len(args)
        schemas = [type_schema(a)[0] for a in non_none]
        if len(schemas) == 1:
            schema = dict(schemas[0])
        elif all(set(s) == {"type"} and isinstance(s["type"], str) for s in schemas):
            schema = {"type": [s["type"] for s in schemas]}
        else:
            schema = {"anyOf": schemas}
        if nullable:
            schema = _add_null(schema)
        return schema, nullable
    if origin is typing.Literal:
        values = [to_jsonable(a.value if isinstance(a, enum.Enum) else a) for a in args]
        schema: dict[str, Any] = {"enum": values}
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema, None in values
    if origin is typing.Annotated:
        # ``Annotated[str, {"format": "email"}]``: dict metadata is JSON Schema the type alone cannot say
        schema, nullable = type_schema(args[0])
        extra = [m for m in getattr(tp, "__metadata__", ()) if isinstance(m, dict)]
        if extra:
            schema = dict(schema)
            for m in extra:
                schema.update(m)
        return schema, nullable
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [to_jsonable(m.value) for m in tp]}, False
    base = origin or tp
    if base is bool:
        return {"type": "boolean"}, False
    if base is int:
        return {"type": "integer"}, False
    if base is float:
        return {"type": "number"}, False
    if base is str:
        return {"type": "string"}, False
    if base in (list, set, frozenset, tuple) or (isinstance(base, type) and base.__module__ == "collections.abc" and base.__name__ in ("Sequence", "Iterable", "Set", "MutableSequence")):
        schema = {"type": "array"}
        if args:
            if base is tuple and len(args) != 2 or (base is tuple and args[1] is not Ellipsis):
                schema["prefixItems"] = [type_schema(a)[0] for a in args if a is not Ellipsis]
            else:
                item = type_schema(args[0])[0]
                if item:
                    schema["items"] = item
        return schema, False
    if base is dict or (isinstance(base, type) and base.__module__ == "collections.abc" and base.__name__ in ("Mapping", "MutableMapping")):
        schema = {"type": "object"}
        if len(args) == 2:
            value = type_schema(args[1])[0]
            if value:
                schema["additionalProperties"] = value
        return schema, False
    return {}, False


def _json_type(v: Any) -> str | None:
    if v is None:
        return None
    t = json_type(v)
    return "array" if t == "null" else t  # tuples, sets and other sequences travel as arrays


def _add_null(schema: dict[str, Any]) -> dict[str, Any]:
    if "type" in schema:
        t = schema["type"]
        types_ = list(t) if isinstance(t, list) else [t]
        if "null" not in types_:
            types_.append("null")
        out = dict(schema)
        out["type"] = types_
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if not schema:
        return schema
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def tool_document(name: str, func: Callable[..., Any]) -> dict[str, Any]:
    """A tool document (``name``/``description``/``parameters``) of a function or bound method."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        sig = inspect.Signature()
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: fall back to raw annotations
        hints = {}
    description, param_docs = parse_docstring(inspect.getdoc(func))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in sig.parameters.items():
        if pname in ("self", "cls") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            continue  # cannot be passed by keyword, and tools are always called with keyword arguments
        hint = hints.get(pname, param.annotation)
        if isinstance(hint, str):
            hint = inspect.Parameter.empty
        schema, nullable = type_schema(hint)
        schema = dict(schema)
        if pname in param_docs and param_docs[pname]:
            schema["description"] = param_docs[pname]
        if param.default is not inspect.Parameter.empty:
            default = to_jsonable(param.default)
            if default is not None or nullable:
                schema["default"] = default
        elif not nullable:
            required.append(pname)
        properties[pname] = schema
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }
