"""Exercise the kanban MCP server over stdio and verify DEPENDENCIES.json.

Run with:  /work/blind/.venv/bin/python check_kanban.py
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


class Harness:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def ok(self, tool: str, **args: Any) -> dict[str, Any]:
        res = await self.client.call_tool(tool, args)
        if res.is_error:
            raise AssertionError(f"{tool}({args}) unexpectedly failed: {res.content[0].text}")
        return res.structured_content

    async def fails(self, tool: str, **args: Any) -> str:
        res = await self.client.call_tool(tool, args)
        if not res.is_error:
            raise AssertionError(f"{tool}({args}) unexpectedly succeeded: {res.structured_content}")
        return res.content[0].text


def mark(provider: str, consumer: str) -> None:
    checked.add((provider, consumer))


async def run(h: Harness) -> None:
    # --- list_users -> create_board / add_member ------------------------------
    users = [u["username"] for u in (await h.ok("list_users"))["users"]]
    assert "carol" in users and "dave" in users
    await h.fails("create_board", name="QA Board", owner="zed")
    board = await h.ok("create_board", name="QA Board", owner="carol")
    mark("list_users", "create_board")
    bid = board["board_id"]
    assert bid == "qa-board", bid

    # --- board id providers ----------------------------------------------------
    listed_bid = next(b["board_id"] for b in (await h.ok("list_boards"))["boards"] if b["name"] == "QA Board")
    for provider, value in [("create_board", bid), ("list_boards", listed_bid)]:
        await h.fails("get_board", board_id="no-such-board")
        await h.ok("get_board", board_id=value)
        mark(provider, "get_board")

        await h.fails("add_column", board_id="no-such-board", name=f"Review {provider}")
        await h.ok("add_column", board_id=value, name=f"Review {provider}")
        mark(provider, "add_column")

        await h.fails("list_cards", board_id="no-such-board")
        await h.ok("list_cards", board_id=value)
        mark(provider, "list_cards")

    await h.fails("add_member", board_id="no-such-board", username="dave")
    await h.fails("add_member", board_id=bid, username="nobody")
    await h.ok("add_member", board_id=bid, username=users[users.index("dave")], role="viewer")
    mark("list_users", "add_member")
    mark("create_board", "add_member")
    await h.ok("add_member", board_id=listed_bid, username="dave", role="editor")
    mark("list_boards", "add_member")

    # --- column id providers ---------------------------------------------------
    todo_id = board["columns"][0]["column_id"]
    doing_id = board["columns"][1]["column_id"]
    bogus_col = 99999
    await h.fails("create_card", column_id=bogus_col, title="x")
    c1 = await h.ok("create_card", column_id=todo_id, title="Write test plan", priority="high", due_date="2025-07-01")
    mark("create_board", "create_card")
    await h.fails("move_card", card_id=c1["card_id"], to_column_id=bogus_col)
    await h.ok("move_card", card_id=c1["card_id"], to_column_id=doing_id)
    mark("create_board", "move_card")

    got = await h.ok("get_board", board_id=bid)
    gb_done = next(c["column_id"] for c in got["columns"] if c["name"] == "Done")
    c2 = await h.ok("create_card", column_id=gb_done, title="Ship it")
    mark("get_board", "create_card")
    await h.ok("move_card", card_id=c1["card_id"], to_column_id=gb_done)
    mark("get_board", "move_card")

    new_col = await h.ok("add_column", board_id=bid, name="Blocked", wip_limit=2)
    c3 = await h.ok("create_card", column_id=new_col["column_id"], title="Waiting on legal")
    mark("add_column", "create_card")
    await h.ok("move_card", card_id=c2["card_id"], to_column_id=new_col["column_id"])
    mark("add_column", "move_card")
    # WIP limit is enforced
    await h.fails("create_card", column_id=new_col["column_id"], title="third one")

    # --- card id providers -----------------------------------------------------
    bogus_card = 424242
    listed = (await h.ok("list_cards", board_id=bid, query="test plan"))["cards"]
    assert len(listed) == 1
    listed_card = listed[0]["card_id"]
    to_delete_a = await h.ok("create_card", column_id=todo_id, title="Temp A")
    to_delete_b = await h.ok("create_card", column_id=todo_id, title="Temp B")

    for provider, cid, deletable in [
        ("create_card", c3["card_id"], to_delete_a["card_id"]),
        ("list_cards", listed_card, None),
    ]:
        await h.fails("update_card", card_id=bogus_card, title="nope")
        await h.ok("update_card", card_id=cid, description=f"via {provider}")
        mark(provider, "update_card")

        await h.fails("move_card", card_id=bogus_card, to_column_id=todo_id)
        await h.ok("move_card", card_id=cid, to_column_id=todo_id)
        mark(provider, "move_card")

        await h.fails("assign_card", card_id=bogus_card, username="carol")
        await h.ok("assign_card", card_id=cid, username="carol")
        mark(provider, "assign_card")

        await h.fails("add_comment", card_id=bogus_card, author="carol", text="hi")
        await h.ok("add_comment", card_id=cid, author="carol", text=f"hello via {provider}")
        mark(provider, "add_comment")

        if deletable is None:
            deletable = next(
                c["card_id"] for c in (await h.ok("list_cards", board_id=bid, query="Temp B"))["cards"]
            )
            assert deletable == to_delete_b["card_id"]
        await h.fails("delete_card", card_id=bogus_card)
        await h.ok("delete_card", card_id=deletable)
        await h.fails("update_card", card_id=deletable, title="gone")
        mark(provider, "delete_card")

    # --- members: get_board -> assign_card / add_comment -----------------------
    card = (await h.ok("create_card", column_id=todo_id, title="Member checks"))["card_id"]
    await h.fails("assign_card", card_id=card, username="alice")  # alice not on this board
    members = (await h.ok("get_board", board_id=bid))["members"]
    editor = next(m["username"] for m in members if m["role"] in ("owner", "editor"))
    await h.ok("assign_card", card_id=card, username=editor)
    mark("get_board", "assign_card")
    await h.fails("add_comment", card_id=card, author="alice", text="hi")
    any_member = members[-1]["username"]
    await h.ok("add_comment", card_id=card, author=any_member, text="hi")
    mark("get_board", "add_comment")

    # --- add_member state dependencies -----------------------------------------
    await h.fails("assign_card", card_id=card, username="bob")
    await h.fails("add_comment", card_id=card, author="bob", text="can I help?")
    await h.ok("add_member", board_id=bid, username="bob", role="viewer")
    await h.ok("add_comment", card_id=card, author="bob", text="can I help?")
    mark("add_member", "add_comment")
    await h.fails("assign_card", card_id=card, username="bob")  # viewers cannot be assigned
    await h.ok("add_member", board_id=bid, username="bob", role="editor")
    await h.ok("assign_card", card_id=card, username="bob")
    mark("add_member", "assign_card")

    # --- a few not_dependencies -------------------------------------------------
    upd = await h.ok("update_card", card_id=card, priority="urgent")
    assert upd["card_id"] == card and upd["column_id"] == todo_id
    comment = await h.ok("add_comment", card_id=card, author="bob", text="done")
    assert comment["card_id"] == card
    got = await h.ok("get_board", board_id=bid)
    assert all("card_id" not in c for c in got["columns"])

    # demo data from the README
    demo = await h.ok("list_cards", board_id="website-relaunch")
    assert [c["card_id"] for c in demo["cards"]] == [1, 2, 3], demo


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
