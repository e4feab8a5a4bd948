"""A class whose constructor keeps things that cannot be pickled (a clock function, a lock) is still a catalog.

Its state is snapshotted without them: they are configuration the constructor sets, not data a call changes, and
every restore takes them from an instance the constructor built in the same process (in-process and in isolated
workers alike). An unpicklable value a call puts in the state is still refused.
"""

from __future__ import annotations

import threading
import time

import pytest

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
