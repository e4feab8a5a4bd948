"""Isolated execution: tool calls run in worker processes that can crash, hang or blow up without hurting the caller.

How it works:

- :class:`WorkerPool` starts ``n_workers`` processes (``forkserver`` context by default, so workers never inherit
  the caller's threads or locks). Each builds its own runtime with ``runtime_factory()`` (so the factory must be
  picklable: a module-level function or a ``functools.partial`` of one), blocks outbound network unless
  ``allow_network`` and caps its address space with ``RLIMIT_AS`` at "what it uses after start-up + memory_mb".
- A call is sent to an idle worker and must answer within ``timeout_s``: otherwise the worker is killed and the
  call becomes an ``error`` record ("timeout after 2.0s"). A worker that dies (segfault, ``os.abort()``, OOM
  kill) gives "worker crashed (signal SIGSEGV)"; ``MemoryError`` raised under the cap is an ordinary tool error.
  Dead workers are replaced before the next call, so the run goes on.
- States travel as content-addressed parts (:class:`~libra.runtime.base.StatePart`, or the whole payload keyed
  by fingerprint for runtimes that do not split states). Workers keep a bounded LRU of parts; the caller keeps a
  mirror of what each worker holds and sends only keys for those, and a worker that evicted one asks again
  ("miss"). A worker answers with data only for parts the caller has not seen, so a read call costs two small
  messages whatever the state's size.
- :meth:`WorkerPool.invoke_many` keeps every worker busy for throughput; :class:`IsolatedRuntime` wraps a pool
  in the :class:`~libra.runtime.base.Runtime` protocol so callers need not care where calls run.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import time
import weakref
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Mapping, Sequence

from ..catalog import Catalog
from ..errors import LibraError
from .base import InvocationRecord, Runtime, State, StatePart, ToolRuntimeError, UnknownToolError
from .guard import DEFAULT_MAX_RECORD_BYTES, GuardedRuntime

NETWORK_DISABLED = "network disabled during library construction"
RuntimeFactory = Callable[[], Runtime]
Call = tuple[State, str, Mapping[str, Any]]

# A state on the wire: (split, ((name, key, data-or-None), ...)); data is None when the receiver holds the key.
_Items = tuple[tuple[str, str, Any], ...]


# ---------------------------------------------------------------------------------------------------------------
# worker side
# ---------------------------------------------------------------------------------------------------------------
def _deny_network(*_args: Any, **_kwargs: Any) -> Any:
    raise PermissionError(NETWORK_DISABLED)


def block_network() -> None:
    """Make every outbound connection attempt in this process raise ``PermissionError``."""
    import socket

    for name in ("connect", "connect_ex", "sendto", "sendmsg"):
        setattr(socket.socket, name, _deny_network)
    socket.create_connection = _deny_network  # type: ignore[assignment]
    socket.getaddrinfo = _deny_network  # type: ignore[assignment]


def _address_space_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def limit_memory(memory_mb: float | None) -> None:
    """Cap this process's address space at its current size plus ``memory_mb`` (allocations beyond fail)."""
    if not memory_mb:
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space_bytes() + int(memory_mb * 2**20)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _split(payload: Any) -> bool:
    return isinstance(payload, tuple) and all(isinstance(p, StatePart) for p in payload)


class _Store:
    """Bounded LRU of state parts (key -> data), the same policy on both sides of the pipe."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: OrderedDict[str, Any] = OrderedDict()

    def put(self, key: str, data: Any) -> None:
        self.items[key] = data
        self.items.move_to_end(key)
        while len(self.items) > self.capacity:
            self.items.popitem(last=False)

    def touch(self, key: str) -> bool:
        if key in self.items:
            self.items.move_to_end(key)
            return True
        return False


def _worker_main(conn: Connection, factory: RuntimeFactory, memory_mb: float | None, allow_network: bool, cache_size: int, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> None:
    from .python import error_text

    try:
        if not allow_network:
            block_network()
        runtime = GuardedRuntime(factory(), max_record_bytes)  # bounded records, pure calls: see runtime/guard.py
        limit_memory(memory_mb)
        conn.send(("ready", runtime.catalog, bool(getattr(runtime, "trusted", False))))
    except BaseException as exc:  # noqa: BLE001 - report why the runtime cannot be built, then exit
        conn.send(("failed", error_text(exc)))
        return
    store = _Store(cache_size)

    def encode(state: State, known: set[str]) -> tuple[bool, _Items]:
        payload = state.payload
        if _split(payload):
            items = []
            for p in payload:
                if p.key in known:
                    items.append((p.name, p.key, None))
                else:
                    store.put(p.key, p.data)
                    items.append((p.name, p.key, p.data))
            return True, tuple(items)
        if state.fingerprint in known:
            return False, (("", state.fingerprint, None),)
        store.put(state.fingerprint, payload)
        return False, (("", state.fingerprint, payload),)

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        kind = msg[0]
        if kind == "close":
            return
        req_id = msg[1]
        try:
            if kind == "call":
                _, _, fp, split, items, tool, args = msg
                missing = [key for _, key, data in items if data is None and not store.touch(key)]
                if missing:
                    conn.send(("miss", req_id, missing))
                    continue
                for _, key, data in items:
                    if data is not None:
                        store.put(key, data)
                if split:
                    payload: Any = tuple(StatePart(n, k, d if d is not None else store.items[k]) for n, k, d in items)
                else:
                    payload = items[0][2] if items[0][2] is not None else store.items[items[0][1]]
                state = State(fp, payload)
                try:
                    record, new = runtime.invoke(state, tool, args)
                except LibraError as exc:
                    conn.send(("raise", req_id, str(exc)))
                    continue
                except MemoryError as exc:
                    record, new = InvocationRecord("error", None, {}, error_text(exc), 0.0), state
                if record.error is not None and record.error.startswith("MemoryError") and memory_mb:
                    record.error = f"{record.error} (the worker's memory cap of {memory_mb:g} MB was reached)"
                if new.fingerprint == fp:
                    conn.send(("done", req_id, record, None))
                else:
                    conn.send(("done", req_id, record, (new.fingerprint, *encode(new, {k for _, k, _ in items}))))
            elif kind == "load":
                config = msg[2]
                loader = getattr(runtime, "load_state", None)
                if config is None or loader is None:
                    if config:
                        raise ToolRuntimeError("this runtime has no load_state(config): it cannot start from a task's configuration")
                    state = runtime.fresh()
                else:
                    state = loader(config)
                conn.send(("state", req_id, (state.fingerprint, *encode(state, set()))))
            else:
                conn.send(("raise", req_id, f"unknown worker request {kind!r}"))
        except LibraError as exc:
            conn.send(("raise", req_id, str(exc)))
        except MemoryError as exc:
            conn.send(("raise", req_id, f"worker ran out of memory building a state ({error_text(exc)})"))


# ---------------------------------------------------------------------------------------------------------------
# caller side
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class _Worker:
    process: Any
    conn: Connection
    known: _Store
    # in-flight request: (request id, call index, deadline, message)
    busy: tuple[int, int, float, tuple[Any, ...]] | None = None
    calls: int = field(default=0)


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None:
        return "no exit code"
    if exitcode < 0:
        try:
            return f"signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def _kill(worker: _Worker) -> None:
    try:
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(timeout=5)
    except (OSError, ValueError, AssertionError):
        pass
    try:
        worker.conn.close()
    except OSError:
        pass


class WorkerPool:
    """A pool of isolated worker processes executing calls of the runtime built by ``runtime_factory``.

    ``timeout_s`` bounds each call; ``memory_mb`` is the address space a worker may add after start-up;
    ``cache_size`` is the number of state parts each worker keeps. ``context`` is a multiprocessing start method
    (``forkserver``, ``spawn`` or ``fork``). ``max_record_bytes`` caps a record's JSON size in the worker (a
    larger one becomes an ``error`` record; see :mod:`libra.runtime.guard`).
    """

    def __init__(
        self,
        runtime_factory: RuntimeFactory,
        n_workers: int = 2,
        timeout_s: float = 5.0,
        memory_mb: float | None = 1024,
        allow_network: bool = False,
        *,
        cache_size: int = 4096,
        context: str = "forkserver",
        start_timeout_s: float = 120.0,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    ) -> None:
        if max_record_bytes < 1:
            raise ToolRuntimeError(f"max_record_bytes must be >= 1, got {max_record_bytes}")
        if n_workers < 1:
            raise ToolRuntimeError(f"n_workers must be >= 1, got {n_workers}")
        if timeout_s <= 0:
            raise ToolRuntimeError(f"timeout_s must be > 0, got {timeout_s}")
        try:
            self._ctx = mp.get_context(context)
        except ValueError:
            raise ToolRuntimeError(f"unknown multiprocessing context {context!r}: use forkserver, spawn or fork") from None
        if context != "fork":
            try:
                pickle.dumps(runtime_factory)
            except Exception as exc:  # noqa: BLE001
                raise ToolRuntimeError(
                    f"runtime_factory cannot be sent to a worker ({type(exc).__name__}): use a module-level function "
                    "or functools.partial of one, or context='fork'"
                ) from None
        self.runtime_factory = runtime_factory
        self.n_workers = n_workers
        self.timeout_s = float(timeout_s)
        self.memory_mb = memory_mb
        self.allow_network = allow_network
        self.cache_size = cache_size
        self.start_timeout_s = start_timeout_s
        self.max_record_bytes = int(max_record_bytes)
        self.catalog: Catalog | None = None
        self.inner_trusted = False
        self.restarts = 0
        self._next_id = 0
        self._closed = False
        self._workers: list[_Worker] = []
        self._finalizer = weakref.finalize(self, WorkerPool._shutdown, self._workers)
        pending = [self._start() for _ in range(n_workers)]
        try:
            self._workers.extend(self._await_ready(p) for p in pending)
        except BaseException:
            for proc, conn in pending:
                _kill(_Worker(proc, conn, _Store(1)))
            self.close()
            raise

    # -- worker lifecycle -------------------------------------------------------------------------------
    def _start(self) -> tuple[Any, Connection]:
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(
            target=_worker_main,
            args=(child, self.runtime_factory, self.memory_mb, self.allow_network, self.cache_size, self.max_record_bytes),
            daemon=True,
            name="libra-tool-worker",
        )
        proc.start()
        child.close()
        return proc, parent

    def _await_ready(self, started: tuple[Any, Connection]) -> _Worker:
        proc, conn = started
        if not conn.poll(self.start_timeout_s):
            _kill(_Worker(proc, conn, _Store(1)))
            raise ToolRuntimeError(f"a tool worker did not start within {self.start_timeout_s:.0f}s: check that the runtime factory is quick to build")
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            proc.join(timeout=5)
            raise ToolRuntimeError(f"a tool worker died while starting ({_signal_name(proc.exitcode)}): build the runtime in-process to see why") from None
        if msg[0] != "ready":
            _kill(_Worker(proc, conn, _Store(1)))
            raise ToolRuntimeError(f"the runtime factory failed in a worker: {msg[1]}")
        if self.catalog is None:
            self.catalog, self.inner_trusted = msg[1], msg[2]
        return _Worker(proc, conn, _Store(self.cache_size))

    def _replace(self, index: int) -> None:
        _kill(self._workers[index])
        self.restarts += 1
        self._workers[index] = self._await_ready(self._start())

    @staticmethod
    def _shutdown(workers: list[_Worker]) -> None:
        for w in workers:
            try:
                w.conn.send(("close",))
            except (OSError, ValueError):
                pass
        for w in workers:
            try:
                w.process.join(timeout=1)
            except (OSError, ValueError, AssertionError):
                pass
            _kill(w)
        workers.clear()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._finalizer()

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- encoding ---------------------------------------------------------------------------------------
    @staticmethod
    def _encode(state: State, known: _Store, force: frozenset[str] = frozenset()) -> tuple[bool, _Items]:
        payload = state.payload
        if _split(payload):
            items = []
            for p in payload:
                if p.key not in force and known.touch(p.key):
                    items.append((p.name, p.key, None))
                else:
                    known.put(p.key, True)
                    items.append((p.name, p.key, p.data))
            return True, tuple(items)
        fp = state.fingerprint
        if fp not in force and known.touch(fp):
            return False, (("", fp, None),)
        known.put(fp, True)
        return False, (("", fp, payload),)

    @staticmethod
    def _decode(wire: tuple[str, bool, _Items], known: _Store, sent: State | None) -> State:
        fp, split, items = wire
        have: dict[str, Any] = {}
        if sent is not None:
            if _split(sent.payload):
                have = {p.key: p.data for p in sent.payload}
            else:
                have = {sent.fingerprint: sent.payload}
        for _, key, data in items:
            if data is not None:
                known.put(key, True)
            else:
                known.touch(key)
        if split:
            return State(fp, tuple(StatePart(n, k, d if d is not None else have[k]) for n, k, d in items))
        _, key, data = items[0]
        return State(fp, data if data is not None else have[key])

    # -- requests ---------------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ToolRuntimeError("the worker pool is closed: create a new runtime")

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        """A fresh state (``config=None``) or one built from a task's initial configuration, made by a worker."""
        self._check_open()
        for attempt in range(2):
            w = self._workers[0]
            self._next_id += 1
            try:
                w.conn.send(("load", self._next_id, None if config is None else dict(config)))
                if not w.conn.poll(max(self.timeout_s, 60.0)):
                    raise TimeoutError
                msg = w.conn.recv()
            except (EOFError, OSError, TimeoutError):
                self._replace(0)
                if attempt:
                    raise ToolRuntimeError("a tool worker crashed building the initial state: build the runtime in-process to see why") from None
                continue
            if msg[0] == "raise":
                raise ToolRuntimeError(msg[2])
            return self._decode(msg[2], w.known, None)
        raise AssertionError("unreachable")

    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        return self.invoke_many([(state, tool, args or {})])[0]

    def invoke_many(self, calls: Sequence[Call]) -> list[tuple[InvocationRecord, State]]:
        """Run independent calls on all workers at once; results come back in the order of ``calls``."""
        self._check_open()
        assert self.catalog is not None
        calls = list(calls)
        for state, tool, args in calls:
            if tool not in self.catalog:
                raise UnknownToolError(f"unknown tool {tool!r}: runtime {self.catalog.name!r} has no such tool (names are like {self.catalog.names[0]!r})")
            if not isinstance(args, Mapping):
                raise ToolRuntimeError(f"arguments of {tool!r} must be a JSON object (dict), got {type(args).__name__}")
            if not isinstance(state, State):
                raise ToolRuntimeError(f"expected a State, got {type(state).__name__}: get states from fresh()/invoke()")
        results: list[tuple[InvocationRecord, State] | None] = [None] * len(calls)
        queue = deque(range(len(calls)))
        failure: str | None = None
        by_conn: dict[Connection, int] = {}

        def send(wi: int, ci: int, force: frozenset[str] = frozenset()) -> None:
            w = self._workers[wi]
            state, tool, args = calls[ci]
            split, items = self._encode(state, w.known, force)
            self._next_id += 1
            msg = ("call", self._next_id, state.fingerprint, split, items, tool, dict(args))
            w.busy = (self._next_id, ci, time.monotonic() + self.timeout_s, msg)
            try:
                w.conn.send(msg)
            except (OSError, ValueError):
                pass  # a dead worker: its pipe reports EOF below and the call is charged to the crash
            except Exception as exc:  # noqa: BLE001 - unpicklable arguments or state
                w.busy = None
                raise ToolRuntimeError(f"cannot send a call of {tool!r} to a worker ({type(exc).__name__}: {exc}): arguments must be JSON data") from None
            by_conn[w.conn] = wi

        def fail(wi: int, text: str) -> None:
            w = self._workers[wi]
            assert w.busy is not None
            ci = w.busy[1]
            by_conn.pop(w.conn, None)
            results[ci] = (InvocationRecord("error", None, {}, text, (self.timeout_s if text.startswith("timeout") else 0.0) * 1000.0), calls[ci][0])
            self._replace(wi)

        while queue or by_conn:
            for wi, w in enumerate(self._workers):
                if not queue:
                    break
                if w.busy is None:
                    send(wi, queue.popleft())
            now = time.monotonic()
            deadline = min(self._workers[wi].busy[2] for wi in by_conn.values())  # type: ignore[index]
            ready = wait(list(by_conn), timeout=max(0.0, deadline - now))
            for conn in ready:
                wi = by_conn[conn]  # type: ignore[index]
                w = self._workers[wi]
                try:
                    msg = conn.recv()  # type: ignore[union-attr]
                except (EOFError, OSError):
                    w.process.join(timeout=5)
                    fail(wi, f"worker crashed ({_signal_name(w.process.exitcode)})")
                    continue
                assert w.busy is not None
                req_id, ci = w.busy[0], w.busy[1]
                if msg[1] != req_id:
                    continue  # a stale answer (cannot happen with one request in flight, kept for safety)
                if msg[0] == "miss":
                    w.busy = None
                    send(wi, ci, frozenset(msg[2]))
                    continue
                by_conn.pop(conn)  # type: ignore[arg-type]
                w.busy = None
                w.calls += 1
                state = calls[ci][0]
                if msg[0] == "raise":
                    failure = failure or msg[2]
                    results[ci] = (InvocationRecord("error", None, {}, msg[2], 0.0), state)
                    continue
                record, wire = msg[2], msg[3]
                results[ci] = (record, state if wire is None else self._decode(wire, w.known, state))
            now = time.monotonic()
            for wi in list(by_conn.values()):
                busy = self._workers[wi].busy
                if busy is not None and busy[2] <= now:
                    fail(wi, f"timeout after {self.timeout_s!r}s")
        if failure is not None:
            raise ToolRuntimeError(failure)
        return results  # type: ignore[return-value]


class IsolatedRuntime:
    """The :class:`~libra.runtime.base.Runtime` protocol over a :class:`WorkerPool` (same constructor options).

    ``trusted`` is False: the point of this wrapper is that nothing the tools do reaches the caller.
    """

    trusted = False

    def __init__(
        self,
        inner_factory: RuntimeFactory,
        n_workers: int = 2,
        timeout_s: float = 5.0,
        memory_mb: float | None = 1024,
        allow_network: bool = False,
        **pool_options: Any,
    ) -> None:
        self.pool = WorkerPool(inner_factory, n_workers, timeout_s, memory_mb, allow_network, **pool_options)
        assert self.pool.catalog is not None
        self.catalog: Catalog = self.pool.catalog
        self._fresh: State | None = None

    def fresh(self) -> State:
        if self._fresh is None:
            self._fresh = self.pool.load_state(None)
        return self._fresh

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        return self.pool.load_state(dict(config or {}))

    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        return self.pool.invoke(state, tool, args or {})

    def invoke_many(self, calls: Sequence[Call]) -> list[tuple[InvocationRecord, State]]:
        return self.pool.invoke_many(calls)

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> "IsolatedRuntime":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
