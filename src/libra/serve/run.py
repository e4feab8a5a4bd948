"""Serve a library until the client goes away: open it, start the transport, end the gateway's servers.

Why apart from the command line: the order of the steps is what makes the handshake fast and the shutdown
clean (the garbage collector stays off until the SDK is imported, the library loads in the background after it,
and the MCP servers a gateway started are ended even when a second signal arrives), whoever starts the server.
"""

from __future__ import annotations

import gc
import signal
import socket
import sys
from pathlib import Path

from libra._util.interrupts import interrupts_deferred
from libra.serve.opening import open_gateway, open_searcher, searcher_opener, settle_garbage_collector


def _say(message: str) -> None:
    print(f"libra: {message}", file=sys.stderr, flush=True)


def serve_library(
    library: Path, sock: socket.socket | None, host: str, workdir: Path | None, config: Path | None
) -> None:
    """Serve ``library`` over stdio, or over Streamable HTTP on ``sock`` (listening at ``host``), with call_tool
    forwarded to its MCP servers in ``workdir``; ``sock`` is closed when serving ends."""
    import anyio

    from libra.serve.server import build_server, serve_http, serve_stdio

    gateway = None
    # A client that stops the server with SIGTERM (stdio clients do, after closing its input) unwinds like
    # Ctrl-C: the finally below ends the MCP servers the gateway started, which run in sessions of their own.
    # (The command line has a handler of its own that does the same and reports the signal: it is kept.)
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    gc.disable()  # until the SDK is imported: see settle_garbage_collector
    try:
        loading, servers = open_searcher(library, workdir is None)
        if servers and workdir is None:
            names = ", ".join(s.get("name", "?") for s in servers)
            _say(f"{library} was built from MCP servers ({names}): add --workdir DIR to serve call_tool too")
        if workdir is not None:
            gateway = open_gateway(library, loading.result().index, workdir, config)
        from libra.serve.reload import LiveLibrary

        # a rebuilt library replacing the file is served from the next requests on (see libra.serve.reload)
        server = build_server(loading, gateway, live=LiveLibrary(library, loading, searcher_opener(library), _say))
        settle_garbage_collector()
        # The SDK is imported now: the library and the embedding model load in the background from here on (both
        # hold the interpreter for much of their time: loading them during the SDK's import would delay the
        # handshake), so the handshake never waits for them and the first search waits only for what is left.
        loading.start(then=settle_garbage_collector)
        what = f"{library} ({loading.size} tools)" + (
            f", call_tool forwarded to {', '.join(gateway.specs)} in {gateway.workdir}" if gateway else ""
        )
        if sock is None:
            _say(f"serving {what} over stdio")
            anyio.run(serve_stdio, server)
            return
        bound_port = sock.getsockname()[1]
        _say(f"serving {what} at http://{host}:{bound_port}/mcp")
        anyio.run(serve_http, server, sock, host)
    finally:
        if gateway is not None:
            # Ending the servers takes a moment; a second signal meanwhile must not cut it short and leave them.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with interrupts_deferred():
                gateway.close()
        if sock is not None:
            sock.close()
        gc.enable()
