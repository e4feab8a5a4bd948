"""Connections to MCP servers for a synchronous runtime: server specs, process start, one event loop thread.

Why this shape:

- The runtime interface is synchronous, the ``mcp`` SDK is async and its connections hold task groups that must
  be entered and left by one task. So each :class:`Connection` has an *owner task* on a private event loop
  thread: it opens the SDK's ``Client``, lists the tools, then serves calls from a queue, and it alone closes
  the client. Callers block on futures.
- Servers are started by :func:`start_process`, the one place that launches a server process (stdio servers
  and the processes behind Streamable HTTP urls alike): each runs in its own session (process group), with a
  pinned environment (:func:`pinned_environment`), its stderr in a log file whose tail names the failure, and
  its pid recorded so :meth:`Connection.stop` can end the whole group. Isolation (network namespaces) plugs in
  there.
- stdio uses this module's own transport (:class:`_StdioTransport`) rather than the SDK's, for three reasons: the
  process is started by :func:`start_process`, a line on stdout that is not JSON-RPC ends the connection at
  once with the line quoted (instead of waiting for the call's timeout), and a hung server is killed after a
  short grace period.
- Protocol eras: the 2.x client's ``mode="auto"`` probes ``server/discover`` and falls back to the initialize
  handshake. When that connect still fails (a 1.x server that chokes on the probe), the server is restarted and
  connected with ``mode="legacy"`` (the initialize handshake alone), and that mode is kept for its restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libra.runtime.base import ToolRuntimeError
from libra.runtime.mcp.spec import ServerSpec

#: the instant every server's clock-dependent git metadata is pinned to (git's internal "<unix> <tz>" format)
PINNED_GIT_DATE = "1735732800 +0000"  # 2025-01-01 12:00 UTC, the Python runtime's fixed clock
CONNECTION_CLOSED = -32000  # JSON-RPC code the SDK gives pending requests when the connection ends
REQUEST_TIMEOUT = -32001  # ... and requests that outlived the client's read timeout


class McpServerError(ToolRuntimeError):
    """An MCP server cannot be started or connected: names the server and the tail of its stderr."""


class CallFailed(Exception):
    """A call did not produce a result: the server crashed, hung, broke the protocol or answered with an error.
    ``fatal`` says the connection is gone (the server must be restarted)."""

    def __init__(self, message: str, fatal: bool) -> None:
        super().__init__(message)
        self.fatal = fatal


def find_command(command: str, path: str | None = None) -> str | None:
    """Where a server ``command`` is: an absolute path as it is, a bare name on ``path`` (the caller's ``PATH``
    by default) and then in libra's managed server directories (:func:`libra.runtime.mcp.setup.managed_bin_dirs`,
    what ``python -m libra.runtime.mcp.setup`` installs into), else None. A relative path with a directory part
    (``./server.py``) is found from the server's working directory when it starts, so it is returned unchanged.

    Why the second place: the servers libra pins live in caches outside any ``PATH``; looking there after ``PATH``
    lets a project file name them by their usual command while a user's own install of the same command wins."""
    from libra.runtime.mcp.setup import managed_bin_dirs

    if os.sep in command:
        return command if not os.path.isabs(command) or shutil.which(command) else None
    found = shutil.which(command, path=path if path is not None else os.environ.get("PATH"))
    if found is None:
        found = shutil.which(command, path=os.pathsep.join(str(d) for d in managed_bin_dirs()))
    return found


def missing_command_message(command: str) -> str:
    """One line saying a server command was found nowhere and how to get it (the pinned servers name their
    installer)."""
    from libra.runtime.mcp.setup import MANAGED_COMMANDS, managed_bin_dirs

    where = ", ".join(str(d) for d in managed_bin_dirs())
    fix = (
        "install it with `python -m libra.runtime.mcp.setup` (or `make mcp-servers`)"
        if command in MANAGED_COMMANDS
        else "install it, put it on PATH or give its full path"
    )
    return f"command {command!r} not found on PATH nor in libra's server directories ({where}): {fix}"


def inherited_environment() -> dict[str, str]:
    """The caller's variables a server may see (the SDK's safe list: who and where the user is, how to find
    programs); the rest of the caller's environment (tokens, proxies) stays out unless a server's ``env`` names it."""
    return {
        k: v
        for k in ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
        if (v := os.environ.get(k)) is not None and not v.startswith("()")
    }


def pinned_environment() -> dict[str, str]:
    """What every server process gets before its own ``env``: the SDK's safe inherited variables plus pinned
    clock, locale and identity settings, so identical calls write identical files.

    Why each: ``TZ``/``LC_ALL`` fix how times and text are rendered; ``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` fix who
    and when a commit is (so a commit's hash is a function of its content); ``GIT_CONFIG_GLOBAL``/``NOSYSTEM``
    keep the user's and the machine's git settings out; ``PYTHONHASHSEED`` fixes set ordering in Python
    servers; ``SOURCE_DATE_EPOCH`` is honoured by tools that embed build times. Clock readings a server takes
    from the system clock itself cannot be pinned from outside: they only reach outputs, and the runtime's
    memo makes a repeated call return its first record, so they never change a state or a verdict.
    """
    env = inherited_environment()
    env.update(
        {
            "TZ": "UTC",
            "LC_ALL": "C.UTF-8",
            "GIT_AUTHOR_NAME": "libra",
            "GIT_AUTHOR_EMAIL": "libra@example.invalid",
            "GIT_COMMITTER_NAME": "libra",
            "GIT_COMMITTER_EMAIL": "libra@example.invalid",
            "GIT_AUTHOR_DATE": PINNED_GIT_DATE,
            "GIT_COMMITTER_DATE": PINNED_GIT_DATE,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "PYTHONHASHSEED": "0",
            "SOURCE_DATE_EPOCH": PINNED_GIT_DATE.split()[0],
            "NO_COLOR": "1",
        }
    )
    return env


#: run in a fresh interpreter before every server: tie the server's life to this process (it is killed when the
#: build dies, even by SIGKILL), enter an empty network namespace unless the server may use the network -- both
#: with the tool sandbox's own functions (loaded by path: they need only the standard library) -- then become the
#: server, so its pid is the server's. argv: sandbox module, parent pid, "network" or "no-network", server argv.
_LAUNCHER = (
    "import importlib.util, os, sys\n"
    "spec = importlib.util.spec_from_file_location('libra_sandbox', sys.argv[1])\n"
    "sandbox = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(sandbox)\n"
    "sandbox.die_with_parent(int(sys.argv[2]))\n"
    "if sys.argv[3] == 'no-network':\n"
    "    sandbox.unshare_network()\n"
    "try:\n"
    "    os.execvp(sys.argv[4], sys.argv[4:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot run {sys.argv[4]!r}: {exc.strerror}\\n')\n"
    "    os._exit(127)\n"
)


async def start_process(
    argv: list[str], env: Mapping[str, str], cwd: str | None, log: Path, *, stdio: bool, allow_network: bool
) -> Any:
    """Start one server process: its own session (so its whole group can be ended), stderr (and, for a server
    reached over HTTP, stdout) appended to ``log``, pipes for stdin/stdout when it speaks stdio, killed when this
    process dies (:func:`~libra.runtime.workers.sandbox.die_with_parent`: a build killed with SIGKILL leaves no server
    behind), and -- unless ``allow_network`` -- its own empty network namespace. A small launcher does both and
    then execs the server, so the pid is the server's; see :func:`network_isolation` for what it got.

    This is the single place a server process is launched, so process isolation wraps it here."""
    import subprocess
    import sys

    import anyio

    from libra.runtime.workers import sandbox

    found = find_command(argv[0], env.get("PATH"))  # a relative path is found from the server's cwd: exec tells
    if found is None:  # one message, launcher or not
        raise FileNotFoundError(errno.ENOENT, "no such executable file", argv[0])
    if os.sep not in argv[0] and shutil.which(argv[0], path=env.get("PATH")) is None:
        argv = [found, *argv[1:]]  # found in libra's managed server directories
    argv = [
        sys.executable,
        "-I",
        "-S",
        "-c",
        _LAUNCHER,
        sandbox.__file__,
        str(os.getpid()),
        "network" if allow_network else "no-network",
        *argv,
    ]
    with open(log, "ab") as errlog:  # noqa: ASYNC230 - a local log file opens at once
        return await anyio.open_process(
            argv,
            stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdio else errlog,
            stderr=errlog,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )


def network_isolation(pid: int | None) -> str:
    """How a running server is kept off the network: ``"namespace"`` when it is in another network namespace
    than this process, else ``"allowed"`` (no Python-level patch reaches a foreign process)."""
    from libra.runtime.workers import sandbox

    if pid is None:
        return sandbox.ALLOWED
    try:
        return (
            sandbox.NAMESPACE
            if os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
            else sandbox.ALLOWED
        )
    except OSError:
        return sandbox.ALLOWED


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (for ``{port}``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stderr_tail(log: Path, lines: int = 4, chars: int = 400) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    tail = " | ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())
    return tail[-chars:]


async def end_process_group(proc: Any, grace: float = 0.5) -> None:
    """Close stdin, give the server ``grace`` seconds, then SIGTERM and SIGKILL its process group."""
    import anyio

    if proc.stdin is not None:
        with contextlib.suppress(Exception):  # already closed or broken
            await proc.stdin.aclose()
    for sig, wait in ((None, grace), (signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0)):
        if sig is not None:
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait
        while proc.returncode is None and time.monotonic() < deadline:
            await anyio.sleep(0.01)
        if proc.returncode is not None:
            break
    from libra.runtime.workers import sandbox

    # what outlived the leader: its group, its session, and (while it lives) descendants that left both
    sandbox.kill_process_tree(proc.pid, alive=proc.returncode is None)


class _StdioTransport:
    """newline-delimited JSON-RPC over a started process's stdin/stdout (see the module docstring for why)."""

    def __init__(self, proc: Any, on_garbage: Callable[[str], None]) -> None:
        self.proc = proc
        self.on_garbage = on_garbage

    @asynccontextmanager
    async def streams(self) -> AsyncIterator[Any]:
        import anyio
        import mcp_types
        from anyio.streams.text import TextReceiveStream
        from mcp.shared.message import SessionMessage

        proc = self.proc
        read_send, read_recv = anyio.create_memory_object_stream(0)
        write_send, write_recv = anyio.create_memory_object_stream(0)

        async def reader() -> None:
            async with read_send:
                buffer = ""
                try:
                    async for chunk in TextReceiveStream(proc.stdout, errors="replace"):
                        lines = (buffer + chunk).split("\n")
                        buffer = lines.pop()
                        for line in lines:
                            if not line.strip():
                                continue
                            try:
                                message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            except ValueError:
                                self.on_garbage(line)
                                return  # closing the stream fails every pending request at once
                            await read_send.send(SessionMessage(message))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                    return

        async def writer() -> None:
            try:
                async with write_recv:
                    async for message in write_recv:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                        await proc.stdin.send(data.encode())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await read_send.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_recv, write_send
            finally:
                with anyio.CancelScope(shield=True):
                    await end_process_group(proc)
                tg.cancel_scope.cancel()


class _LoopThread:
    """A private asyncio loop on a daemon thread, shared by a runtime's connections."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="libra-mcp", daemon=True)
        self.thread.start()

    def submit(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@dataclass
class ToolInfo:
    """One tool as ``tools/list`` gave it (plain data)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    title: str | None = None


class Connection:
    """One running server (started lazily, restarted after a failure) seen through a blocking interface."""

    def __init__(
        self,
        spec: ServerSpec,
        sandbox: Path,
        logdir: Path,
        loop: _LoopThread,
        environment: Callable[[], dict[str, str]] = pinned_environment,
    ) -> None:
        self.spec = spec
        self.environment = environment  # what the server's own ``env`` is laid over (pinned for builds)
        self.sandbox = sandbox
        self.log = logdir / f"{spec.name}.log"
        self.loop = loop
        self.mode = "auto"
        self.tools: list[ToolInfo] = []
        self.pids: list[int] = []  # every process this connection started (tests check none is left)
        self.starts = 0
        self.protocol: str | None = None  # the protocol version negotiated at the last start
        self.dirty = False  # whether its memory holds calls since its start (kept by the runtime)
        self.isolation: str | None = None  # network isolation of the last start ("namespace" / "allowed")
        self._jobs: asyncio.Queue[Any] | None = None
        self._done: Any = None
        self._garbage: str | None = None
        self._proc: Any = None

    @property
    def alive(self) -> bool:
        return self._jobs is not None

    @property
    def running(self) -> bool:
        """Alive, and its process (when it has one) has not exited on its own. /proc is read too: the event
        loop notices an exit only when it next runs, and a process killed a moment ago is already a zombie."""
        if not self.alive or self._proc is None:
            return self.alive
        if self._proc.returncode is not None:
            return False
        try:
            with open(f"/proc/{self._proc.pid}/stat", "rb") as fh:
                return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
        except (OSError, IndexError):
            return False

    # -- lifecycle ----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start (or restart) the server and list its tools; :class:`McpServerError` when it cannot."""
        self.stop()
        self.dirty = False
        try:
            self._start_in(self.mode)
        except McpServerError:
            if self.mode != "auto":
                raise
            self._start_in("legacy")  # a server that chokes on the discover probe: the initialize handshake alone
            self.mode = "legacy"
        self.starts += 1

    def _start_in(self, mode: str) -> None:
        import concurrent.futures

        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.write_bytes(b"")
        ready = self.loop.submit(self._launch(mode)).result()
        try:
            self.tools = ready.result(timeout=self.spec.start_timeout + 5)
        except McpServerError:
            self.stop()
            raise
        except concurrent.futures.TimeoutError:
            self.stop()
            raise self._start_error(f"no answer to the handshake within {self.spec.start_timeout:g} s") from None

    async def _launch(self, mode: str) -> Any:
        """Create the job queue and the owner task on the loop; returns a concurrent future for its tool list."""
        import concurrent.futures

        self._jobs = asyncio.Queue()
        ready: concurrent.futures.Future[list[ToolInfo]] = concurrent.futures.Future()
        self._done = asyncio.ensure_future(self._owner(self._jobs, ready, mode))
        return ready

    def _start_error(self, why: str) -> McpServerError:
        tail = stderr_tail(self.log)
        return McpServerError(
            f"MCP server {self.spec.name!r} failed to start: {why}"
            + (f"; stderr: {tail}" if tail else "; no stderr output")
        )

    async def _owner(self, jobs: asyncio.Queue[Any], ready: Any, mode: str) -> None:
        """Connect, give ``ready`` the tools (or the failure), then run jobs until a None or a fatal failure."""
        from mcp import Client

        spec = self.spec.expanded(self.sandbox, free_port() if self.spec.uses_port else None)
        env = {**self.environment(), **spec.env}
        self._garbage = None
        try:
            async with AsyncExitStack() as stack:
                try:
                    client = await self._connect(stack, spec, env, Client, mode)
                    tools = await self._list_tools(client)
                except McpServerError as exc:
                    ready.set_exception(exc)
                    return
                except BaseException as exc:  # noqa: BLE001 - any connect failure is the server's, with its stderr
                    ready.set_exception(await self._connect_error(exc))
                    return
                ready.set_result(tools)
                while True:
                    job = await jobs.get()
                    if job is None or not await self._run_job(client, job, spec.name):
                        return
        finally:
            self._jobs = None

    async def _connect(self, stack: AsyncExitStack, spec: Any, env: dict[str, str], client_cls: Any, mode: str) -> Any:
        """Start the server's process (when it has a command) and enter a client of it into ``stack``."""
        if spec.command:
            try:
                stdio = spec.url is None
                self._proc = await start_process(
                    [spec.command, *spec.args],
                    env,
                    spec.cwd or str(self.sandbox),
                    self.log,
                    stdio=stdio,
                    allow_network=spec.allow_network or not stdio,
                )
            except OSError as exc:
                raise self._start_error(f"cannot run {spec.command!r} ({exc.strerror or exc})") from None
            self.pids.append(self._proc.pid)
        if spec.url is None:
            transport = _StdioTransport(self._proc, self._saw_garbage)
            streams = await stack.enter_async_context(transport.streams())
            client_arg: Any = _Streams(streams)
        else:
            if self._proc is not None:
                stack.push_async_callback(end_process_group, self._proc)
                await self._wait_for_port(spec.url, spec.start_timeout)
            client_arg = spec.url
        # read_timeout bounds each handshake request (a cancel scope here would hold the client's task group)
        client = await stack.enter_async_context(
            client_cls(client_arg, mode=mode, cache=None, read_timeout_seconds=spec.start_timeout)
        )
        self.protocol, self.server_version = client.protocol_version, getattr(client.server_info, "version", None)
        self.isolation = network_isolation(self._proc.pid if self._proc is not None else None)
        return client

    async def _connect_error(self, exc: BaseException) -> McpServerError:
        """Why connecting failed: the server's exit status or stray output when it has one, else the exception."""
        import anyio

        if self._proc is not None:
            with anyio.move_on_after(1.0):  # a server that died: report its exit status
                while self._proc.returncode is None:
                    await anyio.sleep(0.01)
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        why = f"it {self._garbage_text()}" if self._garbage else f"{type(exc).__name__}: {exc}".rstrip(": ")
        if self._proc is not None and self._proc.returncode is not None:
            also = f" (it {self._garbage_text()})" if self._garbage else ""
            why = f"it exited with status {self._proc.returncode}{also}"
        return self._start_error(why)

    async def _run_job(self, client: Any, job: Any, name: str) -> bool:
        """Run one call and settle its future; False when the failure ends the server (the owner then ends)."""
        import anyio

        tool, args, timeout, result = job
        try:
            with anyio.fail_after(timeout):
                out = await client.call_tool(tool, args)
        except TimeoutError:
            hung = f"MCP server {name!r} did not answer within {timeout:g} s (hung); it was restarted"
            result.set_exception(CallFailed(hung, True))
            return False
        except BaseException as exc:  # noqa: BLE001
            if getattr(exc, "code", None) == CONNECTION_CLOSED and self._proc is not None:
                with anyio.move_on_after(0.5):  # let a crashed server's exit status arrive
                    while self._proc.returncode is None and self._garbage is None:
                        await anyio.sleep(0.01)
            result.set_exception(self._call_error(exc))
            return not result.exception().fatal  # type: ignore[union-attr]
        result.set_result(out)
        return True

    async def _wait_for_port(self, url: str, timeout: float) -> None:
        """Wait until the HTTP server behind ``url`` accepts connections (or its process exits)."""
        from urllib.parse import urlsplit

        import anyio

        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.returncode is not None:
                raise self._start_error(f"it exited with status {self._proc.returncode}")
            try:
                stream = await anyio.connect_tcp(host, port)
                await stream.aclose()
                return
            except OSError:
                await anyio.sleep(0.05)
        raise self._start_error(f"nothing listens on {host}:{port} after {timeout:g} s")

    async def _list_tools(self, client: Any) -> list[ToolInfo]:
        tools: list[ToolInfo] = []
        cursor = None
        for _ in range(100):  # a paginator that never ends must not hang the start
            page = await client.list_tools(cursor=cursor)
            for t in page.tools:
                ann = t.annotations.model_dump(exclude_none=True, by_alias=True) if t.annotations is not None else {}
                tools.append(
                    ToolInfo(t.name, t.description or "", dict(t.input_schema or {}), t.output_schema, ann, t.title)
                )
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _saw_garbage(self, line: str) -> None:
        self._garbage = line

    def _garbage_text(self) -> str:
        if self._garbage is None:
            return ""
        return f"wrote non-JSON-RPC output to stdout: {self._garbage.strip()[:120]!r}"

    def _call_error(self, exc: BaseException) -> CallFailed:
        from mcp.shared.exceptions import MCPError

        name = self.spec.name
        if self._garbage is not None:
            return CallFailed(f"MCP server {name!r} {self._garbage_text()}; it was restarted", True)
        if self._proc is not None and self._proc.returncode is not None:
            tail = stderr_tail(self.log)
            return CallFailed(
                f"MCP server {name!r} exited with status {self._proc.returncode} during the call; it was restarted"
                + (f" (stderr: {tail})" if tail else ""),
                True,
            )
        if isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT:
            return CallFailed(
                f"MCP server {name!r} did not answer within {self.spec.start_timeout:g} s (hung); it was restarted",
                True,
            )
        if isinstance(exc, MCPError):
            fatal = exc.code == CONNECTION_CLOSED
            return CallFailed(
                f"MCP server {name!r} answered with error {exc.code}: {exc.error.message}"
                + ("; it was restarted" if fatal else ""),
                fatal,
            )
        return CallFailed(f"MCP server {name!r}: {type(exc).__name__}: {exc}; it was restarted", True)

    # -- calls ------------------------------------------------------------------------------------------
    def call(self, tool: str, args: Mapping[str, Any]) -> Any:
        """The server's ``CallToolResult`` for one call; :class:`CallFailed` when there is none."""
        if not self.alive:
            self.start()
        import concurrent.futures

        result: concurrent.futures.Future[Any] = concurrent.futures.Future()
        jobs = self._jobs
        self.loop.loop.call_soon_threadsafe(jobs.put_nowait, (tool, dict(args), self.spec.timeout, result))  # type: ignore[union-attr]
        try:
            return result.result(timeout=self.spec.timeout + 10)
        except CallFailed as exc:
            if exc.fatal:
                self.stop()
            raise
        except concurrent.futures.TimeoutError:  # the owner itself is stuck: end it and the server
            self.stop()
            raise CallFailed(
                f"MCP server {self.spec.name!r} did not answer within {self.spec.timeout:g} s (hung); it was restarted",
                True,
            ) from None

    def retire(self) -> None:
        """End the server without waiting for it to exit: the owner ends its client (and so the server) when it
        reads the None, and :meth:`stop` -- at the latest when the runtime closes -- waits for that and ends what
        is left. Why: a build sets instances aside hundreds of times (see ``McpRuntime._park``), and waiting for
        each process to exit took a fifth of an update's time, while nothing waits on the instance any more."""
        jobs = self._jobs
        if jobs is not None:
            self._jobs = None  # (no call reaches it from now on)
            self.loop.loop.call_soon_threadsafe(jobs.put_nowait, None)

    def stop(self) -> None:
        """End the server (its whole process group) and the owner task; idempotent."""
        jobs, done = self._jobs, self._done
        if jobs is not None:
            self.loop.loop.call_soon_threadsafe(jobs.put_nowait, None)
        if done is not None:
            # the owner ends its client (and so its server) when it reads the None; if it failed instead, its
            # process is ended below
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_wait(done, 8.0), self.loop.loop).result(timeout=15)
        self._after_stop()

    def _after_stop(self) -> None:
        self._done = None
        self._jobs = None
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


async def _wait(task: Any, timeout: float) -> None:
    """Wait for an owner task; cancel it when it is stuck (e.g. in a handshake that never ends)."""
    try:
        await asyncio.wait_for(asyncio.shield(task), timeout)
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, 5.0)
    except BaseException:  # noqa: BLE001, S110 - its failure was reported through the futures already
        pass


class _Streams:
    """A ready pair of streams as the SDK's ``Transport`` (an async context manager yielding them)."""

    def __init__(self, streams: Any) -> None:
        self._streams = streams

    async def __aenter__(self) -> Any:
        return self._streams

    async def __aexit__(self, *exc: object) -> None:
        return None
