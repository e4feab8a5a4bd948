"""Snapshots of one stateful object (an instance, a module's globals) as content-addressed sub-parts.

Why: a tool set backed by a few megabytes of records must not pay for the whole database on every call. An
instance whose pickle is small (:data:`SPLIT_BYTES`) stays one whole part, as splitting would only add work; a
bigger one, and a module's globals, are split into :class:`~libra.runtime.base.StatePart` s, one per attribute, and big
dict/list
attributes into chunks of :data:`CHUNK` consecutive entries, each with its own content key. A call then costs in
proportion to what it touched:

- *copying*: the runtime keeps one live object per owner and, before a call, replaces only the sub-parts whose
  key differs from what the live object holds (a read from the state just produced costs no unpickling at all);
  a watched attribute (below) is patched in place, chunk by chunk;
- *fingerprinting*: a chunked attribute made of dicts, lists and immutable values is *watched*
  (:mod:`libra.runtime.python.watch`): its containers note which chunk a call writes, so after the call the chunks
  nobody wrote keep their parts unseen and only the written ones are pickled (a read costs nothing). Every
  other sub-part of a split owner is held by the live object as an unpickled copy (its *shadow*) and compared
  with it by ``==`` after the call (C speed, nothing pickled or allocated). A sub-part written or compared
  unequal is pickled and compared byte-for-byte, and only those whose bytes changed get a structural view and a
  content hash (a small whole part is settled by one pickle of it, compared with the one taken when the live
  object last matched). Shadows cost one more in-memory copy of what is not watched;
- *shipping*: the worker pool ships parts by key, so unchanged sub-parts are shared by every state;
- *diffing*: ``state_changes`` is computed from the changed sub-parts' views only.

Pickling sub-parts separately would break objects shared between them (``self.cwd`` pointing into
``self.root``, two attributes naming one list). So when anything changed, the mutable objects in each changed
sub-part's pickle (its pickler memo) are compared with those of every other sub-part (unchanged ones keep a
cached set, checked against the identity of their values and those values' members): attributes that share a
mutable object are snapshotted together as one sub-part (a big attribute involved loses its chunking), and an
object reachable from its own attributes, or whose class controls its own pickling (``__getstate__``,
``__reduce__``, ``__slots__``), is kept as one whole part. A chunk its watch saw unwritten is looked at only if
a changed sub-part holds one of its containers (each carries its chunk's tag). Limitation: a call that replaces an
unchanged
attribute's deeper objects with equal copies and, later, shares one of them with another attribute is not seen
as sharing (the cache still names the old objects); such code is rare, and splitting can be avoided for it
with a bigger :data:`SPLIT_BYTES`. Sub-part names are
``Owner:attr``, ``Owner:a,b`` (a group) and ``Owner:attr#3`` (a chunk); a whole part is named ``Owner``.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import enum
import functools
import gc
import io
import pickle
import random
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from libra.runtime.base import StatePart
from libra.runtime.diff import _diff, _ViewBuilder, content_hash, index_path, key_path, object_view
from libra.runtime.python.watch import (
    Unwatchable,
    Watch,
    WatchedDict,
    WatchedList,
    drain,
    rewatch,
    settle,
    watch,
)

#: entries per chunk of a big dict or list attribute (an attribute is chunked above two chunks' worth)
CHUNK = 128
#: an instance whose pickle is at most this many bytes stays one whole part: splitting costs a pickle per
#: attribute and a sharing check, which only pays off once viewing and diffing the whole state costs more
#: (a few milliseconds, around this size); module globals are always split (a module does not pickle)
SPLIT_BYTES = 64 * 1024
#: watch the writes to chunked attributes (:mod:`libra.runtime.python.watch`), so a call that wrote none of their chunks
#: is settled without comparing them; False compares every chunk with a copy after every call (slower, and it
#: also sees writes a watch cannot: see that module's limitations)
WATCH = True
_PICKLE = pickle.HIGHEST_PROTOCOL
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


class Unsnapshotable(Exception):
    """An instance attribute could not be pickled (modules skip such globals instead)."""


@dataclass
class Live:
    """The one live object of an owner and the sub-parts (name -> key) it currently holds."""

    obj: Any
    keys: dict[str, str] = field(default_factory=dict)
    #: a pickle of the whole live state when it last matched ``keys`` (a read call is detected by one comparison)
    whole: bytes | None = None
    #: sub-part label -> (the part's bytes, an independent unpickled copy of them): a live unit that still
    #: compares equal (``==``, C speed, no allocation) to the copy of the bytes its state names is unchanged
    #: without being pickled, so a read costs no pickling and a write pickles only what it touched
    shadow: dict[str, tuple[bytes, Any]] = field(default_factory=dict)
    #: chunked attribute -> its :class:`~libra.runtime.python.watch.Watch`: a watched attribute's chunks need no shadow,
    #: a call that wrote none of them is settled without comparing them
    watches: dict[str, Watch] = field(default_factory=dict)
    #: chunked attributes found holding something unwatchable (not tried again for this live object)
    unwatchable: set[str] = field(default_factory=set)


def _no_gc(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``method`` with the cyclic garbage collector paused.

    Why: snapshotting and restoring allocate many short-lived containers (chunk slices, pickler memos, unpickled
    copies) that are freed right after; each burst can trigger a full collection that walks the whole heap (a
    big state included) and finds nothing to free, which made these steps several times slower.
    """

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():
            return method(*args, **kwargs)
        gc.disable()
        try:
            return method(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper


def _dumps(value: Any) -> tuple[bytes, Any]:
    """Pickle ``value``; also return the pickler, whose memo lists every object the pickle contains."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, _PICKLE)
    pickler.dump(value)
    return buf.getvalue(), pickler


def splittable(obj: Any) -> bool:
    """Whether an instance's state is exactly its ``__dict__`` (what default pickling saves), so it can be split."""
    if not hasattr(obj, "__dict__") or isinstance(obj, type) or not _default_pickling(type(obj)):
        return False
    return all(isinstance(k, str) and k.isidentifier() for k in vars(obj))


@functools.lru_cache(maxsize=1024)
def _default_pickling(cls: type) -> bool:
    """The class pickles its instances the default way: no ``__reduce__``/``__getstate__``/``__slots__`` of its own."""
    if cls.__reduce_ex__ is not object.__reduce_ex__ or cls.__reduce__ is not object.__reduce__:
        return False
    if getattr(cls, "__getstate__", object.__getstate__) is not object.__getstate__ or hasattr(cls, "__setstate__"):
        return False
    return not any("__slots__" in vars(k) for k in cls.__mro__[:-1])


#: the containers an attribute is chunked in (a watched one is a dict or a list for every purpose here)
_CHUNKED = (dict, list, WatchedDict, WatchedList)


def _chunkable(value: Any) -> bool:
    return type(value) in _CHUNKED and len(value) > 2 * CHUNK


def _chunks(value: Any) -> list[Any]:
    """The chunks of a big dict or list: consecutive runs of :data:`CHUNK` entries, as plain slices, in order."""
    is_list = isinstance(value, list)
    items = value if is_list else list(dict.items(value))
    pieces = [items[lo : lo + CHUNK] for lo in range(0, len(items), CHUNK)]
    return pieces if is_list else [dict(p) for p in pieces]


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


@functools.lru_cache(maxsize=1 << 16)
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
        self._id_cache: dict[str, tuple[int, bytes, set[int]]] = {}

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
            except Exception:  # noqa: BLE001 - re-examined attribute by attribute below
                continue
            if data == part.data:
                kept[names[0]] = _Unit(label, names, data, wrapped, pickler)
        in_kept = {n for u in kept.values() for n in u.attrs}
        units: list[_Unit] = []
        for attr, value in attrs.items():
            if attr in kept:
                units.append(kept[attr])
                continue
            if attr in in_kept:
                continue
            if _chunkable(value) and attr not in unchunk:
                if attr in clean_attrs:  # watched: only the chunks it saw written are sliced and pickled
                    for i in range((len(value) + CHUNK - 1) // CHUNK):
                        label = f"{attr}#{i}"
                        unit = _Unit(label, [attr], b"", None, None, value if i == 0 else None, (value, i * CHUNK))
                        same = unchanged(label, None) if label in clean else None
                        if same is not None:
                            unit.data = same
                        else:
                            unit.data, unit.pickler = _dumps(_value(unit))
                            w = (watches or {}).get(attr)
                            unit.written = w.entries(i) if w is not None else None
                        units.append(unit)
                    continue
                for i, piece in enumerate(_chunks(value)):
                    same = unchanged(f"{attr}#{i}", piece)
                    if same is not None:
                        units.append(_Unit(f"{attr}#{i}", [attr], same, piece, None, value if i == 0 else None))
                        continue
                    data, pickler = _dumps(piece)
                    units.append(_Unit(f"{attr}#{i}", [attr], data, piece, pickler, value if i == 0 else None))
                continue
            wrapped = {attr: value}
            same = unchanged(attr, wrapped)
            if same is not None:
                units.append(_Unit(attr, [attr], same, wrapped))
                continue
            try:
                data, pickler = _dumps(wrapped)
            except Exception as exc:  # noqa: BLE001 - user objects may refuse to pickle
                if not self.skip_unpicklable:
                    raise Unsnapshotable(f"attribute {attr!r} cannot be pickled ({type(exc).__name__}: {exc})") from exc
                self.unpicklable.add(attr)
                continue
            units.append(_Unit(attr, [attr], data, wrapped, pickler))
        return attrs, units

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
        """
        check = _identity(unit)
        cached = self._id_cache.get(unit.label)
        if cached is not None and cached[0] == check and cached[1] == unit.data:
            ids = cached[2]
        else:
            if unit.pickler is None:  # kept by the shadow comparison: pickle it now, for its memo
                unit.pickler = _dumps(_value(unit))[1]
            memo = unit.pickler.memo.copy()
            ids = {i for i, (_, o) in memo.items() if not isinstance(o, _SHAREABLE)}
            ids.discard(id(_value(unit)))  # the wrapper or slice made for pickling, not an object of the state
            self._id_cache[unit.label] = (check, unit.data, ids)
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

    # -- restore ------------------------------------------------------------------------------------------
    @_no_gc
    def restore(
        self, live: Live | None, parts: tuple[StatePart, ...], tracked: Callable[[Any], Iterable[str]] | None = None
    ) -> Live:
        """A live object holding ``parts``, made by patching ``live`` where it differs (or built anew)."""
        if len(parts) == 1 and parse_label(parts[0].name)[1] is None:
            p = parts[0]
            if live is not None and live.keys == {p.name: p.key}:
                return live
            return Live(pickle.loads(p.data), {p.name: p.key})
        wanted = {p.name: p.key for p in parts}
        if live is not None and live.keys == wanted:
            return live
        if live is None or any(":" not in n for n in live.keys):
            live = Live(self.new_empty(), {})
        live.whole = None
        obj = live.obj
        target_attrs: list[str] = []
        chunked: dict[str, list[StatePart]] = {}
        labels = [p.name.partition(":")[2] for p in parts]
        for p, label in zip(parts, labels):
            if "#" in label:
                attr = label.split("#", 1)[0]
                if attr not in chunked:
                    target_attrs.append(attr)
                chunked.setdefault(attr, []).append(p)
            else:
                target_attrs.extend(label.split(","))
        held = set(tracked(obj)) if tracked is not None else set(vars(obj))
        for name in held - set(target_attrs):
            live.watches.pop(name, None)
            try:
                delattr(obj, name)
            except AttributeError:
                pass
        for p, label in zip(parts, labels):
            if "#" in label or live.keys.get(p.name) == p.key:
                continue
            for attr, value in pickle.loads(p.data).items():
                live.watches.pop(attr, None)
                setattr(obj, attr, value)
            _shadow_part(live, label, p.data)
        for attr, chunk_parts in chunked.items():
            if all(live.keys.get(p.name) == p.key for p in chunk_parts) and sum(
                1 for n in live.keys if n.startswith(f"{self.owner}:{attr}#")
            ) == len(chunk_parts):
                continue
            current = getattr(obj, attr, None)
            if self._patch_watched(live, attr, current, chunk_parts):
                continue
            current_pieces = _chunks(current) if type(current) in _CHUNKED else []
            pieces = []
            fresh: list[int] = []
            for p in chunk_parts:
                i = int(parse_label(p.name)[1].split("#", 1)[1])  # type: ignore[union-attr]
                if live.keys.get(p.name) == p.key and i < len(current_pieces):
                    pieces.append(current_pieces[i])
                else:
                    pieces.append(pickle.loads(p.data))
                    fresh.append(len(pieces) - 1)
            if isinstance(pieces[0], list):
                merged: Any = [x for piece in pieces for x in piece]
            else:
                merged = {}
                for piece in pieces:
                    merged.update(piece)
            if not self._watch_restored(live, attr, current, merged, fresh):
                setattr(obj, attr, merged)
                for p in chunk_parts:
                    _shadow_part(live, parse_label(p.name)[1], p.data)  # type: ignore[arg-type]
        live.keys = wanted
        return live

    def _patch_watched(self, live: Live, attr: str, current: Any, chunk_parts: list[StatePart]) -> bool:
        """Make a watched attribute hold ``chunk_parts`` by patching its container in place; False if unwatched.

        Why in place: rebuilding a container of thousands of entries costs milliseconds even when one chunk
        differs. A chunk that holds the same keys (or, in a list, as many items) is overwritten where it is; from
        the first chunk that does not, the tail is cut and refilled (chunks before the last are always full, so
        the chunks after it keep their numbers and their watch tags). Only the chunks unpickled are walked.
        """
        w = live.watches.get(attr)
        if w is None or w.container is not current or w.dirty or w.top:
            return False
        n_old = len(w.sigs)
        is_list = isinstance(current, list)
        loaded: dict[int, Any] = {}
        for idx, p in enumerate(chunk_parts):
            if idx >= n_old or live.keys.get(p.name) != p.key:
                loaded[idx] = pickle.loads(p.data)
        cut = len(chunk_parts) if len(chunk_parts) == n_old else min(len(chunk_parts), n_old)
        for idx in sorted(loaded):
            if idx >= cut:
                break
            lo, piece = idx * CHUNK, loaded[idx]
            old_len = min(CHUNK, len(current) - lo)
            if len(piece) != old_len or (
                not is_list and list(piece) != list(islice(dict.keys(current), lo, lo + old_len))
            ):
                cut = idx
                break
        if cut < max(len(chunk_parts), n_old):  # refill the tail from chunk ``cut`` on
            lo = cut * CHUNK
            if is_list:
                tail = [
                    loaded[i] if i in loaded else current[i * CHUNK : (i + 1) * CHUNK]
                    for i in range(cut, len(chunk_parts))
                ]
                list.__delitem__(current, slice(lo, None))
                for piece in tail:
                    list.extend(current, piece)
            else:
                items = list(islice(dict.items(current), lo, None))
                tail = [
                    loaded[i] if i in loaded else items[(i - cut) * CHUNK : (i - cut + 1) * CHUNK]
                    for i in range(cut, len(chunk_parts))
                ]
                for k, _ in items:
                    dict.__delitem__(current, k)
                for piece in tail:
                    dict.update(current, piece)
        for idx, piece in loaded.items():
            if idx < cut:
                if is_list:
                    list.__setitem__(current, slice(idx * CHUNK, idx * CHUNK + len(piece)), piece)
                else:
                    dict.update(current, piece)
        changed = sorted(set(loaded) | set(range(cut, len(chunk_parts))))
        try:
            rewatch(w, sorted(loaded))
        except Unwatchable:
            live.watches.pop(attr, None)
            live.unwatchable.add(attr)
            for p in chunk_parts:
                _shadow_part(live, parse_label(p.name)[1], p.data)  # type: ignore[arg-type]
            return True
        settle(w, changed)
        return True

    def _watch_restored(self, live: Live, attr: str, current: Any, merged: Any, fresh: list[int]) -> bool:
        """Put a chunked attribute rebuilt by a restore into the live object as a watched container; False if it
        cannot be watched (the caller then stores ``merged`` and keeps shadow copies of its chunks).

        Chunks kept from the live object are watched already (same chunk numbers); only the chunks just
        unpickled (``fresh``) are walked, so a restore costs in proportion to the chunks that differ.
        """
        if attr in live.unwatchable or not WATCH:
            return False
        w = live.watches.get(attr)
        try:
            if w is not None and w.container is current and not (w.dirty or w.top):
                top = WatchedList(merged) if isinstance(merged, list) else WatchedDict(merged)
                top._at, top._dirty = (w, -1, None), False
                w.container = top
                rewatch(w, fresh)
                settle(w)
            else:
                w = watch(merged, CHUNK)
        except Unwatchable:
            live.watches.pop(attr, None)
            live.unwatchable.add(attr)
            return False
        setattr(live.obj, attr, w.container)
        live.watches[attr] = w
        for label in [k for k in live.shadow if k.startswith(f"{attr}#")]:
            del live.shadow[label]
        return True


def _whole_view(obj: Any, ignore: frozenset[str]) -> Any:
    """View of a whole part: an object's attributes, or any other value (a declared holder's state) as is."""
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return object_view(obj, ignore)
    return _ViewBuilder(ignore).view(obj, "", 1)


def _same(value: Any, copy: Any) -> bool:
    """Whether a live unit still equals the copy of its last pickled content (False when ``==`` cannot tell).

    Why ``==``: dict/list/str comparison runs in C without allocating, several times faster than pickling, so a
    call that changed nothing costs one comparison per unit. Objects without ``__eq__`` compare unequal to a copy
    and so are pickled as before (never wrongly kept). Limitation: changes ``==`` ignores (a dict's key order,
    ``1`` becoming ``1.0`` or ``True``) are not seen as changes while such a unit's shadow is held.
    """
    try:
        return type(value) is type(copy) and bool(value == copy)
    except Exception:  # noqa: BLE001 - e.g. arrays whose == is elementwise
        return False


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


def _chunked_attrs(parts: tuple[StatePart, ...]) -> dict[str, None]:
    """The chunked attributes of an owner's parts, in order."""
    out: dict[str, None] = {}
    for part in parts:
        label = parse_label(part.name)[1]
        if label is not None and "#" in label:
            out[label.split("#", 1)[0]] = None
    return out


def _shadow_part(live: Live, label: str, data: bytes) -> None:
    """Record the copy of a sub-part just restored into the live object, so the next call's check needs no pickle.

    Why: the engine calls from many saved states; without this, every call after a restore would pickle the
    restored sub-parts again to learn what they hold. Costs one more unpickle of only the restored sub-parts.
    """
    held = live.shadow.get(label)
    if held is None or held[0] is not data:
        live.shadow[label] = (data, pickle.loads(data))


def _update_shadow(
    shadow: dict[str, tuple[bytes, Any]], parts: tuple[StatePart, ...], skip: set[str] = frozenset()
) -> None:  # type: ignore[assignment]
    """Keep one copy per sub-part the live object now holds: only parts whose bytes changed are unpickled.

    Chunks of the attributes in ``skip`` (watched ones) get none.
    """
    labels = set()
    for part in parts:
        label = parse_label(part.name)[1]
        if label is None or (skip and "#" in label and label.split("#", 1)[0] in skip):
            continue
        labels.add(label)
        held = shadow.get(label)
        if held is None or held[0] is not part.data and held[0] != part.data:
            shadow[label] = (part.data, pickle.loads(part.data))
    for label in set(shadow) - labels:
        del shadow[label]


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
