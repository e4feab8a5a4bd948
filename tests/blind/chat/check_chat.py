"""Exercise the chat MCP server over stdio and verify DEPENDENCIES.json.

Run with:  /work/blind/.venv/bin/python check_chat.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
DEPS = json.loads((HERE / "DEPENDENCIES.json").read_text())
checked: set[tuple[str, str]] = set()

BOGUS_WS = "TZZZZZZZZ"
BOGUS_CH = "CZZZZZZZZ"
BOGUS_TS = "1000000000.000000"


def mark(provider: str, consumer: str) -> None:
    checked.add((provider, consumer))


class Harness:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def ok(self, tool: str, **args: Any) -> dict[str, Any]:
        res = await self.client.call_tool(tool, args)
        text = res.content[0].text
        if res.is_error:
            raise AssertionError(f"{tool}({args}) unexpectedly failed: {text}")
        return json.loads(text)

    async def fails(self, tool: str, code: str, **args: Any) -> str:
        res = await self.client.call_tool(tool, args)
        text = res.content[0].text
        if not res.is_error:
            raise AssertionError(f"{tool}({args}) unexpectedly succeeded: {text}")
        assert text.startswith(f"error: {code}:"), f"{tool}: expected {code}, got {text!r}"
        return text


async def run(h: Harness) -> None:
    # --- workspace id providers -------------------------------------------------
    ws = (await h.ok("create_workspace", name="Globex", owner="hank", owner_display_name="Hank Scorpio"))
    wid = ws["workspace_id"]
    lwid = next(w["workspace_id"] for w in (await h.ok("list_workspaces"))["workspaces"] if w["name"] == "Globex")
    for provider, value, newbie in [("create_workspace", wid, "ivy"), ("list_workspaces", lwid, "jack")]:
        await h.fails("list_members", "workspace_not_found", workspace_id=BOGUS_WS)
        await h.ok("list_members", workspace_id=value)
        mark(provider, "list_members")

        await h.fails("invite_member", "workspace_not_found", workspace_id=BOGUS_WS, handle=newbie)
        await h.ok("invite_member", workspace_id=value, handle=newbie)
        mark(provider, "invite_member")

        await h.fails("list_channels", "workspace_not_found", workspace_id=BOGUS_WS)
        await h.ok("list_channels", workspace_id=value)
        mark(provider, "list_channels")

        await h.fails("create_channel", "workspace_not_found", workspace_id=BOGUS_WS, name=f"ops-{newbie}", creator="hank")
        await h.ok("create_channel", workspace_id=value, name=f"ops-{newbie}", creator="hank")
        mark(provider, "create_channel")

        await h.fails("send_direct_message", "workspace_not_found", workspace_id=BOGUS_WS, from_user="hank",
                      to_user=newbie, text="hi")
        await h.ok("send_direct_message", workspace_id=value, from_user="hank", to_user=newbie, text="welcome!")
        mark(provider, "send_direct_message")

        await h.fails("list_direct_messages", "workspace_not_found", workspace_id=BOGUS_WS, user="hank",
                      with_user=newbie)
        dms = await h.ok("list_direct_messages", workspace_id=value, user=newbie, with_user="hank")
        assert dms["messages"][-1]["text"] == "welcome!"
        mark(provider, "list_direct_messages")

    # --- channel id providers ------------------------------------------------------
    created = await h.ok("create_channel", workspace_id=wid, name="#launch", creator="hank", topic="Launch plan")
    listed = next(c["channel_id"] for c in (await h.ok("list_channels", workspace_id=wid))["channels"]
                  if c["name"] == "general")
    for provider, cid in [("create_channel", created["channel_id"]), ("list_channels", listed)]:
        await h.fails("join_channel", "channel_not_found", channel_id=BOGUS_CH, user="ivy")
        await h.ok("join_channel", channel_id=cid, user="ivy")
        mark(provider, "join_channel")

        await h.fails("post_message", "channel_not_found", channel_id=BOGUS_CH, user="ivy", text="hello")
        parent = await h.ok("post_message", channel_id=cid, user="ivy", text=f"hello from {provider}")
        mark(provider, "post_message")

        await h.fails("get_channel_history", "channel_not_found", channel_id=BOGUS_CH)
        hist = await h.ok("get_channel_history", channel_id=cid)
        assert hist["messages"][0]["ts"] == parent["ts"]
        mark(provider, "get_channel_history")

        await h.fails("reply_to_thread", "channel_not_found", channel_id=BOGUS_CH, thread_ts=parent["ts"],
                      user="ivy", text="reply")
        reply = await h.ok("reply_to_thread", channel_id=cid, thread_ts=parent["ts"], user="ivy", text="reply")
        mark(provider, "reply_to_thread")

        await h.fails("get_thread", "channel_not_found", channel_id=BOGUS_CH, thread_ts=parent["ts"])
        await h.ok("get_thread", channel_id=cid, thread_ts=parent["ts"])
        mark(provider, "get_thread")

        await h.fails("add_reaction", "channel_not_found", channel_id=BOGUS_CH, ts=parent["ts"], user="ivy",
                      emoji="eyes")
        await h.ok("add_reaction", channel_id=cid, ts=parent["ts"], user="ivy", emoji="eyes")
        mark(provider, "add_reaction")

    # --- message ts providers ----------------------------------------------------------
    cid = created["channel_id"]
    posted = await h.ok("post_message", channel_id=cid, user="hank", text="Launch is Friday")
    await h.fails("reply_to_thread", "message_not_found", channel_id=cid, thread_ts=BOGUS_TS, user="hank", text="?")
    r1 = await h.ok("reply_to_thread", channel_id=cid, thread_ts=posted["ts"], user="hank", text="10am sharp")
    mark("post_message", "reply_to_thread")
    await h.fails("get_thread", "message_not_found", channel_id=cid, thread_ts=BOGUS_TS)
    thread = await h.ok("get_thread", channel_id=cid, thread_ts=posted["ts"])
    assert [r["ts"] for r in thread["replies"]] == [r1["ts"]]
    mark("post_message", "get_thread")
    await h.fails("add_reaction", "message_not_found", channel_id=cid, ts=BOGUS_TS, user="hank", emoji="tada")
    await h.ok("add_reaction", channel_id=cid, ts=posted["ts"], user="hank", emoji=":tada:")
    mark("post_message", "add_reaction")

    await h.ok("add_reaction", channel_id=cid, ts=r1["ts"], user="hank", emoji="thumbsup")
    mark("reply_to_thread", "add_reaction")
    reply_ts = thread["replies"][0]["ts"]
    await h.ok("add_reaction", channel_id=cid, ts=reply_ts, user="ivy", emoji="thumbsup")
    mark("get_thread", "add_reaction")

    seeded = (await h.ok("get_channel_history", channel_id="CGENERAL1"))["messages"]
    oldest = seeded[-1]["ts"]  # alice's welcome message
    await h.ok("reply_to_thread", channel_id="CGENERAL1", thread_ts=oldest, user="bob", text="thanks!")
    mark("get_channel_history", "reply_to_thread")
    assert len((await h.ok("get_thread", channel_id="CGENERAL1", thread_ts=oldest))["replies"]) == 1
    mark("get_channel_history", "get_thread")
    await h.ok("add_reaction", channel_id="CGENERAL1", ts=seeded[0]["ts"], user="bob", emoji="wave")
    mark("get_channel_history", "add_reaction")

    # --- join_channel state dependency (carol is in Acme but not in #general) ----------
    await h.fails("post_message", "not_in_channel", channel_id="CGENERAL1", user="carol", text="hi all")
    await h.fails("reply_to_thread", "not_in_channel", channel_id="CGENERAL1", thread_ts=oldest, user="carol",
                  text="+1")
    await h.fails("add_reaction", "not_in_channel", channel_id="CGENERAL1", ts=oldest, user="carol", emoji="heart")
    joined = await h.ok("join_channel", channel_id="CGENERAL1", user="carol")
    assert joined["already_member"] is False
    await h.ok("post_message", channel_id="CGENERAL1", user="carol", text="hi all")
    mark("join_channel", "post_message")
    await h.ok("reply_to_thread", channel_id="CGENERAL1", thread_ts=oldest, user="carol", text="+1")
    mark("join_channel", "reply_to_thread")
    await h.ok("add_reaction", channel_id="CGENERAL1", ts=oldest, user="carol", emoji="heart")
    mark("join_channel", "add_reaction")

    # --- invite_member state dependencies (a fresh workspace has only its owner) -------
    w2 = (await h.ok("create_workspace", name="Initech", owner="olga"))["workspace_id"]
    general2 = (await h.ok("list_channels", workspace_id=w2))["channels"][0]["channel_id"]
    await h.fails("join_channel", "user_not_in_workspace", channel_id=general2, user="peter")
    await h.fails("send_direct_message", "user_not_in_workspace", workspace_id=w2, from_user="olga",
                  to_user="peter", text="TPS reports")
    await h.fails("list_direct_messages", "user_not_in_workspace", workspace_id=w2, user="olga", with_user="peter")
    await h.ok("invite_member", workspace_id=w2, handle="peter", display_name="Peter Gibbons")
    await h.ok("join_channel", channel_id=general2, user="peter")
    mark("invite_member", "join_channel")
    await h.ok("send_direct_message", workspace_id=w2, from_user="olga", to_user="peter", text="TPS reports")
    mark("invite_member", "send_direct_message")
    await h.ok("list_direct_messages", workspace_id=w2, user="olga", with_user="peter")
    mark("invite_member", "list_direct_messages")

    # --- list_members -> DM targets --------------------------------------------------
    await h.fails("send_direct_message", "user_not_in_workspace", workspace_id="TACME0001", from_user="alice",
                  to_user="zed", text="hey")
    await h.fails("list_direct_messages", "user_not_in_workspace", workspace_id="TACME0001", user="alice",
                  with_user="zed")
    members = [m["handle"] for m in (await h.ok("list_members", workspace_id="TACME0001"))["members"]]
    other = next(m for m in members if m != "alice")
    dm = await h.ok("send_direct_message", workspace_id="TACME0001", from_user="alice", to_user=other, text="hey")
    mark("list_members", "send_direct_message")
    await h.ok("list_direct_messages", workspace_id="TACME0001", user="alice", with_user=members[-1])
    mark("list_members", "list_direct_messages")

    # --- some not_dependencies ------------------------------------------------------
    await h.fails("post_message", "invalid_arguments", channel_id=dm["dm_id"], user="alice", text="x")
    await h.fails("get_thread", "not_a_thread_parent", channel_id=cid, thread_ts=r1["ts"])
    await h.ok("get_channel_history", channel_id="CRANDOM01")  # alice never joined #random
    empty = await h.ok("list_direct_messages", workspace_id="TACME0001", user="bob", with_user="carol")
    assert empty == {"dm_id": None, "messages": []}
    await h.fails("join_channel", "invalid_arguments", channel_id=w2, user="olga")


async def main() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "server.py")], cwd=str(HERE))
    async with Client(params) as client:
        await run(Harness(client))
    declared = {(d["provider"], d["consumer"]) for d in DEPS["dependencies"]}
    missing = declared - checked
    extra = checked - declared
    assert not missing, f"dependencies not exercised: {sorted(missing)}"
    assert not extra, f"exercised but not declared: {sorted(extra)}"
    print(f"OK: {len(declared)} dependencies verified")


if __name__ == "__main__":
    asyncio.run(main())
