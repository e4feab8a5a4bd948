"""A wave's stream of calls to the runtime, results taken by ticket in any order (what the exploration's calls
phase submits to and waits on)."""

from __future__ import annotations

from typing import Any

from libra.induction.explore.types import Call
from libra.probing.memo import MemoKey
from libra.runtime.base import State


class CallsOut:
    """A wave's stream of calls to the runtime, with results taken by ticket in any order.

    The stream hands results back in the order calls were submitted; calls prefetched while a wave is planned
    (:meth:`CallsMixin._prefetch`) are taken later, in the order the tests list them, so results that come back
    before their turn wait here (``held``).
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.submitted = 0
        self.held: dict[int, tuple[Any, State]] = {}
        self.taken = 0  # the stream's results taken so far (tickets below it are in ``held`` or were handed out)
        self.early: dict[MemoKey, int] = {}  # prefetched calls not taken yet: memo key -> ticket

    def submit(self, call: Call) -> int:
        self.stream.submit(call)
        self.submitted += 1
        return self.submitted - 1

    def poll(self) -> None:
        """Let the workers go on with the calls submitted (see
        :meth:`~libra.runtime.workers.executor.CallStream.poll`)."""
        poll = getattr(self.stream, "poll", None)
        if poll is not None:
            poll()

    def ready(self, ticket: int) -> bool:
        """True when the result of ``ticket`` can be had without waiting for a worker."""
        return ticket in self.held or (ticket == self.taken and self.stream.ready())

    def result(self, ticket: int) -> tuple[Any, State]:
        while ticket not in self.held:
            self.held[self.taken] = self.stream.next()
            self.taken += 1
        return self.held.pop(ticket)

    def close(self) -> None:
        self.early.clear()
        self.held.clear()
        self.stream.close()
