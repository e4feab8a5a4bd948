"""One executor, several transports: where tool calls run is a transport; everything else is shared.

Why: a pool of isolated Python workers and a pool of servers in another Python environment need the same
machinery (start workers and wait until they are ready, charge a crash or a timeout to the one call that caused
it and replace the worker, ship states as content-addressed parts and mirror what each worker holds, keep every
worker busy in :meth:`Executor.invoke_many`, shut down). That machinery is :class:`Executor`. How a worker is
started and how messages reach it is a :class:`Transport`, in the spirit of httpx's client/transport split:

- :class:`InProcessTransport`: the runtime in the caller's process (no isolation, no timeouts; for tests and
  trusted code);
- :class:`~libra.runtime.workers.isolation.ProcessTransport`: sandboxed worker processes of our interpreter
  (``multiprocessing``);
- :class:`~libra.runtime.workers.remote.InterpreterTransport`: sandboxed servers under another Python interpreter.

A transport starts :class:`Channel` s, one per worker; a channel speaks the executor's protocol (see
:mod:`libra.runtime.workers.worker`), translating it to its worker's own wire format when that differs. A transport to
anything else (MCP servers, Ray actors) implements the same two classes. Every process a transport starts for
tools enters :mod:`libra.runtime.workers.sandbox`; :attr:`Executor.network_isolation` reports what the sandbox got.

Where workers run is chosen once, around whatever builds the runtime: inside :func:`transports_wrapped`, every
executor whose transport is :attr:`Transport.remotable` runs it through the wrapper instead (e.g.
:class:`~libra.runtime.workers.ray.RayTransport`, which starts each worker inside a Ray actor). Why a scope and
not a parameter: benchmark adapters build their own runtimes (a worker pool, a foreign interpreter's servers), and
the executor is the one place all of them start workers, so no adapter has to learn about any cluster.
"""

from __future__ import annotations

import math
import os
import select
import signal
import time
import weakref
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from libra.catalog import Catalog
from libra.runtime.base import InvocationRecord, State, StatePart, ToolRuntimeError, UnknownToolError
from libra.runtime.workers import sandbox
from libra.runtime.workers.lru import DEFAULT_CACHE_BYTES, part_size
from libra.runtime.workers.worker import Items, RuntimeFactory, WorkerServer, _Store, is_split

Call = tuple[State, str, Mapping[str, Any]]

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


def _keys(state: State) -> frozenset[str]:
    """The content keys of ``state``'s parts (its fingerprint when it is one opaque payload)."""
    if is_split(state.payload):
        return frozenset(p.key for p in state.payload)
    return frozenset((state.fingerprint,))


def wait_readable(channels: Sequence[Channel], timeout_s: float) -> list[Channel]:
    """The channels among ``channels`` whose file descriptor is readable (or closed), waiting up to ``timeout_s``.

    Why not ``multiprocessing.connection.wait``: it builds a selector and registers every descriptor anew on each
    call, and a stream asks after every result whether the next one is back, several times per tool call; one
    ``poll`` object costs a fraction of that, and ``poll`` has no limit on descriptor numbers, unlike ``select``.
    A hang-up counts as readable, as there: reading it is what reports the worker lost.
    """
    poller = select.poll()
    by_fd: dict[int, Channel] = {}
    for channel in channels:
        fd = channel.fileno()
        by_fd[fd] = channel
        poller.register(fd, select.POLLIN)
    ready = poller.poll(max(0, math.ceil(timeout_s * 1000.0)))
    return [by_fd[fd] for fd, _events in ready if fd in by_fd]


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None:
        return "no exit code"
    if exitcode < 0:
        try:
            return f"signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


class WorkerLost(Exception):
    """A worker died or sent something unreadable; ``text`` becomes the error record of its call."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class Channel(ABC):
    """One worker of an executor: it answers the executor's requests one at a time."""

    #: what the worker said when it was ready ("pid", "network_isolation", ...)
    info: dict[str, Any]
    pid: int | None = None

    @abstractmethod
    def send(self, msg: tuple[Any, ...]) -> None:
        """Send a request; ``OSError``/``ValueError`` when the worker is gone (its reply then reports it)."""

    @abstractmethod
    def recv(self) -> tuple[Any, ...]:
        """The next reply; raises :class:`WorkerLost` when the worker died or answered garbage."""

    @abstractmethod
    def poll(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a reply; True when one can be read."""

    @abstractmethod
    def fileno(self) -> int:
        """A file descriptor that becomes readable with a reply (for :meth:`Transport.wait`)."""

    def stop(self) -> None:
        """Ask the worker to exit."""
        self.send(("close",))

    def join(self, timeout_s: float) -> None:  # noqa: B027 - a channel with no process to wait for waits for nothing
        """Give a stopping worker ``timeout_s`` to exit."""

    @abstractmethod
    def kill(self) -> None:
        """End the worker now, with every process it started, and release the channel."""


class Transport(ABC):
    """Starts the workers of an :class:`Executor`; the attributes below say how its workers behave."""

    #: what a worker is called in messages ("cannot send a call of X to a <noun>")
    noun = "worker"
    #: True when workers do not time calls: the executor then times each call itself
    times_calls = False
    #: True when workers only take states made of StateParts
    split_states_only = False
    #: how long a one-off request (a state, the catalog) may take, at least
    request_timeout_s = 60.0
    #: how long a worker asked to stop gets before it is killed
    stop_grace_s = 1.0
    #: True when the transport is plain, picklable settings that can start its workers in another process (or on
    #: another machine): only such transports are handed to the wrapper of :func:`transports_wrapped`
    remotable = False

    @abstractmethod
    def start(self) -> Channel:
        """Begin starting one worker and return at once (workers start in parallel)."""

    @abstractmethod
    def ready(self, channel: Channel, timeout_s: float) -> dict[str, Any]:
        """Wait for ``channel``'s ready message and return its info; kill it and raise ToolRuntimeError if it fails."""

    def wait(self, channels: list[Channel], timeout_s: float) -> list[Channel]:
        """The channels among ``channels`` with a reply to read, waiting up to ``timeout_s`` for one."""
        return wait_readable(channels, timeout_s)


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
    last: str | None = None  # fingerprint of the state of the last call sent (see _Affinity)


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

    def __init__(self, executor: Executor) -> None:
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


# ---------------------------------------------------------------------------------------------------------------
# the in-process transport
# ---------------------------------------------------------------------------------------------------------------
class _LocalChannel(Channel):
    """A worker that is an object in the caller's process: requests are answered as they are sent."""

    def __init__(self, factory: RuntimeFactory, cache_size: int, cache_bytes: int | None = None) -> None:
        self.info = {}
        self.pid = os.getpid()
        self.error: BaseException | None = None
        self.server: WorkerServer | None = None
        self.replies: deque[tuple[Any, ...]] = deque()
        try:
            self.server = WorkerServer(factory(), cache_size, cache_bytes=cache_bytes)
        except Exception as exc:  # noqa: BLE001 - reported by ready()
            self.error = exc

    def send(self, msg: tuple[Any, ...]) -> None:
        if msg[0] != "close" and self.server is not None:
            self.replies.append(self.server.handle(msg))

    def recv(self) -> tuple[Any, ...]:
        return self.replies.popleft()

    def poll(self, timeout_s: float) -> bool:
        return bool(self.replies)

    def fileno(self) -> int:
        raise OSError("an in-process worker has no file descriptor")

    def kill(self) -> None:
        self.replies.clear()


class InProcessTransport(Transport):
    """Workers that are runtimes in the caller's process: the executor's bookkeeping without isolation.

    Calls cannot be interrupted, so ``timeout_s`` is not enforced, and tools reach the network and the caller's
    memory: use it for trusted runtimes and to check that a transport gives the same records as direct calls.
    """

    noun = "in-process worker"

    def __init__(
        self, factory: RuntimeFactory, cache_size: int = 4096, cache_bytes: int | None = DEFAULT_CACHE_BYTES
    ) -> None:
        self.factory = factory
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes

    def start(self) -> Channel:
        return _LocalChannel(self.factory, self.cache_size, self.cache_bytes)

    def ready(self, channel: Channel, timeout_s: float) -> dict[str, Any]:
        from libra.runtime.python.runtime import error_text

        assert isinstance(channel, _LocalChannel)
        if channel.server is None:
            raise ToolRuntimeError(f"the runtime factory failed: {error_text(channel.error or RuntimeError())}")
        runtime = channel.server.runtime
        return {
            "catalog": runtime.catalog,
            "trusted": bool(getattr(runtime, "trusted", False)),
            "pid": channel.pid,
            "network_isolation": sandbox.ALLOWED,
        }

    def wait(self, channels: list[Channel], timeout_s: float) -> list[Channel]:
        return [c for c in channels if c.poll(0.0)]
