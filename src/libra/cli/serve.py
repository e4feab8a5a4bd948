"""``libra serve``: a built library as an MCP server (stdio or Streamable HTTP) with a ``search_tools`` tool, and
with ``--workdir`` a gateway's ``call_tool`` (:mod:`libra.serve.gateway`). Serving itself is
:func:`libra.serve.run.serve_library`."""

from __future__ import annotations

import socket
from pathlib import Path

from libra.cli import options as opts
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
    from libra.serve.run import serve_library

    if config is not None and workdir is None:
        raise ConfigError(
            "--config names the servers call_tool forwards to: give --workdir DIR too (the folder they work in)"
        )
    sock = listen(host, port) if transport == "http" else None  # a busy port fails before the library loads
    serve_library(library, sock, host, workdir, config)
