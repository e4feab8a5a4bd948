"""What agents and users are shown of a relation's evidence: paths relative to the build's sandbox, and what the
recorded calls showed, no more.

An MCP build runs its servers in a temporary sandbox (``/tmp/libra-mcp-pn6k3eji/sandbox``); the paths they printed
mean nothing to an agent working elsewhere. A state relation ``fs.create_directory -> fs.write_file`` holds for a
write into a folder that did not exist, not for every write: the line names the call that failed and succeeded.
"""

from __future__ import annotations

import json

from libra.catalog import Catalog, Tool
from libra.library.artifact import Library, Relation
from libra.library.evidence import evidence_line, sandbox_relative

from .cli_toys import run_cli

SANDBOX = "/tmp/libra-mcp-pn6k3eji/sandbox"
PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _call(tool: str, args: dict, status: str, output=None, error=None) -> dict:
    record = {"status": status, "output": output, "state_changes": {}, "error": error, "duration_ms": 1.0}
    return {"tool": tool, "arguments": args, "record": record}


MKDIR = _call("fs.create_directory", {"path": "new"}, "success", f"Successfully created directory {SANDBOX}/new")
MISSING = f"ENOENT: no such file or directory, open '{SANDBOX}/new/a.txt'"
STATE = Relation(
    "fs.create_directory",
    "fs.write_file",
    "state",
    evidence={
        "provider_call": MKDIR,
        "before_call": _call("fs.write_file", {"path": "new/a.txt"}, "rejected", MISSING),
        "after_call": _call("fs.write_file", {"path": "new/a.txt"}, "success", "Successfully wrote to new/a.txt"),
    },
)
VALUE = Relation(
    "fs.create_directory",
    "fs.list_directory",
    "provenance",
    "path",
    "path",
    1.0,
    evidence={
        "provider_call": MKDIR,
        "consumer_call": _call("fs.list_directory", {"path": "new"}, "success", ""),
        "control_call": _call(
            "fs.list_directory", {"path": "other"}, "error", None, f"ENOENT: scandir '{SANDBOX}/other'"
        ),
        "control": "literal",
    },
)


def test_sandbox_paths_are_written_relative_to_it():
    assert sandbox_relative(MISSING) == "ENOENT: no such file or directory, open 'new/a.txt'"
    assert sandbox_relative(f"outside the allowed repository '{SANDBOX}'") == "outside the allowed repository '.'"
    assert sandbox_relative("/tmp/other/sandbox/x stays") == "/tmp/other/sandbox/x stays"


def test_a_state_line_names_the_call_that_failed_before_and_succeeded_after():
    line = evidence_line(STATE.provider, STATE.consumer, "state", None, None, STATE.evidence)
    assert line == (
        "fs.write_file({\"path\": \"new/a.txt\"}) failed with 'ENOENT: no such file or directory, open 'new/a.txt'' "
        'before fs.create_directory({"path": "new"}) ran, and succeeded after it'
    )


def test_agents_and_users_see_no_build_time_path(tmp_path):
    tools = [Tool(n, "A file system action.", PATH_SCHEMA) for n in ("fs.create_directory", "fs.write_file")]
    tools.append(Tool("fs.list_directory", "List a folder.", PATH_SCHEMA))
    health = {"tools": 3, "tools_never_succeeded": [], "top_rejections": [[MISSING, 4]]}
    lib = Library(Catalog(tools, name="fs"), relations=[STATE, VALUE], stats={"tools": 3, "health": health})
    path = tmp_path / "fs.json"
    lib.save(path)
    cache = tmp_path / "cache"
    found = run_cli("retrieve", str(path), "write a file in a new folder", "--format", "json", "--embedder", "hash",
                    cache=cache)  # fmt: skip
    assert found.returncode == 0, found.stderr
    lines = [p["evidence"] for t in json.loads(found.stdout)["tools"] for p in t["prerequisites"]]
    assert len(lines) == 2 and not any("libra-mcp-" in line for line in lines), lines
    assert any("failed with 'ENOENT: scandir 'other''" in line for line in lines), lines
    for args, shown in (
        (["explain", str(path), "fs.write_file"], "open 'new/a.txt'"),
        (["explain", str(path), "fs.list_directory"], "scandir 'other'"),
        (["show", str(path)], "open 'new/a.txt'"),
    ):
        out = run_cli(*args, cache=cache)
        assert out.returncode == 0 and "libra-mcp-" not in out.stdout and shown in out.stdout, out.stdout
