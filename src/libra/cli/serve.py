"""``libra serve``: a built library as an MCP server (stdio or Streamable HTTP) with a ``search_tools`` tool, and
with ``--workdir`` a gateway's ``call_tool`` (:mod:`libra.serve.gateway`)."""

from __future__ import annotations

import gc
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from libra._util.interrupts import interrupts_deferred
from libra.cli import options as opts
from libra.cli.main import app
from libra.errors import ConfigError


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening, or one line saying why not (a busy port, an unknown host)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, UnicodeError) as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port} ({getattr(exc, 'strerror', None) or exc}): check --host"
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}): choose another --port (0 picks a free one)"
        ) from None
    return sock


@app.command("serve")
def serve_cmd(
    library: Path = opts.library_arg("library file (from libra build)"),
    transport: str = opts.transport_option(),
    host: str = opts.host_option(),
    port: int = opts.port_option(),
    workdir: Path | None = opts.workdir_option(
        "for a library built from MCP servers: also serve call_tool(name, arguments), forwarded to those "
        "servers working in this directory (their {sandbox})"
    ),
    config: Path | None = opts.config_option(
        "with --workdir: start the servers from this project file's [[mcp]] tables instead of those the "
        "library recorded"
    ),
) -> None:
    """Serve a library to agents over MCP: search_tools(query, k) returns tools with their prerequisites and evidence;
    with --workdir, call_tool runs them."""
    import anyio

    from libra.serve.server import build_server, serve_http, serve_stdio

    if config is not None and workdir is None:
        raise ConfigError(
            "--config names the servers call_tool forwards to: give --workdir DIR too (the folder they work in)"
        )
    sock = listen(host, port) if transport == "http" else None  # a busy port fails before the library loads
    gateway = None
    # A client that stops the server with SIGTERM (stdio clients do, after closing its input) unwinds like
    # Ctrl-C: the finally below ends the MCP servers the gateway started, which run in sessions of their own.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    gc.disable()  # until the SDK is imported: see settle_garbage_collector
    try:
        loading, servers = open_searcher(library, workdir is None)
        if servers and workdir is None:
            names = ", ".join(s.get("name", "?") for s in servers)
            print(
                f"libra: {library} was built from MCP servers ({names}): add --workdir DIR to serve call_tool too",
                file=sys.stderr,
                flush=True,
            )
        if workdir is not None:
            gateway = open_gateway(library, loading.result().index, workdir, config)
        server = build_server(loading, gateway)
        settle_garbage_collector()
        # The SDK is imported now: the library and the embedding model load in the background from here on (both
        # hold the interpreter for much of their time: loading them during the SDK's import would delay the
        # handshake), so the handshake never waits for them and the first search waits only for what is left.
        loading.start(then=settle_garbage_collector)
        what = f"{library} ({loading.size} tools)" + (
            f", call_tool forwarded to {', '.join(gateway.specs)} in {gateway.workdir}" if gateway else ""
        )
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
        gc.enable()


def settle_garbage_collector() -> None:
    """Keep the garbage collector off what a server loads once and holds until it stops, then let it run.

    Startup creates hundreds of thousands of objects that live as long as the server: the MCP SDK's protocol
    models, numpy, the index, the model. Python's cyclic collector would walk them all, during the imports (a
    tenth of the SDK's import time, so of the time before the handshake, is spent there finding nothing) and
    then in every full collection while serving: one walk costs tens of milliseconds, and the request it lands
    on waits for it. Frozen, they are never walked again; requests' own garbage is collected as usual.
    """
    gc.freeze()
    gc.enable()


def open_searcher(library: Path, defer: bool) -> tuple[Any, list[dict[str, Any]]]:
    """A :class:`~libra.serve.server.SearcherLoading` over ``library`` and the MCP servers its catalog came from.

    When the library's search index is cached (``defer``: and nothing needs it before the server starts), the
    searcher opens in the background and only the index's JSON is read now, without numpy: nothing in a cached
    index can be refused (it was written from a library that loaded and checked whole). Otherwise the library is
    opened now, so a broken one is refused in one line before the server starts."""
    from libra._util.cachedir import cache_dir
    from libra.library.artifact import read_library_bytes
    from libra.search.index_key import index_key, peek_index
    from libra.search.options import SearchOptions
    from libra.serve.server import SearcherLoading

    options = SearchOptions()

    def open_() -> Any:
        from libra.search.searcher import Searcher

        return Searcher.open(library, options)

    raw = read_library_bytes(library)
    peeked = peek_index(cache_dir() / "search", index_key(raw, options.embedder, options.document)) if defer else None
    if peeked is not None:
        return SearcherLoading(open_, len(peeked["names"])), list(peeked.get("servers") or [])
    searcher = open_()
    return SearcherLoading.opened(searcher), list(searcher.index.servers)


def open_gateway(library: Path, index: Any, workdir: Path | None, config: Path | None) -> Any:
    """The gateway over the servers the library recorded (or ``config`` names), or None without ``workdir``
    (search only; a library built from servers says on stderr how to get call_tool)."""
    if workdir is None:
        return None
    from libra.serve.gateway import Gateway

    if config is not None:
        from libra.sources.project import load_project

        servers = load_project(config).mcp
        if not servers:
            raise ConfigError(f"{config} names no [[mcp]] servers: call_tool forwards to MCP servers only")
    elif index.servers:
        servers = index.servers
    else:
        raise ConfigError(
            f"{library} records no MCP servers (it was built from other tools, or before libra recorded "
            "them): give --config with the project file it was built from"
        )
    tools = dict(zip(index.names, index.input_schemas))
    return Gateway(servers, tools, workdir)
