"""What the three sides of the snapshotter share: the live object's record, part names, chunks and shadows.

Why a module of its own: taking a snapshot (:mod:`libra.runtime.python.snapshot`), viewing and diffing parts
(:mod:`libra.runtime.python.snapshot_views`) and restoring a live object (:mod:`libra.runtime.python.snapshot_restore`)
all name sub-parts the same way, chunk big containers the same way and keep the same shadow copies; those
conventions live here, once.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import gc
import io
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from libra.runtime.base import StatePart
from libra.runtime.python.watch import Watch, WatchedDict, WatchedList

#: entries per chunk of a big dict or list attribute (an attribute is chunked above two chunks' worth)
CHUNK = 128
_PICKLE = pickle.HIGHEST_PROTOCOL


class FromConstructor:
    """Stands in a snapshot for an attribute that cannot be pickled but that the class's constructor sets (a clock
    function, a lock, a logger): a restore takes the value from an instance the constructor built in this process.

    Why: configuration objects like these are not state a call changes, yet ordinary classes hold them beside
    their data; refusing the whole class would leave every one of its tools untested.
    """

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FromConstructor)

    def __hash__(self) -> int:
        return hash(FromConstructor)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FromConstructor, ())


@dataclasses.dataclass(frozen=True)
class DefaultDictData:
    """A ``defaultdict`` whose default factory cannot be pickled (a lambda), snapshotted as its items: a restore
    rebuilds it with the factory of the same attribute on an instance the constructor built (see
    :class:`FromConstructor`). Nested ``defaultdict`` values are kept the same way, so the data survives whole."""

    items: tuple[tuple[Any, Any], ...]

    @classmethod
    def of(cls, value: Any) -> DefaultDictData:
        return cls(tuple((k, cls.of(v) if isinstance(v, collections.defaultdict) else v) for k, v in value.items()))

    def rebuilt(self, like: Any) -> Any:
        """The ``defaultdict`` again, with the factories of ``like`` (the constructor's attribute) at every level."""
        factory = getattr(like, "default_factory", None)
        out = collections.defaultdict(factory)
        inner = factory() if callable(factory) else None
        for k, v in self.items:
            out[k] = v.rebuilt(inner) if isinstance(v, DefaultDictData) else v
        return out


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


@functools.lru_cache(maxsize=1 << 16)
def parse_label(name: str) -> tuple[str, str | None]:
    """``Owner:label`` -> (owner, label); a whole part's name is just ``Owner`` (label None)."""
    owner, sep, label = name.partition(":")
    return owner, (label if sep else None)


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
