"""Calls through the memo of invocations, one at a time, counted.

Why shared: contract checking and the exploration memoise every call by (state, tool, arguments)
(:func:`~libra.probing.memo.memo_key`) in one store, so a call either made is the other's: a call made before
is answered by its record, a new one runs and is memoised. This is that rule for a walk that calls one at a
time (contract checking); the exploration runs its calls in waves through the same store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from libra.probing.memo import MemoKey, MemoStore, memo_key
from libra.runtime.base import InvocationRecord, Runtime, State


@dataclass
class MemoCalls:
    """Invokes ``runtime`` through ``memo``: ``calls`` counts the calls run, ``hits`` those the memo answered, and
    ``keys`` holds every call's memo key in the order they were made (what a later walk over the same store takes
    over)."""

    memo: MemoStore
    runtime: Runtime
    calls: int = 0
    hits: int = 0
    keys: dict[MemoKey, None] = field(default_factory=dict)

    def invoke(self, state: State, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], State]:
        """One call: the record and the (light) state it led to. A call made before (by this walk, or by an earlier
        build resumed over the same store) is answered by its record; a new one runs and is memoised. A call the
        runtime crashed on is an observed error outcome, not memoised (another walk would run it itself)."""
        key = memo_key(state, tool, args)
        hit = self.memo.get(key)
        if hit is not None:
            self.hits += 1
            self.keys[key] = None
            return hit
        self.calls += 1
        try:
            record, post = self.runtime.invoke(self.memo.full(state), tool, args)
        except Exception as exc:  # noqa: BLE001 - a crashing runtime call is an observed error outcome
            return InvocationRecord("error", None, {}, f"{exc.__class__.__name__}: {exc}").to_dict(), state
        rec = record.to_dict()
        light = self.memo.put_many([(key, rec, post)])[0]
        self.keys[key] = None
        return rec, light
