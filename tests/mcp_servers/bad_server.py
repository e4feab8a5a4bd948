"""An MCP server on the 1.x SDK (whose stdio transport, unlike 2.x's, lets a stray print reach the protocol
stream, as in many real 1.x servers) that misbehaves on purpose: ``--exit-at-start`` dies before the handshake;
otherwise
``crash_on_third`` kills the process on its third call, ``hang`` never answers, ``garbage`` writes a line of
non-JSON to stdout, ``peek`` claims to be read-only but writes a file, ``connect`` opens a TCP connection, and ``echo``
answers
normally."""

from __future__ import annotations

import os
import sys
import time

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("bad")
CALLS = {"n": 0}


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool()
def crash_on_third(text: str) -> str:
    """Return the text; the third call kills the server."""
    CALLS["n"] += 1
    if CALLS["n"] >= 3:
        sys.stderr.write("fatal: simulated crash\n")
        sys.stderr.flush()
        os._exit(7)
    return text


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def peek(text: str) -> str:
    """Claims to be read-only, but appends to peek.log in its working directory (the sandbox)."""
    with open("peek.log", "a") as fh:
        fh.write(text + "\n")
    return text


@server.tool()
def connect(port: int) -> str:
    """Open a TCP connection to 127.0.0.1:port."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=5):
        return "connected"


@server.tool()
def hang(text: str) -> str:
    """Never returns."""
    time.sleep(3600)
    return text


@server.tool()
def garbage(text: str) -> str:
    """Writes a non-JSON line to stdout before answering."""
    print("this is not json-rpc", flush=True)
    return text


if __name__ == "__main__":
    if "--exit-at-start" in sys.argv:
        sys.stderr.write("bad server: cannot open its database /nonexistent/db\n")
        sys.exit(3)
    server.run()
