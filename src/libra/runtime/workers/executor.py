"""One executor, several transports: where tool calls run is a transport; everything else is shared.

Why: a pool of isolated Python workers and a pool of servers in another Python environment need the same
machinery (start workers and wait until they are ready, charge a crash or a timeout to the one call that caused
it and replace the worker, ship states as content-addressed parts and mirror what each worker holds, keep every
worker busy in :meth:`Executor.invoke_many`, shut down). That machinery is :class:`Executor` (this module: workers'
lifecycle, encoding states, one-off requests) and its :class:`~libra.runtime.workers.stream.CallStream` (the loop
that runs calls). How a worker is started and how messages reach it is a
:class:`~libra.runtime.workers.transport.Transport`, in the spirit of httpx's client/transport split:

- :class:`~libra.runtime.workers.inprocess.InProcessTransport`: the runtime in the caller's process (no isolation,
  no timeouts; for tests and trusted code);
- :class:`~libra.runtime.workers.isolation.ProcessTransport`: sandboxed worker processes of our interpreter
  (``multiprocessing``);
- :class:`~libra.runtime.workers.remote.InterpreterTransport`: sandboxed servers under another Python interpreter.

A transport starts :class:`~libra.runtime.workers.transport.Channel` s, one per worker; a channel speaks the
executor's protocol (see :mod:`libra.runtime.workers.worker`), translating it to its worker's own wire format when
that differs. A transport to anything else (MCP servers, Ray actors) implements the same two classes. Every process
a transport starts for tools enters :mod:`libra.runtime.workers.sandbox`; :attr:`Executor.network_isolation`
reports what the sandbox got.

Where workers run is chosen once, around whatever builds the runtime: inside :func:`transports_wrapped`, every
executor whose transport is :attr:`~libra.runtime.workers.transport.Transport.remotable` runs it through the
wrapper instead (e.g. :class:`~libra.runtime.workers.ray.RayTransport`, which starts each worker inside a Ray
actor). Why a scope and not a parameter: benchmark adapters build their own runtimes (a worker pool, a foreign
interpreter's servers), and the executor is the one place all of them start workers, so no adapter has to learn
about any cluster.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from libra.catalog import Catalog
from libra.runtime.base import InvocationRecord, State, StatePart, ToolRuntimeError, UnknownToolError
from libra.runtime.workers import sandbox
from libra.runtime.workers.inprocess import InProcessTransport
from libra.runtime.workers.lru import DEFAULT_CACHE_BYTES, part_size
from libra.runtime.workers.stream import Call, CallStream
from libra.runtime.workers.transport import Channel, Transport, WorkerLost, wait_readable
from libra.runtime.workers.worker import Items, _Store, is_split

#: the names tests and other packages import from here (their homes are the modules imported above)
__all__ = [
    "DEFAULT_RECYCLE_MB",
    "RECYCLE_CHECK_EVERY",
    "CallStream",
    "Channel",
    "Executor",
    "InProcessTransport",
    "TransportWrapper",
    "resident_mb",
    "transports_wrapped",
    "wait_readable",
]

#: MB of resident memory a worker may gain after it was ready before it is replaced between two calls
#: (:class:`Executor` ``recycle_mb``; see :meth:`Executor._recycle_if_grown`). Off (None) by default: what a
#: worker gains is mostly caches that make its later calls cheaper (an AppWorld build with a 128 MB bound replaced
#: its 2 servers 10 times and took a third more CPU), so recycling is for tools that leak.
DEFAULT_RECYCLE_MB: float | None = None
#: a worker's resident memory is read once per this many calls (a read of ``/proc``, some microseconds)
RECYCLE_CHECK_EVERY = 256


def resident_mb(pid: int | None) -> float | None:
    """The resident memory of process ``pid`` in MB (``VmRSS`` in ``/proc``); None where it cannot be read (no
    pid, another machine's process, no ``/proc``)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


TransportWrapper = Callable[[Transport], Transport]
_WRAPPER: ContextVar[TransportWrapper | None] = ContextVar("libra_transport_wrapper", default=None)


@contextmanager
def transports_wrapped(wrapper: TransportWrapper) -> Iterator[None]:
    """Executors created inside this block run their remotable transport through ``wrapper`` (see the module doc)."""
    token = _WRAPPER.set(wrapper)
    try:
        yield
    finally:
        _WRAPPER.reset(token)


@dataclass
class _Slot:
    channel: Channel
    known: _Store
    busy: tuple[int, int, float] | None = None  # (request id, call index, deadline)
    calls: int = field(default=0)
    ready_mb: float | None = None  # resident memory when the worker was ready (None: not measurable here)
    last: str | None = None  # fingerprint of the state of the last call sent (see stream._Affinity)


def _shutdown(slots: list[_Slot], grace_s: float) -> None:
    for s in slots:
        try:
            s.channel.stop()
        except (OSError, ValueError):
            pass
    for s in slots:
        try:
            s.channel.join(grace_s)
        except (OSError, ValueError, AssertionError):
            pass
        s.channel.kill()
    slots.clear()


class Executor:
    """The Runtime protocol over ``n_workers`` workers of ``transport``.

    ``timeout_s`` bounds each call (a worker that overruns is killed and its call becomes an ``error`` record);
    ``cache_size`` is the number of state parts the caller assumes each worker keeps and ``cache_bytes`` (None: no
    bound) the bytes of them (see :data:`DEFAULT_CACHE_BYTES`): the transport's workers must be started with the
    same two bounds, as the caller predicts their evictions; ``catalog``, when None, comes
    from the workers' ready message or is asked from a worker. ``trusted`` is False: nothing the tools do reaches
    the caller.
    """

    trusted = False

    def __init__(
        self,
        transport: Transport,
        n_workers: int = 2,
        timeout_s: float = 5.0,
        *,
        cache_size: int = 4096,
        cache_bytes: int | None = DEFAULT_CACHE_BYTES,
        start_timeout_s: float = 120.0,
        catalog: Catalog | None = None,
        recycle_mb: float | None = DEFAULT_RECYCLE_MB,
    ) -> None:
        self.check_sizes(n_workers, timeout_s)
        if recycle_mb is not None and not recycle_mb > 0:
            raise ToolRuntimeError(f"recycle_mb must be > 0 or None, got {recycle_mb}")
        wrapper = _WRAPPER.get()
        if wrapper is not None and transport.remotable:
            transport = wrapper(transport)
        self.transport = transport
        self.timeout_s = float(timeout_s)
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes
        self.start_timeout_s = start_timeout_s
        self.restarts = 0
        self.recycle_mb = recycle_mb
        self.recycle_check_every = RECYCLE_CHECK_EVERY
        #: workers replaced between calls because their resident memory grew by more than ``recycle_mb``
        self.recycled = 0
        #: how states travelled to the workers: parts sent with their data, those bytes, and "miss" answers
        self.shipped = {"parts": 0, "bytes": 0, "misses": 0}
        #: the ready message of the worker started last
        self.worker_info: dict[str, Any] = {}
        self.catalog: Catalog = catalog  # type: ignore[assignment]  # set below when None
        self._next_id = 0
        self._closed = False
        self._fresh: State | None = None
        self._slots: list[_Slot] = []
        self._finalizer = weakref.finalize(self, _shutdown, self._slots, transport.stop_grace_s)
        pending = [transport.start() for _ in range(n_workers)]
        try:
            while pending:
                self._slots.append(self._ready(pending[0]))
                pending.pop(0)
            if self.catalog is None:
                self.catalog = self.worker_info["catalog"] if "catalog" in self.worker_info else self._ask_catalog()
        except BaseException:
            for channel in pending:
                channel.kill()
            self.close()
            raise

    @staticmethod
    def check_sizes(n: int, timeout_s: float, count: str = "n_workers") -> None:
        """Refuse a pool without workers or calls without time (before anything is started)."""
        if n < 1:
            raise ToolRuntimeError(f"{count} must be >= 1, got {n}")
        if timeout_s <= 0:
            raise ToolRuntimeError(f"timeout_s must be > 0, got {timeout_s}")

    # -- worker lifecycle -------------------------------------------------------------------------------
    def _ready(self, channel: Channel) -> _Slot:
        channel.info = self.transport.ready(channel, self.start_timeout_s)
        self.worker_info = channel.info
        own = channel.pid is None or channel.pid == os.getpid()  # in-process workers are the caller itself
        return _Slot(
            channel, _Store(self.cache_size, self.cache_bytes), ready_mb=None if own else resident_mb(channel.pid)
        )

    def _replace(self, index: int) -> None:
        self._slots[index].channel.kill()
        self.restarts += 1
        self._slots[index] = self._ready(self.transport.start())

    def _recycle_if_grown(self, index: int) -> None:
        """Replace the idle worker ``index`` when its resident memory grew by more than ``recycle_mb`` since it was
        ready.

        Why: a long build runs hundreds of thousands of calls through each worker, and what a tool's code keeps
        between calls -- an ORM's caches, event registrations, interned names, a leak -- makes a worker's memory
        grow with the calls it ran (AppWorld's servers doubled over a build), where a fresh worker would answer
        every call the same: a call is a function of the state it is given, and workers keep nothing a call
        depends on. Replacing the worker between calls bounds that growth at the cost of a start-up (and of the
        parts it held, which are shipped again as needed, and of the caches it had warmed), as web servers recycle
        workers after some requests or some memory. Only workers whose memory this machine can read are recycled (not an
        in-process worker, not
        a Ray actor on another node)."""
        slot = self._slots[index]
        if self.recycle_mb is None or slot.ready_mb is None or slot.busy is not None:
            return
        now = resident_mb(slot.channel.pid)
        if now is None or now - slot.ready_mb <= self.recycle_mb:
            return
        slot.channel.kill()
        self.recycled += 1
        self._slots[index] = self._ready(self.transport.start())

    def close(self) -> None:
        """Stop every worker; nothing a tool started survives it."""
        if not self._closed:
            self._closed = True
            self._finalizer()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pids(self) -> list[int]:
        """Process ids of the workers (the caller's own for in-process workers)."""
        return [s.channel.pid for s in self._slots if s.channel.pid is not None]

    @property
    def network_isolation(self) -> str:
        """How the workers are kept off the network: "namespace", "python-patch" or "allowed" (the weakest worker)."""
        return sandbox.weakest(s.channel.info.get("network_isolation", sandbox.ALLOWED) for s in self._slots)

    # -- messages -----------------------------------------------------------------------------------------
    def _closed_text(self) -> str:
        return "the executor is closed: create a new runtime"

    def _lost_text(self, what: str) -> str:
        """A one-off request failed on two workers in a row."""
        return f"a {self.transport.noun} failed {what} twice"

    def _raised_text(self, what: str, text: str) -> str:
        """A worker refused a one-off request."""
        return text

    def _failure_text(self, text: str) -> str:
        """A worker refused a call (raised for the whole batch)."""
        return text

    # -- encoding ---------------------------------------------------------------------------------------
    # The mirror (``known``) holds no data, only each part's weight; it stores every part of a state that crosses
    # the pipe, in the order of the message's items, as the worker does (see libra.runtime.workers.worker).
    def _encode(self, state: State, known: _Store, force: frozenset[str] = frozenset()) -> tuple[bool, Items]:
        payload = state.payload
        sent = self.shipped
        if is_split(payload):
            items = []
            for p in payload:
                # a held part is only refreshed (see PartStore.touch): its key names its data, so its weight is
                # the one the mirror holds and storing it again would change nothing else
                if known.touch(p.key) and p.key not in force:
                    items.append((p.name, p.key, None))
                    continue
                size = part_size(p.data)
                known.put(p.key, None, size)
                sent["parts"] += 1
                sent["bytes"] += size
                items.append((p.name, p.key, p.data))
            return True, tuple(items)
        fp = state.fingerprint
        held = fp in known.items and fp not in force
        size = part_size(payload)
        known.put(fp, None, size)
        if not held:
            sent["parts"] += 1
            sent["bytes"] += size
        return False, (("", fp, None if held else payload),)

    @staticmethod
    def _decode(wire: tuple[str, bool, Items], known: _Store, sent: State | None) -> State:
        fp, split, items = wire
        have: dict[str, Any] = {}
        if sent is not None:
            if is_split(sent.payload):
                have = {p.key: p.data for p in sent.payload}
            else:
                have = {sent.fingerprint: sent.payload}
        for _, key, data in items:
            if not known.touch(key):
                known.put(key, None, part_size(data if data is not None else have[key]))
        if split:
            return State(fp, tuple(StatePart(n, k, d if d is not None else have[k]) for n, k, d in items))
        _, key, data = items[0]
        return State(fp, data if data is not None else have[key])

    def held_parts(self) -> tuple[list[str], list[str]]:
        """The keys of the parts worker 0 holds, least recently used first, as the caller's mirror predicts them
        and as the worker reports them (for checks: the two must be equal)."""
        predicted = list(self._slots[0].known.items)
        return predicted, list(self._request(("held",), "listing its parts")[2])

    # -- one-off requests on worker 0 -----------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ToolRuntimeError(self._closed_text())

    def _request(self, msg: tuple[Any, ...], what: str) -> tuple[Any, ...]:
        """Send a one-off request to worker 0 (replacing it once if it dies) and return its reply."""
        self._check_open()
        for attempt in range(2):
            slot = self._slots[0]
            self._next_id += 1
            try:
                slot.channel.send((msg[0], self._next_id, *msg[1:]))
                if not slot.channel.poll(max(self.timeout_s, self.transport.request_timeout_s)):
                    raise TimeoutError
                reply = slot.channel.recv()
            except (WorkerLost, OSError, TimeoutError):
                self._replace(0)
                if attempt:
                    raise ToolRuntimeError(self._lost_text(what)) from None
                continue
            if reply[0] == "raise":
                raise ToolRuntimeError(self._raised_text(what, reply[2]))
            return reply
        raise AssertionError("unreachable")

    def _ask_catalog(self) -> Catalog:
        return self._request(("catalog",), "listing its catalog")[2]

    def _load(self, config: Mapping[str, Any] | None, what: str) -> State:
        """A state made by worker 0: fresh (``config=None``) or from a task's configuration."""
        reply = self._request(("load", None if config is None else dict(config)), what)
        return self._decode(reply[2], self._slots[0].known, None)

    def fresh(self) -> State:
        if self._fresh is None:
            self._fresh = self._load(None, "building the fresh state")
        return self._fresh

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        """A state from a task's initial configuration (the fresh state when there is none)."""
        return self.fresh() if config is None else self._load(config, "loading a state")

    # -- calls ------------------------------------------------------------------------------------------
    def _check_call(self, state: Any, tool: str, args: Any) -> None:
        if tool not in self.catalog:
            raise UnknownToolError(
                f"unknown tool {tool!r}: runtime {self.catalog.name!r} has no such tool (names are like "
                f"{self.catalog.names[0]!r})"
            )
        if not isinstance(args, Mapping):
            raise ToolRuntimeError(f"arguments of {tool!r} must be a JSON object (dict), got {type(args).__name__}")
        if self.transport.split_states_only:
            if not isinstance(state, State) or not is_split(state.payload):
                raise ToolRuntimeError("expected a State of this runtime: get states from fresh()/invoke()")
        elif not isinstance(state, State):
            raise ToolRuntimeError(f"expected a State, got {type(state).__name__}: get states from fresh()/invoke()")

    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        return self.invoke_many([(state, tool, args or {})])[0]

    def invoke_many(self, calls: Sequence[Call]) -> list[tuple[InvocationRecord, State]]:
        """Run independent calls on all workers at once; results come back in the order of ``calls``.

        A worker's refusal of a call ("raise") fails the whole batch, after every call has run: the first refusal
        in the order of ``calls`` is raised."""
        self._check_open()
        calls = list(calls)
        for state, tool, args in calls:
            self._check_call(state, tool, args)
        stream = CallStream(self)
        try:
            for call in calls:
                stream.submit(call, checked=True)
            taken = [stream.take() for _ in calls]
        finally:
            stream.close()
        failure = next((text for _result, text in taken if text is not None), None)
        if failure is not None:
            raise ToolRuntimeError(self._failure_text(failure))
        return [result for result, _text in taken]

    def stream(self) -> CallStream:
        """A :class:`CallStream` over this executor's workers (close it before starting another)."""
        self._check_open()
        return CallStream(self)
