"""A class whose constructor keeps things that cannot be pickled (a clock function, a lock) is still a catalog.

Its state is snapshotted without them: they are configuration the constructor sets, not data a call changes, and
every restore takes them from an instance the constructor built in the same process (in-process and in isolated
workers alike). An unpicklable value a call puts in the state is still refused.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import pytest
from pydantic import BaseModel

from libra.runtime.python.runtime import PythonRuntime
from libra.runtime.workers.isolation import IsolatedRuntime


class Ledger:
    """Entries with timestamps from an injected clock, guarded by a lock."""

    def __init__(self, clock=None) -> None:
        self._clock = clock or (lambda: time.time())
        self._lock = threading.Lock()
        self.entries: list[dict] = []

    def add(self, text: str) -> dict:
        with self._lock:
            entry = {"n": len(self.entries) + 1, "text": text, "at": self._clock()}
            self.entries.append(entry)
        return entry

    def count(self) -> int:
        return len(self.entries)

    def poison(self) -> None:
        self.entries.append(lambda: 1)


def make_runtime() -> PythonRuntime:
    return PythonRuntime(classes=[Ledger], trusted=True)


@pytest.mark.parametrize("isolated", [False, True])
def test_unpicklable_constructor_attributes_are_kept_across_states(isolated):
    rt = IsolatedRuntime(make_runtime, n_workers=2) if isolated else make_runtime()
    try:
        fresh = rt.fresh()
        rec, one = rt.invoke(fresh, "Ledger.add", {"text": "a"})
        assert rec.status == "success"
        rec, two = rt.invoke(one, "Ledger.add", {"text": "b"})
        assert rec.status == "success" and rec.output["n"] == 2
        for state, n in ((fresh, 0), (two, 2), (one, 1), (two, 2)):
            rec, _ = rt.invoke(state, "Ledger.count", {})
            assert rec.output == n
        rec, _ = rt.invoke(fresh, "Ledger.add", {"text": "c"})
        assert rec.status == "success" and rec.output["n"] == 1
        rec, after = rt.invoke(one, "Ledger.poison", {})
        assert rec.status == "error" and after == one  # a call that stores an unpicklable value changes nothing
    finally:
        rt.close()


class Depot:
    """Pydantic records beside a ``defaultdict`` whose factory is a lambda, as an ordinary inventory class keeps them:
    the attributes share no object, but pickling a record builds a state dict that lives only as long as its
    pickle."""

    def __init__(self) -> None:
        self.items: dict[str, Item] = {}
        self.bins: dict[str, Item] = {}
        self.stock = defaultdict(lambda: defaultdict(int))

    def add_item(self, name: str) -> Item:
        item = Item(item_id=f"I-{len(self.items) + 1}", name=name)
        self.items[item.item_id] = item
        return item

    def add_bin(self, code: str) -> Item:
        self.bins[code] = Item(item_id=code, name=f"bin {code}")
        return self.bins[code]

    def receive(self, item_id: str, code: str, quantity: int) -> int:
        self.stock[item_id][code] += quantity
        return sum(self.stock[item_id].values())

    def level(self, item_id: str) -> int:
        return sum(self.stock[item_id].values())


class Item(BaseModel):
    item_id: str
    name: str


def test_unshared_attributes_stay_apart_whatever_the_memory_addresses():
    """Attributes that share nothing are snapshotted apart: the lambda's ``defaultdict`` keeps its stand-in, every
    call succeeds, and a second runtime replaying the same calls keys every state alike (a pickle's short-lived
    objects, whose ids are reused once they are gone, never make two attributes look shared)."""

    def replay() -> list[str]:
        rt = PythonRuntime(classes=[Depot], trusted=True)
        state, keys = rt.fresh(), []
        calls = [("Depot.add_bin", {"code": c}) for c in ("A", "B", "C")]
        calls += [("Depot.add_item", {"name": n}) for n in ("bolt", "nut", "washer", "screw")]
        calls += [("Depot.receive", {"item_id": f"I-{i}", "code": c, "quantity": i}) for i in (1, 2, 3) for c in "AB"]
        calls += [("Depot.level", {"item_id": f"I-{i}"}) for i in (1, 2, 3, 4)] * 3
        calls += [("Depot.add_item", {"name": n}) for n in ("pin", "rivet")]
        for tool, args in calls:
            rec, state = rt.invoke(state, tool, args)
            assert rec.status == "success", (tool, args, rec.error)
            keys.append(state.fingerprint)
        rt.close()
        return keys

    assert replay() == replay()
