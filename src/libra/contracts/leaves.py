"""Generic paths of the scalar leaves of an observed value: the structure a contract's exports and a revision
read from what a tool returned, never its values.

Why a module of its own: the offline reviser asks which leaves of an output no export reaches, and reading inside
text (:mod:`.text_values`) reads a JSON document printed as text the same way; both sit below the contract model,
so this reading must depend on nothing of it.
"""

from __future__ import annotations

import re
from typing import Any

from libra.runtime.base import json_type

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def child_path(parent: str, key: str) -> str:
    return f"{parent}.{key}" if IDENT.match(key) else f"{parent}[{key!r}]".replace('"', "'")


def is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


# Diagnostic fields explain a failure; they carry no reusable value (rule 24), so revision never exports them.
DIAGNOSTIC_FIELDS = {"error", "errors", "traceback", "exception"}


#: A word of at least two letters numbered by a short trailing suffix (``address1``), see :func:`is_field_name`.
_NUMBERED_FIELD = re.compile(r"[A-Za-z_]*[A-Za-z]{2}\d{1,3}")


def is_field_name(key: str) -> bool:
    """Whether a mapping key looks like a schema field rather than data used as a key (ids, names, dates).

    Data keys must never be written into paths (rule 32), so anything with spaces, no lower-case letter, or digits
    other than a short suffix of a word is treated as data and replaced by a wildcard. A short numeric suffix
    (``address1``, ``line2``, ``sha256``) numbers a field the way developers do; ids and dates used as keys
    (``C100001``, ``2024-01-01``, ``user_42``) carry their digits as the value itself.
    """
    if not (IDENT.match(key) and any(c.islower() for c in key)):
        return False
    return _NUMBERED_FIELD.fullmatch(key) is not None or not any(c.isdigit() for c in key)


def observed_leaves(
    value: Any, path: str = "$", label: list[str] | None = None, depth: int = 0
) -> dict[str, tuple[list[str], str]]:
    """Generic paths of the scalar leaves of an observed value: {path: (field labels, json type)}.

    Lists and data-keyed mappings become ``[*]`` so the path describes structure, never a concrete value.
    """
    label = label or []
    out: dict[str, tuple[list[str], str]] = {}
    if depth > 8:
        return out
    if isinstance(value, dict) and len(value) == 1 and "$ref" in value:
        return out  # a back reference to another part of the same structure, not a value
    if isinstance(value, dict):
        fieldlike = all(is_field_name(str(k)) for k in value)
        for k, v in value.items():
            if fieldlike:
                out.update(observed_leaves(v, child_path(path, str(k)), label + [str(k)], depth + 1))
            else:
                out.update(observed_leaves(v, f"{path}[*]", label, depth + 1))
    elif isinstance(value, list):
        for v in value:
            out.update(observed_leaves(v, f"{path}[*]", label, depth + 1))
    elif is_scalar(value) and not (label and label[-1] in DIAGNOSTIC_FIELDS):
        out.setdefault(path, (label, json_type(value)))
    return out
