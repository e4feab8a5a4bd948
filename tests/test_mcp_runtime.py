"""The MCP runtime on real servers: npm's filesystem and memory servers, PyPI's git and time servers, a 1.x server
and a stateful 2.x server of our own, over stdio and Streamable HTTP, all against one sandbox directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from libra.errors import ConfigError
from libra.runtime.base import State
from libra.runtime.mcp.client import McpServerError, ServerSpec, pinned_environment
from libra.runtime.mcp.runtime import McpRuntime
from libra.runtime.mcp.sandbox_dir import SandboxDir, fingerprint, git_index_entries
from libra.runtime.mcp.setup import mcp1_python, npm_servers_bin, pypi_servers_bin

HERE = Path(__file__).resolve().parent / "mcp_servers"
HANDSHAKE_ERA = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def running(pid: int) -> bool:
    """Whether a process is alive (a zombie waiting to be reaped is not running)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def close_and_check(rt: McpRuntime) -> None:
    pids = rt.pids
    assert pids
    rt.close()
    assert [p for p in pids if running(p)] == []


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sandbox template: a git repository with one commit (pinned identity and dates, so its hashes are fixed)."""
    root = tmp_path_factory.mktemp("template")
    repo = root / "repo"
    repo.mkdir()
    env = {**os.environ, **pinned_environment()}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "README.md").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "init"], check=True, env=env)
    return root


def fs_git_servers() -> list[dict]:
    npm, pypi = npm_servers_bin(), pypi_servers_bin()
    return [
        {
            "name": "fs",
            "command": str(npm / "mcp-server-filesystem"),
            "args": ["{sandbox}"],
            "restart_on_restore": False,
        },
        {
            "name": "git",
            "command": str(pypi / "mcp-server-git"),
            "args": ["--repository", "{sandbox}/repo"],
            "restart_on_restore": False,
        },
    ]


@pytest.fixture(scope="module")
def workspace(template: Path):
    """filesystem, git, memory and time sharing one sandbox."""
    npm, pypi = npm_servers_bin(), pypi_servers_bin()
    servers = fs_git_servers() + [
        {
            "name": "memory",
            "command": str(npm / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": "{sandbox}/memory.jsonl"},
            "restart_on_restore": False,
        },
        {"name": "time", "command": str(pypi / "mcp-server-time"), "restart_on_restore": False},
    ]
    rt = McpRuntime(servers, template)
    yield rt
    close_and_check(rt)


def test_catalog_comes_from_every_server(workspace: McpRuntime) -> None:
    names = set(workspace.catalog.names)
    assert {
        "fs.write_file",
        "fs.read_text_file",
        "git.git_add",
        "git.git_commit",
        "memory.create_entities",
        "time.get_current_time",
    } <= names
    add = workspace.catalog["git.git_add"]
    assert add.group == "git" and {"repo_path", "files"} <= set(add.required)
    assert add.metadata["annotations"]["readOnlyHint"] is False and add.metadata["mcp_name"] == "git_add"
    assert workspace.catalog["fs.read_text_file"].metadata["annotations"]["readOnlyHint"] is True
    assert any(t.response is not None for t in workspace.catalog)  # outputSchema kept as the response schema
    assert all(t.parameters["type"] == "object" for t in workspace.catalog)


def test_write_then_read_in_a_restored_state(workspace: McpRuntime) -> None:
    fresh = workspace.fresh()
    note = f"{workspace.sandbox.path}/notes.txt"
    rec, written = workspace.invoke(fresh, "fs.write_file", {"path": note, "content": "first line"})
    assert rec.status == "success" and written != fresh
    assert rec.state_changes["sandbox"]["added"] == {'["notes.txt"]': "first line"}
    missing, same = workspace.invoke(fresh, "fs.read_text_file", {"path": note})  # the sandbox is put back
    assert missing.status == "rejected" and "ENOENT" in missing.error and same == fresh
    assert not Path(note).exists()
    found, same = workspace.invoke(written, "fs.read_text_file", {"path": note})
    assert found.status == "success" and "first line" in str(found.output) and same == written
    assert workspace.stats["restores"] >= 2


def test_git_add_then_commit_across_servers(workspace: McpRuntime) -> None:
    repo = f"{workspace.sandbox.path}/repo"
    _, written = workspace.invoke(workspace.fresh(), "fs.write_file", {"path": f"{repo}/a.txt", "content": "A\n"})
    rec, staged = workspace.invoke(written, "git.git_add", {"repo_path": repo, "files": ["a.txt"]})
    assert rec.status == "success" and staged != written
    index = rec.state_changes["sandbox"]["changed"]['["repo/.git/index"]']["after"]
    assert "\ta.txt\n" in index and "\tREADME.md\n" in index  # the index shown as its entries, without stat data
    rec, committed = workspace.invoke(staged, "git.git_commit", {"repo_path": repo, "message": "add a"})
    assert rec.status == "success" and committed != staged
    shown = rec.state_changes["sandbox"]["added"].values()  # git objects shown inflated: the commit is readable
    assert any(
        v.startswith("commit ") and "author libra <libra@example.invalid> 1735732800 +0000" in v and "\n\nadd a" in v
        for v in shown
    )
    log, _ = workspace.invoke(committed, "git.git_log", {"repo_path": repo})
    assert "add a" in str(log.output)
    log, _ = workspace.invoke(staged, "git.git_log", {"repo_path": repo})
    assert "add a" not in str(log.output) and "init" in str(log.output)


def test_identical_calls_give_identical_states_in_another_runtime(workspace: McpRuntime, template: Path) -> None:
    def run(rt: McpRuntime) -> list[str]:
        repo = f"{rt.sandbox.path}/repo"
        s = rt.fresh()
        out = [s.fingerprint]
        for tool, args in [
            ("fs.write_file", {"path": f"{repo}/b.txt", "content": "B\n"}),
            ("git.git_add", {"repo_path": repo, "files": ["b.txt"]}),
            ("git.git_commit", {"repo_path": repo, "message": "b"}),
        ]:
            rec, s = rt.invoke(s, tool, args)
            assert rec.status == "success", rec.error
            out.append(s.fingerprint)
        return out

    first = McpRuntime(fs_git_servers(), template)
    try:
        a = run(first)
    finally:
        close_and_check(first)
    second = McpRuntime(fs_git_servers(), template)
    try:
        b = run(second)
    finally:
        close_and_check(second)
    assert a == b and len(set(a)) == 4  # same commit hash too: dates and identity are pinned


def test_memory_server_and_time_server(workspace: McpRuntime) -> None:
    fresh = workspace.fresh()
    rec, created = workspace.invoke(
        fresh, "memory.create_entities", {"entities": [{"name": "Ada", "entityType": "person", "observations": []}]}
    )
    assert rec.status == "success" and created != fresh
    rec, observed = workspace.invoke(
        created, "memory.add_observations", {"observations": [{"entityName": "Ada", "contents": ["writes programs"]}]}
    )
    assert rec.status == "success" and observed != created
    rec, same = workspace.invoke(
        fresh, "memory.add_observations", {"observations": [{"entityName": "Ada", "contents": ["writes programs"]}]}
    )
    assert rec.status != "success" and same == fresh
    rec, same = workspace.invoke(fresh, "time.get_current_time", {"timezone": "UTC"})
    assert rec.status == "success" and same == fresh and rec.state_changes == {}
    again, _ = workspace.invoke(fresh, "time.get_current_time", {"timezone": "UTC"})
    assert again.output == rec.output  # memoised: a clock reading cannot make identical calls disagree


def test_one_x_server_falls_back_to_the_handshake(tmp_path: Path) -> None:
    rt = McpRuntime(
        [{"name": "legacy", "command": str(mcp1_python()), "args": [str(HERE / "legacy_server.py"), "{sandbox}"]}]
    )
    try:
        assert rt._conns["legacy"].protocol in HANDSHAKE_ERA
        assert set(rt.catalog.names) == {"legacy.put", "legacy.get"}
        rec, stored = rt.invoke(rt.fresh(), "legacy.put", {"key": "k", "value": "v1"})
        assert rec.status == "success" and stored != rt.fresh()
        rec, _ = rt.invoke(rt.fresh(), "legacy.get", {"key": "k"})
        assert rec.status == "rejected" and "no key k" in rec.error
        rec, _ = rt.invoke(stored, "legacy.get", {"key": "k"})
        assert rec.status == "success" and "v1" in str(rec.output)
    finally:
        close_and_check(rt)


def signin_spec(**extra: object) -> dict:
    return {
        "name": "notes",
        "command": sys.executable,
        "args": [str(HERE / "signin_server.py")],
        "env": {"NOTES_DIR": "{sandbox}/notes"},
        "state": "process",
        **extra,
    }


@pytest.mark.parametrize("parked", [0, 3])
def test_state_in_server_memory_is_replayed_or_parked(parked: int) -> None:
    rt = McpRuntime([signin_spec()], parked_per_server=parked)
    try:
        fresh = rt.fresh()
        rec, signed = rt.invoke(fresh, "notes.sign_in", {"username": "alice", "password": "wonderland"})
        assert rec.status == "success" and signed != fresh  # no file changed: the session is in the server
        token = rec.output["access_token"]
        rec, same = rt.invoke(signed, "notes.whoami", {"access_token": token})
        assert rec.output == {"result": "alice"} and same == signed  # readOnlyHint: not part of the identity
        rec, noted = rt.invoke(signed, "notes.add_note", {"access_token": token, "title": "t", "text": "body"})
        assert rec.status == "success" and "notes/alice/n1.txt" in str(rec.state_changes)
        view = rt.view(noted)
        assert view["sandbox"] == {"notes/alice/n1.txt": "t\nbody\n"} and [c["tool"] for c in view["memory"]] == [
            "notes.sign_in",
            "notes.add_note",
        ]
        rec, _ = rt.invoke(fresh, "notes.add_note", {"access_token": token, "title": "t", "text": "body"})
        assert rec.status == "rejected" and "not signed in" in rec.error
        replayed, restarts = rt.stats["replayed_calls"], rt.restarts
        rec, _ = rt.invoke(noted, "notes.read_note", {"access_token": token, "note_id": "n1"})
        assert rec.status == "success" and "body" in str(rec.output)
        if parked:  # the instance left at `noted` is taken up again: no replay
            assert rt.stats["replayed_calls"] == replayed
        else:  # the instance started for the fresh state (its memory is empty) replays sign_in and add_note
            assert rt.stats["replayed_calls"] == replayed + 2
        assert rt.restarts == restarts
        assert rt.stats["replay_mismatches"] == 0
    finally:
        close_and_check(rt)


def test_streamable_http_server_started_by_command() -> None:
    spec = signin_spec(args=[str(HERE / "signin_server.py"), "--http", "{port}"], url="http://127.0.0.1:{port}/mcp")
    rt = McpRuntime([spec])
    try:
        assert "notes.sign_in" in rt.catalog
        rec, signed = rt.invoke(rt.fresh(), "notes.sign_in", {"username": "bob", "password": "builder"})
        assert rec.status == "success"
        rec, _ = rt.invoke(signed, "notes.whoami", {"access_token": rec.output["access_token"]})
        assert rec.output == {"result": "bob"}
    finally:
        close_and_check(rt)


@pytest.fixture(scope="module")
def bad():
    rt = McpRuntime(
        [{"name": "bad", "command": str(mcp1_python()), "args": [str(HERE / "bad_server.py")], "timeout": 2}]
    )
    yield rt
    close_and_check(rt)


def test_crash_on_a_call_is_an_error_record_and_the_next_call_works(bad: McpRuntime) -> None:
    fresh = bad.fresh()
    for i in range(2):
        assert bad.invoke(fresh, "bad.crash_on_third", {"text": f"c{i}"})[0].status == "success"
    rec, same = bad.invoke(fresh, "bad.crash_on_third", {"text": "c2"})
    assert (
        rec.status == "error"
        and "exited with status 7" in rec.error
        and "simulated crash" in rec.error
        and same == fresh
    )
    assert bad.invoke(fresh, "bad.echo", {"text": "after crash"})[0].output == {"result": "after crash"}


def test_hang_is_an_error_record_and_the_next_call_works(bad: McpRuntime) -> None:
    rec, _ = bad.invoke(bad.fresh(), "bad.hang", {"text": "h"})
    assert rec.status == "error" and "did not answer within 2 s" in rec.error
    assert bad.invoke(bad.fresh(), "bad.echo", {"text": "after hang"})[0].output == {"result": "after hang"}


def test_garbage_on_stdout_is_an_error_record_and_the_next_call_works(bad: McpRuntime) -> None:
    rec, _ = bad.invoke(bad.fresh(), "bad.garbage", {"text": "g"})
    assert rec.status == "error" and "this is not json-rpc" in rec.error
    assert bad.invoke(bad.fresh(), "bad.echo", {"text": "after garbage"})[0].output == {"result": "after garbage"}


def test_a_read_only_hint_does_not_hide_a_change(bad: McpRuntime) -> None:
    assert bad.catalog["bad.peek"].metadata["annotations"]["readOnlyHint"] is True
    rec, after = bad.invoke(bad.fresh(), "bad.peek", {"text": "seen"})
    assert (
        rec.status == "success"
        and after != bad.fresh()
        and rec.state_changes["sandbox"]["added"] == {'["peek.log"]': "seen\n"}
    )
    assert bad.hint_conflicts == {"bad.peek": "marked readOnlyHint but changed the sandbox"}
    # a mixed build's runtime reports its sides' conflicts, and the build health summary prints them
    from libra.cli.render import health_lines
    from libra.runtime.composite import CompositeRuntime

    assert CompositeRuntime([bad]).hint_conflicts == bad.hint_conflicts
    printed = health_lines({"hint_conflicts": bad.hint_conflicts})
    assert printed == [
        "build health:",
        "  annotations contradicted by what the tools did:",
        "    bad.peek: marked readOnlyHint but changed the sandbox",
    ]


def test_servers_run_without_network_unless_allowed(bad: McpRuntime) -> None:
    import socket

    assert bad.network_isolation == "namespace"
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        rec, _ = bad.invoke(bad.fresh(), "bad.connect", {"port": port})
        assert rec.status == "rejected" and "connect" in rec.error
        open_rt = McpRuntime(
            [
                {
                    "name": "bad",
                    "command": str(mcp1_python()),
                    "args": [str(HERE / "bad_server.py")],
                    "allow_network": True,
                }
            ]
        )
        try:
            assert open_rt.network_isolation == "allowed"
            rec, _ = open_rt.invoke(open_rt.fresh(), "bad.connect", {"port": port})
            assert rec.status == "success" and "connected" in str(rec.output)
        finally:
            close_and_check(open_rt)


def test_a_server_that_cannot_start_is_named_with_its_stderr() -> None:
    with pytest.raises(
        McpServerError,
        match=r"MCP server 'db' failed to start: it exited with status 3; stderr: .*cannot open its database",
    ):
        McpRuntime(
            [{"name": "db", "command": str(mcp1_python()), "args": [str(HERE / "bad_server.py"), "--exit-at-start"]}]
        )
    with pytest.raises(McpServerError, match=r"MCP server 'ghost' failed to start: cannot run '/nonexistent/ghost'"):
        McpRuntime([{"name": "ghost", "command": "/nonexistent/ghost"}])


def test_server_tables_are_checked() -> None:
    with pytest.raises(ConfigError, match="unknown key"):
        ServerSpec.from_config({"name": "x", "command": "y", "argv": []})
    with pytest.raises(ConfigError, match="neither 'command'"):
        ServerSpec.from_config({"name": "x"})
    with pytest.raises(ConfigError, match="cannot be reset"):
        ServerSpec.from_config({"name": "x", "url": "http://127.0.0.1:9/mcp", "state": "process"})
    with pytest.raises(ConfigError, match="letters, digits"):
        ServerSpec.from_config({"name": "a.b", "command": "y"})
    spec = ServerSpec.from_config(
        {"name": "x", "command": "y", "args": ["--root", "{sandbox}/r"], "env": {"DB": "{sandbox}/db"}}
    ).expanded(Path("/sb"), None)
    assert spec.args == ("--root", "/sb/r") and spec.env == {"DB": "/sb/db"}


def test_states_are_opaque_to_other_runtimes(bad: McpRuntime) -> None:
    with pytest.raises(Exception, match="not made by this MCP runtime"):
        bad.invoke(State("0" * 64, None), "bad.echo", {"text": "x"})


def test_fingerprints_ignore_mtimes_and_git_stat_data(tmp_path: Path) -> None:
    root = tmp_path / "sb"
    repo = root / "repo"
    repo.mkdir(parents=True)
    env = {**os.environ, **pinned_environment()}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "f.txt").write_text("x\n")
    subprocess.run(["git", "-C", str(repo), "add", "f.txt"], check=True, env=env)
    sandbox = SandboxDir(root, tmp_path / "store")
    before = sandbox.scan()
    raw = (repo / ".git" / "index").read_bytes()
    os.utime(repo / "f.txt", (1, 1))
    subprocess.run(["git", "-C", str(repo), "update-index", "--refresh"], check=True, env=env, capture_output=True)
    after = sandbox.scan()
    assert (repo / ".git" / "index").read_bytes() != raw  # git rewrote the stat data
    assert fingerprint(after) == fingerprint(before)
    assert (
        git_index_entries(raw)
        == subprocess.run(["git", "-C", str(repo), "ls-files", "-s"], capture_output=True, text=True, check=True).stdout
    )
    (repo / "f.txt").write_text("y\n")
    assert fingerprint(sandbox.scan()) != fingerprint(before)
    sandbox.restore(before)
    assert (repo / "f.txt").read_text() == "x\n" and fingerprint(sandbox.scan()) == fingerprint(before)


def test_a_library_is_built_over_filesystem_and_git(template: Path) -> None:
    from libra.induction.build import BuildOptions, build_library
    from libra.sources.mcp import McpSource

    source = McpSource(fs_git_servers(), template, name="fsgit", fixtures={"repo_path": "{sandbox}/repo"})
    lib = build_library(source, None, BuildOptions(workers=0, progress=False))
    edges = {(r.kind, r.provider, r.consumer) for r in lib.relations}
    assert ("provenance", "fs.write_file", "fs.read_text_file") in edges
    assert ("state", "fs.write_file", "fs.read_text_file") in edges
    assert lib.stats["tools"] == len(source.catalog()) and lib.stats["health"]["tools"] == lib.stats["tools"]
    pids = [pid for rt in source.opened for pid in rt.pids]
    assert pids and all(rt.closed for rt in source.opened) and [p for p in pids if running(p)] == []


def test_a_state_from_an_earlier_runtime_is_replayed(template: Path, tmp_path: Path) -> None:
    """What a resumed build does: states saved by one runtime (their call paths) are reached by another one on
    the same sandbox path, by replaying the calls from the fresh sandbox."""
    first = McpRuntime(fs_git_servers(), template, workdir=tmp_path)
    try:
        note = f"{first.sandbox.path}/repo/n.txt"
        _, written = first.invoke(first.fresh(), "fs.write_file", {"path": note, "content": "N"})
        _, staged = first.invoke(
            written, "git.git_add", {"repo_path": f"{first.sandbox.path}/repo", "files": ["n.txt"]}
        )
    finally:
        close_and_check(first)
    second = McpRuntime(fs_git_servers(), template, workdir=tmp_path)
    try:
        assert second.fresh() == first.fresh()
        rec, same = second.invoke(staged, "git.git_status", {"repo_path": f"{second.sandbox.path}/repo"})
        assert rec.status == "success" and "n.txt" in str(rec.output) and same == staged
        assert second.stats["replayed_calls"] == 2 and second.stats["replay_mismatches"] == 0
        rec, _ = second.invoke(written, "fs.read_text_file", {"path": note})  # held in files now: restored
        assert rec.status == "success" and "N" in str(rec.output) and second.stats["replayed_calls"] == 2
    finally:
        close_and_check(second)


def test_streamable_http_server_run_by_someone_else(tmp_path: Path) -> None:
    import socket
    import time

    from libra.runtime.mcp.client import free_port

    port = free_port()
    env = {**os.environ, "NOTES_DIR": str(tmp_path / "notes")}
    server = subprocess.Popen(
        [sys.executable, str(HERE / "signin_server.py"), "--http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        rt = McpRuntime([{"name": "remote", "url": f"http://127.0.0.1:{port}/mcp"}])
        try:
            assert {"remote.sign_in", "remote.add_note"} <= set(rt.catalog.names) and rt.pids == []
            rec, _ = rt.invoke(rt.fresh(), "remote.sign_in", {"username": "bob", "password": "builder"})
            assert rec.status == "success" and "access_token" in rec.output
        finally:
            rt.close()
        assert server.poll() is None  # not ours to end
    finally:
        server.terminate()
        server.wait(10)


def test_a_server_that_dies_on_the_discovery_probe_is_reached_with_the_handshake_alone() -> None:
    rt = McpRuntime([{"name": "raw", "command": sys.executable, "args": [str(HERE / "raw_server.py")]}])
    try:
        conn = rt._conns["raw"]
        assert conn.mode == "legacy" and conn.protocol == "2024-11-05"
        rec, _ = rt.invoke(rt.fresh(), "raw.shout", {"text": "hi"})
        assert rec.status == "success" and rec.output == "HI"
    finally:
        close_and_check(rt)


def test_a_library_is_built_over_a_server_whose_session_is_in_memory() -> None:
    from libra.induction.build import BuildOptions, build_library
    from libra.sources.mcp import McpSource

    source = McpSource([signin_spec()], name="notes", fixtures={"username": "alice", "password": "wonderland"})
    lib = build_library(source, None, BuildOptions(workers=0, progress=False))
    edges = {(r.kind, r.provider, r.consumer, r.provider_field, r.consumer_input) for r in lib.relations}
    assert ("provenance", "notes.sign_in", "notes.add_note", "access_token", "access_token") in edges
    assert ("state", "notes.sign_in", "notes.add_note", None, None) in edges
    rt = source.opened[-1]
    assert rt.stats["replayed_calls"] > 0 and rt.stats["replay_mismatches"] == 0
    assert [p for r in source.opened for p in r.pids if running(p)] == []


def test_a_project_file_maps_onto_the_source(tmp_path: Path) -> None:
    import tomllib

    from libra.sources.mcp import McpSource

    (tmp_path / "tpl").mkdir()
    config = tomllib.loads(
        """
        [sandbox]
        template = "tpl"
        [[mcp]]
        name = "git"
        command = "mcp-server-git"
        args = ["--repository", "{sandbox}/repo"]
        env = { GIT_AUTHOR_NAME = "a" }
        [[mcp]]
        name = "web"
        url = "http://127.0.0.1:9/mcp"
        [fixtures]
        repo_path = "{sandbox}/repo"
        """
    )
    source = McpSource.from_config(config, tmp_path)
    assert source.template == tmp_path / "tpl" and [s.name for s in source.specs] == ["git", "web"]
    assert (
        source.specs[0].args == ("--repository", "{sandbox}/repo") and source.specs[1].url == "http://127.0.0.1:9/mcp"
    )
    assert source.fixtures() == {"repo_path": f"{source.sandbox_path}/repo"}
    assert len(McpSource.from_config({**config, "python": [{"tools": "pkg.mod"}]}, tmp_path).specs) == 2  # not ours
    with pytest.raises(ConfigError, match=r"\[sandbox\]: unknown key\(s\) \['tempalte'\]"):
        McpSource.from_config({**config, "sandbox": {"tempalte": "tpl"}}, tmp_path)
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['cmd'\]"):
        McpSource.from_config({"mcp": [{"name": "x", "cmd": "y"}]}, tmp_path)
    with pytest.raises(ConfigError, match="is not a directory"):
        McpSource.from_config({**config, "sandbox": {"template": "missing"}}, tmp_path)


def test_restore_in_place_puts_back_every_kind_of_change(tmp_path: Path) -> None:
    root = tmp_path / "sb"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("f")
    (root / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("a/b/f.txt", root / "link")
    (root / "empty").mkdir()
    sandbox = SandboxDir(root, tmp_path / "store")
    before = sandbox.scan()
    (root / "a" / "b" / "f.txt").unlink()
    (root / "a" / "b").rmdir()
    (root / "a" / "b").write_text("now a file")
    os.chmod(root / "run.sh", 0o644)
    (root / "link").unlink()
    os.symlink("elsewhere", root / "link")
    (root / "empty").rmdir()
    (root / "new" / "deep").mkdir(parents=True)
    (root / "new" / "deep" / "x").write_bytes(b"\x00\x01")
    changed = sandbox.scan()
    diff = sandbox.diff(before, changed)
    assert (
        set(diff["added"]) == {'["new/deep/x"]'} and '["empty"]' in diff["removed"] and '["run.sh"]' in diff["changed"]
    )
    sandbox.restore(before)
    assert sandbox.scan() == before and fingerprint(sandbox.scan()) == fingerprint(before)
    assert (
        os.readlink(root / "link") == "a/b/f.txt"
        and os.access(root / "run.sh", os.X_OK)
        and not (root / "new").exists()
    )
    sandbox.restore(changed)
    assert fingerprint(sandbox.scan()) == fingerprint(changed)


def test_git_index_version_4_is_read(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    env = {**os.environ, **pinned_environment()}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    for name in ("dir/one.txt", "dir/two.txt", "dir/sub/three.txt", "top.txt"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(name)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "update-index", "--index-version", "4"], check=True, env=env)
    data = (repo / ".git" / "index").read_bytes()
    assert int.from_bytes(data[4:8], "big") == 4
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-s"], capture_output=True, text=True, check=True
    ).stdout
    assert git_index_entries(data) == listed


_HOLDER = """
import json, sys, time
from libra.runtime.mcp.runtime import McpRuntime
rt = McpRuntime(json.loads(sys.argv[1]))
rt.invoke(rt.fresh(), "notes.sign_in", {"username": "ann", "password": "pw"})
print(json.dumps(rt.pids), flush=True)
time.sleep(600)
"""


def test_servers_die_with_a_build_killed_by_sigkill(tmp_path):
    """A process holding MCP servers (as a build does) killed with SIGKILL runs no cleanup; the servers still end,
    because each is started with the kernel's parent-death signal. The server here is reached over HTTP: a stdio
    server would also end on its closed stdin, an HTTP one has nothing else telling it its client is gone."""
    import json
    import signal
    import time

    spec = signin_spec(args=[str(HERE / "signin_server.py"), "--http", "{port}"], url="http://127.0.0.1:{port}/mcp")
    spec["env"] = {"NOTES_DIR": str(tmp_path / "notes")}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, json.dumps([spec])], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        pids = json.loads(holder.stdout.readline())
        assert pids and all(running(p) for p in pids)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    deadline = time.monotonic() + 30  # a bound on waiting for the kernel, not a measurement
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in pids if running(p)] == []
