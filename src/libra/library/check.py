"""Checks a library document before any of it is used, and names the first bad field when it is not one.

A library file can be edited by hand, cut short by a full disk or written by another libra. Reading it field by
field would end in a ``KeyError`` or ``TypeError`` deep inside retrieval; instead the whole document is checked
up front against the JSON Schema of the format (``library.schema.json``, shipped beside this module), then for
what a schema cannot say (relations naming tools of the catalog, candidate indices in range), and refused with
one line such as ``lib.json: relations[3].provider: required property missing``.

The candidate columns can hold millions of entries (AppWorld: 2.1 M per column). The schema describes them like
everything else, but a per-item pass of a schema validator over them would cost seconds on every load, so they
are checked here in bulk (one pass in C per column) and the validator sees them empty.

Even so, checking a large library costs a good share of a second (thousands of evidence records and contract
templates), and the same cached library is loaded again by every ``eval`` and ``retrieve``. A file whose exact
bytes passed once is therefore not checked again: :func:`check_library_file` leaves an empty marker named by the
hash of those bytes and of the checker itself (both schemas and this module) in the cache directory. Any edit to
the file, or any change to the checker, changes the name, so the check runs again.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from array import array
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from libra.errors import LibraryFormatError

if TYPE_CHECKING:  # jsonschema loads on the first check: reading a library's search index never needs it
    import jsonschema
    from jsonschema.exceptions import ValidationError
    from referencing import Registry
from libra.schema import dereference

FORMAT = "libra-library"
FORMAT_VERSION = 2  # 2: candidates stored as columns (version 1's row lists are still read)
READABLE_VERSIONS = (1, 2)
SCHEMA_FILE = "library.schema.json"
CONTRACT_SCHEMA_FILE = "contract.schema.json"

#: The per-candidate columns of format version 2, checked in bulk rather than by the schema validator.
INDEX_COLUMNS = ("provider", "field", "consumer", "input")
BULK_COLUMNS = (*INDEX_COLUMNS, "similarity")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JSON_TYPES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


@lru_cache(maxsize=1)
def library_schema() -> dict[str, Any]:
    """The JSON Schema of the library file format (package data, so tools outside libra can use it too)."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def contract_schema() -> dict[str, Any]:
    """The JSON Schema of the contract document itself (package data beside the library schema, which refers to
    it: a library holds one contract per tool)."""
    return json.loads(resources.files(__package__).joinpath(CONTRACT_SCHEMA_FILE).read_text(encoding="utf-8"))


def schema_registry() -> Registry:
    """The library schema's one outside reference: the contract schema, by its ``$id``."""
    from referencing import Registry, Resource

    contract = contract_schema()
    return Registry().with_resource(contract["$id"], Resource.from_contents(contract))


@lru_cache(maxsize=1)
def library_validator() -> jsonschema.Draft202012Validator:
    """One validator per process, over the schema with every reference inlined (the contract schema included).

    Same verdicts as the shipped schema, which a test checks. Inlined, each of the thousands of evidence records
    and contract templates in a large library skips a reference lookup, a large part of its cost.
    """
    schema = copy.deepcopy(library_schema())
    contract_ref = schema["properties"]["contracts"]["additionalProperties"]
    assert contract_ref["$ref"] == contract_schema()["$id"], (
        "the library schema refers to the contract schema by its $id"
    )
    schema["properties"]["contracts"]["additionalProperties"] = dereference(contract_schema())
    import jsonschema

    return jsonschema.Draft202012Validator(dereference(schema))


# ---------------------------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------------------------


def field_path(path: Iterable[str | int]) -> str:
    """``relations[3].provider``, ``contracts["amazon.login"].templates[0]``: where a value sits, readably."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out or "<top level>"


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _short(value: Any, width: int = 60) -> str:
    """A value as a short JSON snippet: a message must stay one line whatever the file holds."""
    text = " ".join(json.dumps(value, ensure_ascii=False, default=repr).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _found(value: Any) -> str:
    kind = _json_type(value)
    return kind if isinstance(value, (dict, list)) else f"{kind} {_short(value)}"


def _describe(err: ValidationError) -> tuple[list[str | int], str]:
    """The field a schema error is about and what is wrong with it, in words a user can act on."""
    path: list[str | int] = list(err.absolute_path)
    kind, value, instance = err.validator, err.validator_value, err.instance
    if kind == "required" and isinstance(instance, dict):
        missing = next((p for p in value if p not in instance), None)
        return path + ([missing] if missing is not None else []), "required property missing"
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = err.schema.get("properties", {})
        extra = next((k for k in instance if k not in known), None)
        return path + ([extra] if extra is not None else []), "unknown property (not part of the library format)"
    if kind == "type":
        expected = " or ".join(value) if isinstance(value, list) else str(value)
        return path, f"expected {expected}, found {_found(instance)}"
    if kind in ("enum", "const"):
        allowed = value if kind == "enum" else [value]
        return path, f"{_short(instance)} is not one of {', '.join(_short(a) for a in allowed)}"
    if kind == "items" and value is False:
        return path, f"too many entries ({len(instance)})"
    if kind in ("minItems", "maxItems"):
        return (
            path,
            f"expected {'at least' if kind == 'minItems' else 'at most'} {value} entries, found {len(instance)}",
        )
    if kind == "minLength":
        return path, "must not be empty" if value == 1 else f"expected at least {value} characters"
    if kind == "minimum":
        return path, f"expected a number from {value}, found {_short(instance)}"
    if kind == "pattern":
        return path, f"{_short(instance)} does not match {_short(value)}"
    if kind in ("oneOf", "anyOf"):
        return path, f"{_short(instance)} matches none of the forms the format allows here"
    return path, _short(err.message, 160).strip('"')


def schema_problem(err: ValidationError) -> str:
    """``relations[3].provider: required property missing``."""
    path, problem = _describe(err)
    return f"{field_path(path)}: {problem}"


# ---------------------------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------------------------


def _check_header(d: Any, source: str) -> None:
    """Format and version first: a document of another kind or version would fail the schema in confusing ways."""
    build = "build one with `libra build BENCHMARK --out PATH`"
    if not isinstance(d, dict):
        raise LibraryFormatError(
            f"{source}: not a libra library file (the file holds a JSON {_json_type(d)}, not an object): {build}"
        )
    if d.get("format") != FORMAT:
        found = f"is {_short(d['format'])}" if "format" in d else "is missing"
        raise LibraryFormatError(
            f"{source}: format: not a libra library file (its format {found}, not {json.dumps(FORMAT)}): {build}"
        )
    version = d.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > max(READABLE_VERSIONS):
        raise LibraryFormatError(
            f"{source}: format_version: the library was written by a newer libra (library format version "
            f"{version}; this libra reads up to {max(READABLE_VERSIONS)}): upgrade libra with "
            "`pip install --upgrade libra-tools`"
        )
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise LibraryFormatError(
            f"{source}: format_version: library format version {_short(version)} is not one this libra reads "
            f"({', '.join(map(str, READABLE_VERSIONS))}): rebuild it with `libra build`"
        )


def _schema_view(d: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The document with its bulk candidate data set aside (replaced by empty lists), and that data."""
    cands = d.get("candidates")
    if isinstance(cands, dict):
        bulk = {k: cands[k] for k in BULK_COLUMNS if isinstance(cands.get(k), list)}
        return {**d, "candidates": {**cands, **{k: [] for k in bulk}}}, bulk
    if isinstance(cands, list) and d.get("format_version") == 1:
        return {**d, "candidates": []}, {"rows": cands}
    return d, {}


def _first(values: Sequence[Any], ok: Any) -> int:
    """Index of the first value ``ok`` refuses (only called once a bulk check has found one)."""
    return next(i for i, v in enumerate(values) if not ok(v))


def _is_index(v: Any) -> bool:
    return type(v) is int and 0 <= v < 1 << 64


def _is_similarity(v: Any) -> bool:
    return v is None or type(v) in (int, float)


def _check_columns(bulk: dict[str, list[Any]], d: dict[str, Any], source: str) -> None:
    """Types, equal lengths and index ranges of the candidate columns, one pass per column."""
    import numpy as np  # here, not at the top: a server deciding how to open a library imports this module

    cands = d["candidates"]
    largest: dict[str, int] = {}
    for name in INDEX_COLUMNS:
        col = bulk[name]
        try:  # one pass in C: an unsigned array refuses anything but a non-negative integer (true/false read as 1/0)
            largest[name] = int(np.frombuffer(array("Q", col), dtype=np.uint64).max()) if col else -1
        except (TypeError, OverflowError):
            i = _first(col, _is_index)
            raise LibraryFormatError(
                f"{source}: candidates.{name}[{i}]: expected an index (an integer from 0), found {_found(col[i])}"
            ) from None
    sims = bulk["similarity"]
    try:
        array("d", sims)  # the common case, all numbers, in one pass in C
    except (TypeError, OverflowError):  # nulls (allowed), integers beyond a float's range (allowed) or something else
        if not set(map(type, sims)) <= {float, int, type(None)}:
            i = _first(sims, _is_similarity)
            raise LibraryFormatError(
                f"{source}: candidates.similarity[{i}]: expected number or null, found {_found(sims[i])}"
            ) from None
    lengths = {name: len(bulk[name]) for name in BULK_COLUMNS}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k} {n}" for k, n in lengths.items())
        raise LibraryFormatError(
            f"{source}: candidates: the per-candidate columns differ in length ({detail}): rebuild it with "
            "`libra build`"
        )
    n_tools = len(d["catalog"]["tools"])
    bounds = {
        "provider": (n_tools, "catalog.tools"),
        "consumer": (n_tools, "catalog.tools"),
        "field": (len(cands["fields"]), "candidates.fields"),
        "input": (len(cands["inputs"]), "candidates.inputs"),
    }
    for name, (size, target) in bounds.items():
        col = bulk[name]
        if largest[name] >= size:
            i = _first(col, lambda v, size=size: v < size)
            raise LibraryFormatError(
                f"{source}: candidates.{name}[{i}]: index {col[i]} is beyond {target} ({size} entries)"
            )


def _check_rows(rows: list[Any], d: dict[str, Any], source: str) -> None:
    """Format version 1's candidate rows: [provider index, field, consumer index, input, similarity]."""
    n_tools = len(d["catalog"]["tools"])

    def ok(row: Any) -> bool:
        return (
            type(row) is list
            and len(row) == 5
            and _is_index(row[0])
            and row[0] < n_tools
            and type(row[1]) is str
            and _is_index(row[2])
            and row[2] < n_tools
            and type(row[3]) is str
            and _is_similarity(row[4])
        )

    if not all(map(ok, rows)):
        i = _first(rows, ok)
        raise LibraryFormatError(
            f"{source}: candidates[{i}]: expected [provider index, provider field, consumer index, consumer "
            "input, similarity] "
            f"with indices below {n_tools} (the catalog's tools), found {_short(rows[i])}"
        )


def _check_references(d: dict[str, Any], source: str) -> None:
    """What the schema cannot say: every tool a relation, a contract or a fingerprint names is a tool of the
    library's catalog."""
    names = {t["name"] for t in d["catalog"]["tools"]}
    for i, r in enumerate(d["relations"]):
        for end in ("provider", "consumer"):
            if r[end] not in names:
                raise LibraryFormatError(
                    f"{source}: relations[{i}].{end}: tool {_short(r[end])} is not in the library's catalog"
                )
    for key, contract in d["contracts"].items():
        if key not in names:
            raise LibraryFormatError(
                f"{source}: {field_path(['contracts', key])}: tool {_short(key)} is not in the library's catalog"
            )
        if contract["tool"] != key:
            raise LibraryFormatError(
                f"{source}: {field_path(['contracts', key, 'tool'])}: names {_short(contract['tool'])}, not "
                "the tool it is filed under"
            )
    for key in (d.get("fingerprints") or {}).get("tools", {}):
        if key not in names:
            raise LibraryFormatError(
                f"{source}: {field_path(['fingerprints', 'tools', key])}: tool {_short(key)} is not in the "
                "library's catalog"
            )


@lru_cache(maxsize=1)
def _checker_identity() -> bytes:
    """A hash of everything that decides a verdict: both schemas and this module's code."""
    here = resources.files(__package__)
    parts = [
        here.joinpath(SCHEMA_FILE).read_bytes(),
        here.joinpath(CONTRACT_SCHEMA_FILE).read_bytes(),
        Path(__file__).read_bytes(),
    ]
    return hashlib.sha256(b"\0".join(parts)).digest()


def _marker(raw: bytes) -> Path:
    from libra.embeddings.embedders import cache_dir

    return cache_dir() / "checked-libraries" / hashlib.sha256(_checker_identity() + raw).hexdigest()


def check_library_file(raw: bytes, d: Any, source: str) -> None:
    """:func:`check_library` for document ``d`` parsed from a file's bytes ``raw``, skipped when these exact bytes
    passed before (see the module docstring). A cache directory that cannot be written only costs the skip."""
    marker = _marker(raw)
    try:
        if marker.exists():
            return
    except OSError:  # a cache directory that cannot be searched: check as if the file were new
        pass
    check_library(d, source)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass


def check_library(d: Any, source: str = "library") -> None:
    """Raise :class:`LibraryFormatError` naming the first bad field of library document ``d``; return if it is sound.

    Order: format and version, then the schema (the most relevant error, by jsonschema's ``best_match``), then
    the bulk candidate data, then the cross-references between parts.
    """
    _check_header(d, source)
    view, bulk = _schema_view(d)
    from jsonschema.exceptions import best_match

    error = best_match(library_validator().iter_errors(view))
    if error is not None:
        raise LibraryFormatError(f"{source}: {schema_problem(error)}")
    if "rows" in bulk:
        _check_rows(bulk["rows"], d, source)
    elif bulk:
        _check_columns(bulk, d, source)
    _check_references(d, source)


__all__ = [
    "BULK_COLUMNS",
    "FORMAT",
    "FORMAT_VERSION",
    "READABLE_VERSIONS",
    "check_library",
    "check_library_file",
    "field_path",
    "library_schema",
    "library_validator",
    "schema_problem",
]
