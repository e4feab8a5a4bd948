"""The stdio transport of ``libra serve``, read and written on the event loop itself.

The MCP SDK's ``stdio_server()`` reads each line of stdin, writes each response and flushes it through a worker
thread (``anyio.wrap_file``): three hand-offs between threads per request, each a wake-up of another thread and
then of the event loop. A search answers in milliseconds, so those hand-offs were a visible share of its latency
and, on a machine whose cores are busy, of its worst cases: every one waits for a core. When both ends are pipes
(how an MCP client starts a server), this module serves them non-blocking from the event loop instead, and hands
the SDK's ``stdio_server()`` streams with the interface it reads and writes (lines in; ``write``/``flush`` out).

Like the SDK, it takes the wire off the standard descriptors while serving: fd 0 reads the null device and fd 1
writes to stderr, so a stray ``print`` (ours, a library's, a child process's) cannot corrupt the protocol, and
both are restored on the way out. Anything that is not a pipe or a socket (a file, a terminal), or a platform
without non-blocking pipes, is served by the SDK's own transport unchanged.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

#: How much one read takes from the pipe: a request line is usually well under this, and a longer one (the
#: server refuses queries over a few thousand characters, but a client may send one) is read in several.
READ_CHUNK = 1 << 16


class PipeLines:
    """The lines of a non-blocking pipe, as text (``\\n`` kept, undecodable bytes replaced, as the SDK's reader
    does), read whenever the event loop sees the pipe readable; a last line without ``\\n`` is returned at the end."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        import anyio

        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                yield line.decode("utf-8", errors="replace")
                continue
            try:
                chunk = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            if not chunk:
                if self._buffer:
                    yield bytes(self._buffer).decode("utf-8", errors="replace")
                    self._buffer.clear()
                return
            self._buffer += chunk


class PipeWriter:
    """Text written whole to a non-blocking pipe, waiting on the event loop while the reader has not emptied it.
    Each ``write`` is on the wire when it returns, so ``flush`` has nothing left to do."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> int:
        import anyio

        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                sent = os.write(self.fd, data)
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
                continue
            data = data[sent:]
        return len(text)

    async def flush(self) -> None:
        return None


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def loop_served() -> bool:
    """Whether stdin and stdout can be served on the event loop (both pipes or sockets, on a POSIX system)."""
    return sys.platform != "win32" and _is_pipe(0) and _is_pipe(1)


def _to_null(fd: int, flags: int) -> None:
    """Point ``fd`` at the null device."""
    null = os.open(os.devnull, flags)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private, non-blocking duplicates of the wire's stdin and stdout, with fd 0 reading the null device and fd
    1 writing to stderr meanwhile; on exit both are restored (blocking again) and the duplicates closed."""
    sys.stdout.flush()
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    try:
        _to_null(0, os.O_RDONLY)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr to send stray output to: drop it rather than let it reach the wire
            _to_null(1, os.O_WRONLY)
        for wire in (wire_in, wire_out):
            os.set_inheritable(wire, False)
            os.set_blocking(wire, False)
        yield wire_in, wire_out
    finally:
        for fd, wire in ((0, wire_in), (1, wire_out)):
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)
                os.dup2(wire, fd)
            with contextlib.suppress(OSError):
                os.close(wire)


async def serve_stdio(server: Any) -> None:
    """Run the MCP ``server`` over this process's stdin and stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    if not loop_served():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    with claimed_stdio() as (wire_in, wire_out):
        async with stdio_server(PipeLines(wire_in), PipeWriter(wire_out)) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
