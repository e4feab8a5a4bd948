"""examples/workspace from the command line, as the README runs it, and how server commands are found.

The build test is the one slow test of the example (~30-60 s): the real CLI over the real filesystem, memory, git
and time servers, with the servers found in libra's server directories (no PATH edit) and the template made by
the documented ``make_template.py`` step.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from libra.cli.main import main
from libra.library.artifact import Library
from libra.runtime.mcp.client import find_command
from libra.runtime.mcp.runtime import McpRuntime
from libra.runtime.mcp.setup import managed_bin_dirs, npm_servers_bin, pypi_servers_bin

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "workspace"
REQUIRED = {
    ("fs.create_directory", "fs.write_file"),
    ("fs.write_file", "fs.read_text_file"),
    ("memory.create_entities", "memory.add_observations"),
    ("git.git_create_branch", "git.git_checkout"),
    ("git.git_add", "git.git_commit"),
    ("fs.write_file", "git.git_add"),
    ("git.git_commit", "git.git_show"),  # the commit hash, read out of the commit's text reply
}


def _path_without_servers() -> str:
    """The caller's PATH less any directory holding one of the servers: they must be found by libra itself."""
    return os.pathsep.join(
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "mcp-server-git").exists() and not (Path(d) / "mcp-server-filesystem").exists()
    )


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_the_workspace_example_builds_from_the_cli_without_a_path_edit(tmp_path, capsys, monkeypatch):
    npm_servers_bin(), pypi_servers_bin()  # what `make mcp-servers` does (idempotent)
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copy(EXAMPLE / "libra.toml", tmp_path / "libra.toml")  # its template path is relative to the file
    subprocess.run(
        [sys.executable, str(EXAMPLE / "make_template.py"), str(tmp_path / "template")], check=True, capture_output=True
    )
    env = {**os.environ, "PATH": _path_without_servers(), "PYTHONPATH": str(ROOT / "src")}
    out = tmp_path / "workspace.lib.json.gz"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "libra.cli",
            "build",
            "--config",
            str(tmp_path / "libra.toml"),
            "--out",
            str(out),
            "--quiet",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lib = Library.load(out)
    found = {(r.provider, r.consumer) for r in lib.relations}
    assert REQUIRED <= found, REQUIRED - found
    assert lib.catalog.name == "workspace" and len(lib.catalog.names) > 30
    # the example's tasks name only tools of its catalog, and score
    code, _, err = _run(
        [
            "eval",
            "--library",
            str(out),
            "--tasks",
            str(EXAMPLE / "tasks.jsonl"),
            "--method",
            "bm25",
            "--method",
            "libra",
            "--k",
            "5",
            "--json",
            str(tmp_path / "eval.json"),
        ],
        capsys,
    )
    assert code == 0, err
    report = json.loads((tmp_path / "eval.json").read_text())
    assert report["n_tasks"] >= 20 and {r["method"] for r in report["results"]} == {"bm25", "libra"}


def test_a_bare_command_is_found_in_libras_server_directories(tmp_path, monkeypatch):
    """A server installed into libra's cache (not on PATH) starts when named by its bare command."""
    monkeypatch.setenv("LIBRA_MCP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", _path_without_servers())
    bin_dir = managed_bin_dirs()[0]
    bin_dir.mkdir(parents=True)
    script = bin_dir / "notes-server"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {ROOT / "tests" / "mcp_servers" / "signin_server.py"} "$@"\n')
    script.chmod(0o755)
    assert shutil.which("notes-server") is None and find_command("notes-server") == str(script)
    rt = McpRuntime(
        [{"name": "notes", "command": "notes-server", "env": {"NOTES_DIR": "{sandbox}/notes"}, "state": "process"}]
    )
    try:
        assert "notes.sign_in" in rt.catalog.names
    finally:
        rt.close()
    on_path = tmp_path / "path-bin"
    on_path.mkdir()
    shutil.copy(script, on_path / "notes-server")
    monkeypatch.setenv("PATH", f"{on_path}{os.pathsep}{os.environ['PATH']}")
    assert find_command("notes-server") == str(on_path / "notes-server")  # PATH first: the user's own install wins


@pytest.mark.parametrize(
    "command,words",
    [
        ("no-such-mcp-server", ["'no-such-mcp-server' not found", "PATH", "give its full path"]),
        ("mcp-server-memory", ["'mcp-server-memory' not found", "python -m libra.runtime.mcp.setup"]),
        ("/nonexistent/server", ["'/nonexistent/server' not found"]),
    ],
)
def test_a_command_found_nowhere_is_one_line_before_work(tmp_path, capsys, monkeypatch, command, words):
    monkeypatch.setenv("LIBRA_MCP_CACHE", str(tmp_path / "empty-cache"))  # nothing installed there
    monkeypatch.setenv("PATH", _path_without_servers())
    config = tmp_path / "libra.toml"
    config.write_text(f'[[mcp]]\nname = "srv"\ncommand = "{command}"\n')
    code, stdout, err = _run(["build", "--config", str(config), "--out", str(tmp_path / "lib.json")], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1 and err.startswith("error: ") and "[[mcp]] srv" in err, (
        err
    )
    assert all(w in err for w in words), err
    assert not (tmp_path / "lib.json").exists()
