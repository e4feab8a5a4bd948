"""``libra serve`` follows its library file: replaced on disk (an atomic rename, as ``libra build`` writes), it is
served from the next requests on, while clients keep their sessions.

Real command in a subprocess, real HTTP on 127.0.0.1, the official MCP client: 20 clients search without pause
while the file is replaced by another library; every request must be answered, by the old or the new library
(each answer names its version), and once one answer came from the new library no request started later may
come from the old one.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest
from mcp import Client

from libra.induction.build import BuildOptions, build_library
from libra.induction.config import BuildConfig

from .cli_toys import interrupt_and_wait
from .induction_toys import ShopBenchmark
from .test_serve import QUERY, _start_http

CLIENTS = 20


@pytest.fixture(scope="module")
def two_libraries(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Two libraries of the toy shop (the second built with another depth budget) and a cache directory."""
    root = tmp_path_factory.mktemp("reload")
    first, second = root / "first.json", root / "second.json"
    build_library(ShopBenchmark(), first, BuildOptions(workers=0, progress=False))
    build_library(ShopBenchmark(), second, BuildOptions(workers=0, progress=False, config=BuildConfig(max_depth=1)))
    return first, second, root / "cache"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def test_a_replaced_library_is_served_from_the_next_requests_on(two_libraries, tmp_path):
    first, second, cache = two_libraries
    old, new = _sha(first), _sha(second)
    assert old != new
    served = tmp_path / "served.json"
    shutil.copy(first, served)
    proc, port = _start_http(served, cache)
    answers: list[tuple[float, float, str]] = []  # (started, answered, version) per request
    failures: list[str] = []
    replaced_at: list[float] = []

    async def client(stop: asyncio.Event) -> None:
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as session:
            while not stop.is_set():
                started = time.monotonic()
                result = await session.call_tool("search_tools", {"query": QUERY, "k": 3})
                if result.is_error or not result.structured_content["results"]:
                    failures.append(str(result.content))
                    continue
                version = result.structured_content["library"]["sha256"]
                assert f"library version {version}" in result.content[0].text
                answers.append((started, time.monotonic(), version))

    async def run() -> None:
        stop = asyncio.Event()
        tasks = [asyncio.create_task(client(stop)) for _ in range(CLIENTS)]
        while len(answers) < 3 * CLIENTS:  # every client is searching the first library
            await asyncio.sleep(0.05)
        staged = tmp_path / "staged.json"
        shutil.copy(second, staged)
        os.replace(staged, served)  # what libra build does when it writes a library
        replaced_at.append(time.monotonic())
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            swapped = [a for a in answers if a[2] == new]
            if swapped and sum(1 for a in answers if a[0] > swapped[0][1]) >= 3 * CLIENTS:
                break
            await asyncio.sleep(0.1)
        stop.set()
        await asyncio.gather(*tasks)

    try:
        asyncio.run(run())
        assert proc.poll() is None
    finally:
        interrupt_and_wait(proc)
    assert failures == []
    assert {v for _s, _a, v in answers} == {old, new}
    first_new = min(a for _s, a, v in answers if v == new)
    assert first_new > replaced_at[0]
    later = [v for s, _a, v in answers if s > first_new]
    assert later and set(later) == {new}
    assert [v for _s, a, v in answers if a < replaced_at[0]] and all(
        v == old for _s, a, v in answers if a < replaced_at[0]
    )
    assert proc.stderr is not None
    log = proc.stderr.read()
    assert f"now serving {served} version {new}" in log and "Traceback" not in log


def _wait(condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_file_that_cannot_be_loaded_leaves_the_old_library_serving(two_libraries, tmp_path, monkeypatch):
    from libra.serve.opening import searcher_opener
    from libra.serve.reload import LiveLibrary
    from libra.serve.server import SearcherLoading

    first, second, cache = two_libraries
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(cache))
    served = tmp_path / "served.json"
    shutil.copy(first, served)
    said: list[str] = []
    open_ = searcher_opener(served)
    live = LiveLibrary(served, SearcherLoading.opened(open_()), open_, said.append, check_every_s=0.0)
    assert live.current()[1].sha256 == _sha(first)
    served.write_bytes(first.read_bytes()[: len(first.read_bytes()) // 2])  # a copy caught half way, in place
    live.current()
    _wait(lambda: said)
    assert "cannot be loaded, still serving" in said[0] and live.current()[1].sha256 == _sha(first)
    assert live.current()[0].result().search(QUERY, 3)  # the old searcher still answers
    staged = tmp_path / "staged.json"
    shutil.copy(second, staged)
    os.replace(staged, served)
    _wait(lambda: live.current()[1].sha256 == _sha(second))
    assert live.swaps == 1 and said[-1].startswith(f"now serving {served} version {_sha(second)}")
