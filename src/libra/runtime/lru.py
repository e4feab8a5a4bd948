"""The bounded LRU of state parts kept on both sides of every worker pipe.

Why a module of its own, standard library only: the caller mirrors what each worker holds with the same policy
the worker applies, and one of those workers is :mod:`libra.runtime.remote_server` under a foreign interpreter,
which loads this file by path (so it must import nothing from libra and stay valid on Python 3.8+).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any


class PartStore:
    """Keeps the ``capacity`` most recently used parts (key -> data); older ones are evicted."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: OrderedDict[str, Any] = OrderedDict()

    def put(self, key: str, data: Any) -> None:
        self.items[key] = data
        self.items.move_to_end(key)
        while len(self.items) > self.capacity:
            self.items.popitem(last=False)

    def touch(self, key: str) -> bool:
        """True when ``key`` is held (and now most recently used)."""
        if key in self.items:
            self.items.move_to_end(key)
            return True
        return False

    def get(self, key: str) -> Any:
        self.items.move_to_end(key)
        return self.items[key]
