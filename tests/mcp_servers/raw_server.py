"""A stdio MCP server without any SDK, like old hand-written servers: it speaks the initialize handshake only and
exits on any method it does not know (so the 2.x client's discovery probe ends the connection)."""

from __future__ import annotations

import json
import sys

TOOLS = [
    {
        "name": "shout",
        "description": "Upper-case a text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
]


def reply(msg_id: object, result: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if "id" not in msg:
        continue  # notifications (initialized, cancelled)
    if method == "initialize":
        reply(
            msg["id"],
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            },
        )
    elif method == "tools/list":
        reply(msg["id"], {"tools": TOOLS})
    elif method == "tools/call":
        text = msg["params"]["arguments"]["text"]
        reply(msg["id"], {"content": [{"type": "text", "text": text.upper()}], "isError": False})
    elif method == "ping":
        reply(msg["id"], {})
    else:
        sys.stderr.write(f"raw server: unknown method {method}\n")
        sys.exit(1)
