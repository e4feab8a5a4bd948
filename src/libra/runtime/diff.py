"""Structural views of Python objects and the diffs between them (``InvocationRecord.state_changes``).

A *view* turns a live object graph into plain JSON data: objects become ``{attribute: view}`` dicts, sets become
sorted lists, datetimes ISO strings, and an object met a second time (a back reference such as
``Directory.parent`` or a "current directory" pointer) becomes ``{"$ref": "<path of its first occurrence>"}``.
Array-like values (a tuple ``shape``: DataFrames, arrays) are viewed through their own export (``to_dict()``,
``tolist()``), and objects without ``__dict__`` through their pickling state, because their ``repr`` is
truncated or silent about what changed. Views are what a state's content hash is computed from, and what diffs
compare.

A *diff* of two views of one part is::

    {"changed": {"<path>": {"before": <old>, "after": <new>}},
     "added":   {"<path>": <new value>},
     "removed": {"<path>": <old value>}}

Paths are readable and stable: identifier keys are joined with dots, other keys are written as JSON strings in
brackets and list items as indices, relative to the part: ``root.contents["notes.txt"].content``,
``inbox[3]``, ``_current_dir``. ``state_changes`` maps each part name (class name) that changed to its diff, so
contract exports select e.g. ``$.GorillaFileSystem.added`` or
``$.TwitterAPI.changed['tweets["3"].likes'].after`` with JSONPath. Unchanged state gives ``{}``; a changed part
always carries all three sections (possibly empty) so JSONPath selections never miss a key.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import enum
import hashlib
import json
import math
import random
import re
from collections.abc import Iterable
from typing import Any

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_MAX_DEPTH = 200


def key_path(prefix: str, key: str) -> str:
    """Append a dict key to a path in the documented syntax."""
    if _IDENT.match(key):
        return f"{prefix}.{key}" if prefix else key
    return f"{prefix}[{json.dumps(key, ensure_ascii=False)}]"


def index_path(prefix: str, i: int) -> str:
    return f"{prefix}[{i}]"


_PATH_PART = re.compile(r'\[("(?:[^"\\]|\\.)*")\]|\[(\d+)\]|([^.\[\]"]+)')


def path_keys(path: str) -> list[str]:
    """The keys and indexes of a path written by :func:`key_path` / :func:`index_path`, in order, as text
    (``orders["12446"].price`` -> ``["orders", "12446", "price"]``): the inverse of the two, kept beside them so
    the syntax has one home."""
    keys: list[str] = []
    for quoted, index, plain in _PATH_PART.findall(path):
        keys.append(json.loads(quoted) if quoted else index or plain)
    return keys


def object_view(obj: Any, ignore: Iterable[str] = ()) -> dict[str, Any]:
    """View of one stateful object (its attributes), skipping ``ignore`` names and random generators.

    Random generators are skipped because the runtime reseeds them per call (see ``python.py``); counting their
    internal state would make every read call that draws a number look like a write.
    """
    return _ViewBuilder(frozenset(ignore)).attrs(obj, "")


class _ViewBuilder:
    def __init__(self, ignore: frozenset[str]) -> None:
        self.ignore = ignore
        self.seen: dict[int, str] = {}

    def attrs(self, obj: Any, path: str) -> dict[str, Any]:
        self.seen[id(obj)] = path
        out: dict[str, Any] = {}
        for name, value in vars(obj).items():
            if name in self.ignore or isinstance(value, random.Random):
                continue
            out[name] = self.view(value, key_path(path, name), 1)
        return out

    def view(self, value: Any, path: str, depth: int) -> Any:
        """The view of ``value`` at ``path``: scalars, dicts, lists and tuples here (every state value passes
        through this, most of them of those kinds), anything else in :meth:`_other`."""
        if value is None or isinstance(value, (bool, int, str)):
            if isinstance(value, enum.Enum):
                return value.value
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else repr(value)
        if depth > _MAX_DEPTH:
            return "<too deep>"
        if isinstance(value, dict):
            return {str(k): self.view(v, key_path(path, str(k)), depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.view(v, index_path(path, i), depth + 1) for i, v in enumerate(value)]
        return self._other(value, path, depth)

    def _other(self, value: Any, path: str, depth: int) -> Any:
        """View of a value that is not a scalar, a dict, a list or a tuple (what a state holds most), within the
        depth limit: sets, dates, enums, bytes, array-likes, objects, and the repr of anything else."""
        if isinstance(value, (set, frozenset)):
            items = [self.view(v, path, depth + 1) for v in value]
            return sorted(items, key=lambda x: json.dumps(x, sort_keys=True, default=str))
        if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
            return value.isoformat()
        if isinstance(value, (decimal.Decimal, _dt.timedelta)):
            return str(value)
        if isinstance(value, enum.Enum):
            return self.view(value.value, path, depth + 1)
        if isinstance(value, (bytes, bytearray)):
            return value.hex()
        if isinstance(value, random.Random):
            return "<random>"
        exported = _exported_content(value)
        if exported is not _NOTHING:
            return self.view(exported, path, depth + 1)
        if hasattr(value, "__dict__") and not callable(value):
            ref = self.seen.get(id(value))
            if ref is not None:
                return {"$ref": ref}
            self.seen[id(value)] = path
            return {
                k: self.view(v, key_path(path, k), depth + 1)
                for k, v in vars(value).items()
                if k not in self.ignore and not isinstance(v, random.Random)
            }
        state = _slot_state(value)
        if state is not _NOTHING:
            return self.view(state, path, depth + 1)
        # Anything else: a repr without memory addresses, so the content hash stays reproducible across processes.
        return _ADDRESS.sub("", repr(value))


_NOTHING = object()
_EXPORTERS = ("to_dict", "tolist", "to_list")


def _exported_content(value: Any) -> Any:
    """The full content of an array-like value (one with a ``shape``) through its own export method.

    Why: tables and arrays (pandas/polars DataFrames and Series, numpy arrays) print a *truncated* ``repr`` and
    keep their data in internal blocks, so neither the repr nor their attributes say what they hold: two frames
    that differ in row 500 would hash alike. Such containers export their content with ``to_dict()`` (tables),
    ``tolist()`` (numpy) or ``to_list()`` (polars Series); the view is the view of that export. Only values with
    a tuple ``shape`` are asked, so ordinary objects that happen to define ``to_dict`` keep their attribute view.
    Returns ``_NOTHING`` when the value is not array-like or its export fails.
    """
    if isinstance(value, type) or not isinstance(getattr(value, "shape", None), tuple):
        return _NOTHING
    for name in _EXPORTERS:
        method = getattr(value, name, None)
        if callable(method):
            try:
                return method()
            except Exception:  # noqa: BLE001 - an export that needs arguments or fails: try the next one
                continue
    return _NOTHING


def _slot_state(value: Any) -> Any:
    """The pickling state of an object without ``__dict__`` (``__slots__`` classes, ``__getstate__`` holders).

    Why: such objects are otherwise seen through their ``repr``, which often omits the fields that changed; the
    state pickle would save is exactly the content that matters. ``_NOTHING`` if there is none or it fails.
    """
    if callable(value) or hasattr(value, "__dict__") or not hasattr(type(value), "__getstate__"):
        return _NOTHING
    try:
        state = value.__getstate__()
    except Exception:  # noqa: BLE001 - objects that refuse to be pickled keep their repr
        return _NOTHING
    if state is None or state is value:
        return _NOTHING
    if isinstance(state, tuple) and len(state) == 2 and state[0] is None:
        state = state[1]  # object.__getstate__ of a __slots__ object: (None, {slot: value})
    if isinstance(state, dict) and not state:
        return _NOTHING
    return state


def content_hash(view: Any) -> str:
    """Canonical hash of a view (key order does not matter)."""
    data = json.dumps(view, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()  # a state may hold a lone surrogate


def _is_ref(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and "$ref" in v


def diff_views(before: Any, after: Any) -> dict[str, dict[str, Any]]:
    """Diff two views of one part in the documented format (always all three sections)."""
    out: dict[str, dict[str, Any]] = {"changed": {}, "added": {}, "removed": {}}
    _diff(before, after, "", out)
    return out


def _diff(before: Any, after: Any, path: str, out: dict[str, dict[str, Any]]) -> None:
    if before == after and type(before) is type(after):
        return
    if isinstance(before, dict) and isinstance(after, dict) and not _is_ref(before) and not _is_ref(after):
        for k, v in before.items():
            p = key_path(path, k)
            if k not in after:
                out["removed"][p] = v
            else:
                _diff(v, after[k], p, out)
        for k, v in after.items():
            if k not in before:
                out["added"][key_path(path, k)] = v
        return
    if isinstance(before, list) and isinstance(after, list):
        n = min(len(before), len(after))
        for i in range(n):
            _diff(before[i], after[i], index_path(path, i), out)
        for i in range(n, len(before)):
            out["removed"][index_path(path, i)] = before[i]
        for i in range(n, len(after)):
            out["added"][index_path(path, i)] = after[i]
        return
    out["changed"][path or "$"] = {"before": before, "after": after}
