"""Snapshots of one stateful object (an instance, a module's globals) as content-addressed sub-parts.

Why: a tool set backed by a few megabytes of records must not pay for the whole database on every call. An
instance whose pickle is small (:data:`SPLIT_BYTES`) stays one whole part, as splitting would only add work; a
bigger one, and a module's globals, are split into :class:`~libra.runtime.base.StatePart` s, one per attribute,
and big dict/list attributes into chunks of :data:`~libra.runtime.python.snapshot_common.CHUNK` consecutive
entries, each with its own content key. A call then costs in proportion to what it touched:

- *copying*: the runtime keeps one live object per owner and, before a call, replaces only the sub-parts whose
  key differs from what the live object holds (a read from the state just produced costs no unpickling at all);
  a watched attribute (below) is patched in place, chunk by chunk (:mod:`libra.runtime.python.snapshot_restore`);
- *fingerprinting*: a chunked attribute made of dicts, lists and immutable values is *watched*
  (:mod:`libra.runtime.python.watch`): its containers note which chunk a call writes, so after the call the chunks
  nobody wrote keep their parts unseen and only the written ones are pickled (a read costs nothing). Every
  other sub-part of a split owner is held by the live object as an unpickled copy (its *shadow*) and compared
  with it by ``==`` after the call (C speed, nothing pickled or allocated). A sub-part written or compared
  unequal is pickled and compared byte-for-byte, and only those whose bytes changed get a structural view and a
  content hash (a small whole part is settled by one pickle of it, compared with the one taken when the live
  object last matched). Shadows cost one more in-memory copy of what is not watched;
- *shipping*: the worker pool ships parts by key, so unchanged sub-parts are shared by every state;
- *diffing*: ``state_changes`` is computed from the changed sub-parts' views only
  (:mod:`libra.runtime.python.snapshot_views`).

Pickling sub-parts separately would break objects shared between them (``self.cwd`` pointing into
``self.root``, two attributes naming one list). So when anything changed, the mutable objects in each changed
sub-part's pickle (its pickler memo) are compared with those of every other sub-part (unchanged ones keep a
cached set, checked against the identity of their values and those values' members): attributes that share a
mutable object are snapshotted together as one sub-part (a big attribute involved loses its chunking), and an
object reachable from its own attributes, or whose class controls its own pickling (``__getstate__``,
``__reduce__``, ``__slots__``), is kept as one whole part. A chunk its watch saw unwritten is looked at only if
a changed sub-part holds one of its containers (each carries its chunk's tag). Limitation: a call that replaces an
unchanged attribute's deeper objects with equal copies and, later, shares one of them with another attribute is
not seen as sharing (the cache still names the old objects); such code is rare, and splitting can be avoided for
it with a bigger :data:`SPLIT_BYTES`. Sub-part names are ``Owner:attr``, ``Owner:a,b`` (a group) and
``Owner:attr#3`` (a chunk); a whole part is named ``Owner``
(:func:`~libra.runtime.python.snapshot_common.parse_label`).

:data:`SPLIT_BYTES` and :data:`WATCH` are read from this module at each use, so a test can set them here.
"""

from __future__ import annotations

import collections
import datetime as _dt
import decimal
import enum
import pickle
import types
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from libra.runtime.base import StatePart
from libra.runtime.diff import content_hash
from libra.runtime.python.snapshot_common import (
    _CHUNKED,
    _PICKLE,
    CHUNK,
    DefaultDictData,
    FromConstructor,
    Live,
    Unsnapshotable,
    _chunkable,
    _chunked_attrs,
    _chunks,
    _dumps,
    _no_gc,
    _same,
    _update_shadow,
    parse_label,
    splittable,
)
from libra.runtime.python.snapshot_restore import Restorer
from libra.runtime.python.snapshot_views import PartViews, _patched_view, _whole_view
from libra.runtime.python.watch import Unwatchable, Watch, WatchedDict, WatchedList, drain, rewatch, settle, watch

#: an instance whose pickle is at most this many bytes stays one whole part: splitting costs a pickle per
#: attribute and a sharing check, which only pays off once viewing and diffing the whole state costs more
#: (a few milliseconds, around this size); module globals are always split (a module does not pickle)
SPLIT_BYTES = 64 * 1024
#: watch the writes to chunked attributes (:mod:`libra.runtime.python.watch`), so a call that wrote none of their chunks
#: is settled without comparing them; False compares every chunk with a copy after every call (slower, and it
#: also sees writes a watch cannot: see that module's limitations)
WATCH = True
#: values whose sharing between sub-parts is harmless: immutable, or pickled by reference
_SHAREABLE = (
    str,
    bytes,
    int,
    float,
    complex,
    bool,
    type(None),
    tuple,
    frozenset,
    range,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    enum.Enum,
    _dt.date,
    _dt.time,
    _dt.timedelta,
    _dt.tzinfo,
    decimal.Decimal,
)


@dataclass
class _Unit:
    """One candidate sub-part: an attribute, a group of attributes (``a,b``) or a chunk (``attr#i``)."""

    label: str
    attrs: list[str]
    data: bytes
    value: Any  # what was pickled: {attr: value} for attributes and groups, the slice for a chunk
    pickler: Any = None
    container: Any = None  # the whole dict/list, on a chunked attribute's first chunk
    source: Any = None  # (container, start) of a chunk whose ``value`` is made only if needed
    written: Any = None  # a watched chunk's entries a call wrote inside (None: unknown), to view only those
    looked: bool = False  # its objects were listed from a pickle just made (not from the cache)


def _value(unit: _Unit) -> Any:
    """A unit's value, making a chunk's slice on first use (a chunk its watch settled usually needs none)."""
    if unit.value is None and unit.source is not None:
        container, lo = unit.source
        unit.value = (
            container[lo : lo + CHUNK]
            if isinstance(container, list)
            else dict(islice(dict.items(container), lo, lo + CHUNK))
        )
    return unit.value


def _identity(unit: _Unit) -> int:
    """Hash of the identities of a unit's attribute values and their direct members (cheap, C-level)."""
    if unit.container is not None or "#" in unit.label:  # a chunk: its members are the attribute's members
        piece = _value(unit)
        return hash(tuple(map(id, piece.values() if isinstance(piece, dict) else piece)))
    out: list[int] = []
    for v in unit.value.values():
        out.append(id(v))
        if isinstance(v, dict) and type(v) in _CHUNKED:
            out.extend(map(id, v.values()))
        elif isinstance(v, list) and type(v) in _CHUNKED:
            out.extend(map(id, v))
    return hash(tuple(out))


#: Values that are data whatever they hold: never taken for a constructor's configuration.
_DATA = (list, dict, set, frozenset, tuple, str, bytes, int, float)


class Snapshotter(PartViews, Restorer):
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
        prototype: Callable[[], Any] | None = None,
    ) -> None:
        self.owner = owner
        #: an instance built by the class's constructor in this process (see :class:`FromConstructor`), or None
        self.prototype = prototype
        self.attrs = attrs
        self.new_empty = new_empty
        self.ignore = ignore
        self.remember = remember
        self.recall = recall
        self.skip_unpicklable = skip_unpicklable
        self.whole_only = whole_only
        self.always_split = always_split
        self.unpicklable: set[str] = set()
        # label -> (identity check, bytes, ids, the objects behind the ids): the objects are held so that no id in
        # the cache can be reused by another object while it is cached (see _ids)
        self._id_cache: dict[str, tuple[int, bytes, set[int], list[Any]]] = {}

    def _constructed(self, attr: str, value: Any) -> bool:
        """Whether ``value`` is what the class's constructor puts in ``attr`` (then it is configuration, not state a
        call wrote): the same object, or one of the same type where the constructor builds a new one each time."""
        if isinstance(value, _DATA):
            return False  # a container that holds something unpicklable is data a call wrote, not configuration
        try:
            built = getattr(self.prototype(), attr)  # type: ignore[misc]
        except Exception:  # noqa: BLE001 - no prototype or no such attribute: a call put it there
            return False
        return built is value or type(built) is type(value)

    def _watching(self) -> bool:
        """Whether chunked attributes are watched (:data:`WATCH`, read at each use so a test can switch it)."""
        return WATCH

    # -- snapshot -----------------------------------------------------------------------------------------
    @_no_gc
    def snapshot(
        self, obj: Any, previous: tuple[StatePart, ...] | None, live: Live | None = None
    ) -> tuple[tuple[StatePart, ...], list[StatePart], list[StatePart]]:
        """The owner's parts after a call, reusing ``previous`` parts whose content did not change.

        Returns (parts, old parts replaced, new parts); ``previous`` itself and two empty lists when nothing
        changed. ``live`` (the live object's record, holding ``previous`` before the call) lets a call that
        changed nothing be recognised by one pickle of the whole state instead of one per sub-part.
        """
        drain()
        if not self._split(obj):
            return self._result((self._whole_part(obj, previous),), previous)
        if live is not None and previous is not None and self._shadowed(previous):
            clean = self._clean_chunks(obj, live)
            if self._all_same(obj, previous, live.shadow, clean, live.watches):
                self._settle(obj, live, previous, unchanged=True)
                return previous, [], []
            result = self._snapshot(obj, previous, live.shadow, clean, live.watches)
            if self.always_split or sum(len(p.data) for p in result[0]) > 2 * SPLIT_BYTES:
                live.whole = None
                self._settle(obj, live, result[0])
                return result
        if live is not None:
            live.watches.clear()
        try:
            whole = pickle.dumps(obj if not self.always_split else self._state_attrs(obj), _PICKLE)
        except Exception:  # noqa: BLE001 - the careful path reports what does not pickle
            whole = None
        if whole is not None and not self.always_split and len(whole) <= SPLIT_BYTES:
            return self._result((self._whole_part(obj, previous, whole),), previous)
        if live is None or whole is None:
            if live is not None:
                live.whole = None
            return self._snapshot(obj, previous)
        if (
            previous is not None
            and live.whole is not None
            and whole == live.whole
            and live.keys == {p.name: p.key for p in previous}
        ):
            return previous, [], []
        result = self._snapshot(obj, previous)
        live.whole = whole
        if len(result[0]) > 1 or parse_label(result[0][0].name)[1] is not None:
            _update_shadow(live.shadow, result[0])
        return result

    def _shadowed(self, previous: tuple[StatePart, ...]) -> bool:
        """Whether the owner is split into sub-parts, the layout in which unchanged units are found by ``==``.

        Why only then: a whole part is small by definition (one pickle is cheap), and a state big enough to be split
        is where pickling everything after every call dominates the cost of a build.
        """
        return self.always_split or (
            len(previous) > 0
            and all(parse_label(p.name)[1] is not None for p in previous)
            and sum(len(p.data) for p in previous) > 2 * SPLIT_BYTES
        )

    def _clean_chunks(self, obj: Any, live: Live) -> set[str]:
        """Labels of the watched chunks the call did not write (they equal the previous state's, unseen)."""
        attrs = self._state_attrs(obj)
        clean: set[str] = set()
        for attr, w in live.watches.items():
            dirty = w.written(attrs.get(attr))
            if dirty is not None:
                clean.update(f"{attr}#{i}" for i in range(len(w.sigs)) if i not in dirty)
        return clean

    def _settle(self, obj: Any, live: Live, parts: tuple[StatePart, ...], unchanged: bool = False) -> None:
        """After a snapshot: watch every chunked attribute of ``parts`` (re-arming the chunks a call wrote, watching
        attributes met for the first time), and keep a shadow copy of every other sub-part.

        Why: a watched attribute is settled by its watch at the next call, so its chunks need no copies; an
        attribute that holds something unwatchable keeps the copy-and-compare check.
        """
        attrs = self._state_attrs(obj)
        chunked = _chunked_attrs(parts)
        before = dict(live.watches)
        for attr in [a for a in live.watches if a not in chunked]:
            del live.watches[attr]
        for attr in chunked:
            value = attrs.get(attr)
            w = live.watches.get(attr)
            try:
                if w is not None and w.container is value:
                    if w.dirty or w.top:
                        w.written(value)
                        dirty = sorted(w.dirty)
                        rewatch(w, dirty)
                        settle(w, dirty)
                    continue
                live.watches.pop(attr, None)
                if attr in live.unwatchable or not WATCH:
                    continue
                w = watch(value, CHUNK)
            except Unwatchable:
                live.watches.pop(attr, None)
                live.unwatchable.add(attr)
                continue
            setattr(obj, attr, w.container)
            live.watches[attr] = w
        if not unchanged or live.watches != before:  # a state left unchanged has the shadows it had
            _update_shadow(live.shadow, parts, skip=set(live.watches))

    def _all_same(
        self,
        obj: Any,
        previous: tuple[StatePart, ...],
        shadow: dict[str, tuple[bytes, Any]],
        clean: set[str] = frozenset(),
        watched: Any = (),
    ) -> bool:  # type: ignore[assignment]
        """Whether every sub-part of ``previous`` still equals the live object's content, checked without pickling.

        Why a separate pass: most calls read, and a read should cost comparisons only (no chunk dicts built, no
        pickles). A chunk the attribute's watch saw unwritten (``clean``) is not looked at; a written chunk of a
        watched attribute answers False. A chunk of a dict is compared by its keys' order and
        ``copy.items() <= live.items()`` (C-level lookups); anything unsure answers False, and the careful path
        decides.
        """
        attrs = self._state_attrs(obj)
        covered: dict[str, int] = {}
        keys: dict[str, list[Any]] = {}
        for part in previous:
            label = parse_label(part.name)[1]
            if label in clean:
                covered[label.split("#", 1)[0]] = -1  # type: ignore[union-attr]
                continue
            if label is not None and label.split("#", 1)[0] in watched:
                return False
            held = shadow.get(label) if label is not None else None
            if held is None or (held[0] is not part.data and held[0] != part.data):
                return False
            copy = held[1]
            if "#" in label:  # type: ignore[operator]
                attr, i = label.split("#", 1)  # type: ignore[union-attr]
                value = attrs.get(attr)
                lo = int(i) * CHUNK
                if isinstance(value, list) and type(value) in _CHUNKED:
                    if not _same(value[lo : lo + CHUNK], copy):
                        return False
                elif isinstance(value, dict) and type(value) in _CHUNKED and type(copy) is dict:
                    if attr not in keys:
                        keys[attr] = list(value)
                    try:
                        if list(copy) != keys[attr][lo : lo + CHUNK] or not copy.items() <= value.items():
                            return False
                    except Exception:  # noqa: BLE001
                        return False
                else:
                    return False
                covered[attr] = covered.get(attr, 0) + len(copy)
                continue
            names = label.split(",")  # type: ignore[union-attr]
            if not all(n in attrs for n in names) or not _same({n: attrs[n] for n in names}, copy):
                return False
            covered.update(dict.fromkeys(names, -1))
        if set(covered) != set(attrs):
            return False
        return all(n == -1 or (_chunkable(attrs[a]) and n == len(attrs[a])) for a, n in covered.items())

    def _snapshot(
        self,
        obj: Any,
        previous: tuple[StatePart, ...] | None,
        shadow: dict[str, tuple[bytes, Any]] | None = None,
        clean: set[str] = frozenset(),
        watches: dict[str, Watch] | None = None,
    ) -> tuple[tuple[StatePart, ...], list[StatePart], list[StatePart]]:  # type: ignore[assignment]
        if not self._split(obj):
            parts: tuple[StatePart, ...] = (self._whole_part(obj, previous),)
            return self._result(parts, previous)
        prev = {parse_label(p.name)[1]: p for p in previous or ()}
        unchunk: set[str] = set()
        while True:
            attrs, units = self._layout(obj, prev, unchunk, shadow, clean, watches)
            if (
                previous is not None
                and len(units) == len(previous)
                and all(u.label == parse_label(p.name)[1] and u.data == p.data for u, p in zip(units, previous))
            ):
                return previous, [], []
            ids = self._unit_ids(units, prev, clean, watches)
            if any(id(obj) in i for i in ids):
                # the object is reachable from its own attributes: only a whole pickle keeps that
                return self._result((self._whole_part(obj, previous),), previous)
            # units that kept their bytes were separate parts before the call and still are: only the others
            # can have come to share objects, so only they are compared with everything
            changed = [k for k, u in enumerate(units) if u.label not in prev or prev[u.label].data != u.data]
            groups = _shared_groups(ids, None if previous is None or 2 * len(changed) > len(units) else changed)
            torn = {units[i].attrs[0] for g in groups if len(g) > 1 for i in g if "#" in units[i].label} - unchunk
            if not torn:
                break
            unchunk |= torn  # a chunked attribute shares objects: snapshot it whole, with what it shares
        final: list[_Unit] = []
        for group in groups:
            if len(group) == 1:
                final.append(units[group[0]])
                continue
            names = [a for i in group for a in units[i].attrs]
            wrapped = {a: attrs[a] for a in names}
            final.append(_Unit(",".join(names), names, pickle.dumps(wrapped, _PICKLE), wrapped))
        parts = tuple(self._part(u, prev.get(u.label)) for u in final)
        return self._result(parts, previous)

    @staticmethod
    def _result(
        parts: tuple[StatePart, ...], previous: tuple[StatePart, ...] | None
    ) -> tuple[tuple[StatePart, ...], list[StatePart], list[StatePart]]:
        old_keys = {p.key for p in previous or ()}
        new_keys = {p.key for p in parts}
        removed = [p for p in previous or () if p.key not in new_keys]
        added = [p for p in parts if p.key not in old_keys]
        if previous is not None and not removed and not added and [p.name for p in parts] == [p.name for p in previous]:
            return previous, [], []
        return parts, removed, added

    def _split(self, obj: Any) -> bool:
        return not self.whole_only and (self.always_split or splittable(obj))

    def _state_attrs(self, obj: Any) -> dict[str, Any]:
        attrs = self.attrs(obj)
        if self.unpicklable:
            attrs = {k: v for k, v in attrs.items() if k not in self.unpicklable}
        return attrs

    def _layout(
        self,
        obj: Any,
        prev: dict[str | None, StatePart],
        unchunk: set[str],
        shadow: dict[str, tuple[bytes, Any]] | None = None,
        clean: set[str] = frozenset(),
        watches: dict[str, Watch] | None = None,
    ) -> tuple[dict[str, Any], list[_Unit]]:  # type: ignore[assignment]
        """The object's units, pickled: groups of the previous state still intact, then attributes and chunks.

        A chunk its watch saw unwritten (``clean``), or a unit equal to its ``shadow`` copy of the previous part's
        bytes, keeps those bytes without being pickled (its pickler is made lazily, if the sharing check needs it).
        """
        attrs = self._state_attrs(obj)
        clean_attrs = {label.split("#", 1)[0] for label in clean}

        def unchanged(label: str, value: Any) -> bytes | None:
            old, copy = prev.get(label), (shadow or {}).get(label)
            if old is not None and label in clean:
                return old.data
            if old is None or copy is None or copy[0] != old.data:
                return None
            return old.data if _same(value, copy[1]) else None

        kept = _intact_groups(attrs, prev, unchanged)
        in_kept = {n for u in kept.values() for n in u.attrs}
        units: list[_Unit] = []
        for attr, value in attrs.items():
            if attr in kept:
                units.append(kept[attr])
            elif attr in in_kept:
                continue
            elif not _chunkable(value) or attr in unchunk:
                unit = self._attr_unit(attr, value, unchanged)
                if unit is not None:
                    units.append(unit)
            elif attr in clean_attrs:  # watched: only the chunks it saw written are sliced and pickled
                units.extend(_watched_chunk_units(attr, value, clean, unchanged, (watches or {}).get(attr)))
            else:
                units.extend(_chunk_units(attr, value, unchanged))
        return attrs, units

    def _attr_unit(self, attr: str, value: Any, unchanged: _Unchanged) -> _Unit | None:
        """The unit of one attribute that is not chunked; None for an unpicklable one that is skipped (module
        globals), :class:`Unsnapshotable` for one that is not (an instance's)."""
        wrapped = {attr: value}
        same = unchanged(attr, wrapped)
        if same is not None:
            return _Unit(attr, [attr], same, wrapped)
        try:
            data, pickler = _dumps(wrapped)
        except Exception as exc:  # noqa: BLE001 - user objects may refuse to pickle
            if self.prototype is not None and isinstance(value, collections.defaultdict):
                marker = {attr: DefaultDictData.of(value)}
                data, pickler = _dumps(marker)
                return _Unit(attr, [attr], data, marker, pickler)
            if self.prototype is not None and self._constructed(attr, value):
                marker = {attr: FromConstructor()}
                data, pickler = _dumps(marker)
                return _Unit(attr, [attr], data, marker, pickler)
            if not self.skip_unpicklable:
                raise Unsnapshotable(f"attribute {attr!r} cannot be pickled ({type(exc).__name__}: {exc})") from exc
            self.unpicklable.add(attr)
            return None
        return _Unit(attr, [attr], data, wrapped, pickler)

    def _unit_ids(
        self, units: list[_Unit], prev: dict[str | None, StatePart], clean: set[str], watches: dict[str, Watch] | None
    ) -> list[set[int]]:
        """The mutable objects of each unit, for the sharing check; a chunk its watch settled gets its ids only if
        a changed unit holds one of its watched containers.

        Why that suffices: a settled chunk was not written, so it holds what it held, none of it shared with
        another unit; the only new sharing is a changed unit now pointing into it, and every container of a
        watched chunk carries its chunk's tag (the changed unit's pickle lists them).
        """
        lazy = {k: u for k, u in enumerate(units) if u.label in clean}
        ids = [set() if k in lazy else self._ids(u) for k, u in enumerate(units)]
        if not lazy:
            return ids
        index = {u.label: k for k, u in lazy.items()}
        owners = {id(w): a for a, w in (watches or {}).items()}
        for k, u in enumerate(units):
            if k in lazy or not (u.looked or u.label not in prev or prev[u.label].data != u.data):
                continue  # settled, or unchanged with the objects it held before (its cached ids)
            if u.pickler is None:
                u.pickler = _dumps(_value(u))[1]
            for _, o in u.pickler.memo.copy().values():
                if type(o) is WatchedDict or type(o) is WatchedList:
                    w, j = getattr(o, "_at", (None, 0, None))[:2]
                    attr = owners.get(id(w))
                    j_k = index.pop(f"{attr}#{max(j, 0)}", None) if attr is not None else None
                    if j_k is not None:
                        ids[j_k] = self._ids(units[j_k])
        return ids

    def _ids(self, unit: _Unit) -> set[int]:
        """Ids of the mutable objects a unit's pickle contains (cached while the unit's objects stay the same).

        The cache is checked against the unit's bytes and the identity of its top-level values and their direct
        members, so an attribute replaced by an equal copy is looked at again.

        The cache holds the objects whose ids it lists. Why: a pickle's memo also lists objects made only for
        pickling (the state dict a model's ``__getstate__`` builds), which die with the pickler; their ids, kept
        in the cache, would be taken by new objects, and another unit holding one of those (a model's fields)
        would seem to share an object with this one. Two attributes that share nothing were then snapshotted as
        one group, whatever the group's pickle could hold (a ``defaultdict`` with a lambda, which the attribute's
        own unit stands in for, failed the call), and which attributes were grouped followed memory addresses,
        so two runs of the same call could key the same state differently.
        """
        check = _identity(unit)
        cached = self._id_cache.get(unit.label)
        if cached is not None and cached[0] == check and cached[1] == unit.data:
            ids = cached[2]
        else:
            if unit.pickler is None:  # kept by the shadow comparison: pickle it now, for its memo
                unit.pickler = _dumps(_value(unit))[1]
            memo = unit.pickler.memo.copy()
            held = [o for _, o in memo.values() if not isinstance(o, _SHAREABLE)]
            ids = {id(o) for o in held}
            ids.discard(id(_value(unit)))  # the wrapper or slice made for pickling, not an object of the state
            self._id_cache[unit.label] = (check, unit.data, ids, held)
            unit.looked = True
        if unit.container is not None:
            ids = ids | {id(unit.container)}
        return ids

    def _part(self, unit: _Unit, old: StatePart | None) -> StatePart:
        if old is not None and old.data == unit.data:
            return old
        name = f"{self.owner}:{unit.label}"
        prior = self.recall(old.key) if old is not None and unit.written is not None else None
        view = _patched_view(name, unit.value, prior, unit.written, self.ignore) if prior is not None else None
        if view is None:
            view = self.unit_view(name, unit.value)
        key = f"{name}:{content_hash(view)}"
        if old is not None and old.key == key:
            return old
        self.remember(key, view)
        return StatePart(name, key, unit.data)

    def _whole_part(self, obj: Any, previous: tuple[StatePart, ...] | None, data: bytes | None = None) -> StatePart:
        if data is None:
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


#: ``unchanged(label, value)``: the previous part's bytes when a unit is known unchanged without pickling it
_Unchanged = Callable[[str, Any], "bytes | None"]


def _intact_groups(attrs: dict[str, Any], prev: dict[str | None, StatePart], unchanged: _Unchanged) -> dict[str, _Unit]:
    """The groups of the previous state (``a,b``) whose attributes still pickle to the same bytes, by first name.

    Why: a group's attributes share an object, so they pickle only together; a group whose pickle did not change
    keeps its part as it is, and the attributes are not looked at one by one.
    """
    kept: dict[str, _Unit] = {}
    for label, part in prev.items():
        if label is None or "," not in label:
            continue
        names = label.split(",")
        if not all(n in attrs for n in names):
            continue
        wrapped = {n: attrs[n] for n in names}
        same = unchanged(label, wrapped)
        if same is not None:
            kept[names[0]] = _Unit(label, names, same, wrapped)
            continue
        try:
            data, pickler = _dumps(wrapped)
        except Exception:  # noqa: BLE001 - re-examined attribute by attribute
            continue
        if data == part.data:
            kept[names[0]] = _Unit(label, names, data, wrapped, pickler)
    return kept


def _watched_chunk_units(attr: str, value: Any, clean: set[str], unchanged: _Unchanged, w: Watch | None) -> list[_Unit]:
    """The chunks of a watched attribute: those its watch saw unwritten keep their bytes unsliced; the others are
    sliced and pickled, and note which of their entries the call wrote (``w``: the attribute's watch)."""
    units: list[_Unit] = []
    for i in range((len(value) + CHUNK - 1) // CHUNK):
        label = f"{attr}#{i}"
        unit = _Unit(label, [attr], b"", None, None, value if i == 0 else None, (value, i * CHUNK))
        same = unchanged(label, None) if label in clean else None
        if same is not None:
            unit.data = same
        else:
            unit.data, unit.pickler = _dumps(_value(unit))
            unit.written = w.entries(i) if w is not None else None
        units.append(unit)
    return units


def _chunk_units(attr: str, value: Any, unchanged: _Unchanged) -> list[_Unit]:
    """The chunks of an attribute that is not watched: each compared with its shadow, pickled if it differs."""
    units: list[_Unit] = []
    for i, piece in enumerate(_chunks(value)):
        same = unchanged(f"{attr}#{i}", piece)
        if same is not None:
            units.append(_Unit(f"{attr}#{i}", [attr], same, piece, None, value if i == 0 else None))
            continue
        data, pickler = _dumps(piece)
        units.append(_Unit(f"{attr}#{i}", [attr], data, piece, pickler, value if i == 0 else None))
    return units


def _shared_groups(ids: list[set[int]], changed: list[int] | None = None) -> list[list[int]]:
    """Indices of units whose mutable objects overlap, as connected groups in order (singletons included).

    With ``changed`` given, only pairs involving a changed unit are compared (the others are known apart).
    """
    parent = list(range(len(ids)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    if changed is not None:
        for k in changed:
            for j in range(len(ids)):
                if j != k and not ids[k].isdisjoint(ids[j]):
                    parent[find(j)] = find(k)
    else:
        owner_of: dict[int, int] = {}
        seen: set[int] = set()
        for k, unit_ids in enumerate(ids):
            for obj_id in unit_ids & seen:
                parent[find(k)] = find(owner_of[obj_id])
            new = unit_ids - seen
            seen |= new
            owner_of.update(dict.fromkeys(new, k))
    groups: dict[int, list[int]] = {}
    for i in range(len(ids)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])
