"""What the MCP runtime costs on real servers: server start, call latency, state restore and replay, one build.

- ``start_ms``: start + handshake + ``tools/list`` of each server (median of ``--starts`` starts);
- ``call_ms``: one call in the live state (no restore), with distinct arguments so the memo does not answer,
  including the sandbox scan after it; ``write`` chains file writes, each from the previous state;
- ``alternate_ms``: reads alternating between two states that differ in one file, so every call first restores
  the sandbox in place (``fs`` reads the files per call: no restart; ``git-restart``: the same with the git
  server restarted on every restore, ``restart_on_restore = true``);
- ``replay_ms``: calls alternating between two states of a server whose session lives in memory
  (``state = "process"``): with parked instances (the default), and with ``parked_per_server=0``, where each
  is reached by restarting the server and replaying the calls;
- ``build_s``: ``build_library`` over filesystem + git in one sandbox (offline proposer).

Writes results/mcp.json.

    python benchmarks/bench_mcp.py [--calls 20] [--starts 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import save
from libra.induction.build import BuildOptions, build_library
from libra.runtime.mcp.client import pinned_environment
from libra.runtime.mcp.runtime import McpRuntime
from libra.runtime.mcp.setup import npm_servers_bin, pypi_servers_bin
from libra.sources.mcp import McpSource

HERE = Path(__file__).resolve().parent.parent / "tests" / "mcp_servers"


def template() -> Path:
    root = Path(tempfile.mkdtemp(prefix="libra-bench-tpl-"))
    repo = root / "repo"
    repo.mkdir()
    env = {**os.environ, **pinned_environment()}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "README.md").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "init"], check=True, env=env)
    return root


def servers(restart_git: bool = False) -> list[dict]:
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
            "restart_on_restore": restart_git,
        },
        {
            "name": "memory",
            "command": str(npm / "mcp-server-memory"),
            "env": {"MEMORY_FILE_PATH": "{sandbox}/memory.jsonl"},
            "restart_on_restore": False,
        },
        {"name": "time", "command": str(pypi / "mcp-server-time"), "restart_on_restore": False},
    ]


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return round((time.perf_counter() - t0) / n * 1000, 2)


def alternate_sessions(notes: dict, parked: int, n: int) -> tuple[float, float]:
    """ms per call alternating between two signed-in states of a ``process`` server, and the calls replayed."""
    rt = McpRuntime([notes], parked_per_server=parked)
    try:
        fresh = rt.fresh()
        rec, alice = rt.invoke(fresh, "notes.sign_in", {"username": "alice", "password": "wonderland"})
        token_a = rec.output["access_token"]
        rec, bob = rt.invoke(fresh, "notes.sign_in", {"username": "bob", "password": "builder"})
        token_b = rec.output["access_token"]
        ms = per_call(
            lambda i: rt.invoke(
                alice if i % 2 else bob, "notes.whoami", {"access_token": token_a if i % 2 else token_b, "_n": i}
            ),
            n,
        )
        return ms, rt.stats["replayed_calls"]
    finally:
        rt.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--starts", type=int, default=3)
    args = ap.parse_args()
    n = args.calls
    tpl = template()
    out: dict = {"start_ms": {}, "call_ms": {}, "alternate_ms": {}, "replay_ms": {}}
    rt = McpRuntime(servers(), tpl)
    try:
        for name, conn in rt._conns.items():
            times = []
            for _ in range(args.starts):
                t0 = time.perf_counter()
                conn.start()
                times.append((time.perf_counter() - t0) * 1000)
            out["start_ms"][name] = round(statistics.median(times), 1)
        sb = rt.sandbox.path
        fresh = rt.fresh()
        out["call_ms"]["fs.read_text_file"] = per_call(
            lambda i: rt.invoke(fresh, "fs.read_text_file", {"path": f"{sb}/repo/README.md", "head": i + 1}), n
        )
        out["call_ms"]["git.git_log"] = per_call(
            lambda i: rt.invoke(fresh, "git.git_log", {"repo_path": f"{sb}/repo", "max_count": i + 1}), n
        )
        out["call_ms"]["memory.search_nodes"] = per_call(
            lambda i: rt.invoke(fresh, "memory.search_nodes", {"query": f"q{i}"}), n
        )
        out["call_ms"]["time.convert_time"] = per_call(
            lambda i: rt.invoke(
                fresh,
                "time.convert_time",
                {"source_timezone": "UTC", "time": f"{i % 24:02d}:00", "target_timezone": "Europe/Paris"},
            ),
            n,
        )
        cur = [fresh]

        def write(i: int) -> None:
            _, cur[0] = rt.invoke(cur[0], "fs.write_file", {"path": f"{sb}/f{i}.txt", "content": f"file {i}\n"})

        out["call_ms"]["fs.write_file (chained)"] = per_call(write, n)
        _, other = rt.invoke(fresh, "fs.write_file", {"path": f"{sb}/other.txt", "content": "x\n"})
        out["alternate_ms"]["fs.read_text_file"] = per_call(
            lambda i: rt.invoke(
                other if i % 2 else fresh, "fs.read_text_file", {"path": f"{sb}/repo/README.md", "head": 100 + i}
            ),
            n,
        )
        out["restore_ms_median"] = round(statistics.median(rt.timings["restore_ms"]), 2)
    finally:
        rt.close()
    rt = McpRuntime(servers(restart_git=True)[:2], tpl)
    try:
        sb = rt.sandbox.path
        fresh = rt.fresh()
        _, other = rt.invoke(fresh, "fs.write_file", {"path": f"{sb}/repo/other.txt", "content": "x\n"})
        out["alternate_ms"]["git.git_status (git-restart)"] = per_call(
            lambda i: rt.invoke(other if i % 2 else fresh, "git.git_status", {"repo_path": f"{sb}/repo", "_n": i}),
            max(4, n // 4),
        )
    finally:
        rt.close()
    notes = {
        "name": "notes",
        "command": sys.executable,
        "args": [str(HERE / "signin_server.py")],
        "env": {"NOTES_DIR": "{sandbox}/notes"},
        "state": "process",
    }
    for parked, key in ((3, "parked"), (0, "parked_per_server=0")):
        out["replay_ms"][f"notes.whoami ({key})"], out["replay_ms"][f"replayed calls ({key})"] = alternate_sessions(
            notes, parked, max(4, n // 4)
        )
    source = McpSource(servers()[:2], tpl, name="fsgit", fixtures={"repo_path": "{sandbox}/repo"})
    t0 = time.perf_counter()
    lib = build_library(source, None, BuildOptions(workers=0, progress=False))
    out["build_s"] = round(time.perf_counter() - t0, 1)
    out["build"] = {
        "tools": lib.stats["tools"],
        "relations": lib.stats["relations"],
        "executed_calls": lib.stats["engine"].get("executed_calls"),
        "memo_hits": lib.stats["engine"].get("memo_hits"),
    }
    out["build_restores"] = sum(rt.stats["restores"] for rt in source.opened)
    print(out)
    save(
        "mcp",
        {"benchmark": "MCP runtime costs on real servers", "settings": {"calls": n, "starts": args.starts}, **out},
    )


if __name__ == "__main__":
    main()
