"""An MCP server on the 1.x SDK (run with the interpreter of a venv that has ``mcp<2``): a key-value store in
files under the directory given as the first argument."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP

ROOT = Path(sys.argv[1])
server = FastMCP("legacy")


@server.tool()
def put(key: str, value: str) -> str:
    """Store a value under a key."""
    (ROOT / f"{key}.val").write_text(value)
    return f"stored {key}"


@server.tool()
def get(key: str) -> str:
    """The value stored under a key."""
    path = ROOT / f"{key}.val"
    if not path.exists():
        raise ValueError(f"no key {key}")
    return path.read_text()


if __name__ == "__main__":
    server.run()
