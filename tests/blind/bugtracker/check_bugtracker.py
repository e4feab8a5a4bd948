"""Exercise the bugtracker MCP server over stdio and verify DEPENDENCIES.json.

Run with:  /work/blind/.venv/bin/python check_bugtracker.py
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
FACTS = DEPS["known_facts"]
checked: set[tuple[str, str]] = set()


def mark(provider: str, consumer: str) -> None:
    checked.add((provider, consumer))


class Harness:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def ok(self, tool: str, **args: Any) -> dict[str, Any]:
        res = await self.client.call_tool(tool, args)
        if res.is_error:
            raise AssertionError(f"{tool}({args}) unexpectedly failed: {res.content[0].text}")
        return res.structured_content

    async def fails(self, tool: str, contains: str = "", **args: Any) -> str:
        res = await self.client.call_tool(tool, args)
        if not res.is_error:
            raise AssertionError(f"{tool}({args}) unexpectedly succeeded: {res.structured_content}")
        text = res.content[0].text
        assert contains.lower() in text.lower(), f"{tool}: expected {contains!r} in {text!r}"
        return text


async def run(h: Harness) -> None:
    bad_key = "bt_" + "0" * 40
    await h.fails("login", "invalid", username="demo", password="wrong")
    key = (await h.ok("login", username=FACTS["username"], password=FACTS["password"]))["api_key"]

    # --- login -> create_project, and project key providers -------------------
    await h.fails("create_project", "api key", api_key=bad_key, key="API", name="Public API")
    proj = await h.ok("create_project", api_key=key, key="api", name="Public API")
    mark("login", "create_project")
    assert proj["key"] == "API"

    await h.fails("create_issue", "api key", api_key=bad_key, project_key="API", title="Rate limits")
    await h.fails("create_issue", "no project", api_key=key, project_key="NOPE", title="Rate limits")
    i1 = await h.ok("create_issue", api_key=key, project_key=proj["key"], title="Rate limits too strict",
                    priority="high")
    mark("login", "create_issue")
    mark("create_project", "create_issue")
    listed_key = next(p["key"] for p in (await h.ok("list_projects"))["projects"] if p["name"] == "Public API")
    i2 = await h.ok("create_issue", api_key=key, project_key=listed_key, title="Document pagination")
    mark("list_projects", "create_issue")

    await h.fails("create_label", "api key", api_key=bad_key, project_key="API", name="perf")
    await h.fails("create_label", "no project", api_key=key, project_key="NOPE", name="perf")
    await h.ok("create_label", api_key=key, project_key=proj["key"], name="perf", color="#fbca04")
    mark("login", "create_label")
    mark("create_project", "create_label")
    await h.ok("create_label", api_key=key, project_key=listed_key, name="docs")
    mark("list_projects", "create_label")

    # --- issue key providers --------------------------------------------------
    found = (await h.ok("search_issues", project_key="API", text="pagination"))["issues"]
    assert [i["issue_key"] for i in found] == [i2["issue_key"]]
    sources = [("create_issue", i1["issue_key"]), ("search_issues", found[0]["issue_key"])]
    bogus = "API-999"
    for provider, ik in sources:
        await h.fails("get_issue", "does not exist", issue_key=bogus)
        assert (await h.ok("get_issue", issue_key=ik))["issue_key"] == ik
        mark(provider, "get_issue")

        await h.fails("update_issue", "does not exist", api_key=key, issue_key=bogus, status="in_progress")
        await h.ok("update_issue", api_key=key, issue_key=ik, status="in_progress")
        mark(provider, "update_issue")

        await h.fails("assign_issue", "does not exist", api_key=key, issue_key=bogus, assignee="tom")
        await h.ok("assign_issue", api_key=key, issue_key=ik, assignee="tom")
        mark(provider, "assign_issue")

        await h.fails("add_label", "does not exist", api_key=key, issue_key=bogus, label="bug")
        await h.ok("add_label", api_key=key, issue_key=ik, label="bug")
        mark(provider, "add_label")

        await h.fails("close_issue", "does not exist", api_key=key, issue_key=bogus)
        await h.ok("close_issue", api_key=key, issue_key=ik, resolution="fixed")
        mark(provider, "close_issue")

        await h.fails("reopen_issue", "does not exist", api_key=key, issue_key=bogus)
        await h.ok("reopen_issue", api_key=key, issue_key=ik)
        mark(provider, "reopen_issue")

    # --- login -> remaining writers ---------------------------------------------
    ik = i1["issue_key"]
    for tool, extra in [
        ("update_issue", {"priority": "critical"}),
        ("assign_issue", {"assignee": "maria"}),
        ("add_label", {"label": "perf"}),
        ("close_issue", {"resolution": "wont_fix"}),
        ("reopen_issue", {}),
    ]:
        await h.fails(tool, "api key", api_key=bad_key, issue_key=ik, **extra)
        await h.ok(tool, api_key=key, issue_key=ik, **extra)
        mark("login", tool)

    # --- list_users -> assign_issue ---------------------------------------------
    await h.fails("assign_issue", "no user", api_key=key, issue_key=ik, assignee="ghost")
    users = [u["username"] for u in (await h.ok("list_users"))["users"]]
    got = await h.ok("assign_issue", api_key=key, issue_key=ik, assignee=users[-1])
    assert got["assignee"] == users[-1]
    mark("list_users", "assign_issue")

    # --- close_issue -> reopen_issue (state) -------------------------------------
    i3 = await h.ok("create_issue", api_key=key, project_key="API", title="Timeouts on bulk export")
    await h.fails("reopen_issue", "not closed", api_key=key, issue_key=i3["issue_key"])
    await h.ok("close_issue", api_key=key, issue_key=i3["issue_key"], resolution="duplicate",
               duplicate_of=i1["issue_key"])
    reopened = await h.ok("reopen_issue", api_key=key, issue_key=i3["issue_key"])
    assert reopened["status"] == "open" and reopened["resolution"] is None
    mark("close_issue", "reopen_issue")

    # --- create_label -> add_label (state) ----------------------------------------
    await h.fails("add_label", "no label", api_key=key, issue_key=i3["issue_key"], label="regression")
    await h.ok("create_label", api_key=key, project_key="API", name="regression", color="#b60205")
    tagged = await h.ok("add_label", api_key=key, issue_key=i3["issue_key"], label="regression")
    assert "regression" in tagged["labels"]
    mark("create_label", "add_label")

    # --- label names from create_project / list_projects --------------------------
    ops = await h.ok("create_project", api_key=key, key="OPS", name="Operations")
    ops_issue = (await h.ok("create_issue", api_key=key, project_key="OPS", title="Rotate TLS certs"))["issue_key"]
    await h.fails("add_label", "no label", api_key=key, issue_key=ops_issue, label="docs")  # docs exists only in WEB/API
    default_label = ops["labels"][0]["name"]
    await h.ok("add_label", api_key=key, issue_key=ops_issue, label=default_label)
    mark("create_project", "add_label")
    web = next(p for p in (await h.ok("list_projects"))["projects"] if p["key"] == "WEB")
    await h.fails("add_label", "no label", api_key=key, issue_key="WEB-1", label="perf")
    await h.ok("add_label", api_key=key, issue_key="WEB-1", label=web["labels"][-1]["name"])
    mark("list_projects", "add_label")

    # --- not_dependencies / demo facts ----------------------------------------------
    assert (await h.ok("search_issues", project_key="WEB"))["total"] == 3  # no key needed
    await h.fails("get_issue", "not an issue key", issue_key="WEB")
    await h.ok("close_issue", api_key=key, issue_key=(await h.ok("create_issue", api_key=key, project_key="WEB",
                                                                  title="Fresh issue"))["issue_key"])
    assert (await h.ok("get_issue", issue_key=FACTS["demo_closed_issue"]))["status"] == "closed"
    await h.fails("update_issue", "closed", api_key=key, issue_key="WEB-3", title="Edited")


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
