"""Tool documents from Python signatures, type hints and docstrings.

This is how a plain Python class or module becomes a catalog without anyone writing JSON by hand: the signature
gives the parameters, the type hints their JSON Schema, the return annotation the response schema, and the
docstring the descriptions.

Both readings are delegated to maintained libraries, because the space of what developers write is large and
those libraries already cover it:

- **pydantic** (``TypeAdapter(tp).json_schema()``) turns any type hint it understands (primitives, generics,
  ``Optional``/``Union``, ``Literal``, ``Enum``, ``datetime``/``date``/``UUID``, ``TypedDict``, dataclasses,
  ``BaseModel``) into standard JSON Schema; nested records land in ``$defs`` and are referred to by ``$ref``,
  which :meth:`libra.catalog.Tool.param_schema` inlines for every consumer. A hint pydantic cannot express (an
  arbitrary class, a callable) becomes the empty schema, i.e. "any value", as before.
- **docstring_parser** reads Google, NumPy and reST/Epydoc docstrings: the description, one description per
  parameter and the ``Returns`` section, which becomes the response schema's description.

A small normalisation (:func:`_tidy`) keeps the output in the compact form this project has always written
(``{"type": ["integer", "null"]}`` rather than ``anyOf``; no per-field titles; no keywords that restate a
default), so the parts that read schemas see one form and catalogs stay stable across this change.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import types
import typing
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import docstring_parser
import pydantic_core
import typing_extensions
from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from libra.schema import fits, fold_union

_NONE = type(None)


# ---------------------------------------------------------------------------------------------------------------
# Docstrings
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Docstring:
    """What a docstring says about a tool: its description, its parameters and what it returns."""

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str = ""


def _squash(text: str | None) -> str:
    """One line of text: docstrings wrap at a column width that means nothing to a reader of the schema."""
    return " ".join((text or "").split())


def read_docstring(doc: str | None) -> Docstring:
    """The description (first paragraph), parameter descriptions and ``Returns`` text of a docstring.

    Any of Google, NumPy or reST style is accepted (``docstring_parser`` detects which). The description is the
    first paragraph only, which is what a retriever should index: later paragraphs tend to be implementation
    notes. A docstring the parser rejects still gives its first paragraph.
    """
    if not doc:
        return Docstring()
    text = inspect.cleandoc(doc)
    try:
        parsed = docstring_parser.parse(text)
    except docstring_parser.ParseError:
        return Docstring(description=_squash(text.split("\n\n", 1)[0]))
    first = parsed.short_description or ""
    if parsed.long_description and not parsed.blank_after_short_description:
        first += "\n" + parsed.long_description.split("\n\n", 1)[0]  # the first paragraph wrapped onto more lines
    params = {p.arg_name.lstrip("*"): _squash(p.description) for p in parsed.params if p.arg_name and p.description}
    returns = _returns_text(parsed.returns)
    return Docstring(description=_squash(first), params=params, returns=returns)


# What a type written in a docstring is made of; a "type" with other characters is a sentence split at its colon.
_TYPE_TEXT = re.compile(r"^[\w\[\]., |]+$")


def _returns_text(returns: Any) -> str:
    """The ``Returns`` description; a Google line like ``{'mass': value}`` that the parser split at its colon
    into a "type" and a description is put back together."""
    if returns is None:
        return ""
    text = _squash(returns.description)
    kind = _squash(returns.type_name)
    if kind and not _TYPE_TEXT.match(kind):
        return f"{kind}: {text}" if text else kind
    return text


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) of a docstring; see :func:`read_docstring`."""
    d = read_docstring(doc)
    return d.description, d.params


# ---------------------------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------------------------


class JsonKeywords:
    """``Annotated`` metadata that adds JSON Schema keywords: ``Annotated[str, {"format": "email"}]``.

    A plain dict in ``Annotated`` is how a developer states what the type alone cannot (a format, a range);
    pydantic ignores unknown metadata, so dicts are wrapped in this object, which pydantic asks for its schema.
    """

    def __init__(self, keywords: dict[str, Any]) -> None:
        self.keywords = dict(keywords)

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return {**handler(core_schema), **self.keywords}


class _NoFieldTitles(GenerateJsonSchema):
    """pydantic's generator minus the per-field ``title`` (the field's own name, capitalised: pure noise beside a
    property's key), except on positional items (a ``NamedTuple``'s fields, serialized as an array): there the
    title is the only name the field has, and what names the values a reply's positions hold."""

    _positional: frozenset[int] = frozenset()

    def named_tuple_schema(self, schema: Any) -> Any:
        outer = self._positional
        self._positional = outer | {id(f["schema"]) for f in schema["fields"]}
        try:
            return super().named_tuple_schema(schema)
        finally:
            self._positional = outer

    def field_title_should_be_set(self, schema: Any) -> bool:
        return id(schema) in self._positional


def _is_plain_typeddict(tp: Any) -> bool:
    """A ``typing.TypedDict`` class, which pydantic refuses before Python 3.12 (it wants typing_extensions')."""
    return isinstance(tp, type) and typing_extensions.is_typeddict(tp) and type(tp).__module__ == "typing"


def portable(tp: Any, _seen: frozenset[int] = frozenset()) -> Any:
    """The same hint in a form pydantic accepts: dict metadata wrapped, ``typing.TypedDict`` rebuilt.

    Rebuilding walks generic arguments (``list[Record]``, ``Optional[Record]``) and the TypedDict's own fields;
    a TypedDict that contains itself is cut to ``Any`` at the repeat. A ``typing.TypedDict`` used as a field of a
    dataclass or a model is out of reach of this walk (pydantic reads those fields itself): before Python 3.12
    the whole hint then falls back to "any", as an unknown class does.
    """
    if _is_plain_typeddict(tp):
        return _rebuilt_typeddict(tp, _seen)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        base = portable(args[0], _seen)
        meta = tuple(JsonKeywords(m) if isinstance(m, dict) else m for m in tp.__metadata__)
        return typing.Annotated[(base, *meta)]
    if not args or origin is typing.Literal:
        return tp
    new = tuple(portable(a, _seen) if not isinstance(a, (list, tuple)) else a for a in args)
    if all(a is b for a, b in zip(new, args)):
        return tp
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[new]  # noqa: UP007 - a Union built from a tuple of arguments has no | spelling
    if hasattr(tp, "copy_with"):
        return tp.copy_with(new)
    return types.GenericAlias(origin, new)


def _rebuilt_typeddict(tp: type, seen: frozenset[int]) -> Any:
    if id(tp) in seen:
        return Any
    hints = typing.get_type_hints(tp, include_extras=True)
    required = getattr(tp, "__required_keys__", frozenset(hints))
    fields_ = {}
    for key, hint in hints.items():
        hint = portable(hint, seen | {id(tp)})
        fields_[key] = typing_extensions.Required[hint] if key in required else typing_extensions.NotRequired[hint]
    rebuilt = typing_extensions.TypedDict(tp.__name__, fields_)  # type: ignore[operator]
    rebuilt.__doc__, rebuilt.__module__, rebuilt.__qualname__ = tp.__doc__, tp.__module__, tp.__qualname__
    return rebuilt


# Keywords whose value is a schema, a list of schemas, or a map of names to schemas: where _tidy recurses.
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
)
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
# Keywords that restate the default meaning; dropping them changes no verdict.
_NO_OPS = (("additionalProperties", True), ("items", {}))


def _tidy(schema: Any) -> Any:
    """The compact form of a generated schema: no-op keywords dropped, nullable/scalar unions folded to ``type`` lists.

    ``{"anyOf": [{"type": "integer"}, {"type": "null"}]}`` and ``{"type": ["integer", "null"]}`` accept the same
    values, but the type-list form is what the parts that ask "which type is this parameter" read.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if any(key == k and value == v for k, v in _NO_OPS):
            continue
        if key in _ONE_SCHEMA and isinstance(value, dict):
            value = _tidy(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [_tidy(v) for v in value]
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {k: _tidy(v) for k, v in value.items()}
        out[key] = value
    if isinstance(out.get("anyOf"), list):
        folded = fold_union(out["anyOf"])
        if folded is not None and not (set(folded) & (set(out) - {"anyOf"})):
            rest = {k: v for k, v in out.items() if k != "anyOf"}
            out = {**folded, **rest}
    return out


def _accepts_null(schema: dict[str, Any]) -> bool:
    """Whether ``None`` is a valid value: then the parameter may be left out even without a default."""
    if not schema:
        return False  # "any" says nothing about absence (an ``Any`` parameter without default stays required)
    return fits(schema, None)


@functools.lru_cache(maxsize=4096)
def _cached_type_schema(tp: Any, mode: str) -> str:
    """The schema as JSON text (so a cached answer cannot be mutated by a caller)."""
    try:
        with warnings.catch_warnings():
            # pydantic warns of what it leaves out (a field default with no JSON form): leaving it out is our rule too
            warnings.simplefilter("ignore")
            schema = TypeAdapter(portable(tp)).json_schema(mode=mode, schema_generator=_NoFieldTitles)  # type: ignore[arg-type]
        return json.dumps(_tidy(schema))
    except Exception:  # noqa: BLE001 - a hint pydantic cannot express (arbitrary class, callable) means "any value"
        return "{}"


def type_schema(tp: Any, mode: str = "validation") -> tuple[dict[str, Any], bool]:
    """(JSON Schema, nullable) of a type hint; unknown or missing hints give the empty (any) schema.

    ``mode`` is pydantic's: ``validation`` for what a tool accepts, ``serialization`` for what it returns.
    Nested records sit in the schema's own ``$defs``.
    """
    if tp is inspect.Parameter.empty or tp is Any or isinstance(tp, str):
        return {}, False
    try:
        hash(tp)
    except TypeError:  # an unhashable hint (``Annotated`` metadata holding a dict) cannot be a cache key
        text = _cached_type_schema.__wrapped__(tp, mode)
    else:
        text = _cached_type_schema(tp, mode)
    schema = json.loads(text)
    return schema, _accepts_null(schema)


# ---------------------------------------------------------------------------------------------------------------
# Defaults and $defs
# ---------------------------------------------------------------------------------------------------------------


def json_default(value: Any) -> tuple[bool, Any]:
    """(True, JSON form) of a default that is JSON data, else (False, None).

    Enums, dates, UUIDs, dataclasses and models have a JSON form (pydantic's); a sentinel such as
    ``NOT_GIVEN = object()`` or an instance of an arbitrary class has none, and is better left out of the schema
    than written as ``{}``, which a proposer would then pass as if it were the default.
    """
    if isinstance(value, (set, frozenset)):
        try:
            value = sorted(value)  # a set's iteration order is not stable across processes
        except TypeError:
            return False, None
    try:
        data = pydantic_core.to_jsonable_python(value)
        json.dumps(data, allow_nan=False)
    except Exception:  # noqa: BLE001 - unknown type, NaN, ...: not JSON
        return False, None
    return True, data


def _rename_refs(schema: Any, renames: dict[str, str]) -> Any:
    if isinstance(schema, dict):
        return {
            k: (renames.get(v, v) if k == "$ref" and isinstance(v, str) else _rename_refs(v, renames))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_rename_refs(v, renames) for v in schema]
    return schema


def _hoist_defs(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Move a parameter schema's ``$defs`` into the shared ``defs`` of the parameters object.

    ``#/$defs/Name`` references then resolve against the parameters object, the root a catalog stores. Two
    parameters whose types share a name but differ get the second renamed (``Name_2``) with its references.
    """
    own = schema.pop("$defs", None)
    if not own:
        return schema
    renames: dict[str, str] = {}
    for name, sub in own.items():
        new, n = name, 1
        while new in defs and defs[new] != _rename_refs(sub, renames):
            n += 1
            new = f"{name}_{n}"
        if new != name:
            renames[f"#/$defs/{name}"] = f"#/$defs/{new}"
    for name, sub in own.items():
        target = renames.get(f"#/$defs/{name}", f"#/$defs/{name}").rsplit("/", 1)[1]
        defs[target] = _rename_refs(sub, renames)
    return _rename_refs(schema, renames)


def _unwrap_root_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """``{"$ref": "#/$defs/M", "$defs": ...}`` -> M's own keywords at the root (``$defs`` kept for inner refs).

    pydantic writes a top-level model as a reference; a reader of the response should see its shape directly.
    """
    ref = schema.get("$ref")
    defs = schema.get("$defs") or {}
    if not isinstance(ref, str) or not ref.startswith("#/$defs/") or ref[8:] not in defs:
        return schema
    target = defs[ref[8:]]
    rest = {k: v for k, v in schema.items() if k not in ("$ref", "$defs")}
    if set(rest) & set(target):
        return schema
    return {**target, **rest, "$defs": defs}


# ---------------------------------------------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------------------------------------------


def response_schema(hints: dict[str, Any], returns: str = "") -> dict[str, Any] | None:
    """The response schema of a return annotation, described by the docstring's ``Returns`` text.

    No annotation (or ``Any``, or one pydantic cannot express) keeps the response opaque (None): an undeclared
    response is not an error, and nothing would be gained by writing "any value" down.
    """
    if "return" not in hints:
        return None
    schema, _ = type_schema(hints["return"], mode="serialization")
    if not schema:
        return None
    schema = _unwrap_root_ref(schema)
    if returns:
        schema["description"] = returns
    return schema


def resolved_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The function's type hints, resolved; an annotation that cannot be resolved is dropped on its own.

    ``typing.get_type_hints`` fails as a whole when one name is missing (a type imported only under
    ``TYPE_CHECKING``); then every other annotation is still worth reading, one by one.
    """
    try:
        return typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - see the docstring: resolve each annotation alone
        pass
    raw = getattr(func, "__annotations__", None) or {}
    namespace = getattr(getattr(func, "__func__", func), "__globals__", {})
    hints: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, str):
            try:
                value = eval(value, dict(namespace))  # noqa: S307 - what get_type_hints does with the developer's own annotation
                if isinstance(value, str):  # a quoted annotation under postponed evaluation: quoted twice
                    value = eval(value, dict(namespace))  # noqa: S307
            except Exception:  # noqa: BLE001 - this one stays unknown ("any value")
                continue
        hints[key] = value
    return hints


def tool_document(name: str, func: Callable[..., Any]) -> dict[str, Any]:
    """A tool document (``name``/``description``/``parameters``, and ``response`` when the return is annotated).

    A function marked with :func:`libra.tool` adds what its author stated: per-parameter ``examples`` in the
    parameter schemas, and ``group`` and ``metadata`` (its hints) in the document.
    """
    from libra.decorators import hints_of

    marks = hints_of(func)
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        sig = inspect.Signature()
    hints = resolved_hints(func)
    doc = read_docstring(inspect.getdoc(func))
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    for pname, param in sig.parameters.items():
        if pname in ("self", "cls") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            continue  # cannot be passed by keyword, and tools are always called with keyword arguments
        schema, nullable = type_schema(hints.get(pname, param.annotation))
        schema = _hoist_defs(schema, defs)
        if doc.params.get(pname):
            schema["description"] = doc.params[pname]
        if marks is not None and pname in marks.examples:
            schema["examples"] = list(marks.examples[pname])
        if param.default is not inspect.Parameter.empty:
            ok, default = json_default(param.default)
            if ok and (default is not None or nullable):
                schema["default"] = default
        elif not nullable:
            required.append(pname)
        properties[pname] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if defs:
        parameters["$defs"] = defs
    document: dict[str, Any] = {"name": name, "description": doc.description, "parameters": parameters}
    response = response_schema(hints, doc.returns)
    if response is not None:
        document["response"] = response
    if marks is not None:
        if marks.group:
            document["group"] = marks.group
        if marks.metadata():
            document["metadata"] = marks.metadata()
    return document
