"""Snapshots of one stateful object (an instance, a module's globals) as content-addressed sub-parts.

Why: a tool set backed by a few megabytes of records must not pay for the whole database on every call. The
object's state is split into :class:`~libra.runtime.base.StatePart` s, one per attribute, and big dict/list
attributes into chunks of :data:`CHUNK` consecutive entries, each with its own content key. A call then costs in
proportion to what it touched:

- *copying*: the runtime keeps one live object per owner and, before a call, replaces only the sub-parts whose
  key differs from what the live object holds (a read from the state just produced costs no unpickling at all);
- *fingerprinting*: after the call every sub-part is re-pickled (C speed) and compared byte-for-byte with the
  state's; only sub-parts whose bytes changed get a structural view and a content hash;
- *shipping*: the worker pool ships parts by key, so unchanged sub-parts are shared by every state;
- *diffing*: ``state_changes`` is computed from the changed sub-parts' views only.

Pickling sub-parts separately would break objects shared between them (``self.cwd`` pointing into
``self.root``, two attributes naming one list). So when anything changed, the pickler memos of all sub-parts are
compared: attributes that share a mutable object are snapshotted together as one sub-part (a big attribute
involved loses its chunking), and an object reachable from its own attributes, or whose class controls its own
pickling (``__getstate__``, ``__reduce__``, ``__slots__``), is kept as one whole part. Sub-part names are
``Owner:attr``, ``Owner:a,b`` (a group) and ``Owner:attr#3`` (a chunk); a whole part is named ``Owner``.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import enum
import io
import pickle
import random
import types
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Callable, Iterable

from .base import StatePart
from .diff import _diff, _ViewBuilder, content_hash, index_path, key_path, object_view

#: entries per chunk of a big dict or list attribute (an attribute is chunked above two chunks' worth)
CHUNK = 256
_PICKLE = pickle.HIGHEST_PROTOCOL
#: values whose sharing between sub-parts is harmless: immutable, or pickled by reference
_SHAREABLE = (
    str, bytes, int, float, complex, bool, type(None), tuple, frozenset, range, type,
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
    enum.Enum, _dt.date, _dt.time, _dt.timedelta, _dt.tzinfo, decimal.Decimal,
)


class Unsnapshotable(Exception):
    """An instance attribute could not be pickled (modules skip such globals instead)."""


@dataclass
class Live:
    """The one live object of an owner and the sub-parts (name -> key) it currently holds."""

    obj: Any
    keys: dict[str, str] = field(default_factory=dict)


def _dumps(value: Any) -> tuple[bytes, Any]:
    """Pickle ``value``; also return the pickler, whose memo lists every object the pickle contains."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, _PICKLE)
    pickler.dump(value)
    return buf.getvalue(), pickler


def splittable(obj: Any) -> bool:
    """Whether an instance's state is exactly its ``__dict__`` (what default pickling saves), so it can be split."""
    cls = type(obj)
    if not hasattr(obj, "__dict__") or isinstance(obj, type):
        return False
    if cls.__reduce_ex__ is not object.__reduce_ex__ or cls.__reduce__ is not object.__reduce__:
        return False
    if getattr(cls, "__getstate__", object.__getstate__) is not object.__getstate__ or hasattr(cls, "__setstate__"):
        return False
    if any("__slots__" in vars(k) for k in cls.__mro__[:-1]):
        return False
    return all(isinstance(k, str) and k.isidentifier() for k in vars(obj))


def _chunkable(value: Any) -> bool:
    return type(value) in (dict, list) and len(value) > 2 * CHUNK


def _chunk(value: Any, i: int) -> Any:
    lo, hi = i * CHUNK, (i + 1) * CHUNK
    if type(value) is list:
        return value[lo:hi]
    return dict(islice(value.items(), lo, hi))


def _n_chunks(value: Any) -> int:
    return (len(value) + CHUNK - 1) // CHUNK


@dataclass
class _Unit:
    label: str
    attrs: list[str]
    data: bytes
    ids: set[int]
    objs: dict[int, Any]
    value: Any = None


def parse_label(name: str) -> tuple[str, str | None]:
    """``Owner:label`` -> (owner, label); a whole part's name is just ``Owner`` (label None)."""
    owner, sep, label = name.partition(":")
    return owner, (label if sep else None)


class Snapshotter:
    """Splits, snapshots, views and restores the state of one owner (see the module docstring)."""

    def __init__(
        self,
        owner: str,
        attrs: Callable[[Any], dict[str, Any]],
        new_empty: Callable[[], Any],
        ignore: frozenset[str],
        remember: Callable[[str, Any], None],
        recall: Callable[[str], Any],
        skip_unpicklable: bool = False,
        whole_only: bool = False,
        always_split: bool = False,
    ) -> None:
        self.owner = owner
        self.attrs = attrs
        self.new_empty = new_empty
        self.ignore = ignore
        self.remember = remember
        self.recall = recall
        self.skip_unpicklable = skip_unpicklable
        self.whole_only = whole_only
        self.always_split = always_split
        self.unpicklable: set[str] = set()

    # -- snapshot -----------------------------------------------------------------------------------------
    def snapshot(self, obj: Any, previous: tuple[StatePart, ...] | None) -> tuple[tuple[StatePart, ...], list[StatePart], list[StatePart]]:
        """The owner's parts after a call, reusing ``previous`` parts whose content did not change.

        Returns (parts, old parts replaced, new parts): both lists empty when nothing changed.
        """
        if previous is not None and self._unchanged(obj, previous):
            return previous, [], []
        units = self._units(obj) if self._split(obj) else None
        if units is None:
            parts = (self._whole_part(obj, previous),)
        else:
            old = {p.name: p for p in previous or ()}
            parts = tuple(self._part(u, obj, old.get(f"{self.owner}:{u.label}")) for u in units)
        old_keys = {p.key for p in previous or ()}
        new_keys = {p.key for p in parts}
        removed = [p for p in previous or () if p.key not in new_keys]
        added = [p for p in parts if p.key not in old_keys]
        if previous is not None and not removed and not added and [p.name for p in parts] == [p.name for p in previous]:
            return previous, [], []
        return parts, removed, added

    def _unchanged(self, obj: Any, previous: tuple[StatePart, ...]) -> bool:
        """Fast path: re-pickle ``obj`` in the layout of ``previous`` and compare bytes (no views, no memos)."""
        try:
            if len(previous) == 1 and parse_label(previous[0].name)[1] is None:
                return pickle.dumps(obj, _PICKLE) == previous[0].data
            if not self._split(obj):
                return False
            attrs = self._state_attrs(obj)
            chunks: dict[str, int] = {}
            covered: list[str] = []
            for p in previous:
                label = parse_label(p.name)[1]
                assert label is not None
                if "#" in label:
                    attr = label.split("#", 1)[0]
                    chunks[attr] = chunks.get(attr, 0) + 1
                    if chunks[attr] == 1:
                        covered.append(attr)
                else:
                    covered.extend(label.split(","))
            if set(covered) != set(attrs) or len(covered) != len(attrs):
                return False
            for attr, n in chunks.items():
                value = attrs[attr]
                if not _chunkable(value) or _n_chunks(value) != n:
                    return False
            for p in previous:
                label = parse_label(p.name)[1]
                assert label is not None
                if "#" in label:
                    attr, i = label.split("#", 1)
                    data = pickle.dumps(_chunk(attrs[attr], int(i)), _PICKLE)
                else:
                    data = pickle.dumps({a: attrs[a] for a in label.split(",")}, _PICKLE)
                if data != p.data:
                    return False
            return True
        except Exception:  # noqa: BLE001 - anything odd: take the slow, careful path
            return False

    def _split(self, obj: Any) -> bool:
        return not self.whole_only and (self.always_split or splittable(obj))

    def _state_attrs(self, obj: Any) -> dict[str, Any]:
        attrs = self.attrs(obj)
        if self.unpicklable:
            attrs = {k: v for k, v in attrs.items() if k not in self.unpicklable}
        return attrs

    def _units(self, obj: Any) -> list[_Unit] | None:
        """Sub-parts of ``obj``: attributes and chunks, merged where they share mutable objects (None: keep whole)."""
        attrs = self._state_attrs(obj)
        unchunked: set[str] = set()
        while True:
            units: list[_Unit] = []
            for attr, value in list(attrs.items()):
                if _chunkable(value) and attr not in unchunked:
                    for i in range(_n_chunks(value)):
                        piece = _chunk(value, i)
                        data, pickler = _dumps(piece)
                        memo = pickler.memo.copy()
                        ids = set(memo)
                        if i == 0:
                            ids.add(id(value))
                            memo[id(value)] = (0, value)
                        units.append(_Unit(f"{attr}#{i}", [attr], data, ids, memo, piece))
                    continue
                try:
                    wrapped = {attr: value}
                    data, pickler = _dumps(wrapped)
                except Exception as exc:  # noqa: BLE001 - user objects may refuse to pickle
                    if not self.skip_unpicklable:
                        raise Unsnapshotable(f"attribute {attr!r} cannot be pickled ({type(exc).__name__}: {exc})") from exc
                    self.unpicklable.add(attr)
                    del attrs[attr]
                    continue
                memo = pickler.memo.copy()
                units.append(_Unit(attr, [attr], data, set(memo), memo, wrapped))
            if any(id(obj) in u.ids for u in units):
                return None  # the object is reachable from its own attributes: only a whole pickle keeps that
            groups = _shared_groups(units)
            chunked_in_group = {
                units[i].attrs[0] for g in groups if len(g) > 1 for i in g if "#" in units[i].label
            } - unchunked
            if chunked_in_group:
                unchunked |= chunked_in_group
                continue
            break
        merged: list[_Unit] = []
        placed: set[int] = set()
        for group in groups:
            placed.update(group)
        index_of = {i: g for g in groups for i in g}
        done: set[int] = set()
        for i, u in enumerate(units):
            if i in done:
                continue
            group = index_of.get(i)
            if group is None or len(group) == 1:
                merged.append(u)
                done.add(i)
                continue
            members = sorted(group)
            done.update(members)
            names = [units[j].attrs[0] for j in members]
            wrapped = {a: attrs[a] for a in names}
            merged.append(_Unit(",".join(names), names, pickle.dumps(wrapped, _PICKLE), set(), {}, wrapped))
        return merged

    def _part(self, unit: _Unit, obj: Any, old: StatePart | None) -> StatePart:
        if old is not None and old.data == unit.data:
            return old
        name = f"{self.owner}:{unit.label}"
        view = self.unit_view(name, unit.value)
        key = f"{name}:{content_hash(view)}"
        if old is not None and old.key == key:
            return old
        self.remember(key, view)
        return StatePart(name, key, unit.data)

    def _whole_part(self, obj: Any, previous: tuple[StatePart, ...] | None) -> StatePart:
        try:
            data = pickle.dumps(obj, _PICKLE)
        except Exception as exc:  # noqa: BLE001
            raise Unsnapshotable(f"{type(exc).__name__}: {exc}") from exc
        old = previous[0] if previous is not None and len(previous) == 1 and previous[0].name == self.owner else None
        if old is not None and old.data == data:
            return old
        view = _whole_view(obj, self.ignore)
        key = f"{self.owner}:{content_hash(view)}"
        if old is not None and old.key == key:
            return old
        self.remember(key, view)
        return StatePart(self.owner, key, data)

    # -- views --------------------------------------------------------------------------------------------
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
        return {a: builder.view(v, key_path("", a), 1) for a, v in value.items() if a not in self.ignore and not isinstance(v, random.Random)}

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

    # -- restore ------------------------------------------------------------------------------------------
    def restore(self, live: Live | None, parts: tuple[StatePart, ...], tracked: Callable[[Any], Iterable[str]] | None = None) -> Live:
        """A live object holding ``parts``, made by patching ``live`` where it differs (or built anew)."""
        if len(parts) == 1 and parse_label(parts[0].name)[1] is None:
            p = parts[0]
            if live is not None and live.keys == {p.name: p.key}:
                return live
            return Live(pickle.loads(p.data), {p.name: p.key})
        wanted = {p.name: p.key for p in parts}
        if live is not None and live.keys == wanted:
            return live
        if live is None or any(parse_label(n)[1] is None for n in live.keys):
            live = Live(self.new_empty(), {})
        obj = live.obj
        target_attrs: list[str] = []
        chunked: dict[str, list[StatePart]] = {}
        for p in parts:
            label = parse_label(p.name)[1]
            assert label is not None
            if "#" in label:
                attr = label.split("#", 1)[0]
                if attr not in chunked:
                    target_attrs.append(attr)
                chunked.setdefault(attr, []).append(p)
            else:
                target_attrs.extend(label.split(","))
        held = set(tracked(obj)) if tracked is not None else set(vars(obj))
        for name in held - set(target_attrs):
            try:
                delattr(obj, name)
            except AttributeError:
                pass
        for p in parts:
            label = parse_label(p.name)[1]
            if "#" in label or live.keys.get(p.name) == p.key:  # type: ignore[operator]
                continue
            for attr, value in pickle.loads(p.data).items():
                setattr(obj, attr, value)
        for attr, chunk_parts in chunked.items():
            if all(live.keys.get(p.name) == p.key for p in chunk_parts) and sum(1 for n in live.keys if n.startswith(f"{self.owner}:{attr}#")) == len(chunk_parts):
                continue
            current = getattr(obj, attr, None)
            pieces = []
            for p in chunk_parts:
                i = int(parse_label(p.name)[1].split("#", 1)[1])  # type: ignore[union-attr]
                if live.keys.get(p.name) == p.key and current is not None:
                    pieces.append(_chunk(current, i))
                else:
                    pieces.append(pickle.loads(p.data))
            if isinstance(pieces[0], list):
                setattr(obj, attr, [x for piece in pieces for x in piece])
            else:
                merged: dict[Any, Any] = {}
                for piece in pieces:
                    merged.update(piece)
                setattr(obj, attr, merged)
        live.keys = wanted
        return live


def _whole_view(obj: Any, ignore: frozenset[str]) -> Any:
    """View of a whole part: an object's attributes, or any other value (a declared holder's state) as is."""
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return object_view(obj, ignore)
    return _ViewBuilder(ignore).view(obj, "", 1)


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


def _shared_groups(units: list[_Unit]) -> list[list[int]]:
    """Indices of units that share a mutable object, as connected groups (singletons included)."""
    parent = list(range(len(units)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    seen: set[int] = set()
    for k, u in enumerate(units):
        for obj_id in seen & u.ids:
            if isinstance(u.objs[obj_id][1], _SHAREABLE):
                continue
            first = next(i for i in range(k) if obj_id in units[i].ids)
            parent[find(k)] = find(first)
        seen |= u.ids
    groups: dict[int, list[int]] = {}
    for i in range(len(units)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())
