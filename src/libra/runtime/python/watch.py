"""Write-watched dicts and lists: how a big state attribute learns which of its chunks a call wrote, without
comparing them.

Why: a database-backed tool set keeps thousands of records in a dict or list attribute. Deciding after every call
whether those records changed by comparing them with a copy costs a full walk of the data (tens of milliseconds
for a few megabytes), although most calls only read. So the runtime replaces the containers of such an attribute
(the attribute's own dict/list and every dict/list nested in its entries) with :class:`WatchedDict` /
:class:`WatchedList`: subclasses that behave exactly like ``dict``/``list`` but note, on their first write, which
chunk and entry of the attribute they belong to (a :class:`Watch` records the written chunks and entries). A
call that wrote nothing costs nothing to check; a call that wrote costs in proportion to the chunks it wrote,
and only the entries it wrote are viewed again.

- Watched containers pickle, copy and deep-copy as plain ``dict``/``list`` (``__reduce_ex__``), so parts, views,
  copies a tool makes and workers' states never hold them; equality, ``repr``, ``isinstance`` and JSON are a
  dict's or a list's.
- Only attributes made of dicts, lists and immutable leaves (str, numbers, None, bool, bytes, dates, enums,
  tuples/frozensets of leaves) are watched: :func:`adopt` raises :class:`Unwatchable` otherwise (an object's
  attribute assignment or a set's ``add`` cannot be seen), and the snapshotter then compares that attribute's
  chunks with copies as before.
- A write to the attribute's own container may shift entries between chunks, so it is settled by comparing the
  identities of each chunk's keys and values with those recorded when the attribute was last clean
  (:func:`signatures`, C-speed, no content compared); the length is always checked, and a list attribute's
  signatures too, which catches C code that writes the list without calling its methods (``heapq``).

Limitations (README): code that writes through the base class's unbound methods (``dict.__setitem__(d, k, v)``)
or C code that writes a nested list in place without calling its methods (``heapq.heapreplace`` on a list inside
a record) is not seen; ``type(x) is dict`` is false for a watched
container (``isinstance`` holds); and references to the attribute's records kept outside the state (a module-level
cache) stop aliasing the state's records once they are watched, as they already do when a state is restored.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import enum
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

#: immutable values that may sit inside a watched attribute (nothing in them can be written)
_LEAVES = (
    str,
    bytes,
    int,
    float,
    complex,
    bool,
    type(None),
    range,
    _dt.date,
    _dt.time,
    _dt.timedelta,
    _dt.tzinfo,
    decimal.Decimal,
    enum.Enum,
)

#: containers written since the last :func:`drain` (each appears once: its ``_dirty`` flag is set on the first write)
_JOURNAL: list[Any] = []


class Unwatchable(Exception):
    """The attribute holds something whose writes cannot be watched (an object, a set...)."""


@dataclass(eq=False)
class Watch:
    """What is known about one watched attribute of a live object.

    ``container`` is the watched dict/list the attribute holds; ``length`` its length and ``sigs`` the identity
    signature of each chunk when last clean; ``dirty`` the chunks written since and ``keys`` the entries (dict
    keys, list positions) written inside; ``top`` whether the container itself was written (entries added,
    removed, replaced or moved: settled by the signatures), and ``moved`` whether that happened since the last
    settle (then ``keys`` does not say every entry that changed). ``shared`` are the chunks in which two entries
    share a container (a write through one entry changes the other: ``keys`` is not enough there either).
    """

    container: Any
    chunk: int
    length: int = 0
    sigs: list[int] = field(default_factory=list)
    dirty: set[int] = field(default_factory=set)
    keys: set[Any] = field(default_factory=set)
    top: bool = False
    moved: bool = False
    shared: set[int] = field(default_factory=set)

    def written(self, value: Any) -> set[int] | None:
        """Chunks of ``value`` (the attribute's current value) that may differ from when it was last clean.

        ``None`` means the attribute is not the watched container any more (rebound by the call): unknown.
        """
        if value is not self.container:
            return None
        now = None
        if isinstance(value, list) and not self.top:  # C code (heapq) may reorder a list in place unseen
            now = signatures(value, self.chunk)
            self.top = now != self.sigs
        if self.top or len(value) != self.length:
            now = now or signatures(value, self.chunk)
            self.dirty |= {i for i, s in enumerate(now) if i >= len(self.sigs) or s != self.sigs[i]}
            self.sigs = now
            self.length = len(value)
            self.top = False
            self.moved = True
        return self.dirty

    def entries(self, chunk: int) -> set[Any] | None:
        """The entries of chunk ``chunk`` a call wrote inside (their other entries are as they were), or None if
        that is not known (entries were added, removed or moved, or two entries share a container)."""
        return None if self.moved or chunk in self.shared else self.keys


def drain() -> None:
    """Credit every container written since the last drain to its watch, and re-arm it for the next write."""
    while _JOURNAL:
        box = _JOURNAL.pop()
        box._dirty = False
        watch, index, key = box._at
        if index < 0:
            watch.top = True
        else:
            watch.dirty.add(index)
            watch.keys.add(key)


def _wrote(box: Any) -> None:
    try:
        if box._dirty:
            return
        box._dirty = True
    except AttributeError:  # made by the tool itself (``fromkeys``...): not (yet) part of a watched attribute
        return
    _JOURNAL.append(box)


class WatchedDict(dict):
    """A dict that reports its first write to :data:`_JOURNAL` (see the module docstring)."""

    __slots__ = ("_at", "_dirty")

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (dict, (), None, None, iter(dict.items(self)))

    def __setitem__(self, key: Any, value: Any) -> None:
        _wrote(self)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        _wrote(self)
        dict.__delitem__(self, key)

    def __ior__(self, other: Any) -> Any:
        _wrote(self)
        return dict.__ior__(self, other)

    def update(self, *args: Any, **kwargs: Any) -> None:
        _wrote(self)
        dict.update(self, *args, **kwargs)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        _wrote(self)
        return dict.setdefault(self, key, default)

    def pop(self, *args: Any) -> Any:
        _wrote(self)
        return dict.pop(self, *args)

    def popitem(self) -> Any:
        _wrote(self)
        return dict.popitem(self)

    def clear(self) -> None:
        _wrote(self)
        dict.clear(self)


class WatchedList(list):
    """A list that reports its first write to :data:`_JOURNAL` (see the module docstring)."""

    __slots__ = ("_at", "_dirty")

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (), None, iter(list.__iter__(self)), None)

    def __setitem__(self, index: Any, value: Any) -> None:
        _wrote(self)
        list.__setitem__(self, index, value)

    def __delitem__(self, index: Any) -> None:
        _wrote(self)
        list.__delitem__(self, index)

    def __iadd__(self, other: Any) -> Any:
        _wrote(self)
        return list.__iadd__(self, other)

    def __imul__(self, n: Any) -> Any:
        _wrote(self)
        return list.__imul__(self, n)

    def append(self, value: Any) -> None:
        _wrote(self)
        list.append(self, value)

    def extend(self, values: Any) -> None:
        _wrote(self)
        list.extend(self, values)

    def insert(self, index: Any, value: Any) -> None:
        _wrote(self)
        list.insert(self, index, value)

    def remove(self, value: Any) -> None:
        _wrote(self)
        list.remove(self, value)

    def pop(self, *args: Any) -> Any:
        _wrote(self)
        return list.pop(self, *args)

    def clear(self) -> None:
        _wrote(self)
        list.clear(self)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        _wrote(self)
        list.sort(self, *args, **kwargs)

    def reverse(self) -> None:
        _wrote(self)
        list.reverse(self)


_WATCHED = (WatchedDict, WatchedList)
#: the commonest leaves, skipped by exact type before any call (most values of a record are these)
_PLAIN = frozenset((str, int, float, bool, type(None)))


def _leaf(value: Any) -> bool:
    if isinstance(value, _LEAVES):
        return True
    if type(value) in (tuple, frozenset):
        return all(_leaf(v) for v in value)
    return False


def adopt(value: Any, at: tuple[Watch, int, Any], memo: dict[int, tuple[Any, Any]]) -> Any:
    """``value`` with every dict/list in it watched and tagged ``at`` = (watch, chunk, entry) (existing watched
    ones re-tagged and re-armed).

    Plain containers are replaced by watched copies (the caller stores the result where ``value`` was); objects
    met twice keep being one object (``memo``), and the chunk is noted in ``Watch.shared``. Raises
    :class:`Unwatchable` on anything else but leaves.
    """
    kind = type(value)
    if kind is WatchedDict or kind is WatchedList or kind is dict or kind is list:
        seen = memo.get(id(value))
        if seen is not None:
            at[0].shared.add(at[1])
            return seen[1]
        if kind is dict:
            box: Any = WatchedDict(value)
        elif kind is list:
            box = WatchedList(value)
        else:
            box = value
        memo[id(value)] = (value, box)  # the original is kept alive, so its id is not reused meanwhile
        box._at = at
        box._dirty = False
        if kind is dict or kind is WatchedDict:
            for k, v in list(dict.items(box)):
                if type(v) in _PLAIN:
                    continue
                new = adopt(v, at, memo)
                if new is not v:
                    dict.__setitem__(box, k, new)
        else:
            for i, v in enumerate(list(list.__iter__(box))):
                if type(v) in _PLAIN:
                    continue
                new = adopt(v, at, memo)
                if new is not v:
                    list.__setitem__(box, i, new)
        return box
    if _leaf(value):
        return value
    raise Unwatchable(type(value).__name__)


def signatures(container: Any, chunk: int, which: Any = None) -> list[int]:
    """One identity signature per chunk of ``chunk`` entries: a hash of its keys' and values' ids, in order.

    With ``which`` (chunk numbers), only those chunks' signatures, in that order.
    """
    n = len(container)
    if not isinstance(container, dict):
        starts = range(0, n, chunk) if which is None else [i * chunk for i in which if i * chunk < n]
        return [hash(tuple(map(id, container[lo : lo + chunk]))) for lo in starts]
    if which is None:
        keys, values = list(dict.keys(container)), list(dict.values(container))
        return [
            hash((tuple(map(id, keys[lo : lo + chunk])), tuple(map(id, values[lo : lo + chunk]))))
            for lo in range(0, n, chunk)
        ]
    out = []
    for lo in [
        i * chunk for i in which if i * chunk < n
    ]:  # a few chunks: skip to each (C-speed) instead of listing all
        items = list(islice(dict.items(container), lo, lo + chunk))
        out.append(hash((tuple(id(k) for k, _ in items), tuple(id(v) for _, v in items))))
    return out


def watch(value: Any, chunk: int) -> Watch:
    """A watched copy of a big dict/list attribute (``Watch.container``), with every chunk tagged; or Unwatchable."""
    if type(value) not in (dict, list, WatchedDict, WatchedList):
        raise Unwatchable(type(value).__name__)
    w = Watch(None, chunk)
    top = WatchedDict(value) if isinstance(value, dict) else WatchedList(value)
    top._at = (w, -1, None)
    top._dirty = False
    w.container = top
    rewatch(w, range((len(top) + chunk - 1) // chunk))
    w.sigs = signatures(top, chunk)
    w.length = len(top)
    return w


def rewatch(w: Watch, chunks: Any) -> None:
    """Re-arm chunks ``chunks`` of a watched attribute after a call wrote them: watch what the call put there,
    re-tag what moved between chunks. Raises :class:`Unwatchable` if the call stored something unwatchable."""
    top, size = w.container, w.chunk
    memo: dict[int, tuple[Any, Any]] = {}
    is_dict = isinstance(top, dict)
    for i in chunks:
        lo = i * size
        w.shared.discard(i)
        if is_dict:
            for k, v in list(islice(dict.items(top), lo, lo + size)):
                if type(v) not in _PLAIN:
                    new = adopt(v, (w, i, k), memo)
                    if new is not v:
                        dict.__setitem__(top, k, new)
        else:
            for j, v in enumerate(top[lo : lo + size]):
                if type(v) not in _PLAIN:
                    new = adopt(v, (w, i, lo + j), memo)
                    if new is not v:
                        list.__setitem__(top, lo + j, new)


def settle(w: Watch, chunks: Any = None) -> None:
    """After the written chunks were snapshotted and re-armed: the attribute is clean again.

    ``chunks`` are the chunk numbers whose entries may have been replaced since the signatures were taken (all
    of them by default); the others keep theirs.
    """
    n = (len(w.container) + w.chunk - 1) // w.chunk
    if chunks is None:
        w.sigs = signatures(w.container, w.chunk)
    else:
        del w.sigs[n:]
        todo = sorted({i for i in chunks if i < n} | set(range(len(w.sigs), n)))
        w.sigs.extend([0] * (n - len(w.sigs)))
        for i, sig in zip(todo, signatures(w.container, w.chunk, todo)):
            w.sigs[i] = sig
    w.dirty.clear()
    w.keys.clear()
    w.top = False
    w.moved = False
    w.length = len(w.container)


def is_watched(value: Any) -> bool:
    return type(value) in _WATCHED
