"""Out-of-process runtimes: tools that run under *another* Python interpreter, spoken to over pipes.

Why: some catalogs cannot share our environment (AppWorld pins pydantic<2 and old fastapi). They get their own
virtual environment, and :class:`RemoteRuntime` starts ``n_servers`` processes of that environment's interpreter
running :mod:`libra.runtime.remote_server` (standard-library only, loaded by path) with a catalog-specific
*backend* (see that module for the backend interface and the wire format). The client implements the
:class:`~libra.runtime.base.Runtime` protocol, so induction cannot tell it from an in-process runtime.

Isolation matches :mod:`libra.runtime.isolation`: each call must answer within ``timeout_s`` or its server is
killed (with its process group) and the call becomes an ``error`` record ("timeout after 5.0s"); a server that
dies gives "server crashed (signal SIGSEGV)"; a dead server is replaced before the next call. The server itself
blocks outbound network and caps its address space (``RLIMIT_AS``: size after start-up + ``memory_mb``). Replies
are unpickled with a loader that refuses every global, so nothing a tool does can run code in the caller.

States are tuples of :class:`~libra.runtime.base.StatePart` (bytes per stateful piece, keyed by content hash). As
in the worker pool, the client mirrors which keys each server holds and sends only keys for those, so a read call
costs two small messages whatever the state's size; :meth:`RemoteRuntime.invoke_many` keeps every server busy.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import signal
import subprocess
import tempfile
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..catalog import Catalog
from .base import InvocationRecord, State, StatePart, ToolRuntimeError, UnknownToolError, parts_fingerprint
from .isolation import _signal_name, _Store

#: the server script, started by path under the foreign interpreter
SERVER_SCRIPT = Path(__file__).with_name("remote_server.py")
PROTOCOL = 4
Call = tuple[State, str, Mapping[str, Any]]
_HEADER_SIZE = 8


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data only: any global (class, function) in a reply is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a remote server sent a {module}.{name} object; only plain data is accepted")


def _loads(blob: bytes) -> Any:
    return _PlainUnpickler(io.BytesIO(blob)).load()


def _frame(obj: Any) -> bytes:
    blob = pickle.dumps(obj, protocol=PROTOCOL)
    return len(blob).to_bytes(_HEADER_SIZE, "big") + blob


@dataclass
class _Server:
    proc: subprocess.Popen
    fd: int  # the read end of the server's stdout
    log: Path
    known: _Store
    busy: tuple[int, int, float] | None = None  # (request id, call index, deadline)
    calls: int = field(default=0)

    def read_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = os.read(self.fd, min(n, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def recv(self) -> Any:
        size = int.from_bytes(self.read_exact(_HEADER_SIZE), "big")
        return _loads(self.read_exact(size))

    def send(self, obj: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_frame(obj))
        self.proc.stdin.flush()

    def poll(self, timeout: float) -> bool:
        return bool(select.select([self.fd], [], [], max(0.0, timeout))[0])

    def log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text[-lines:])


def _kill(server: _Server) -> None:
    try:
        os.killpg(server.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            server.proc.kill()
        except OSError:
            pass
    try:
        server.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    for stream in (server.proc.stdin, server.proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        server.log.unlink()
    except OSError:
        pass


class RemoteRuntime:
    """The Runtime protocol over server processes of a foreign interpreter.

    ``python_executable`` is the foreign interpreter; ``server`` names the backend: a ``.py`` path (loaded by path,
    so it needs nothing but the foreign packages) or an importable ``module``, optionally ``:factory``.
    ``options`` is passed to the backend's factory. ``catalog`` is the tool catalog; when None it is asked from
    the backend (``catalog()``). ``n_servers`` defaults to the CPU count. ``isolated`` runs the interpreter with
    ``-I`` (no user site, no ``PYTHON*`` variables: the foreign environment sees nothing of ours).
    """

    trusted = False

    def __init__(
        self,
        python_executable: str | os.PathLike[str],
        server: str | os.PathLike[str],
        *,
        options: Mapping[str, Any] | None = None,
        catalog: Catalog | None = None,
        n_servers: int | None = None,
        timeout_s: float = 30.0,
        memory_mb: float | None = 2048,
        allow_network: bool = False,
        cache_size: int = 512,
        start_timeout_s: float = 180.0,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        isolated: bool = True,
        name: str = "remote",
    ) -> None:
        n = n_servers if n_servers is not None else (os.cpu_count() or 1)
        if n < 1:
            raise ToolRuntimeError(f"n_servers must be >= 1, got {n}")
        if timeout_s <= 0:
            raise ToolRuntimeError(f"timeout_s must be > 0, got {timeout_s}")
        python = str(python_executable)
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            raise ToolRuntimeError(f"the foreign interpreter {python!r} does not exist or is not executable: set up its environment first")
        self.python = python
        self.server_spec = str(server)
        self.options = dict(options or {})
        self.n_servers = n
        self.timeout_s = float(timeout_s)
        self.memory_mb = memory_mb
        self.allow_network = allow_network
        self.cache_size = cache_size
        self.start_timeout_s = start_timeout_s
        self.env = dict(env) if env is not None else None
        self.cwd = str(cwd) if cwd is not None else None
        self.isolated = isolated
        self.name = name
        self.restarts = 0
        self.server_info: dict[str, Any] = {}
        self._next_id = 0
        self._closed = False
        self._fresh: State | None = None
        self._servers: list[_Server] = []
        self._finalizer = weakref.finalize(self, RemoteRuntime._shutdown, self._servers)
        pending = [self._start() for _ in range(n)]
        try:
            for srv in pending:
                self._servers.append(self._await_ready(srv))
            pending = []
            self.catalog: Catalog = catalog if catalog is not None else self._ask_catalog()
        except BaseException:
            for srv in pending:
                _kill(srv)
            self.close()
            raise
        self._names = set(self.catalog.names)

    # -- server lifecycle -------------------------------------------------------------------------------
    def _start(self) -> _Server:
        fd, log = tempfile.mkstemp(prefix="libra-remote-", suffix=".log")
        cmd = [self.python, *(["-I"] if self.isolated else []), str(SERVER_SCRIPT), "--backend", self.server_spec]
        try:
            with os.fdopen(fd, "wb") as err:
                proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    env=self.env,
                    cwd=self.cwd,
                    start_new_session=True,  # its own process group: a kill takes its children too
                    bufsize=0,
                )
        except OSError as exc:
            raise ToolRuntimeError(f"cannot start {self.python!r} ({exc.strerror}): check the foreign environment") from None
        assert proc.stdout is not None
        srv = _Server(proc, proc.stdout.fileno(), Path(log), _Store(self.cache_size))
        try:
            srv.send(("init", self.options, self.memory_mb, self.allow_network, self.cache_size))
        except OSError:
            pass  # it died at once: reported by _await_ready
        return srv

    def _await_ready(self, srv: _Server) -> _Server:
        if not srv.poll(self.start_timeout_s):
            tail = srv.log_tail()
            _kill(srv)
            raise ToolRuntimeError(f"a {self.name} server did not start within {self.start_timeout_s:.0f}s{': ' + tail if tail else ''}")
        try:
            msg = srv.recv()
        except (EOFError, OSError, pickle.UnpicklingError):
            srv.proc.wait(timeout=5)
            tail = srv.log_tail()
            _kill(srv)
            raise ToolRuntimeError(f"a {self.name} server died while starting ({_signal_name(srv.proc.returncode)}){': ' + tail if tail else ''}") from None
        if msg[0] != "ready":
            _kill(srv)
            raise ToolRuntimeError(f"the {self.name} backend failed to start: {msg[1]}")
        self.server_info = dict(msg[1])
        return srv

    def _replace(self, index: int) -> None:
        _kill(self._servers[index])
        self.restarts += 1
        self._servers[index] = self._await_ready(self._start())

    @staticmethod
    def _shutdown(servers: list[_Server]) -> None:
        for s in servers:
            try:
                s.send(("close",))
            except (OSError, ValueError):
                pass
        for s in servers:
            try:
                s.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            _kill(s)
        servers.clear()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._finalizer()

    def __enter__(self) -> "RemoteRuntime":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def pids(self) -> list[int]:
        return [s.proc.pid for s in self._servers]

    # -- simple requests on server 0 --------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ToolRuntimeError(f"the {self.name} runtime is closed: create a new one")

    def _request0(self, msg: tuple[Any, ...], what: str) -> Any:
        """Send a one-off request to server 0 (replacing it once if it dies), return its reply."""
        self._check_open()
        for attempt in range(2):
            srv = self._servers[0]
            self._next_id += 1
            try:
                srv.send((msg[0], self._next_id, *msg[1:]))
                if not srv.poll(max(self.timeout_s, 120.0)):
                    raise TimeoutError
                reply = srv.recv()
            except (EOFError, OSError, TimeoutError, pickle.UnpicklingError):
                self._replace(0)
                if attempt:
                    raise ToolRuntimeError(f"a {self.name} server failed {what} twice: run the backend by hand to see why") from None
                continue
            if reply[0] == "raise":
                raise ToolRuntimeError(f"{self.name} server, {what}: {reply[2]}")
            return reply
        raise AssertionError("unreachable")

    def _ask_catalog(self) -> Catalog:
        reply = self._request0(("catalog",), "listing its catalog")
        return Catalog.from_dict({"name": self.name, "tools": reply[2]})

    @staticmethod
    def _state(items: Sequence[tuple[str, str, Any]], have: Mapping[str, Any]) -> State:
        parts = tuple(StatePart(n, k, d if d is not None else have[k]) for n, k, d in items)
        return State(parts_fingerprint(parts), parts)

    def fresh(self) -> State:
        if self._fresh is None:
            reply = self._request0(("fresh",), "building the fresh state")
            self._fresh = self._state(reply[2], {})
            for _, key, _ in reply[2]:
                self._servers[0].known.put(key, True)
        return self._fresh

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        if not config:
            return self.fresh()
        reply = self._request0(("load", dict(config)), "loading a state")
        for _, key, _ in reply[2]:
            self._servers[0].known.put(key, True)
        return self._state(reply[2], {})

    # -- calls ------------------------------------------------------------------------------------------
    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        return self.invoke_many([(state, tool, args or {})])[0]

    def invoke_many(self, calls: Sequence[Call]) -> list[tuple[InvocationRecord, State]]:
        """Run independent calls on all servers at once; results come back in the order of ``calls``."""
        self._check_open()
        calls = list(calls)
        for state, tool, args in calls:
            if tool not in self._names:
                raise UnknownToolError(f"unknown tool {tool!r}: runtime {self.catalog.name!r} has no such tool (names are like {self.catalog.names[0]!r})")
            if not isinstance(args, Mapping):
                raise ToolRuntimeError(f"arguments of {tool!r} must be a JSON object (dict), got {type(args).__name__}")
            if not isinstance(state, State) or not (isinstance(state.payload, tuple) and all(isinstance(p, StatePart) for p in state.payload)):
                raise ToolRuntimeError("expected a State of this runtime: get states from fresh()/invoke()")
        results: list[tuple[InvocationRecord, State] | None] = [None] * len(calls)
        started: list[float] = [0.0] * len(calls)
        queue = deque(range(len(calls)))
        by_fd: dict[int, int] = {}
        failure: str | None = None

        def send(si: int, ci: int, force: frozenset[str] = frozenset()) -> None:
            srv = self._servers[si]
            state, tool, args = calls[ci]
            items = []
            for p in state.payload:
                if p.key not in force and srv.known.touch(p.key):
                    items.append((p.name, p.key, None))
                else:
                    srv.known.put(p.key, True)
                    items.append((p.name, p.key, p.data))
            self._next_id += 1
            srv.busy = (self._next_id, ci, time.monotonic() + self.timeout_s)
            if not started[ci]:
                started[ci] = time.perf_counter()
            try:
                srv.send(("call", self._next_id, tuple(items), tool, dict(args)))
            except (OSError, ValueError):
                pass  # a dead server: its pipe reports EOF below and the call is charged to the crash
            except Exception as exc:  # noqa: BLE001 - unpicklable arguments
                srv.busy = None
                raise ToolRuntimeError(f"cannot send a call of {tool!r} to a {self.name} server ({type(exc).__name__}: {exc}): arguments must be JSON data") from None
            by_fd[srv.fd] = si

        def fail(si: int, text: str) -> None:
            srv = self._servers[si]
            assert srv.busy is not None
            ci = srv.busy[1]
            by_fd.pop(srv.fd, None)
            results[ci] = (InvocationRecord("error", None, {}, text, (time.perf_counter() - started[ci]) * 1000.0), calls[ci][0])
            self._replace(si)

        while queue or by_fd:
            for si, srv in enumerate(self._servers):
                if not queue:
                    break
                if srv.busy is None:
                    send(si, queue.popleft())
            now = time.monotonic()
            deadline = min(self._servers[si].busy[2] for si in by_fd.values())  # type: ignore[index]
            ready, _, _ = select.select(list(by_fd), [], [], max(0.0, deadline - now))
            for fd in ready:
                si = by_fd[fd]
                srv = self._servers[si]
                try:
                    msg = srv.recv()
                except (EOFError, OSError):
                    try:
                        srv.proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        pass
                    fail(si, f"server crashed ({_signal_name(srv.proc.returncode)})")
                    continue
                except pickle.UnpicklingError as exc:
                    fail(si, f"server sent a malformed reply ({exc})")
                    continue
                assert srv.busy is not None
                req_id, ci = srv.busy[0], srv.busy[1]
                if msg[1] != req_id:
                    continue  # stale answer (cannot happen with one request in flight; kept for safety)
                if msg[0] == "miss":
                    srv.busy = None
                    send(si, ci, frozenset(msg[2]))
                    continue
                by_fd.pop(fd)
                srv.busy = None
                srv.calls += 1
                state = calls[ci][0]
                elapsed = (time.perf_counter() - started[ci]) * 1000.0
                if msg[0] == "raise":
                    failure = failure or msg[2]
                    results[ci] = (InvocationRecord("error", None, {}, msg[2], elapsed), state)
                    continue
                rec, wire = msg[2], msg[3]
                record = InvocationRecord(rec["status"], rec.get("output"), rec.get("state_changes") or {}, rec.get("error"), elapsed)
                if wire is None:
                    results[ci] = (record, state)
                else:
                    have = {p.key: p.data for p in state.payload}
                    for _, key, data in wire:
                        if data is not None:
                            srv.known.put(key, True)
                        else:
                            srv.known.touch(key)
                    new = self._state(wire, have)
                    results[ci] = (record, state if new.fingerprint == state.fingerprint else new)
            now = time.monotonic()
            for si in list(by_fd.values()):
                busy = self._servers[si].busy
                if busy is not None and busy[2] <= now:
                    fail(si, f"timeout after {self.timeout_s!r}s")
        if failure is not None:
            raise ToolRuntimeError(f"{self.name} server: {failure}")
        return results  # type: ignore[return-value]
