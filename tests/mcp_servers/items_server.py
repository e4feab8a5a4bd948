"""A small MCP server on the 2.x SDK that keeps a list of items in a data file.

Run with ``python items_server.py DATA_FILE`` (it reads the file on every call: its state is all on disk) or
``python items_server.py DATA_FILE --cached`` (it reads the file once, when it starts, and serves it from memory).
``add_item`` writes the file either way; but after the file is put back to another content, only a new instance of
the cached kind sees it: the kind of server that must be restarted whenever the sandbox is restored.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("items")
DATA = Path(sys.argv[1])
CACHED = "--cached" in sys.argv[2:]


def _load() -> list[str]:
    return json.loads(DATA.read_text()) if DATA.exists() else []


ITEMS: list[str] = _load()


@server.tool()
def list_items() -> list[str]:
    """Every item, in the order they were added."""
    return list(ITEMS if CACHED else _load())


@server.tool()
def add_item(name: str) -> str:
    """Add an item."""
    items = ITEMS if CACHED else _load()
    items.append(name)
    DATA.write_text(json.dumps(items))
    return f"added {name}"


if __name__ == "__main__":
    server.run()
