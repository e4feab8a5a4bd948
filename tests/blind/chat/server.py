"""Team chat MCP server (stdio), built on the low-level ``mcp.server.Server`` API.

Workspaces contain members and channels; members join channels and post
messages, reply in threads, react with emoji and send each other direct
messages. Ids follow a Slack-like scheme:

* workspaces: ``T`` + 8 characters, e.g. ``TACME0001``
* channels:   ``C`` + 8 characters, e.g. ``CGENERAL1``
* DM conversations: ``D`` + 8 characters
* messages are identified by their timestamp ``ts`` within a channel,
  e.g. ``"1718000000.000100"``

Every tool acts on behalf of the user handle passed in ``user`` /
``from_user``. State is in memory only.

Start with ``python server.py``.
"""

from __future__ import annotations

import json
import re
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import anyio
import mcp_types as types

from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class ChatError(Exception):
    """An anticipated failure, reported to the client as ``<code>: <message>``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# ---------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------


@dataclass
class Message:
    ts: str
    user: str
    text: str
    thread_ts: str | None = None  # set on replies
    reactions: dict[str, list[str]] = field(default_factory=dict)  # emoji -> users
    reply_ts: list[str] = field(default_factory=list)  # set on thread parents


@dataclass
class Channel:
    channel_id: str
    workspace_id: str
    name: str
    topic: str
    created_by: str
    created_at: datetime
    members: set[str] = field(default_factory=set)
    messages: dict[str, Message] = field(default_factory=dict)  # ts -> message (insertion ordered)


@dataclass
class Workspace:
    workspace_id: str
    name: str
    owner: str
    created_at: datetime
    members: dict[str, datetime] = field(default_factory=dict)  # handle -> joined_at


@dataclass
class DirectConversation:
    dm_id: str
    workspace_id: str
    participants: frozenset[str]
    messages: list[Message] = field(default_factory=list)


USERS: dict[str, str] = {}  # handle -> display name
WORKSPACES: dict[str, Workspace] = {}
CHANNELS: dict[str, Channel] = {}
DMS: dict[tuple[str, frozenset[str]], DirectConversation] = {}

_last_ts = 0.0
_ID_ALPHABET = string.ascii_uppercase + string.digits
HANDLE_RE = re.compile(r"^[a-z][a-z0-9._-]{1,20}$")
CHANNEL_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
EMOJI_RE = re.compile(r"^[a-z0-9_+-]{1,32}$")
TS_RE = re.compile(r"^\d{10}\.\d{6}$")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _new_id(prefix: str) -> str:
    return prefix + "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))


def _next_ts() -> str:
    """Return a unique, strictly increasing Slack-style timestamp."""
    global _last_ts
    t = max(time.time(), _last_ts + 0.000001)
    _last_ts = t
    return f"{t:.6f}"


def _workspace(workspace_id: str) -> Workspace:
    ws = WORKSPACES.get(workspace_id)
    if ws is None:
        raise ChatError("workspace_not_found", f"No workspace with id '{workspace_id}'.")
    return ws


def _channel(channel_id: str) -> Channel:
    ch = CHANNELS.get(channel_id)
    if ch is None:
        hint = " (that looks like a DM id; use send_direct_message)" if channel_id.startswith("D") else ""
        raise ChatError("channel_not_found", f"No channel with id '{channel_id}'{hint}.")
    return ch


def _require_ws_member(ws: Workspace, handle: str) -> None:
    if handle not in ws.members:
        raise ChatError("user_not_in_workspace", f"'{handle}' is not a member of workspace '{ws.workspace_id}'.")


def _require_channel_member(ch: Channel, handle: str) -> None:
    _require_ws_member(WORKSPACES[ch.workspace_id], handle)
    if handle not in ch.members:
        raise ChatError("not_in_channel", f"'{handle}' has not joined #{ch.name}. Call join_channel first.")


def _message(ch: Channel, ts: str) -> Message:
    msg = ch.messages.get(ts)
    if msg is None:
        raise ChatError("message_not_found", f"No message with ts '{ts}' in #{ch.name}.")
    return msg


def _msg_dict(msg: Message) -> dict[str, Any]:
    data: dict[str, Any] = {"ts": msg.ts, "user": msg.user, "text": msg.text}
    if msg.thread_ts:
        data["thread_ts"] = msg.thread_ts
    else:
        data["reply_count"] = len(msg.reply_ts)
    data["reactions"] = [{"name": e, "count": len(u), "users": list(u)} for e, u in msg.reactions.items()]
    return data


def _add_user(handle: str, display_name: str | None) -> None:
    if handle not in USERS:
        USERS[handle] = display_name or handle


def _make_channel(ws: Workspace, name: str, creator: str, topic: str = "", channel_id: str | None = None) -> Channel:
    ch = Channel(
        channel_id=channel_id or _new_id("C"),
        workspace_id=ws.workspace_id,
        name=name,
        topic=topic,
        created_by=creator,
        created_at=_now(),
        members={creator},
    )
    CHANNELS[ch.channel_id] = ch
    return ch


# ---------------------------------------------------------------------------
# Tool implementations
# ---------------------------------------------------------------------------


def list_workspaces() -> dict[str, Any]:
    return {
        "workspaces": [
            {"workspace_id": ws.workspace_id, "name": ws.name, "member_count": len(ws.members)}
            for ws in WORKSPACES.values()
        ]
    }


def create_workspace(name: str, owner: str, owner_display_name: str | None = None) -> dict[str, Any]:
    if not HANDLE_RE.match(owner):
        raise ChatError("invalid_handle", f"'{owner}' is not a valid handle (lower-case, 2-21 chars).")
    if any(ws.name.lower() == name.strip().lower() for ws in WORKSPACES.values()):
        raise ChatError("name_taken", f"A workspace named '{name.strip()}' already exists.")
    _add_user(owner, owner_display_name)
    ws = Workspace(workspace_id=_new_id("T"), name=name.strip(), owner=owner, created_at=_now())
    ws.members[owner] = ws.created_at
    WORKSPACES[ws.workspace_id] = ws
    _make_channel(ws, "general", owner, topic="Company-wide announcements")
    return {"workspace_id": ws.workspace_id, "name": ws.name, "owner": owner, "created_at": ws.created_at.isoformat()}


def list_members(workspace_id: str) -> dict[str, Any]:
    ws = _workspace(workspace_id)
    return {
        "workspace_id": ws.workspace_id,
        "members": [
            {"handle": h, "display_name": USERS[h], "joined_at": joined.isoformat(), "is_owner": h == ws.owner}
            for h, joined in ws.members.items()
        ],
    }


def invite_member(workspace_id: str, handle: str, display_name: str | None = None) -> dict[str, Any]:
    ws = _workspace(workspace_id)
    if not HANDLE_RE.match(handle):
        raise ChatError("invalid_handle", f"'{handle}' is not a valid handle (lower-case, 2-21 chars).")
    if handle in ws.members:
        raise ChatError("already_in_workspace", f"'{handle}' is already a member of {ws.name}.")
    _add_user(handle, display_name)
    ws.members[handle] = _now()
    return {"workspace_id": ws.workspace_id, "handle": handle, "display_name": USERS[handle]}


def list_channels(workspace_id: str, member: str | None = None) -> dict[str, Any]:
    ws = _workspace(workspace_id)
    channels = [c for c in CHANNELS.values() if c.workspace_id == ws.workspace_id]
    if member is not None:
        channels = [c for c in channels if member in c.members]
    return {
        "channels": [
            {"channel_id": c.channel_id, "name": c.name, "topic": c.topic, "member_count": len(c.members)}
            for c in sorted(channels, key=lambda c: c.name)
        ]
    }


def create_channel(workspace_id: str, name: str, creator: str, topic: str = "") -> dict[str, Any]:
    ws = _workspace(workspace_id)
    _require_ws_member(ws, creator)
    name = name.strip().lstrip("#").lower()
    if not CHANNEL_NAME_RE.match(name):
        raise ChatError("invalid_name", "Channel names are lower-case letters, digits, '-' and '_' (max 80).")
    if any(c.workspace_id == ws.workspace_id and c.name == name for c in CHANNELS.values()):
        raise ChatError("name_taken", f"#{name} already exists in {ws.name}.")
    ch = _make_channel(ws, name, creator, topic)
    return {"channel_id": ch.channel_id, "name": ch.name, "topic": ch.topic, "members": sorted(ch.members)}


def join_channel(channel_id: str, user: str) -> dict[str, Any]:
    ch = _channel(channel_id)
    _require_ws_member(WORKSPACES[ch.workspace_id], user)
    already = user in ch.members
    ch.members.add(user)
    return {"channel_id": ch.channel_id, "name": ch.name, "user": user, "already_member": already}


def post_message(channel_id: str, user: str, text: str) -> dict[str, Any]:
    ch = _channel(channel_id)
    _require_channel_member(ch, user)
    msg = Message(ts=_next_ts(), user=user, text=text)
    ch.messages[msg.ts] = msg
    return {"channel_id": ch.channel_id, **_msg_dict(msg)}


def get_channel_history(channel_id: str, limit: int = 20, before_ts: str | None = None) -> dict[str, Any]:
    ch = _channel(channel_id)
    top = [m for m in ch.messages.values() if m.thread_ts is None]
    if before_ts is not None:
        top = [m for m in top if float(m.ts) < float(before_ts)]
    top.sort(key=lambda m: float(m.ts), reverse=True)
    return {
        "channel_id": ch.channel_id,
        "messages": [_msg_dict(m) for m in top[:limit]],
        "has_more": len(top) > limit,
    }


def reply_to_thread(channel_id: str, thread_ts: str, user: str, text: str) -> dict[str, Any]:
    ch = _channel(channel_id)
    parent = _message(ch, thread_ts)
    if parent.thread_ts is not None:
        raise ChatError(
            "not_a_thread_parent",
            f"Message {thread_ts} is itself a reply; reply to the parent {parent.thread_ts} instead.",
        )
    _require_channel_member(ch, user)
    reply = Message(ts=_next_ts(), user=user, text=text, thread_ts=parent.ts)
    ch.messages[reply.ts] = reply
    parent.reply_ts.append(reply.ts)
    return {"channel_id": ch.channel_id, **_msg_dict(reply)}


def get_thread(channel_id: str, thread_ts: str) -> dict[str, Any]:
    ch = _channel(channel_id)
    parent = _message(ch, thread_ts)
    if parent.thread_ts is not None:
        raise ChatError("not_a_thread_parent", f"Message {thread_ts} is a reply in thread {parent.thread_ts}.")
    return {
        "channel_id": ch.channel_id,
        "parent": _msg_dict(parent),
        "replies": [_msg_dict(ch.messages[ts]) for ts in parent.reply_ts],
    }


def add_reaction(channel_id: str, ts: str, user: str, emoji: str) -> dict[str, Any]:
    ch = _channel(channel_id)
    msg = _message(ch, ts)
    _require_channel_member(ch, user)
    name = emoji.strip().strip(":")
    if not EMOJI_RE.match(name):
        raise ChatError("invalid_name", f"'{emoji}' is not a valid emoji name, e.g. 'thumbsup' or ':tada:'.")
    users = msg.reactions.setdefault(name, [])
    if user in users:
        raise ChatError("already_reacted", f"'{user}' already reacted with :{name}: to {ts}.")
    users.append(user)
    return {"channel_id": ch.channel_id, "ts": msg.ts, "reaction": name, "count": len(users)}


def send_direct_message(workspace_id: str, from_user: str, to_user: str, text: str) -> dict[str, Any]:
    ws = _workspace(workspace_id)
    _require_ws_member(ws, from_user)
    _require_ws_member(ws, to_user)
    if from_user == to_user:
        raise ChatError("cannot_dm_self", "Sender and recipient must be different users.")
    pair = frozenset({from_user, to_user})
    conv = DMS.get((ws.workspace_id, pair))
    if conv is None:
        conv = DirectConversation(dm_id=_new_id("D"), workspace_id=ws.workspace_id, participants=pair)
        DMS[(ws.workspace_id, pair)] = conv
    msg = Message(ts=_next_ts(), user=from_user, text=text)
    conv.messages.append(msg)
    return {"dm_id": conv.dm_id, "ts": msg.ts, "from_user": from_user, "to_user": to_user, "text": text}


def list_direct_messages(workspace_id: str, user: str, with_user: str, limit: int = 50) -> dict[str, Any]:
    ws = _workspace(workspace_id)
    _require_ws_member(ws, user)
    _require_ws_member(ws, with_user)
    conv = DMS.get((ws.workspace_id, frozenset({user, with_user})))
    messages = conv.messages[-limit:] if conv else []
    return {
        "dm_id": conv.dm_id if conv else None,
        "messages": [{"ts": m.ts, "user": m.user, "text": m.text} for m in messages],
    }


# ---------------------------------------------------------------------------
# Tool catalogue (hand-written JSON Schemas)
# ---------------------------------------------------------------------------

_WS_ID = {"type": "string", "pattern": r"^T[A-Z0-9]{8}$", "description": "Workspace id, e.g. 'TACME0001'."}
_CH_ID = {"type": "string", "pattern": r"^C[A-Z0-9]{8}$", "description": "Channel id, e.g. 'CGENERAL1'."}
_HANDLE = {"type": "string", "minLength": 2, "maxLength": 21}
_TEXT = {"type": "string", "minLength": 1, "maxLength": 4000}
_TS = {"type": "string", "pattern": r"^\d{10}\.\d{6}$"}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


@dataclass(frozen=True)
class ToolSpec:
    func: Callable[..., dict[str, Any]]
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False


TOOLS: dict[str, ToolSpec] = {
    "list_workspaces": ToolSpec(
        list_workspaces,
        "List all workspaces with their ids and member counts.",
        _schema({}, []),
        read_only=True,
    ),
    "create_workspace": ToolSpec(
        create_workspace,
        "Create a workspace. The owner becomes its first member and a #general channel is created "
        "with the owner in it. Returns the new workspace_id.",
        _schema(
            {
                "name": {"type": "string", "minLength": 1, "maxLength": 80, "description": "Workspace name"},
                "owner": {**_HANDLE, "description": "Handle of the owner, e.g. 'jdoe'"},
                "owner_display_name": {"type": "string", "description": "Optional display name for a new owner"},
            },
            ["name", "owner"],
        ),
    ),
    "list_members": ToolSpec(
        list_members,
        "List the members of a workspace (handle, display name, join time).",
        _schema({"workspace_id": _WS_ID}, ["workspace_id"]),
        read_only=True,
    ),
    "invite_member": ToolSpec(
        invite_member,
        "Add a user to a workspace. New handles are registered on the fly. Only workspace members can "
        "join its channels or exchange direct messages.",
        _schema(
            {
                "workspace_id": _WS_ID,
                "handle": {**_HANDLE, "description": "Lower-case handle: letters, digits, '.', '_' or '-'"},
                "display_name": {"type": "string", "maxLength": 80},
            },
            ["workspace_id", "handle"],
        ),
    ),
    "list_channels": ToolSpec(
        list_channels,
        "List the channels of a workspace, optionally only those a given user has joined.",
        _schema(
            {"workspace_id": _WS_ID, "member": {**_HANDLE, "description": "Only channels this handle has joined"}},
            ["workspace_id"],
        ),
        read_only=True,
    ),
    "create_channel": ToolSpec(
        create_channel,
        "Create a public channel in a workspace. The creator (a workspace member) joins it automatically. "
        "Names are lower-case without spaces; a leading '#' is ignored.",
        _schema(
            {
                "workspace_id": _WS_ID,
                "name": {"type": "string", "minLength": 1, "maxLength": 81, "description": "e.g. 'design-review'"},
                "creator": _HANDLE,
                "topic": {"type": "string", "maxLength": 250},
            },
            ["workspace_id", "name", "creator"],
        ),
    ),
    "join_channel": ToolSpec(
        join_channel,
        "Join a channel as `user`. The user must belong to the channel's workspace. Joining twice is harmless.",
        _schema({"channel_id": _CH_ID, "user": _HANDLE}, ["channel_id", "user"]),
    ),
    "post_message": ToolSpec(
        post_message,
        "Post a message to a channel. The author must have joined the channel. Returns the message "
        "including its `ts`, which identifies it for threads and reactions.",
        _schema({"channel_id": _CH_ID, "user": _HANDLE, "text": _TEXT}, ["channel_id", "user", "text"]),
    ),
    "get_channel_history": ToolSpec(
        get_channel_history,
        "Read the newest top-level messages of a channel (newest first). Thread replies are not "
        "included; use get_thread. Public channels can be read without joining.",
        _schema(
            {
                "channel_id": _CH_ID,
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20},
                "before_ts": {**_TS, "description": "Only messages older than this ts (for paging)"},
            },
            ["channel_id"],
        ),
        read_only=True,
    ),
    "reply_to_thread": ToolSpec(
        reply_to_thread,
        "Reply in the thread of a top-level message. `thread_ts` is the ts of the parent message "
        "(not of another reply). The author must have joined the channel.",
        _schema(
            {"channel_id": _CH_ID, "thread_ts": _TS, "user": _HANDLE, "text": _TEXT},
            ["channel_id", "thread_ts", "user", "text"],
        ),
    ),
    "get_thread": ToolSpec(
        get_thread,
        "Return a thread: the parent message and all replies in order.",
        _schema({"channel_id": _CH_ID, "thread_ts": _TS}, ["channel_id", "thread_ts"]),
        read_only=True,
    ),
    "add_reaction": ToolSpec(
        add_reaction,
        "React to a message (top-level or reply) with an emoji name such as 'thumbsup' or ':tada:'. "
        "The reacting user must have joined the channel; each user can use each emoji once per message.",
        _schema(
            {
                "channel_id": _CH_ID,
                "ts": {**_TS, "description": "ts of the message to react to"},
                "user": _HANDLE,
                "emoji": {"type": "string", "minLength": 1, "maxLength": 34},
            },
            ["channel_id", "ts", "user", "emoji"],
        ),
    ),
    "send_direct_message": ToolSpec(
        send_direct_message,
        "Send a direct message between two members of the same workspace. Returns the DM "
        "conversation id and the message ts.",
        _schema(
            {"workspace_id": _WS_ID, "from_user": _HANDLE, "to_user": _HANDLE, "text": _TEXT},
            ["workspace_id", "from_user", "to_user", "text"],
        ),
    ),
    "list_direct_messages": ToolSpec(
        list_direct_messages,
        "Read the direct messages between `user` and `with_user` (oldest first, last `limit`).",
        _schema(
            {
                "workspace_id": _WS_ID,
                "user": _HANDLE,
                "with_user": _HANDLE,
                "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
            },
            ["workspace_id", "user", "with_user"],
        ),
        read_only=True,
    ),
}


def _validate(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Check ``args`` against one of the (flat) schemas above; return them with defaults applied."""
    props: dict[str, Any] = schema["properties"]
    unknown = set(args) - set(props)
    if unknown:
        raise ChatError("invalid_arguments", f"Unexpected argument(s): {', '.join(sorted(unknown))}.")
    missing = [name for name in schema["required"] if args.get(name) is None]
    if missing:
        raise ChatError("invalid_arguments", f"Missing required argument(s): {', '.join(missing)}.")
    out: dict[str, Any] = {}
    for name, spec in props.items():
        if args.get(name) is None:
            if "default" in spec:
                out[name] = spec["default"]
            continue
        value = args[name]
        if spec["type"] == "string":
            if not isinstance(value, str):
                raise ChatError("invalid_arguments", f"'{name}' must be a string.")
            if len(value) < spec.get("minLength", 0) or len(value) > spec.get("maxLength", 10**9):
                raise ChatError(
                    "invalid_arguments",
                    f"'{name}' must be {spec.get('minLength', 0)}-{spec.get('maxLength', 'any')} characters long.",
                )
            if "pattern" in spec and not re.match(spec["pattern"], value):
                raise ChatError("invalid_arguments", f"'{name}' has an invalid format: {value!r}.")
        elif spec["type"] == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ChatError("invalid_arguments", f"'{name}' must be an integer.")
            if value < spec.get("minimum", value) or value > spec.get("maximum", value):
                raise ChatError(
                    "invalid_arguments", f"'{name}' must be between {spec['minimum']} and {spec['maximum']}."
                )
        out[name] = value
    return out


# ---------------------------------------------------------------------------
# MCP wiring
# ---------------------------------------------------------------------------


async def handle_list_tools(
    ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=name,
                description=spec.description,
                input_schema=spec.input_schema,
                annotations=types.ToolAnnotations(read_only_hint=spec.read_only),
            )
            for name, spec in TOOLS.items()
        ]
    )


async def handle_call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
    spec = TOOLS.get(params.name)
    if spec is None:
        return _error(ChatError("unknown_tool", f"No tool named '{params.name}'."))
    try:
        kwargs = _validate(spec.input_schema, params.arguments or {})
        result = spec.func(**kwargs)
    except ChatError as exc:
        return _error(exc)
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(result, indent=2))])


def _error(exc: ChatError) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"error: {exc}")], is_error=True)


server = Server(
    "chat",
    version="0.3.0",
    instructions="Team chat: workspaces, channels, threads, reactions and direct messages.",
    on_list_tools=handle_list_tools,
    on_call_tool=handle_call_tool,
)


# ---------------------------------------------------------------------------
# Demo data
# ---------------------------------------------------------------------------


def _seed() -> None:
    for handle, display in [("alice", "Alice Chen"), ("bob", "Bob Martin"), ("carol", "Carol Diaz")]:
        _add_user(handle, display)
    ws = Workspace(workspace_id="TACME0001", name="Acme Corp", owner="alice", created_at=_now())
    for handle in ("alice", "bob", "carol"):
        ws.members[handle] = ws.created_at
    WORKSPACES[ws.workspace_id] = ws
    general = _make_channel(ws, "general", "alice", "Company-wide announcements", channel_id="CGENERAL1")
    general.members.add("bob")
    random = _make_channel(ws, "random", "bob", "Anything goes", channel_id="CRANDOM01")
    random.members.add("carol")
    for ch, user, text in [
        (general, "alice", "Welcome to Acme chat!"),
        (general, "bob", "Standup moved to 10:30 today."),
        (random, "carol", "Who took the last coffee pod?"),
    ]:
        msg = Message(ts=_next_ts(), user=user, text=text)
        ch.messages[msg.ts] = msg


_seed()


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
