"""``libra serve`` as an agent meets it: the official MCP client over stdio and over Streamable HTTP, against the
real command in a subprocess serving a library built here from the toy shop (sign up -> log in -> add an item).

The shop's library holds, among others, ``Shop.login -> Shop.add_item`` (the token) with the executions behind
it; a search for adding an item must return ``add_item`` with ``login`` as a prerequisite and a line of evidence
quoting the failure without it. Bad input comes back as a tool result with ``isError`` and a message saying what
to change, and the same session keeps answering. No server process outlives its test.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from libra.induction.build import BuildOptions, build_library

from .cli_toys import ROOT, cli_env, interrupt_and_wait
from .induction_toys import ShopBenchmark

QUERY = "put a new item titled lamp in the shop"
BAD_INPUTS = [
    ({"query": QUERY, "k": 0}, "at least 1"),
    ({"query": QUERY}, "k is missing"),
    ({"query": QUERY, "k": 10**12}, "at most 6"),
    ({"query": QUERY, "k": "three"}, "whole number"),
    ({"query": "", "k": 3}, "query is empty"),
    ({"query": "   ", "k": 3}, "query is empty"),
    ({"query": "x" * 1_000_000, "k": 3}, "at most 4,000"),
    ({"k": 3}, "query is missing"),
    ({"query": QUERY, "k": 3, "limit": 2}, "unknown argument"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[Path, Path]:
    """A built toy library and the cache directory its servers use."""
    root = tmp_path_factory.mktemp("serve")
    path = root / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    return path, root / "cache"


def _server_children() -> set[int]:
    """Processes of this test run running ``libra ... serve`` (read from /proc: no helper library needed)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"serve" in cmdline:
            found.add(int(entry.name))
    return found


def _check_search(result) -> None:
    assert not result.is_error, result.content
    data = result.structured_content
    assert data["query"] == QUERY and data["k"] == 3
    rows = {r["tool"]: r for r in data["results"]}
    assert len(data["results"]) == 3 and "Shop.add_item" in rows
    add = rows["Shop.add_item"]
    assert add["input_schema"]["required"] == ["access_token", "title"]
    login = next(p for p in add["prerequisites"] if p["tool"] == "Shop.login")
    assert (login["kind"], login["provider_field"], login["consumer_input"]) == (
        "provenance",
        "access_token",
        "access_token",
    )
    # The evidence quotes what the shop answered when add_item got another token.
    assert (
        login["evidence"]
        == "Shop.login's access_token worked as add_item.access_token where another value failed with 'not signed in'"
    )
    assert {r["via"] for r in data["results"]} <= {"retrieved", "promoted"}
    promoted = [r for r in data["results"] if r["via"] == "promoted"]
    assert all(r["promoted_by"] for r in promoted)
    # The text form carries the same prerequisites for clients that read only text.
    text = result.content[0].text
    assert (
        "Shop.add_item" in text
        and "may need Shop.login (access_token -> access_token)" in text
        and "'not signed in'" in text
    )


async def _session(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["search_tools"]
    assert tools[0].output_schema["type"] == "object" and tools[0].input_schema["required"] == ["query", "k"]
    _check_search(await client.call_tool("search_tools", {"query": QUERY, "k": 3}))
    for arguments, message in BAD_INPUTS:
        bad = await client.call_tool("search_tools", arguments)
        assert bad.is_error, arguments
        assert message in bad.content[0].text, bad.content[0].text
        assert len(bad.content[0].text) < 300  # says what to change, never echoes a 1 MB query back
    unknown = await client.call_tool("call_tool", {"name": "Shop.login"})
    assert unknown.is_error and "unknown tool 'call_tool'" in unknown.content[0].text
    _check_search(await client.call_tool("search_tools", {"query": QUERY, "k": 3}))  # still serving


def test_stdio_with_the_official_client(served):
    path, cache = served
    before = _server_children()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "libra.cli", "serve", str(path)], env=cli_env(cache), cwd=str(ROOT)
    )

    async def run() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            assert len(_server_children() - before) == 1
            await _session(client)

    asyncio.run(run())
    assert _server_children() - before == set()


def _start_http(path: Path, cache: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "libra.cli", "serve", str(path), "--transport", "http", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(cache),
        cwd=ROOT,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # printed once the socket listens
    match = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
    if match is None:
        proc.kill()
        raise AssertionError(f"no address announced: {line!r} {proc.communicate()}")
    return proc, int(match.group(1))


def test_http_with_the_official_client(served):
    path, cache = served
    proc, port = _start_http(path, cache)
    try:

        async def run() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as client:
                await _session(client)
            # A second client after the first left: the server outlives its sessions.
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as client:
                _check_search(await client.call_tool("search_tools", {"query": QUERY, "k": 3}))

        asyncio.run(run())
        assert proc.poll() is None
    finally:
        interrupt_and_wait(proc)
    assert proc.returncode in (0, 130), proc.stderr.read() if proc.stderr else ""
    assert "Traceback" not in (proc.stderr.read() if proc.stderr else "")


def test_a_busy_port_is_one_error_line_before_any_work(served, tmp_path):
    import socket

    path, _ = served
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    try:
        port = holder.getsockname()[1]
        cache = tmp_path / "cache"
        out = subprocess.run(
            [sys.executable, "-m", "libra.cli", "serve", str(path), "--transport", "http", "--port", str(port)],
            capture_output=True,
            text=True,
            env=cli_env(cache),
            cwd=ROOT,
            timeout=120,
            check=False,
        )
    finally:
        holder.close()
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: cannot listen on 127.0.0.1:") and out.stderr.count("\n") == 1, out.stderr
    assert not cache.exists()  # refused before the library was read


OPEN = """
import sys
from pathlib import Path
from libra.serve.opening import open_searcher
loading, _ = open_searcher(Path(sys.argv[1]), True)
print(loading.size, "numpy" in sys.modules, loading._future.done())
searcher = loading.result()
print(searcher.size, [r.tool for r in searcher.search(sys.argv[2], 3)])
"""


def test_a_library_with_its_index_cached_opens_after_the_handshake_can_be_answered(served, tmp_path):
    """The first open of a library loads and checks it whole before the server starts (and caches its search
    index); from then on, the server learns the library's size from the index alone, without numpy, and opens
    the searcher in the background, with the same results as opening it directly."""
    path, _ = served
    cache = tmp_path / "cache"

    def run() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", OPEN, str(path), QUERY],
            capture_output=True,
            text=True,
            env=cli_env(cache),
            cwd=ROOT,
            timeout=300,
            check=True,
        )
        return out.stdout.splitlines()

    first = run()
    assert first[0] == "6 True True"  # nothing cached: opened (and checked) at once, which needs numpy
    again = run()
    assert again[0] == "6 False False"  # cached: nothing heavy imported, nothing opened yet
    assert again[1] == first[1] and again[1].startswith("6 [")


def test_a_broken_library_is_one_error_line_before_the_server_starts(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "libra-library", "tools": [')
    out = subprocess.run(
        [sys.executable, "-m", "libra.cli", "serve", str(broken)],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path / "cache"),
        cwd=ROOT,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: library file") and out.stderr.count("\n") == 1, out.stderr


def test_a_searcher_that_fails_to_open_in_the_background_is_a_tool_error_and_serving_goes_on():
    """The handshake and tools/list never wait for the library; a search does, and gets the reason it failed."""
    from libra.errors import LibraryFormatError
    from libra.serve.server import SearcherLoading, build_server

    calls = []

    def open_() -> None:
        calls.append(1)
        raise LibraryFormatError("library file 'x.json' is empty: rebuild it with `libra build`")

    loading = SearcherLoading(open_, size=4)
    server = build_server(loading)
    loading.start()

    async def run() -> None:
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            assert tools[0].input_schema["properties"]["k"]["maximum"] == 4  # the size known before the load
            for _ in range(2):
                result = await client.call_tool("search_tools", {"query": QUERY, "k": 3})
                assert (
                    result.is_error
                    and result.content[0].text
                    == "search failed: library file 'x.json' is empty: rebuild it with `libra build`"
                )

    asyncio.run(run())
    assert calls == [1]  # opened once, not retried per search


def test_the_server_keeps_the_collector_off_what_it_loaded_once():
    import gc

    from libra.serve.opening import settle_garbage_collector

    gc.disable()
    try:
        settle_garbage_collector()
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()
