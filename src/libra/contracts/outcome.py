"""Outcome classification and export extraction over normalized invocation records.

Both are pure functions of (contract, arguments, record), so a checker can re-classify stored records after a
revision instead of re-running the tool.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import jsonpath
import jsonschema

from ..runtime.base import InvocationRecord
from .model import Contract

Outcome = Literal["success", "failure", "unmatched"]


@lru_cache(maxsize=4096)
def _validator(schema_json: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_json))


def schema_accepts(schema: dict[str, Any], instance: Any) -> bool:
    """Validation with compiled validators cached by schema text (outcome schemas repeat across many records)."""
    return _validator(json.dumps(schema, sort_keys=True)).is_valid(instance)


def record_dict(record: InvocationRecord | dict[str, Any]) -> dict[str, Any]:
    return record.to_dict() if isinstance(record, InvocationRecord) else record


def classify(contract: Contract, record: InvocationRecord | dict[str, Any]) -> Outcome:
    """Which declared outcome a record shows.

    A record that fits both S+ and S- is reported as unmatched: the two schemas must be disjoint (rule 38), so an
    overlap is a contract defect that revision should repair, not a success to count.
    """
    rec = record_dict(record)
    ok = schema_accepts(contract.success, rec)
    bad = schema_accepts(contract.failure, rec)
    if ok and not bad:
        return "success"
    if bad and not ok:
        return "failure"
    return "unmatched"


@lru_cache(maxsize=8192)
def canonical_path(path: str) -> str:
    """One spelling per JSONPath (``$.a[*].b`` and ``$['a'][*]['b']`` compare equal)."""
    try:
        return str(jsonpath.compile(path))
    except jsonpath.JSONPathError:
        return path


def is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


@dataclass(frozen=True)
class Extracted:
    """One concrete exported value; ``path`` is the concrete (wildcard-free) location it came from."""

    name: str
    source: str
    path: str
    value: Any
    # The other short strings of the list element the value sits in (e.g. the account a password is for):
    # what tells one element of a list of look-alike records from the next.
    labels: tuple[str, ...] = ()

    def __iter__(self):  # allows ``name, source, path, value = item``
        return iter((self.name, self.source, self.path, self.value))


def _labels(match: Any) -> tuple[str, ...]:
    parent = getattr(match, "parent", None)
    record = getattr(parent, "obj", None)
    if not isinstance(record, dict) or not re.search(r"\[\d+\]$", str(getattr(parent, "path", ""))):
        return ()
    return tuple(sorted({v.strip().lower() for k, v in record.items() if isinstance(v, str) and v is not match.obj and 0 < len(v) <= 40}))


_NAMED_LIST = re.compile(r"^\$\.[A-Za-z_][A-Za-z0-9_]*(\[.*)$")


def extract(contract: Contract, template_args: dict[str, Any], record: InvocationRecord | dict[str, Any]) -> list[Extracted]:
    """Evaluate every export path against the call's arguments, response and state changes.

    Only scalar leaves are returned: containers are not reusable values on their own (rule 30), and a ``[*]``
    path yields one item per element with its concrete path so later bindings can say exactly where a value
    came from.
    """
    rec = record_dict(record)
    data = {"arguments": template_args, "response": rec.get("output"), "state_changes": rec.get("state_changes")}
    out: list[Extracted] = []
    for exp in contract.exports:
        root = data.get(exp.source)
        if root is None:
            continue
        if isinstance(root, str):
            # python-jsonpath would parse a string root as JSON text; a string output is a single scalar leaf.
            if exp.path.strip() == "$":
                out.append(Extracted(exp.name, exp.source, "$", root))
            continue
        path = exp.path
        if isinstance(root, list):
            # Docs often name a return value ("user_tweets (List[Dict]): ...") that the tool returns bare: a path
            # into that name then reads the list itself.
            named = _NAMED_LIST.match(path)
            if named:
                path = "$" + named.group(1)
        try:
            matches = list(jsonpath.finditer(path, root))
        except jsonpath.JSONPathError:
            continue
        for m in matches:
            if is_scalar(m.obj):
                out.append(Extracted(exp.name, exp.source, m.path, m.obj, _labels(m)))
    return out
