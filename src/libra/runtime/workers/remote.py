"""Out-of-process runtimes: tools that run under *another* Python interpreter, spoken to over pipes.

Why: some catalogs cannot share our environment (AppWorld pins pydantic<2 and old fastapi). They get their own
virtual environment, and :class:`RemoteRuntime` starts ``n_servers`` processes of that environment's interpreter
running :mod:`libra.runtime.workers.remote_server` (standard-library only, loaded by path) with a catalog-specific
*backend* (see that module for the backend interface and the wire format). The client implements the
:class:`~libra.runtime.base.Runtime` protocol, so induction cannot tell it from an in-process runtime.

:class:`RemoteRuntime` is the :class:`~libra.runtime.workers.executor.Executor` over :class:`InterpreterTransport`, so
isolation matches :mod:`libra.runtime.workers.isolation`: each call must answer within ``timeout_s`` or its server is
killed (with everything it started) and the call becomes an ``error`` record ("timeout after 5.0s"); a server
that dies gives "server crashed (signal SIGSEGV)"; a dead server is replaced before the next call. The server
itself enters the sandbox (:mod:`libra.runtime.workers.sandbox`, loaded by path: its own network namespace and session,
processes a call starts killed when it ends) and caps its address space (``RLIMIT_AS``: size after start-up +
``memory_mb``). Replies are unpickled with a loader that refuses every global, so nothing a tool does can run
code in the caller.

States are tuples of :class:`~libra.runtime.base.StatePart` (bytes per stateful piece, keyed by content hash). As
in the worker pool, the client mirrors which keys each server holds and sends only keys for those, so a read call
costs two small messages whatever the state's size; :meth:`RemoteRuntime.invoke_many` keeps every server busy.
"""

from __future__ import annotations

import fcntl
import io
import os
import pickle
import select
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libra.catalog import Catalog
from libra.runtime.base import (
    InvocationRecord,
    State,
    StatePart,
    ToolRuntimeError,
    parts_fingerprint,
)
from libra.runtime.workers import sandbox
from libra.runtime.workers.executor import DEFAULT_RECYCLE_MB, Executor
from libra.runtime.workers.guard import DEFAULT_MAX_RECORD_BYTES
from libra.runtime.workers.lru import DEFAULT_CACHE_BYTES
from libra.runtime.workers.stream import Call
from libra.runtime.workers.transport import Channel, Transport, WorkerLost, _signal_name

__all__ = ["PIPE_BYTES", "PROTOCOL", "SERVER_SCRIPT", "Call", "InterpreterTransport", "RemoteRuntime", "widen_pipe"]

#: the server script, started by path under the foreign interpreter
SERVER_SCRIPT = Path(__file__).with_name("remote_server.py")
PROTOCOL = 4
_HEADER_SIZE = 8
#: the capacity asked for each pipe to and from a server (the kernel may cap it: ``/proc/sys/fs/pipe-max-size``)
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int, size: int = PIPE_BYTES) -> int:
    """Ask the kernel for a pipe buffer of ``size`` bytes on ``fd`` (Linux ``F_SETPIPE_SZ``); returns the capacity
    it has now (0 when the platform cannot tell).

    Why: a message carrying a state part (an app's database, hundreds of kilobytes) does not fit a default pipe of
    64 KiB, so the writer stops every 64 KiB until the reader has taken the last piece: a server that has finished
    its call waits, a core idle, until the caller comes back to read the rest, and each piece costs two context
    switches. With room for the whole message the writer hands it over in one write and goes on. It changes no
    byte that is read; where the kernel refuses (another OS, a lower limit) the pipe keeps the size it has.
    """
    setter, getter = getattr(fcntl, "F_SETPIPE_SZ", None), getattr(fcntl, "F_GETPIPE_SZ", None)
    if setter is None or getter is None:
        return 0
    try:
        limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    except (OSError, ValueError):
        limit = size
    try:
        fcntl.fcntl(fd, setter, min(size, limit))
    except OSError:
        pass
    try:
        return fcntl.fcntl(fd, getter)
    except OSError:
        return 0


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data only: any global (class, function) in a reply is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a remote server sent a {module}.{name} object; only plain data is accepted")


def _loads(blob: bytes) -> Any:
    return _PlainUnpickler(io.BytesIO(blob)).load()


def _frame(obj: Any) -> bytes:
    blob = pickle.dumps(obj, protocol=PROTOCOL)
    return len(blob).to_bytes(_HEADER_SIZE, "big") + blob


def _wire(items: Any) -> tuple[str, bool, Any]:
    """A server's parts as the executor's state wire: the fingerprint is computed here from names and keys."""
    items = tuple(items)
    return parts_fingerprint(tuple(StatePart(n, k, None) for n, k, _ in items)), True, items


class _ServerChannel(Channel):
    """A server process of the foreign interpreter, spoken to in the framed-pickle protocol of remote_server.py.

    It translates the executor's requests and replies (see :mod:`libra.runtime.workers.worker`) to and from that
    protocol.
    """

    def __init__(self, proc: subprocess.Popen, log: Path, catalog_name: str) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.pid = proc.pid
        self.fd = proc.stdout.fileno()
        self.log = log
        self.catalog_name = catalog_name
        self.info = {}

    # -- framing ------------------------------------------------------------------------------------------
    def read_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = os.read(self.fd, min(n, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def read_frame(self) -> Any:
        size = int.from_bytes(self.read_exact(_HEADER_SIZE), "big")
        return _loads(self.read_exact(size))

    def write_frame(self, obj: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(_frame(obj))
        self.proc.stdin.flush()

    # -- the executor's protocol ----------------------------------------------------------------------------
    def send(self, msg: tuple[Any, ...]) -> None:
        kind = msg[0]
        if kind == "call":
            _, req_id, _fp, _split, items, tool, args = msg
            self.write_frame(("call", req_id, items, tool, args))
        elif kind == "load":
            self.write_frame(("fresh", msg[1]) if msg[2] is None else ("load", msg[1], msg[2]))
        else:
            self.write_frame(msg)

    def recv(self) -> tuple[Any, ...]:
        try:
            msg = self.read_frame()
        except (EOFError, OSError):
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            raise WorkerLost(f"server crashed ({_signal_name(self.proc.returncode)})") from None
        except pickle.UnpicklingError as exc:
            raise WorkerLost(f"server sent a malformed reply ({exc})") from None
        kind = msg[0]
        if kind == "done":
            rec, items = msg[2], msg[3]
            record = InvocationRecord(
                rec["status"],
                rec.get("output"),
                rec.get("state_changes") or {},
                rec.get("error"),
                0.0,
                rec.get("diagnostics") or {},
            )
            return ("done", msg[1], record, None if items is None else _wire(items))
        if kind == "state":
            return ("state", msg[1], _wire(msg[2]))
        if kind == "catalog":
            return ("catalog", msg[1], Catalog.from_dict({"name": self.catalog_name, "tools": msg[2]}))
        return msg

    def poll(self, timeout_s: float) -> bool:
        return bool(select.select([self.fd], [], [], max(0.0, timeout_s))[0])

    def fileno(self) -> int:
        return self.fd

    def join(self, timeout_s: float) -> None:
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        sandbox.kill_process_tree(self.proc.pid, alive=self.proc.poll() is None)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self.log.unlink()
        except OSError:
            pass

    def log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text[-lines:])


@dataclass
class InterpreterTransport(Transport):
    """Sandboxed servers of another Python interpreter running :mod:`libra.runtime.workers.remote_server` with a
    backend.

    The options are :class:`RemoteRuntime`'s. Servers do not time calls, so the executor does; they only take
    states made of parts.
    """

    python: str
    server_spec: str
    options: Mapping[str, Any]
    memory_mb: float | None
    allow_network: bool
    cache_size: int
    env: Mapping[str, str] | None
    cwd: str | None
    isolated: bool
    name: str
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    cache_bytes: int | None = DEFAULT_CACHE_BYTES

    times_calls = True
    split_states_only = True
    remotable = True  # plain settings: any machine with the same foreign environment can start its servers
    request_timeout_s = 120.0
    stop_grace_s = 2.0

    def __post_init__(self) -> None:
        self.noun = f"{self.name} server"

    def start(self) -> Channel:
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
            raise ToolRuntimeError(
                f"cannot start {self.python!r} ({exc.strerror}): check the foreign environment"
            ) from None
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                widen_pipe(stream.fileno())
        channel = _ServerChannel(proc, Path(log), self.name)
        try:
            channel.write_frame(
                (
                    "init",
                    dict(self.options),
                    self.memory_mb,
                    self.allow_network,
                    self.cache_size,
                    self.max_record_bytes,
                    self.cache_bytes,
                )
            )
        except OSError:
            pass  # it died at once: reported by ready()
        return channel

    def ready(self, channel: Channel, timeout_s: float) -> dict[str, Any]:
        assert isinstance(channel, _ServerChannel)
        if not channel.poll(timeout_s):
            tail = channel.log_tail()
            channel.kill()
            raise ToolRuntimeError(
                f"a {self.name} server did not start within {timeout_s:.0f}s{': ' + tail if tail else ''}"
            )
        try:
            msg = channel.read_frame()
        except (EOFError, OSError, pickle.UnpicklingError):
            channel.proc.wait(timeout=5)
            tail = channel.log_tail()
            channel.kill()
            raise ToolRuntimeError(
                f"a {self.name} server died while starting "
                f"({_signal_name(channel.proc.returncode)}){': ' + tail if tail else ''}"
            ) from None
        if msg[0] != "ready":
            channel.kill()
            raise ToolRuntimeError(f"the {self.name} backend failed to start: {msg[1]}")
        return dict(msg[1])


class RemoteRuntime(Executor):
    """The Runtime protocol over server processes of a foreign interpreter.

    ``python_executable`` is the foreign interpreter; ``server`` names the backend: a ``.py`` path (loaded by path,
    so it needs nothing but the foreign packages) or an importable ``module``, optionally ``:factory``.
    ``options`` is passed to the backend's factory. ``catalog`` is the tool catalog; when None it is asked from
    the backend (``catalog()``). ``n_servers`` defaults to the CPU count. ``isolated`` runs the interpreter with
    ``-I`` (no user site, no ``PYTHON*`` variables: the foreign environment sees nothing of ours). Each server keeps
    ``cache_size`` state parts and at most ``cache_bytes`` of them (None: no bound in bytes). A server whose resident
    memory grew by more than ``recycle_mb`` since it started is replaced between two calls (None: never; see
    :meth:`~libra.runtime.workers.executor.Executor._recycle_if_grown`).
    """

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
        cache_bytes: int | None = DEFAULT_CACHE_BYTES,
        start_timeout_s: float = 180.0,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        isolated: bool = True,
        name: str = "remote",
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        recycle_mb: float | None = DEFAULT_RECYCLE_MB,
    ) -> None:
        n = n_servers if n_servers is not None else (os.cpu_count() or 1)
        self.check_sizes(n, timeout_s, "n_servers")
        python = str(python_executable)
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            raise ToolRuntimeError(
                f"the foreign interpreter {python!r} does not exist or is not executable: set up its environment first"
            )
        self.python = python
        self.server_spec = str(server)
        self.options = dict(options or {})
        self.n_servers = n
        self.memory_mb = memory_mb
        self.allow_network = allow_network
        self.env = dict(env) if env is not None else None
        self.cwd = str(cwd) if cwd is not None else None
        self.isolated = isolated
        self.name = name
        transport = InterpreterTransport(
            python,
            self.server_spec,
            self.options,
            memory_mb,
            allow_network,
            cache_size,
            self.env,
            self.cwd,
            isolated,
            name,
            int(max_record_bytes),
            cache_bytes,
        )
        super().__init__(
            transport,
            n,
            timeout_s,
            cache_size=cache_size,
            cache_bytes=cache_bytes,
            start_timeout_s=start_timeout_s,
            catalog=catalog,
            recycle_mb=recycle_mb,
        )

    @property
    def server_info(self) -> dict[str, Any]:
        """What the server started last said when ready (pid, Python version, network isolation)."""
        return self.worker_info

    def _closed_text(self) -> str:
        return f"the {self.name} runtime is closed: create a new one"

    def _lost_text(self, what: str) -> str:
        return f"a {self.name} server failed {what} twice: run the backend by hand to see why"

    def _raised_text(self, what: str, text: str) -> str:
        return f"{self.name} server, {what}: {text}"

    def _failure_text(self, text: str) -> str:
        return f"{self.name} server: {text}"

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        if not config:
            return self.fresh()
        return self._load(config, "loading a state")

    def __enter__(self) -> RemoteRuntime:
        return self
