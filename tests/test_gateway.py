"""The gateway as an agent meets it: ``libra serve LIB --workdir DIR`` on a library built here from a real MCP
server (the stateful 2.x sign-in server of the MCP runtime's tests), driven by the official ``mcp`` client over
stdio and over Streamable HTTP.

The agent finds ``notes.add_note`` with ``notes.sign_in`` as its prerequisite (and the evidence), then runs the
tools through ``call_tool``: the note lands in the work directory on disk (not a sandbox) and reads back. Bad
calls (an unknown tool, arguments that fail the tool's schema, a server that crashes mid-call) are tool results
with ``isError`` and a message saying what to change, and the next call works. No server process outlives the
gateway: their pids are read from /proc while it runs and checked after it stopped.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from libra.cli.main import main
from libra.induction.build import BuildOptions, build_library
from libra.sources.mcp import McpSource

from .cli_toys import ROOT, cli_env, interrupt_and_wait
from .test_mcp_runtime import running

SERVER = ROOT / "tests" / "mcp_servers" / "signin_server.py"
CRASH = "crash now"
QUERY = "save a note as the signed-in user"


def notes_server(**extra) -> dict:
    return {
        "name": "notes",
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": {"NOTES_DIR": "{sandbox}/notes", **extra},
        "state": "process",
    }


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> tuple[Path, Path]:
    """The sign-in server's library (built with the server's table recorded) and the cache its servers use."""
    root = tmp_path_factory.mktemp("gateway")
    path = root / "notes.json"
    source = McpSource([notes_server()], name="notes", fixtures={"username": "alice", "password": "wonderland"})
    build_library(source, path, BuildOptions(workers=0, progress=False))
    return path, root / "cache"


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (the gateway's server processes), from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _serve_pid() -> int:
    """The ``libra serve`` process this test started (the official client starts it as a child of ours)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            argv = cmdline.split(b"\0")
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"libra.cli" in argv and b"serve" in argv:
                return int(entry.name)
    raise AssertionError("no libra serve process found")


def _text(result) -> str:
    return result.content[0].text


def _data(result) -> dict:
    """A forwarded result's data: structured when the tool declares an output schema, else its JSON text."""
    return result.structured_content if result.structured_content is not None else json.loads(_text(result))


async def _call(client: Client, name: str, arguments: dict | None = None, **extra):
    return await client.call_tool("call_tool", {"name": name, "arguments": arguments or {}, **extra})


async def _check_search(client: Client) -> None:
    tools = [t.name for t in (await client.list_tools()).tools]
    assert tools == ["search_tools", "call_tool"]
    found = await client.call_tool("search_tools", {"query": QUERY, "k": 3})
    assert not found.is_error, found.content
    rows = {r["tool"]: r for r in found.structured_content["results"]}
    add = rows["notes.add_note"]
    assert set(add["input_schema"]["required"]) == {"access_token", "title", "text"}
    sign_in = next(p for p in add["prerequisites"] if p["tool"] == "notes.sign_in")
    assert (sign_in["provider_field"], sign_in["consumer_input"]) == ("access_token", "access_token")
    assert "failed with 'Error executing tool add_note: not signed in'" in sign_in["evidence"], sign_in["evidence"]
    assert "may need notes.sign_in (access_token -> access_token)" in _text(found)


async def _write_and_read(client: Client, workdir: Path, title: str) -> str:
    """Sign in, add a note and read it back through call_tool; the note is a file in ``workdir``."""
    signed = await _call(client, "notes.sign_in", {"username": "alice", "password": "wonderland"})
    assert not signed.is_error, signed.content
    token = _data(signed)["access_token"]
    added = await _call(client, "notes.add_note", {"access_token": token, "title": title, "text": "buy milk"})
    assert not added.is_error, added.content
    note_id = _data(added)["note_id"]
    assert (workdir / "notes" / "alice" / f"{note_id}.txt").read_text() == f"{title}\nbuy milk\n"
    # by the name a client without dots in tool names uses (libra retrieve --format anthropic names it so)
    read = await _call(client, "notes__read_note", {"access_token": token, "note_id": note_id})
    assert not read.is_error and "buy milk" in _text(read), read.content
    return token


BAD_CALLS = [
    (
        {"name": "notes.sign_out", "arguments": {}},
        ["unknown tool 'notes.sign_out'", "did you mean 'notes.sign_in'", "search_tools"],
    ),
    (
        {"name": "notes.add_note", "arguments": {"access_token": "t", "title": "x"}},
        ["notes.add_note's input schema", "'text' is a required property", "text*: string"],
    ),
    (
        {"name": "notes.add_note", "arguments": {"access_token": "t", "title": 5, "text": "x"}},
        ["at title: 5 is not of type 'string'"],
    ),
    ({"name": "notes.sign_in", "arguments": ["alice"]}, ["arguments must be an object"]),
    ({"arguments": {}}, ["name is missing", "notes."]),
    ({"name": "notes.sign_in", "args": {}}, ["unknown argument(s) args"]),
]


def test_stdio_gateway_with_the_official_client(library, tmp_path):
    """Over stdio with --config (whose server crashes on one note title): search, calls, refusals, a crash."""
    path, cache = library
    workdir = tmp_path / "work"
    workdir.mkdir()
    config = tmp_path / "libra.toml"
    server = notes_server(CRASH_ON_TITLE=CRASH)
    config.write_text(
        f'[[mcp]]\nname = "notes"\ncommand = {json.dumps(server["command"])}\nargs = {json.dumps(server["args"])}\n'
        f'env = {{ NOTES_DIR = "{{sandbox}}/notes", CRASH_ON_TITLE = "{CRASH}" }}\nstate = "process"\n'
    )
    argv = ["-m", "libra.cli", "serve", str(path), "--workdir", str(workdir), "--config", str(config)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=cli_env(cache), cwd=str(ROOT))
    seen: set[int] = set()

    async def run() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            serve = _serve_pid()
            await _check_search(client)
            assert _children(serve) == set()  # servers start on their first call, not before
            token = await _write_and_read(client, workdir, "shopping")
            seen.update(_children(serve))
            assert len(seen) == 1
            for arguments, words in BAD_CALLS:
                bad = await client.call_tool("call_tool", arguments)
                assert bad.is_error, arguments
                assert all(w in _text(bad) for w in words), _text(bad)
            huge = await _call(client, "notes.sign_in", {"username": "x" * 1_000_000})
            assert huge.is_error and len(_text(huge)) < 700, len(_text(huge))  # never echoes a huge value back
            # The tool's own refusal is forwarded as the server gave it.
            wrong = await _call(client, "notes.sign_in", {"username": "alice", "password": "nope"})
            assert wrong.is_error and "wrong username or password" in _text(wrong)
            # A crash mid-call: an error result saying what happened and what to do, then a fresh server.
            crashed = await _call(client, "notes.add_note", {"access_token": token, "title": CRASH, "text": "x"})
            assert crashed.is_error and all(
                w in _text(crashed) for w in ("exited with status 9", "simulated crash", "Call again")
            ), _text(crashed)
            gone = await _call(client, "notes.whoami", {"access_token": token})
            assert gone.is_error and "not signed in" in _text(gone)  # the restarted server lost the session
            await _write_and_read(client, workdir, "after the crash")
            seen.update(_children(serve))
            assert len(seen) == 2
            # A server killed while idle is started again before the next call, which then works.
            for pid in _children(serve):
                os.kill(pid, signal.SIGKILL)
                for _ in range(1000):  # until it is dead (a zombie or reaped): "idle" means no call raced it
                    if not running(pid):
                        break
                    await asyncio.sleep(0.01)
            await _write_and_read(client, workdir, "after a kill")
            seen.update(_children(serve))
            assert len(seen) == 3
            unknown = await client.call_tool("notes.sign_in", {"username": "alice"})
            assert unknown.is_error and "through call_tool" in _text(unknown)
            again = await client.call_tool("search_tools", {"query": QUERY, "k": 3})
            assert not again.is_error

    asyncio.run(run())
    assert [p for p in seen if running(p)] == []
    assert sorted(p.name for p in (workdir / "notes" / "alice").iterdir()) == ["n1.txt", "n2.txt", "n3.txt"]


def test_http_gateway_from_the_servers_the_library_recorded(library, tmp_path):
    path, cache = library
    workdir = tmp_path / "work"
    workdir.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "libra.cli",
            "serve",
            str(path),
            "--transport",
            "http",
            "--port",
            "0",
            "--workdir",
            str(workdir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(cache),
        cwd=ROOT,
    )
    seen: set[int] = set()
    try:
        line = proc.stderr.readline()
        match = re.search(r"call_tool forwarded to notes in (\S+) at http://127\.0\.0\.1:(\d+)/mcp", line)
        assert match and match.group(1) == str(workdir.resolve()), line

        async def run() -> None:
            async with Client(f"http://127.0.0.1:{match.group(2)}/mcp", read_timeout_seconds=120) as client:
                await _check_search(client)
                await _write_and_read(client, workdir, "over http")
                seen.update(_children(proc.pid))
                bad = await client.call_tool("call_tool", BAD_CALLS[1][0])
                assert bad.is_error and "'text' is a required property" in _text(bad)

        asyncio.run(run())
        assert len(seen) == 1
    finally:
        interrupt_and_wait(proc)
    err = proc.stderr.read()
    assert proc.returncode in (0, 130) and "Traceback" not in err, err
    assert [p for p in seen if running(p)] == []


@pytest.mark.parametrize(
    "extra,words",
    [
        (["--workdir", "{missing}"], ["--workdir", "is not a directory"]),
        (["--config", "{config}"], ["--config names the servers", "give --workdir"]),
    ],
)
def test_bad_gateway_options_are_one_line_before_work(library, tmp_path, capsys, extra, words):
    path, _ = library
    config = tmp_path / "libra.toml"
    config.write_text(f'[[mcp]]\nname = "notes"\ncommand = {json.dumps(sys.executable)}\n')
    argv = ["serve", str(path), *(a.format(missing=tmp_path / "nope", config=config) for a in extra)]
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    assert info.value.code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert all(w in err for w in words), err


def test_a_library_without_servers_refuses_workdir(tmp_path, capsys, monkeypatch):
    from .induction_toys import ShopBenchmark

    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    with pytest.raises(SystemExit) as info:
        main(["serve", str(path), "--workdir", str(tmp_path)])
    _, err = capsys.readouterr()
    assert info.value.code == 2 and err.count("\n") == 1 and "records no MCP servers" in err and "--config" in err, err


def test_without_workdir_a_library_from_servers_is_served_for_search_and_says_how_to_forward(library):
    path, cache = library
    out = subprocess.run(
        [sys.executable, "-m", "libra.cli", "serve", str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cli_env(cache),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "was built from MCP servers (notes): add --workdir DIR to serve call_tool too" in out.stderr, out.stderr


def test_a_server_that_cannot_start_is_an_error_result_naming_why(tmp_path):
    """In-process: the gateway's own checks and a server whose command dies at start (stderr quoted)."""
    from libra.errors import ConfigError
    from libra.serve.gateway import Gateway, GatewayInputError

    tools = {"notes.sign_in": {"type": "object", "properties": {"username": {"type": "string"}}}}
    with pytest.raises(ConfigError, match="no \\[\\[mcp\\]\\] table names notes"):
        Gateway([{"name": "other", "command": sys.executable}], tools, tmp_path)
    with pytest.raises(ConfigError, match="not a directory"):
        Gateway([notes_server()], tools, tmp_path / "nope")
    dead = {
        "name": "notes",
        "command": sys.executable,
        "args": ["-c", "import sys; sys.exit('cannot open the notes database')"],
    }
    with Gateway([dead], tools, tmp_path) as gateway:
        target, args = gateway.prepare({"name": "notes.sign_in", "arguments": {"username": "alice"}})
        for _ in range(2):  # and again: each call tries a fresh start
            with pytest.raises(
                GatewayInputError, match="cannot run: .*failed to start.*cannot open the notes database"
            ):
                gateway.forward(target, args)
        pids = gateway.pids
    assert pids and [p for p in pids if running(p)] == []
