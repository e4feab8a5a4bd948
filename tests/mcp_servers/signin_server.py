"""A small stateful MCP server on the 2.x SDK: actions need a sign-in, whose session lives in memory only.

Run with ``python signin_server.py`` (stdio) or ``python signin_server.py --http PORT`` (Streamable HTTP).
Notes are files under ``NOTES_DIR`` (the sandbox), so the state is partly in files, partly in the process.
When ``CRASH_ON_TITLE`` is set, adding a note with that title kills the process (a server crashing mid-call).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("signin")
ACCOUNTS = {"alice": "wonderland", "bob": "builder"}
SESSIONS: dict[str, str] = {}  # token -> user, in memory only


class Session(BaseModel):
    access_token: str


def _notes() -> Path:
    return Path(os.environ["NOTES_DIR"])


@server.tool()
def sign_in(username: str, password: str) -> Session:
    """Sign in with a username and password; returns an access token for the other tools."""
    if ACCOUNTS.get(username) != password:
        raise ToolError("wrong username or password")
    token = hashlib.sha256(f"{username}:{len(SESSIONS)}".encode()).hexdigest()[:12]
    SESSIONS[token] = username
    return Session(access_token=token)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def whoami(access_token: str) -> str:
    """Who holds this access token."""
    if access_token not in SESSIONS:
        raise ToolError("not signed in")
    return SESSIONS[access_token]


@server.tool()
def add_note(access_token: str, title: str, text: str) -> dict:
    """Save a note as the signed-in user; returns its id."""
    user = SESSIONS.get(access_token)
    if user is None:
        raise ToolError("not signed in")
    if title and title == os.environ.get("CRASH_ON_TITLE"):
        sys.stderr.write("fatal: simulated crash\n")
        sys.stderr.flush()
        os._exit(9)
    folder = _notes() / user
    folder.mkdir(parents=True, exist_ok=True)
    note_id = f"n{len(list(folder.iterdir())) + 1}"
    (folder / f"{note_id}.txt").write_text(f"{title}\n{text}\n")
    return {"note_id": note_id}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_note(access_token: str, note_id: str) -> str:
    """The text of one of the signed-in user's notes."""
    user = SESSIONS.get(access_token)
    if user is None:
        raise ToolError("not signed in")
    path = _notes() / user / f"{note_id}.txt"
    if not path.exists():
        raise ToolError(f"no note {note_id}")
    return path.read_text()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
