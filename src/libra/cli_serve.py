"""``libra serve``: a built library as an MCP server (stdio or Streamable HTTP) with a ``search_tools`` tool, and
with ``--workdir`` a gateway's ``call_tool`` (:mod:`libra.gateway`)."""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any, Optional

from . import cli_options as opts
from ._interrupts import interrupts_deferred
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
    workdir: Optional[Path] = opts.workdir_option("for a library built from MCP servers: also serve call_tool(name, arguments), forwarded to those servers working in this directory (their {sandbox})"),
    config: Optional[Path] = opts.config_option("with --workdir: start the servers from this project file's [[mcp]] tables instead of those the library recorded"),
) -> None:
    """Serve a library to agents over MCP: search_tools(query, k) returns tools with their prerequisites and evidence; with --workdir, call_tool runs them."""
    import anyio

    from .search import Searcher
    from .serve import build_server, serve_http, serve_stdio

    if config is not None and workdir is None:
        raise ConfigError("--config names the servers call_tool forwards to: give --workdir DIR too (the folder they work in)")
    sock = listen(host, port) if transport == "http" else None  # a busy port fails before the library loads
    gateway = None
    # A client that stops the server with SIGTERM (stdio clients do, after closing its input) unwinds like
    # Ctrl-C: the finally below ends the MCP servers the gateway started, which run in sessions of their own.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        searcher = Searcher.open(library)
        gateway = open_gateway(library, searcher.index, workdir, config)
        server = build_server(searcher, gateway)
        # The embedding model loads in the background once the SDK is imported (both hold the interpreter for
        # much of their time: loading them together delays the handshake), so the handshake never waits for it
        # and the first search waits only for what is left.
        threading.Thread(target=_warm, args=(searcher,), daemon=True, name="libra-warm").start()
        what = f"{library} ({searcher.size} tools)" + (f", call_tool forwarded to {', '.join(gateway.specs)} in {gateway.workdir}" if gateway else "")
        if sock is None:
            print(f"libra: serving {what} over stdio", file=sys.stderr, flush=True)
            anyio.run(serve_stdio, server)
            return
        bound_port = sock.getsockname()[1]
        print(f"libra: serving {what} at http://{host}:{bound_port}/mcp", file=sys.stderr, flush=True)
        anyio.run(serve_http, server, sock, host)
    finally:
        if gateway is not None:
            # Ending the servers takes a moment; a second signal meanwhile must not cut it short and leave them.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with interrupts_deferred():
                gateway.close()
        if sock is not None:
            sock.close()


def open_gateway(library: Path, index: Any, workdir: Optional[Path], config: Optional[Path]) -> Any:
    """The gateway over the servers the library recorded (or ``config`` names), or None without ``workdir``
    (search only; a library built from servers says on stderr how to get call_tool)."""
    if workdir is None:
        if index.servers:
            names = ", ".join(s.get("name", "?") for s in index.servers)
            print(f"libra: {library} was built from MCP servers ({names}): add --workdir DIR to serve call_tool too", file=sys.stderr, flush=True)
        return None
    from .gateway import Gateway

    if config is not None:
        from .project import load_project

        servers = load_project(config).mcp
        if not servers:
            raise ConfigError(f"{config} names no [[mcp]] servers: call_tool forwards to MCP servers only")
    elif index.servers:
        servers = index.servers
    else:
        raise ConfigError(f"{library} records no MCP servers (it was built from other tools, or before libra recorded them): give --config with the project file it was built from")
    tools = dict(zip(index.names, index.input_schemas))
    return Gateway(servers, tools, workdir)


def _warm(searcher: object) -> None:
    """Load the model ahead of the first search. A failure is not lost: the first search tries again and
    returns the reason to the client as a tool error."""
    with contextlib.suppress(Exception):
        searcher.warm()  # type: ignore[attr-defined]
