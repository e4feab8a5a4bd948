"""The bounded LRU of state parts kept on both sides of every worker pipe.

Why a module of its own, standard library only: the caller mirrors what each worker holds with the same policy
the worker applies, and one of those workers is :mod:`libra.runtime.workers.remote_server` under a foreign interpreter,
which loads this file by path (so it must import nothing from libra and stay valid on Python 3.8+).

Why a bound in bytes as well as in entries: a count alone lets a worker's memory follow the size of its parts, and
parts range from a few bytes (a counter) to hundreds of kilobytes (an app's serialized database), so 4,096 of them
may be 4 MB or 600 MB. The caller must still predict exactly what a worker evicted (it sends only keys for parts it
believes held), so both sides weigh a part with :func:`part_size`, a function of the part's data alone, and apply
the same operations in the same order (see :mod:`libra.runtime.workers.worker`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

#: the bytes of parts a worker keeps by default (and its caller's mirror assumes): see :class:`PartStore`. Why this
#: size: a wave runs from a few dozen states, which share most parts, so their changed parts fit many times over;
#: a part evicted too early only travels again (a memory copy and a pipe write, far cheaper than the call it
#: serves), while every megabyte held stays resident in each worker for the whole build.
DEFAULT_CACHE_BYTES = 16 * 1024 * 1024
#: what a part whose data is not bytes or text weighs (see :func:`part_size`)
NOMINAL_PART_BYTES = 1024


def part_size(data: Any) -> int:
    """The weight of a part in the byte bound: the length of its data when that is bytes or text, else a nominal
    :data:`NOMINAL_PART_BYTES`.

    Why this measure: it must come out the same on both sides of the pipe, computed from the data alone and
    cheaply. Parts that matter for memory are serialized already (a pickle of a Python object's attributes, an
    app's database), and their length is what crosses the pipe, give or take a few bytes of framing; the length
    of a bytes object is the same in the caller and in the worker whatever the interpreter. Measuring anything
    else by pickling it would double the serialization work of every call, and a pickle's length can differ
    between two processes (a set's order follows each process's hash seed), which would let the two sides drift.
    """
    if isinstance(data, (bytes, bytearray, str)):
        return len(data)
    return NOMINAL_PART_BYTES


class PartStore:
    """Keeps the most recently used parts (key -> data): at most ``capacity`` of them and, when ``max_bytes`` is
    set, at most ``max_bytes`` of them as weighed by ``size`` (:func:`part_size` by default); older ones are evicted.

    The part just stored is never evicted, even when it alone weighs more than ``max_bytes``: a state bigger than
    the bound still works (its parts are then shipped with every call instead of kept).
    """

    def __init__(self, capacity: int, max_bytes: int | None = None, size: Callable[[Any], int] = part_size) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self.size = size
        self.items: OrderedDict[str, Any] = OrderedDict()
        self.weights: dict[str, int] = {}
        self.bytes = 0
        self.evictions = 0

    def put(self, key: str, data: Any, weight: int | None = None) -> None:
        """Store ``data`` under ``key`` as the most recently used part; ``weight`` overrides ``size(data)`` (the
        caller's mirror holds no data, only the weight the worker computes from it)."""
        w = self.size(data) if weight is None else weight
        old = self.weights.pop(key, None)
        if old is not None:
            self.bytes -= old
        self.items[key] = data
        self.items.move_to_end(key)
        self.weights[key] = w
        self.bytes += w
        limit = self.max_bytes
        while len(self.items) > 1 and (len(self.items) > self.capacity or (limit is not None and self.bytes > limit)):
            gone, _ = self.items.popitem(last=False)
            self.bytes -= self.weights.pop(gone)
            self.evictions += 1

    def touch(self, key: str) -> bool:
        """True when ``key`` is held (and now most recently used).

        For a key whose weight is unchanged (content-keyed parts) this is what :meth:`put` would do: the entry
        moves to the most recent end and no bound is crossed, so nothing is evicted; it skips weighing the data."""
        if key in self.items:
            self.items.move_to_end(key)
            return True
        return False

    def get(self, key: str) -> Any:
        self.items.move_to_end(key)
        return self.items[key]

    def clear(self) -> None:
        """Forget every part."""
        self.items.clear()
        self.weights.clear()
        self.bytes = 0
