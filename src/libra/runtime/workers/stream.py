"""Calls handed to an executor one by one: the loop that keeps its workers busy and puts results back in order.

Why a module of its own: which worker runs which call (:class:`_Affinity`), sending calls, reading replies and
charging crashes and timeouts to the call that caused them (:class:`CallStream`) is the executor's hot loop, apart
from starting and replacing workers (:mod:`libra.runtime.workers.executor`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from libra.runtime.base import InvocationRecord, State, ToolRuntimeError
from libra.runtime.workers.transport import Channel, WorkerLost
from libra.runtime.workers.worker import _Store, is_split


class Pool(Protocol):
    """What a stream needs of its executor (:class:`~libra.runtime.workers.executor.Executor`): its worker slots
    and its checks. Named here so the stream does not import the executor that imports it."""

    _slots: list[Any]

    def _check_open(self) -> None: ...

    def _check_call(self, state: State, tool: str, args: Mapping[str, Any]) -> None: ...

    def _failure_text(self, text: str) -> str: ...


Call = tuple[State, str, Mapping[str, Any]]


def _keys(state: State) -> frozenset[str]:
    """The content keys of ``state``'s parts (its fingerprint when it is one opaque payload)."""
    if is_split(state.payload):
        return frozenset(p.key for p in state.payload)
    return frozenset((state.fingerprint,))


class _Affinity:
    """The calls of one batch not yet sent, handed out so that a worker keeps running from states it holds.

    Why: a worker that starts a call from a state whose parts it does not hold is sent their bytes, and a runtime
    that keeps one live state (a database per app) has to load the ones that differ; both cost more than the call
    itself when parts are large. So a free worker takes, in this order: the next call from the state it ran last;
    else the first call from a state whose parts it holds (per the caller's mirror of its store); else the first
    call waiting. Calls are grouped by state in the order they were given. Why it changes no result: each call
    depends only on its own state and arguments, and results are put back in the order of the batch.
    """

    def __init__(self, calls: Sequence[Call]) -> None:
        self.groups: dict[str, deque[int]] = {}
        self.parts: dict[str, tuple[str, ...]] = {}
        for ci, (state, _tool, _args) in enumerate(calls):
            self.add(ci, state)

    def add(self, ci: int, state: State) -> None:
        """Queue call ``ci``, from ``state``, behind the calls from the same state."""
        fp = state.fingerprint
        group = self.groups.get(fp)
        if group is None:
            group = self.groups[fp] = deque()
            payload = state.payload
            self.parts[fp] = tuple(p.key for p in payload) if is_split(payload) else (fp,)
        group.append(ci)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def take(self, last: str | None, known: _Store) -> int:
        """The index of the call a worker should run next (``last``: the state it ran last; ``known``: its mirror)."""
        fp = last if last in self.groups else None
        if fp is None:
            held = known.items
            fp = next((g for g in self.groups if all(k in held for k in self.parts[g])), None)
        if fp is None:
            fp = next(iter(self.groups))
        group = self.groups[fp]
        ci = group.popleft()
        if not group:
            del self.groups[fp]
            del self.parts[fp]
        return ci


class CallStream:
    """Calls handed to an executor one by one, run on its workers as they come; results in the order submitted.

    Why: a caller that batches its calls leaves every worker idle while it prepares a batch and stores the results
    of the last one, and on a machine with as many cores as workers that serial work is a large share of a build's
    wall time. A stream lets the caller submit calls as soon as it knows them and take results one at a time: the
    workers run the calls already submitted while the caller works, each time it comes back to the stream
    (:meth:`submit`, :meth:`ready`, :meth:`take`), with no thread. Results come back in the order of submission
    whatever the number of workers and the order replies arrive in, so what the caller concludes never depends on
    completion order. Which worker runs which call follows :class:`_Affinity`; a worker has one call in flight at a
    time, so the caller's mirror of its parts stays exact (see :mod:`libra.runtime.workers.worker`).
    """

    #: how often at most :meth:`poll` looks for replies (a system call each time; a call takes milliseconds)
    POLL_INTERVAL_S = 0.001
    #: replies :meth:`poll` reads ahead of the caller at most: a bound on the records and states it holds for it
    READ_AHEAD = 64

    def __init__(self, executor: Pool) -> None:
        self.ex = executor
        self.next_poll = 0.0
        self.calls: dict[int, Call] = {}  # submitted and not yet answered
        self.results: dict[int, tuple[tuple[InvocationRecord, State], str | None]] = {}
        self.started: dict[int, float] = {}
        self.queue = _Affinity(())
        self.busy: dict[Channel, int] = {}  # channel -> slot index
        self.submitted = 0
        self.next_index = 0  # the next result to take

    def __len__(self) -> int:
        """Calls submitted and not yet taken."""
        return self.submitted - self.next_index

    def submit(self, call: Call, checked: bool = False) -> None:
        """Queue ``call`` (sent as soon as a worker is free); its result comes after those submitted before it."""
        if not checked:
            self.ex._check_open()
            self.ex._check_call(*call)
        ci = self.submitted
        self.submitted += 1
        self.calls[ci] = call
        self.queue.add(ci, call[0])
        self._dispatch()
        self.poll()

    def poll(self) -> None:
        """Read the replies that have arrived and give the freed workers their next calls, without waiting (at
        most every :data:`POLL_INTERVAL_S`, and while fewer than :data:`READ_AHEAD` replies wait to be taken).

        Why: a worker has one call in flight, and its next call is sent only when the caller reads its reply. A
        caller that submits calls while it plans (or calls this between pieces of its own work) would otherwise
        leave every worker idle after one call until it next waits for a result. Replies read here wait in the
        order of submission like any other, so what the caller sees does not change.
        """
        now = time.monotonic()
        if now < self.next_poll:
            return
        self.next_poll = now + self.POLL_INTERVAL_S
        if self.busy and len(self.results) < self.READ_AHEAD:
            self._pump(0.0)

    def ready(self) -> bool:
        """True when the next result can be taken without waiting (replies that arrived are read first)."""
        if self.next_index not in self.results:
            self._pump(0.0)
        return self.next_index in self.results

    def take(self) -> tuple[tuple[InvocationRecord, State], str | None]:
        """The next result in the order of submission and, when the worker refused the call, its text."""
        ci = self.next_index
        if ci >= self.submitted:
            raise IndexError("no call submitted is waiting for its result")
        while ci not in self.results:
            self._pump(None)
        self.next_index += 1
        return self.results.pop(ci)

    def next(self) -> tuple[InvocationRecord, State]:
        """The next result; a worker's refusal of the call raises :class:`ToolRuntimeError`."""
        result, text = self.take()
        if text is not None:
            raise ToolRuntimeError(self.ex._failure_text(text))
        return result

    def close(self) -> None:
        """Forget the calls not sent; wait for those in flight (their replies keep the mirror of parts exact)."""
        self.queue = _Affinity(())
        while self.busy:
            self._pump(None)
        self.calls.clear()
        self.results.clear()

    def __enter__(self) -> CallStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the loop ---------------------------------------------------------------------------------------
    def _send(self, si: int, ci: int, force: frozenset[str] = frozenset()) -> None:
        ex = self.ex
        slot = ex._slots[si]
        state, tool, args = self.calls[ci]
        split, items = ex._encode(state, slot.known, force)
        ex._next_id += 1
        slot.busy = (ex._next_id, ci, time.monotonic() + ex.timeout_s)
        if ex.transport.times_calls and ci not in self.started:
            self.started[ci] = time.perf_counter()
        try:
            slot.channel.send(("call", ex._next_id, state.fingerprint, split, items, tool, dict(args)))
        except (OSError, ValueError):
            pass  # a dead worker: its channel reports it below and the call is charged to the crash
        except Exception as exc:  # noqa: BLE001 - unpicklable arguments or state
            slot.busy = None
            raise ToolRuntimeError(
                f"cannot send a call of {tool!r} to a {ex.transport.noun} ({type(exc).__name__}: {exc}): "
                "arguments must be JSON data"
            ) from None
        self.busy[slot.channel] = si

    def _dispatch(self) -> None:
        """Give every free worker a call, if any is waiting."""
        queue = self.queue
        for si, slot in enumerate(self.ex._slots):
            if not queue:
                return
            if slot.busy is None:
                ci = queue.take(slot.last, slot.known)
                slot.last = self.calls[ci][0].fingerprint
                self._send(si, ci)

    def _elapsed_ms(self, ci: int) -> float:
        return (time.perf_counter() - self.started.pop(ci, time.perf_counter())) * 1000.0

    def _done(self, ci: int, record: InvocationRecord, state: State, text: str | None = None) -> None:
        del self.calls[ci]
        self.results[ci] = ((record, state), text)

    def _fail(self, si: int, text: str) -> None:
        ex = self.ex
        slot = ex._slots[si]
        assert slot.busy is not None
        ci = slot.busy[1]
        self.busy.pop(slot.channel, None)
        duration = (
            self._elapsed_ms(ci)
            if ex.transport.times_calls
            else (ex.timeout_s if text.startswith("timeout") else 0.0) * 1000.0
        )
        self._done(ci, InvocationRecord("error", None, {}, text, duration), self.calls[ci][0])
        ex._replace(si)

    def _pump(self, timeout_s: float | None) -> None:
        """Read the replies that arrive within ``timeout_s`` (None: until one arrives or a call times out), charge
        overrun calls, and give freed workers the next calls."""
        ex = self.ex
        self._dispatch()
        busy = self.busy
        if not busy:
            return
        timed = ex.transport.times_calls
        grown: list[int] = []  # idle workers due for a look at their memory (see Executor._recycle_if_grown)
        deadline = min(ex._slots[si].busy[2] for si in busy.values())  # type: ignore[index]
        wait = max(0.0, deadline - time.monotonic())
        for channel in ex.transport.wait(list(busy), wait if timeout_s is None else min(wait, timeout_s)):
            si = busy[channel]
            slot = ex._slots[si]
            try:
                msg = channel.recv()
            except WorkerLost as lost:
                self._fail(si, lost.text)
                continue
            assert slot.busy is not None
            req_id, ci = slot.busy[0], slot.busy[1]
            if msg[1] != req_id:
                continue  # a stale answer (cannot happen with one request in flight, kept for safety)
            if msg[0] == "miss":
                # the worker lacks a part the mirror says it holds: send the state whole (the mirror has
                # already stored this state's parts, so naming only the missing ones could miss again)
                slot.busy = None
                ex.shipped["misses"] += 1
                self._send(si, ci, _keys(self.calls[ci][0]))
                continue
            busy.pop(channel)
            slot.busy = None
            slot.calls += 1
            if slot.calls % ex.recycle_check_every == 0:
                grown.append(si)
            state = self.calls[ci][0]
            if msg[0] == "raise":
                self._done(
                    ci,
                    InvocationRecord("error", None, {}, msg[2], self._elapsed_ms(ci) if timed else 0.0),
                    state,
                    msg[2],
                )
                continue
            record, wire = msg[2], msg[3]
            if timed:
                record.duration_ms = self._elapsed_ms(ci)
            if wire is None:
                self._done(ci, record, state)
            else:
                new = ex._decode(wire, slot.known, state)
                self._done(ci, record, state if new.fingerprint == state.fingerprint else new)
        now = time.monotonic()
        for si in list(busy.values()):
            pending = ex._slots[si].busy
            if pending is not None and pending[2] <= now:
                self._fail(si, f"timeout after {ex.timeout_s!r}s")
        for si in grown:
            ex._recycle_if_grown(si)
        self._dispatch()
