"""The worker side of the executor protocol: answer requests over one runtime, keeping state parts by content key.

Why a module of its own: the same request handler runs in an isolated worker process (:func:`worker_main`, the
target of :class:`~libra.runtime.workers.isolation.ProcessTransport`) and in the caller's own process
(:class:`~libra.runtime.workers.inprocess.InProcessTransport`), so both give the very same records and states.

Requests and replies (tuples; ``wire`` is ``(fingerprint, split, items)`` and ``items`` are
``(name, key, data-or-None)``, ``None`` meaning "the receiver already holds this key")::

    ("call", id, fingerprint, split, items, tool, args) -> ("done", id, InvocationRecord, wire | None)
                                                          | ("miss", id, [keys]) | ("raise", id, text)
    ("load", id, config | None)                         -> ("state", id, wire) | ("raise", id, text)
    ("held", id)                                        -> ("held", id, [keys, least recently used first])
    ("close",)

A worker keeps a bounded LRU of parts (:class:`~libra.runtime.workers.lru.PartStore`, bounded in entries and in bytes);
the caller mirrors it and sends only keys for those, and the worker answers "miss" when it does not hold one. It
answers with data only for parts the caller has not seen.

Why the mirror stays exact: both sides apply the same operations to their LRU, in the same order, weighing each
part the same way (:func:`~libra.runtime.workers.lru.part_size`): every part of a state that crosses the pipe, in either
direction, is stored (or refreshed) as most recently used, in the order of the message's items. The worker looks
up the parts it is sent by key *before* storing any, so the bound evicting one of them while the message is
stored costs nothing. "miss" stays as the safety net for anything that breaks the symmetry (a worker that ran
out of memory half-way through a message, a foreign server of another version).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

from libra.errors import LibraError
from libra.runtime.base import InvocationRecord, Runtime, State, StatePart, ToolRuntimeError
from libra.runtime.workers import heap, sandbox
from libra.runtime.workers.guard import DEFAULT_MAX_RECORD_BYTES
from libra.runtime.workers.guarded import GuardedRuntime
from libra.runtime.workers.lru import PartStore

RuntimeFactory = Callable[[], Runtime]
# A state on the wire: (split, ((name, key, data-or-None), ...)); data is None when the receiver holds the key.
Items = tuple[tuple[str, str, Any], ...]


def is_split(payload: Any) -> bool:
    """True for a payload made of content-addressed :class:`StatePart` s (sent part by part)."""
    return isinstance(payload, tuple) and all(isinstance(p, StatePart) for p in payload)


#: the LRU of parts (kept under its old name for callers of the old layout)
_Store = PartStore


class WorkerServer:
    """Answers executor requests over ``runtime``; ``memory_mb`` (the worker's cap, if any) is named in errors."""

    def __init__(
        self, runtime: Runtime, cache_size: int, memory_mb: float | None = None, cache_bytes: int | None = None
    ) -> None:
        self.runtime = runtime
        self.memory_mb = memory_mb
        self.store = _Store(cache_size, cache_bytes)

    def invoke(self, state: State, tool: str, args: Mapping[str, Any]) -> tuple[InvocationRecord, State]:
        """The one place a worker runs a tool (a per-call guard wraps this call)."""
        return self.runtime.invoke(state, tool, args)

    def _encode(self, state: State, known: set[str]) -> tuple[bool, Items]:
        """``state`` on the wire, with data only for parts not in ``known``; every part is stored, in order (as
        the caller's mirror does on reading it)."""
        payload = state.payload
        store = self.store
        if is_split(payload):
            items = []
            for p in payload:
                store.put(p.key, p.data)
                items.append((p.name, p.key, None if p.key in known else p.data))
            return True, tuple(items)
        store.put(state.fingerprint, payload)
        return False, (("", state.fingerprint, None if state.fingerprint in known else payload),)

    def _call(self, msg: tuple[Any, ...]) -> tuple[Any, ...]:
        _, req_id, fp, split, items, tool, args = msg
        store = self.store
        given = {key: data for _, key, data in items if data is not None}
        missing = [key for _, key, data in items if data is None and key not in given and key not in store.items]
        if missing:
            return ("miss", req_id, missing)
        datas = [
            data if data is not None else given[key] if key in given else store.items[key] for _, key, data in items
        ]
        for (_, key, _), data in zip(items, datas):
            store.put(key, data)
        if split:
            payload: Any = tuple(StatePart(n, k, d) for (n, k, _), d in zip(items, datas))
        else:
            payload = datas[0]
        state = State(fp, payload)
        try:
            record, new = self.invoke(state, tool, args)
        except LibraError as exc:
            return ("raise", req_id, str(exc))
        except MemoryError as exc:
            record, new = InvocationRecord("error", None, {}, _error_text(exc), 0.0), state
        if record.error is not None and record.error.startswith("MemoryError") and self.memory_mb:
            record.error = f"{record.error} (the worker's memory cap of {self.memory_mb:g} MB was reached)"
        if new.fingerprint == fp:
            return ("done", req_id, record, None)
        return ("done", req_id, record, (new.fingerprint, *self._encode(new, {k for _, k, _ in items})))

    def _load(self, msg: tuple[Any, ...]) -> tuple[Any, ...]:
        req_id, config = msg[1], msg[2]
        loader = getattr(self.runtime, "load_state", None)
        if config is None or loader is None:
            if config:
                raise ToolRuntimeError(
                    "this runtime has no load_state(config): it cannot start from a task's configuration"
                )
            state = self.runtime.fresh()
        else:
            state = loader(config)
        return ("state", req_id, (state.fingerprint, *self._encode(state, set())))

    def handle(self, msg: tuple[Any, ...]) -> tuple[Any, ...]:
        """The reply to one request (never raises for a tool's misbehaviour)."""
        kind, req_id = msg[0], msg[1]
        try:
            if kind == "call":
                return self._call(msg)
            if kind == "load":
                return self._load(msg)
            if kind == "held":
                return ("held", req_id, list(self.store.items))
            return ("raise", req_id, f"unknown worker request {kind!r}")
        except LibraError as exc:
            return ("raise", req_id, str(exc))
        except MemoryError as exc:
            return ("raise", req_id, f"worker ran out of memory building a state ({_error_text(exc)})")


def _error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception (imported late: a worker ignores Ctrl-C before any slow import)."""
    from libra.runtime.base import error_text

    return error_text(exc)


def worker_main(
    conn: Connection,
    factory: RuntimeFactory,
    memory_mb: float | None,
    allow_network: bool,
    cache_size: int,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    cache_bytes: int | None = None,
) -> None:
    """Body of an isolated worker process: enter the sandbox, build the runtime, answer requests until closed."""
    # Ctrl-C reaches the whole foreground process group: the caller handles it (and closes the pool), so a worker
    # ignores it instead of dying mid-call with a traceback of its own. First thing, before any import.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        isolation = sandbox.enter(allow_network)
        runtime = GuardedRuntime(factory(), max_record_bytes)  # bounded records, pure calls: see runtime/guard.py
        heap.freeze_loaded()  # the runtime and its imports are never walked by the collector again
        sandbox.limit_memory(memory_mb)
        sandbox.keep_children()
        info = {"pid": os.getpid(), "network_isolation": isolation}
        conn.send(("ready", runtime.catalog, bool(getattr(runtime, "trusted", False)), info))
    except BaseException as exc:  # noqa: BLE001 - report why the runtime cannot be built, then exit
        conn.send(("failed", _error_text(exc)))
        return
    server = WorkerServer(runtime, cache_size, memory_mb, cache_bytes)
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg[0] == "close":
                return
            reply = server.handle(msg)
            sandbox.end_call()  # what the call started dies with it, before the caller hears back
            conn.send(reply)
    finally:
        sandbox.end_call()
