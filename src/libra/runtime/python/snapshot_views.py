"""Views and diffs of an owner's parts, assembled from the views of its sub-parts.

Why a module of its own: what a state looks like (its view, hashed into part keys) and what a call changed
(``state_changes``) are computed from sub-parts alone, chunk by chunk, without the live object; that is a job
apart from taking snapshots and restoring them (:mod:`libra.runtime.python.snapshot`).
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable, Iterable
from typing import Any

from libra.runtime.base import StatePart
from libra.runtime.diff import _diff, _ViewBuilder, index_path, key_path, object_view
from libra.runtime.python.snapshot_common import CHUNK, parse_label


class PartViews:
    """The view side of :class:`~libra.runtime.python.snapshot.Snapshotter`: views of sub-parts, of a whole owner
    assembled from them, and ``state_changes`` from the replaced and the new parts."""

    ignore: frozenset[str]
    remember: Callable[[str, Any], None]
    recall: Callable[[str], Any]

    def unit_view(self, name: str, value: Any) -> Any:
        """View of one sub-part's unpickled data, with paths relative to the owner (as a whole view has them)."""
        label = parse_label(name)[1]
        builder = _ViewBuilder(self.ignore)
        if label is None:
            return _whole_view(value, self.ignore)
        if "#" in label:
            attr, i = label.split("#", 1)
            if isinstance(value, list):
                offset = int(i) * CHUNK
                return [builder.view(v, index_path(attr, offset + j), 2) for j, v in enumerate(value)]
            return {str(k): builder.view(v, key_path(attr, str(k)), 2) for k, v in value.items()}
        return {
            a: builder.view(v, key_path("", a), 1)
            for a, v in value.items()
            if a not in self.ignore and not isinstance(v, random.Random)
        }

    def part_view(self, part: StatePart) -> Any:
        view = self.recall(part.key)
        if view is None:
            view = self.unit_view(part.name, pickle.loads(part.data))
            self.remember(part.key, view)
        return view

    def view(self, parts: Iterable[StatePart]) -> dict[str, Any]:
        """The owner's whole view assembled from its parts (identical to a view of the whole object)."""
        out: dict[str, Any] = {}
        for part in parts:
            label = parse_label(part.name)[1]
            v = self.part_view(part)
            if label is None:
                return v
            if "#" in label:
                attr = label.split("#", 1)[0]
                if isinstance(v, list):
                    out.setdefault(attr, []).extend(v)
                else:
                    out.setdefault(attr, {}).update(v)
            else:
                out.update(v)
        return out

    def diff(self, removed: list[StatePart], added: list[StatePart]) -> dict[str, dict[str, Any]]:
        """``state_changes`` of the owner from the replaced and the new parts only."""
        before = self._partial(removed)
        after = self._partial(added)
        out: dict[str, dict[str, Any]] = {"changed": {}, "added": {}, "removed": {}}
        for attr in list(before) + [a for a in after if a not in before]:
            b, a = before.get(attr, _MISSING), after.get(attr, _MISSING)
            path = key_path("", attr)
            if a is _MISSING:
                out["removed"][path] = _plain(b)
            elif b is _MISSING:
                out["added"][path] = _plain(a)
            elif isinstance(b, _Slice) or isinstance(a, _Slice):
                b_items, a_items = _indexed(b), _indexed(a)
                for i, v in b_items.items():
                    if i in a_items:
                        _diff(v, a_items[i], index_path(path, i), out)
                    else:
                        out["removed"][index_path(path, i)] = v
                for i, v in a_items.items():
                    if i not in b_items:
                        out["added"][index_path(path, i)] = v
            else:
                _diff(b, a, path, out)
        return out

    def _partial(self, parts: list[StatePart]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for part in parts:
            label = parse_label(part.name)[1]
            v = self.part_view(part)
            if label is None:
                out.update(v)
                continue
            if "#" in label:
                attr, i = label.split("#", 1)
                if isinstance(v, list):
                    offset = int(i) * CHUNK
                    out.setdefault(attr, _Slice()).items.update({offset + j: x for j, x in enumerate(v)})
                else:
                    out.setdefault(attr, {}).update(v)
            else:
                out.update(v)
        return out


def _whole_view(obj: Any, ignore: frozenset[str]) -> Any:
    """View of a whole part: an object's attributes, or any other value (a declared holder's state) as is."""
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return object_view(obj, ignore)
    return _ViewBuilder(ignore).view(obj, "", 1)


def _patched_view(name: str, value: Any, prior: Any, written: set[Any], ignore: frozenset[str]) -> Any:
    """The view of a watched chunk whose entries ``written`` changed: the prior view with those entries viewed
    again (None when the prior view does not line up with the chunk).

    Why: viewing a chunk of records costs milliseconds, and a write usually changes one of them. An entry of a
    watched chunk holds only dicts, lists and immutable values, so its view depends on nothing else (no
    back references), and an entry nobody wrote inside (and that did not move) has the view it had.
    """
    label = parse_label(name)[1]
    attr, i = label.split("#", 1)  # type: ignore[union-attr]
    builder = _ViewBuilder(ignore)
    if isinstance(value, list):
        if not isinstance(prior, list) or len(prior) != len(value):
            return None
        offset = int(i) * CHUNK
        return [
            builder.view(v, index_path(attr, offset + j), 2) if offset + j in written else prior[j]
            for j, v in enumerate(value)
        ]
    if not isinstance(prior, dict):
        return None
    out: dict[str, Any] = {}
    for k, v in value.items():
        sk = str(k)
        out[sk] = builder.view(v, key_path(attr, sk), 2) if k in written or sk not in prior else prior[sk]
    return out if len(out) == len(value) else None


class _Slice:
    """Items of a list attribute known by index (some chunks of it), for diffing chunk by chunk."""

    def __init__(self) -> None:
        self.items: dict[int, Any] = {}


_MISSING = object()


def _indexed(value: Any) -> dict[int, Any]:
    if isinstance(value, _Slice):
        return value.items
    if isinstance(value, list):
        return dict(enumerate(value))
    return {}


def _plain(value: Any) -> Any:
    return [value.items[i] for i in sorted(value.items)] if isinstance(value, _Slice) else value
