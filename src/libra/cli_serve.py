"""``libra serve``: a built library as an MCP server (stdio or Streamable HTTP) with a ``search_tools`` tool."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from pathlib import Path

from . import cli_options as opts
from .cli import app
from .errors import ConfigError


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening, or one line saying why not (a busy port, an unknown host)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, UnicodeError) as exc:
        raise ConfigError(f"cannot listen on {host}:{port} ({getattr(exc, 'strerror', None) or exc}): check --host") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc}): choose another --port (0 picks a free one)") from None
    return sock


@app.command("serve")
def serve_cmd(
    library: Path = opts.library_arg("library file (from libra build)"),
    transport: str = opts.transport_option(),
    host: str = opts.host_option(),
    port: int = opts.port_option(),
) -> None:
    """Serve a library to agents over MCP: search_tools(query, k) returns tools with their prerequisites and evidence."""
    import anyio

    from .search import Searcher
    from .serve import build_server, serve_http, serve_stdio

    sock = listen(host, port) if transport == "http" else None  # a busy port fails before the library loads
    try:
        searcher = Searcher.open(library)
        server = build_server(searcher)
        # The embedding model loads in the background once the SDK is imported (both hold the interpreter for
        # much of their time: loading them together delays the handshake), so the handshake never waits for it
        # and the first search waits only for what is left.
        threading.Thread(target=_warm, args=(searcher,), daemon=True, name="libra-warm").start()
        if sock is None:
            print(f"libra: serving {library} ({searcher.size} tools) over stdio", file=sys.stderr, flush=True)
            anyio.run(serve_stdio, server)
            return
        bound_port = sock.getsockname()[1]
        print(f"libra: serving {library} ({searcher.size} tools) at http://{host}:{bound_port}/mcp", file=sys.stderr, flush=True)
        anyio.run(serve_http, server, sock, host)
    finally:
        if sock is not None:
            sock.close()


def _warm(searcher: object) -> None:
    """Load the model ahead of the first search. A failure is not lost: the first search tries again and
    returns the reason to the client as a tool error."""
    with contextlib.suppress(Exception):
        searcher.warm()  # type: ignore[attr-defined]
