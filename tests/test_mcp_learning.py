"""What the MCP runtime learns per server with the default options (``restart_on_restore`` left out): whether
restores must restart it. Real servers: npm's memory server (reads its file on every call), a server of our own in
its two kinds (reads its file on every call, or only when it starts), the sign-in server (sessions in memory) and
the blind suite's kanban server (a dictionary of boards, written by someone who never saw libra)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from libra.errors import ConfigError
from libra.runtime.mcp.learning import RESTORE_AGREEMENTS, name_reads, reads
from libra.runtime.mcp.runtime import McpRuntime
from libra.runtime.mcp.setup import npm_servers_bin
from libra.runtime.mcp.spec import ServerSpec

from .test_mcp_runtime import close_and_check, signin_spec

HERE = Path(__file__).resolve().parent
KANBAN = HERE / "blind" / "kanban" / "server.py"


def test_the_restart_option_defaults_to_learning_and_keeps_its_explicit_meaning() -> None:
    spec = ServerSpec.from_config({"name": "x", "command": "y"})
    assert spec.restart_on_restore is None and spec.to_config() == {"name": "x", "command": "y"}
    assert (
        ServerSpec.from_config({"name": "x", "command": "y", "restart_on_restore": False}).restart_on_restore is False
    )
    with pytest.raises(ConfigError, match="true or false"):
        ServerSpec.from_config({"name": "x", "command": "y", "restart_on_restore": "yes"})


def test_reading_tools_by_annotation_else_by_name() -> None:
    assert reads("delete_all", {"readOnlyHint": True}) and not reads("list_things", {"readOnlyHint": False})
    assert all(name_reads(n) for n in ("list_boards", "getUser", "search-issues", "whoami", "read"))
    assert not any(name_reads(n) for n in ("create_board", "listener_add", "git_status", "add_item"))


def test_a_server_keeping_its_state_in_memory_is_learned_to_need_restarts() -> None:
    """The blind kanban server: creating a board changes no file, yet a fresh instance lists no board."""
    rt = McpRuntime([{"name": "kanban", "command": sys.executable, "args": [str(KANBAN)]}])
    try:
        learn = rt.learning["kanban"]
        assert {q[0] for q in learn.questions()} == {"list_users", "list_boards"}
        rec, _ = rt.invoke(rt.fresh(), "kanban.create_board", {"name": "Roadmap", "owner": "alice"})
        assert rec.status == "success", rec.error
        assert learn.restart is True and learn.call_probes == 1
        learned = rt.servers_learned["kanban"]
        assert learned["restart_on_restore"] is True and learned["decided_by"] == "learned"
        assert "create_board changed no file" in learned["why"]
    finally:
        close_and_check(rt)


def test_a_test_server_whose_sessions_are_in_memory_is_still_restarted() -> None:
    """The sign-in server without its ``state``: nothing can be asked of it before a reading call succeeded (its
    reading tools need a session token); then a second sign-in shows its memory for what it is."""
    spec = signin_spec()
    del spec["state"]
    rt = McpRuntime([spec])
    try:
        learn = rt.learning["notes"]
        fresh = rt.fresh()
        rec, _ = rt.invoke(fresh, "notes.sign_in", {"username": "alice", "password": "wonderland"})
        assert learn.questions() == [] and learn.call_probes == 0
        token = rec.output["access_token"]
        rec, _ = rt.invoke(fresh, "notes.whoami", {"access_token": token})
        assert rec.output == {"result": "alice"} and [q[0] for q in learn.questions()] == ["whoami"]
        rt.invoke(fresh, "notes.sign_in", {"username": "bob", "password": "builder"})
        assert learn.restart is True and rt.servers_learned["notes"]["decided_by"] == "learned"
        rec, noted = rt.invoke(fresh, "notes.add_note", {"access_token": token, "title": "t", "text": "b"})
        assert rec.status == "success" and noted != fresh
        rec, _ = rt.invoke(fresh, "notes.whoami", {"access_token": token, "_n": 1})
        assert rec.status == "rejected"  # the files were put back: a new instance, the session is gone
    finally:
        close_and_check(rt)


def items(name: str, *extra: str, **options: object) -> dict:
    """The items server of the tests, reading its file on every call (or, with ``--cached``, once at start)."""
    args = [str(HERE / "mcp_servers" / "items_server.py"), "{sandbox}/items.json", *extra]
    return {"name": name, "command": sys.executable, "args": args, **options}


def alternate(rt: McpRuntime, name: str) -> None:
    """Two states that differ in the server's file, and reads going back and forth between them and the fresh
    state: each read must see its own state's items, whatever the runtime decided."""
    fresh = rt.fresh()
    _, one = rt.invoke(fresh, f"{name}.add_item", {"name": "one"})
    _, two = rt.invoke(fresh, f"{name}.add_item", {"name": "two"})
    for i in range(3):
        for state, listed in ((one, ["one"]), (two, ["two"]), (fresh, [])):
            rec, same = rt.invoke(state, f"{name}.list_items", {"_round": i} if i else {})
            assert rec.output == {"result": listed} and same == state


def test_a_server_with_its_state_on_disk_stops_being_restarted() -> None:
    rt = McpRuntime([items("disk")])
    try:
        alternate(rt, "disk")
        learn = rt.learning["disk"]
        assert learn.restart is False and learn.probes >= RESTORE_AGREEMENTS
        learned = rt.servers_learned["disk"]
        assert learned["restart_on_restore"] is False and learned["decided_by"] == "learned"
        restarts = rt.restarts
        alternate(rt, "disk")
        assert rt.restarts == restarts  # restores keep the running instance now
    finally:
        close_and_check(rt)


def test_a_server_that_reads_its_files_only_when_it_starts_keeps_being_restarted() -> None:
    rt = McpRuntime([items("cached", "--cached")])
    try:
        alternate(rt, "cached")  # right, because it is restarted
        learned = rt.servers_learned["cached"]
        assert learned["restart_on_restore"] is True and learned["decided_by"] == "learned"
        assert "unlike a fresh one" in learned["why"]
    finally:
        close_and_check(rt)


def test_a_server_that_reads_its_files_on_every_call_stops_being_restarted() -> None:
    npm = npm_servers_bin()
    rt = McpRuntime(
        [
            {
                "name": "memory",
                "command": str(npm / "mcp-server-memory"),
                "env": {"MEMORY_FILE_PATH": "{sandbox}/m.jsonl"},
            }
        ]
    )
    try:
        fresh = rt.fresh()
        states = [fresh]
        for name in ("Ada", "Bob", "Cy"):
            entity = {"name": name, "entityType": "person", "observations": []}
            rec, made = rt.invoke(fresh, "memory.create_entities", {"entities": [entity]})
            assert rec.status == "success" and made != fresh
            states.append(made)
        for state in [*states, *states]:
            rec, same = rt.invoke(state, "memory.open_nodes", {"names": ["Ada", "Bob", "Cy"]})
            assert rec.status == "success" and same == state
        learned = rt.servers_learned["memory"]
        assert learned["restart_on_restore"] is False and learned["decided_by"] == "learned"
    finally:
        close_and_check(rt)


def test_the_option_is_not_second_guessed() -> None:
    for option in (True, False):
        rt = McpRuntime([items("disk", restart_on_restore=option)])
        try:
            fresh = rt.fresh()
            _, one = rt.invoke(fresh, "disk.add_item", {"name": "one"})
            rt.invoke(fresh, "disk.list_items", {})
            rt.invoke(one, "disk.list_items", {})
            learn = rt.learning["disk"]
            assert learn.probes == 0 and learn.restarts is option
            learned = rt.servers_learned["disk"]
            assert learned["decided_by"] == "option" and learned["restart_on_restore"] is option
            assert rt.restarts == (1 if option else 0)  # going back to `one` takes the parked instance
        finally:
            close_and_check(rt)


def test_show_prints_what_the_build_learned(tmp_path) -> None:
    from libra.catalog import Catalog, Tool
    from libra.library.artifact import Library

    from .test_cli import run

    why = "2 restores changed what it answers, and the running instance answered as a fresh one"
    servers = {
        "fs": {"restart_on_restore": False, "decided_by": "learned", "why": why},
        "notes": {"restart_on_restore": True, "decided_by": "option", "why": "set by restart_on_restore = true"},
    }
    lib = Library(Catalog([Tool(name="fs.read", description="Read.")], name="ws"), stats={"mcp_servers": servers})
    path = tmp_path / "ws.json.gz"
    lib.save(path)
    out = run("show", str(path))
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # rich wraps long lines at the terminal width
    assert "MCP servers" in text and f"fs: not restarted on restore (learned: {why})" in text
    assert "notes: restarted on restore (option: set by restart_on_restore = true)" in text


def test_a_build_records_the_decision_and_show_prints_it(tmp_path) -> None:
    """Through the CLI as a user runs it: a project file naming the items server, whose tools are learned from."""
    from .test_cli import run

    server = HERE / "mcp_servers" / "items_server.py"
    config = tmp_path / "libra.toml"
    config.write_text(
        f'name = "items"\n[[mcp]]\nname = "items"\ncommand = "{sys.executable}"\n'
        f'args = ["{server}", "{{sandbox}}/items.json"]\n'
    )
    out = run("build", "--config", str(config), "--out", str(tmp_path / "lib.json.gz"), "--quiet")
    assert out.returncode == 0, out.stderr
    out = run("show", str(tmp_path / "lib.json.gz"), "--json", str(tmp_path / "show.json"))
    assert out.returncode == 0, out.stderr
    learned = json.loads((tmp_path / "show.json").read_text())["stats"]["mcp_servers"]["items"]
    assert learned["questions"] == ["list_items"] and learned["decided_by"] in ("learned", "default")
    restart = "restarted on restore" if learned["restart_on_restore"] else "not restarted on restore"
    assert f"items: {restart} ({learned['decided_by']}: " in " ".join(out.stdout.split())
