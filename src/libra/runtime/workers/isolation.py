"""Isolated execution: tool calls run in worker processes that can crash, hang or blow up without hurting the caller.

How it works:

- :class:`WorkerPool` is the :class:`~libra.runtime.workers.executor.Executor` over :class:`ProcessTransport`: it starts
  ``n_workers`` processes (``forkserver`` context by default, so workers never inherit the caller's threads or
  locks). Each enters the sandbox (:mod:`libra.runtime.workers.sandbox`: its own network namespace and session, a child
  subreaper) unless ``allow_network``, builds its own runtime with ``runtime_factory()`` (so the factory must be
  picklable: a module-level function or a ``functools.partial`` of one) and caps its address space with
  ``RLIMIT_AS`` at "what it uses after start-up + memory_mb".
- A call is sent to an idle worker and must answer within ``timeout_s``: otherwise the worker is killed and the
  call becomes an ``error`` record ("timeout after 2.0s"). A worker that dies (segfault, ``os.abort()``, OOM
  kill) gives "worker crashed (signal SIGSEGV)"; ``MemoryError`` raised under the cap is an ordinary tool error.
  Dead workers are replaced before the next call, so the run goes on. Processes a tool starts are killed when
  its call ends, and with the worker when it is killed or closed.
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
import pickle
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

from libra._util.interrupts import interrupts_deferred
from libra.catalog import Catalog
from libra.runtime.base import InvocationRecord, State, ToolRuntimeError
from libra.runtime.workers import sandbox
from libra.runtime.workers.executor import DEFAULT_RECYCLE_MB, Executor
from libra.runtime.workers.guard import DEFAULT_MAX_RECORD_BYTES
from libra.runtime.workers.lru import DEFAULT_CACHE_BYTES
from libra.runtime.workers.sandbox import NETWORK_DISABLED, _address_space_bytes, block_network, limit_memory
from libra.runtime.workers.stream import Call, CallStream
from libra.runtime.workers.transport import Channel, Transport, WorkerLost, _signal_name
from libra.runtime.workers.worker import RuntimeFactory, _Store
from libra.runtime.workers.worker import is_split as _split
from libra.runtime.workers.worker import worker_main as _worker_main

__all__ = [
    "NETWORK_DISABLED",
    "Call",
    "IsolatedRuntime",
    "ProcessTransport",
    "RuntimeFactory",
    "WorkerPool",
    "_Store",
    "_address_space_bytes",
    "_signal_name",
    "_split",
    "_worker_main",
    "block_network",
    "limit_memory",
]


class _ProcessChannel(Channel):
    """A ``multiprocessing`` worker process and its pipe."""

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.pid = process.pid
        self.info = {}

    def send(self, msg: tuple[Any, ...]) -> None:
        self.conn.send(msg)

    def recv(self) -> tuple[Any, ...]:
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(timeout=5)
            raise WorkerLost(f"worker crashed ({_signal_name(self.process.exitcode)})") from None

    def poll(self, timeout_s: float) -> bool:
        return self.conn.poll(timeout_s)

    def fileno(self) -> int:
        return self.conn.fileno()

    def join(self, timeout_s: float) -> None:
        self.process.join(timeout=timeout_s)

    def kill(self) -> None:
        try:
            sandbox.kill_process_tree(self.pid, alive=self.process.exitcode is None)
            self.process.join(timeout=5)
        except (OSError, ValueError, AssertionError):
            pass
        try:
            self.conn.close()
        except OSError:
            pass


class ProcessTransport(Transport):
    """Sandboxed worker processes of this interpreter, each building its runtime with ``runtime_factory()``."""

    remotable = True  # plain settings and a picklable factory: its workers can be started anywhere

    def __init__(
        self,
        runtime_factory: RuntimeFactory,
        memory_mb: float | None,
        allow_network: bool,
        cache_size: int,
        context: str = "forkserver",
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        cache_bytes: int | None = DEFAULT_CACHE_BYTES,
    ) -> None:
        try:
            self._ctx = mp.get_context(context)
        except ValueError:
            raise ToolRuntimeError(
                f"unknown multiprocessing context {context!r}: use forkserver, spawn or fork"
            ) from None
        if context != "fork":
            try:
                pickle.dumps(runtime_factory)
            except Exception as exc:  # noqa: BLE001
                raise ToolRuntimeError(
                    f"runtime_factory cannot be sent to a worker ({type(exc).__name__}): use a module-level function "
                    "or functools.partial of one, or context='fork'"
                ) from None
        self.runtime_factory = runtime_factory
        self.memory_mb = memory_mb
        self.allow_network = allow_network
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes
        self.max_record_bytes = max_record_bytes

    def start(self) -> Channel:
        parent, child = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(
            target=_worker_main,
            args=(
                child,
                self.runtime_factory,
                self.memory_mb,
                self.allow_network,
                self.cache_size,
                self.max_record_bytes,
                self.cache_bytes,
            ),
            daemon=True,
            name="libra-tool-worker",
        )
        try:
            with interrupts_deferred():  # a start cut short by Ctrl-C would crash the fork server
                proc.start()
        except KeyboardInterrupt:  # held during the start, raised now: the new worker goes with the pool
            child.close()
            _ProcessChannel(proc, parent).kill()
            raise
        child.close()
        return _ProcessChannel(proc, parent)

    def ready(self, channel: Channel, timeout_s: float) -> dict[str, Any]:
        assert isinstance(channel, _ProcessChannel)
        if not channel.poll(timeout_s):
            channel.kill()
            raise ToolRuntimeError(
                f"a tool worker did not start within {timeout_s:.0f}s: check that the runtime factory is quick to build"
            )
        try:
            msg = channel.conn.recv()
        except (EOFError, OSError):
            channel.process.join(timeout=5)
            status = _signal_name(channel.process.exitcode)
            channel.kill()
            raise ToolRuntimeError(
                f"a tool worker died while starting ({status}): build the runtime in-process to see why"
            ) from None
        if msg[0] != "ready":
            channel.kill()
            raise ToolRuntimeError(f"the runtime factory failed in a worker: {msg[1]}")
        return {"catalog": msg[1], "trusted": msg[2], **msg[3]}


class WorkerPool(Executor):
    """A pool of isolated worker processes executing calls of the runtime built by ``runtime_factory``.

    ``timeout_s`` bounds each call; ``memory_mb`` is the address space a worker may add after start-up;
    ``cache_size`` is the number of state parts each worker keeps and ``cache_bytes`` (None: no bound) the bytes of
    them (:data:`~libra.runtime.workers.lru.DEFAULT_CACHE_BYTES`; a part evicted is sent again when needed). ``context``
    is a multiprocessing start method
    (``forkserver``, ``spawn`` or ``fork``). ``allow_network`` leaves the workers on the network.
    ``max_record_bytes`` caps a record's JSON size in the worker (a larger one becomes an ``error`` record; see
    :mod:`libra.runtime.workers.guard`). A worker whose resident memory grew by more than ``recycle_mb`` since it
    started
    is replaced between two calls (None: never; see :meth:`~libra.runtime.workers.executor.Executor._recycle_if_grown`).
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
        cache_bytes: int | None = DEFAULT_CACHE_BYTES,
        context: str = "forkserver",
        start_timeout_s: float = 120.0,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        recycle_mb: float | None = DEFAULT_RECYCLE_MB,
    ) -> None:
        self.check_sizes(n_workers, timeout_s)
        if max_record_bytes < 1:
            raise ToolRuntimeError(f"max_record_bytes must be >= 1, got {max_record_bytes}")
        self.max_record_bytes = int(max_record_bytes)
        transport = ProcessTransport(
            runtime_factory, memory_mb, allow_network, cache_size, context, self.max_record_bytes, cache_bytes
        )
        self.runtime_factory = runtime_factory
        self.n_workers = n_workers
        self.memory_mb = memory_mb
        self.allow_network = allow_network
        super().__init__(
            transport,
            n_workers,
            timeout_s,
            cache_size=cache_size,
            cache_bytes=cache_bytes,
            start_timeout_s=start_timeout_s,
            recycle_mb=recycle_mb,
        )
        self.inner_trusted = bool(self.worker_info.get("trusted", False))

    def _closed_text(self) -> str:
        return "the worker pool is closed: create a new runtime"

    def _lost_text(self, what: str) -> str:
        return "a tool worker crashed building the initial state: build the runtime in-process to see why"

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        """A fresh state (``config=None``) or one built from a task's initial configuration, made by a worker."""
        return self._load(config, "building the initial state")

    def __enter__(self) -> WorkerPool:
        return self


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

    @property
    def network_isolation(self) -> str:
        """How the workers are kept off the network: "namespace", "python-patch" or "allowed"."""
        return self.pool.network_isolation

    @property
    def pids(self) -> list[int]:
        return self.pool.pids

    @property
    def shipped(self) -> dict[str, int]:
        """State parts sent to the workers with their data, their bytes, and "miss" answers."""
        return self.pool.shipped

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

    def stream(self) -> CallStream:
        """Calls submitted one by one, results in order (see :class:`~libra.runtime.workers.stream.CallStream`)."""
        return self.pool.stream()

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> IsolatedRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
