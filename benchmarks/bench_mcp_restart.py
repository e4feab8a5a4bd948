"""Whether MCP servers are restarted when the sandbox is put back: learned per server (the default) against the
project file's ``restart_on_restore`` set by hand.

- ``workspace``: the npm filesystem and memory servers and PyPI's git server in one project file (the workspace
  example's template), built with ``libra build --config`` as a user runs it: once with the defaults, once with
  ``restart_on_restore = false`` on every server. Wall time of each command, the relations of each (they must be
  equal) and what the default build decided per server (``libra show --json``: ``stats.mcp_servers``).
- ``blind``: the blind suite's MCP catalogs (stdio servers that keep their data in memory), each built with the
  defaults and with ``restart_on_restore = true`` (the former default): relations must be equal, and the servers
  restarted.
- ``test_servers``: servers of the tests driven through the runtime with the defaults, going back and forth
  between states: the items server reading its file on every call (its state on disk: not restarted), the same
  server reading its file only at start, and the sign-in server (sessions in memory): both restarted. Every read
  must see its own state (``wrong_reads`` 0).

Writes results/mcp-restart.json.

    python benchmarks/bench_mcp_restart.py [--parts workspace,test_servers,blind]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import ROOT, save, speed_probe

EXAMPLE = ROOT / "examples" / "workspace"
TEST_SERVERS = ROOT / "tests" / "mcp_servers"
BLIND = ("kanban", "bugtracker", "chat")


def libra(*args: str) -> None:
    """One CLI command in a child process with this checkout's sources first, failing loudly."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "libra.cli", *args], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"libra {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")


def project(restart: bool | None) -> str:
    """The project file: fs + memory + git over the example's template, ``restart_on_restore`` as given."""
    option = "" if restart is None else f"restart_on_restore = {str(restart).lower()}\n"
    return (
        f'name = "workspace"\n\n[sandbox]\ntemplate = "{EXAMPLE / "template"}"\n\n'
        f'[[mcp]]\nname = "fs"\ncommand = "mcp-server-filesystem"\nargs = ["{{sandbox}}"]\n{option}\n'
        f'[[mcp]]\nname = "memory"\ncommand = "mcp-server-memory"\n'
        f'env = {{ MEMORY_FILE_PATH = "{{sandbox}}/memory.jsonl" }}\n{option}\n'
        f'[[mcp]]\nname = "git"\ncommand = "mcp-server-git"\nargs = ["--repository", "{{sandbox}}"]\n{option}\n'
        '[fixtures]\nrepo_path = "{sandbox}"\n'
    )


def relation_lines(edges: list[dict[str, Any]]) -> list[str]:
    return sorted(
        f"{e['provider']} -> {e['consumer']} [{e['kind']}]"
        + (f" {e['provider_field']} -> {e['consumer_input']}" if e.get("provider_field") else "")
        for e in edges
    )


def workspace() -> dict[str, Any]:
    if not (EXAMPLE / "template" / ".git").is_dir():
        subprocess.run([sys.executable, str(EXAMPLE / "make_template.py")], check=True, capture_output=True)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="libra-bench-restart-") as tmp:
        for key, restart in (("default", None), ("restart_on_restore_false", False)):
            config, lib, show = (Path(tmp) / f"{key}{ext}" for ext in (".toml", ".lib.json.gz", ".show.json"))
            config.write_text(project(restart))
            t0 = time.perf_counter()
            libra("build", "--config", str(config), "--out", str(lib))
            wall = time.perf_counter() - t0
            libra("show", str(lib), "--json", str(show))
            stats = json.loads(show.read_text())
            out[key] = {
                "build_wall_seconds": round(wall, 1),
                "relations_by_kind": stats["stats"]["relations"],
                "relations": relation_lines(stats["edges"]),
                "servers": stats["stats"].get("mcp_servers"),
            }
            print(f"workspace {key}: {wall:.1f} s, {len(out[key]['relations'])} relations", flush=True)
    default, off = out["default"], out["restart_on_restore_false"]
    out["ratio"] = round(default["build_wall_seconds"] / off["build_wall_seconds"], 2)
    out["same_relations"] = default["relations"] == off["relations"]
    return out


def build(source: Any) -> tuple[float, list[str], dict[str, Any]]:
    """One build with the default options: seconds, relations, and what it decided per server."""
    from libra.induction.build import BuildOptions, build_library

    t0 = time.perf_counter()
    lib = build_library(source, None, BuildOptions(progress=False))
    seconds = round(time.perf_counter() - t0, 1)
    return seconds, sorted(" ".join(str(x) for x in r.key) for r in lib.relations), lib.stats.get("mcp_servers", {})


def blind() -> dict[str, Any]:
    """Each blind MCP catalog as the blind suite builds it, and with restarts forced (the former default)."""
    from tests import blind_suite

    from libra.sources.mcp import McpSource

    out: dict[str, Any] = {}
    for name in BLIND:
        d = blind_suite.declared(name)
        facts = dict(d.get("known_facts") or {})
        server = {"name": name, "command": sys.executable, "args": [str(blind_suite.ROOT / name / d["entry"])]}
        forced = McpSource([{**server, "restart_on_restore": True}], name=name, fixtures=facts)
        forced_s, forced_relations, _ = build(forced)  # first: a first build pays for warming up, not the learning
        learned_s, learned, servers = build(McpSource([server], name=name, fixtures=facts))
        out[name] = {
            "build_s": learned_s,
            "build_s_restart_on_restore_true": forced_s,
            "same_relations": learned == forced_relations,
            "server": servers.get(name),
            "relations": learned,
        }
        print(f"blind {name}: {dict(out[name], relations=len(learned))}", flush=True)
    return out


def alternate_items(cached: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The items server of the tests: two states that differ in its file, and reads going back and forth between
    them and the fresh state three times; every read must list its own state's items."""
    from libra.runtime.mcp.runtime import McpRuntime

    args = [str(TEST_SERVERS / "items_server.py"), "{sandbox}/items.json", *(["--cached"] if cached else [])]
    rt = McpRuntime([{"name": "items", "command": sys.executable, "args": args}])
    try:
        fresh = rt.fresh()
        _, one = rt.invoke(fresh, "items.add_item", {"name": "one"})
        _, two = rt.invoke(fresh, "items.add_item", {"name": "two"})
        reads = wrong = 0
        for i in range(3):
            for state, listed in ((one, ["one"]), (two, ["two"]), (fresh, [])):
                rec, _ = rt.invoke(state, "items.list_items", {"_round": i} if i else {})
                reads, wrong = reads + 1, wrong + (rec.output != {"result": listed})
        return {"reads": reads, "wrong_reads": wrong, "restores": rt.stats["restores"], "restarts": rt.restarts}, (
            rt.servers_learned["items"]
        )
    finally:
        rt.close()


def signin_sessions() -> tuple[dict[str, Any], dict[str, Any]]:
    """The sign-in server without ``state``: a session (memory), a reading call, a second session, then a note (a
    file) and the first session's reading call from the fresh state, which must be refused (a new instance)."""
    from libra.runtime.mcp.runtime import McpRuntime

    server = {"command": sys.executable, "args": [str(TEST_SERVERS / "signin_server.py")]}
    rt = McpRuntime([{"name": "notes", **server, "env": {"NOTES_DIR": "{sandbox}/notes"}}])
    try:
        fresh = rt.fresh()
        rec, _ = rt.invoke(fresh, "notes.sign_in", {"username": "alice", "password": "wonderland"})
        token = rec.output["access_token"]
        rt.invoke(fresh, "notes.whoami", {"access_token": token})
        rt.invoke(fresh, "notes.sign_in", {"username": "bob", "password": "builder"})
        rt.invoke(fresh, "notes.add_note", {"access_token": token, "title": "t", "text": "b"})
        rec, _ = rt.invoke(fresh, "notes.whoami", {"access_token": token, "_n": 1})
        run = {"stale_session_refused": rec.status == "rejected", "restores": rt.stats["restores"]}
        return {**run, "restarts": rt.restarts}, rt.servers_learned["notes"]
    finally:
        rt.close()


def test_servers() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (run, learned) in (
        ("items_on_disk", alternate_items(cached=False)),
        ("items_read_at_start", alternate_items(cached=True)),
        ("signin_sessions_in_memory", signin_sessions()),
    ):
        out[name] = {**run, "server": learned}
        print(f"test server {name}: {out[name]}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="workspace,test_servers,blind", help="which parts to run (comma-separated)")
    args = ap.parse_args()
    parts = {"workspace": workspace, "test_servers": test_servers, "blind": blind}
    payload: dict[str, Any] = {"benchmark": "MCP server restarts: learned vs set", "speed_probe_s": speed_probe()}
    for part in args.parts.split(","):
        payload[part] = parts[part]()
    path = save("mcp-restart", payload)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
