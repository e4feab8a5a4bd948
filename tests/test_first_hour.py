"""A new user's first hour with the command line, command by command, each through the real ``libra`` in a
subprocess (and, for what a terminal shows, in a pseudo-terminal).

What a newcomer met: ``show`` printed counts only; the health summary listed the symptoms (ten tools refusing a
made-up token) before the cause (the sign-in that never worked); ``explain`` printed ``-> error null`` for a
failed call; piped output wrapped at 80 columns; help showed ``<bool>`` beside every flag and swallowed
``[[mcp]]``; ``-h``, ``--version`` and a bare ``libra`` failed; a lock file stayed beside every output; SIGTERM
left a temporary folder; ``--out`` into a missing folder created it; messages sent users the wrong way; ``eval``
on a tiny catalog scored every method 100 without a word. Each test here checks one of them.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from .cli_toys import MAIN, ROOT, cli_env, group_members

SHOP = ROOT / "examples" / "shop"
OFFICE = ROOT / "tests" / "fixtures" / "locked_office.py"
NOTES_SERVER = ROOT / "tests" / "mcp_servers" / "signin_server.py"


def libra(*args: str, cache: Path, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 600):
    """``libra ARGS`` in a subprocess, stdout and stderr piped (not a terminal)."""
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**cli_env(cache), **(env or {})},
        check=False,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """Libraries built through the command line: the shop example, the office whose sign-in never works, and the
    same office with the password as a fixture."""
    root = tmp_path_factory.mktemp("first-hour")
    cache = root / "cache"
    (root / "office.toml").write_text(
        f'[[python]]\ntools = "{OFFICE}"\n\n[fixtures]\npassword = "correct horse battery staple"\n'
    )
    out = {"root": root, "cache": cache}
    for name, args in (
        ("shop", ["--tools", str(SHOP / "tools.py")]),
        ("locked", ["--tools", str(OFFICE)]),
        ("office", ["--config", str(root / "office.toml")]),
    ):
        path = root / f"{name}.json"
        run = libra("build", *args, "--out", str(path), "--workers", "0", cache=cache)
        assert run.returncode == 0, run.stderr
        out[name] = path
        out[f"{name}-build"] = run  # type: ignore[assignment]
    return out


# -- show lists the relations, grouped by consumer, and the build health -------------------------------------
def test_show_lists_the_relations_by_the_tool_that_needs_them(built):
    run = libra("show", str(built["shop"]), "--json", str(built["root"] / "show.json"), cache=built["cache"])
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    checkout = lines.index("  checkout")
    block = lines[checkout + 1 : checkout + 3]
    assert [" ".join(line.split()) for line in block] == [
        "<- add_to_cart state",
        "<- login provenance access_token -> access_token",
    ]
    assert "relations: provenance 15, compatibility 0, state 7" in lines
    assert "build health:" in lines and lines.index("build health:") > checkout
    # --json is as it was: stats, meta and every edge with provider, consumer, kind and fields
    data = json.loads((built["root"] / "show.json").read_text())
    assert set(data) == {"stats", "meta", "edges"} and len(data["edges"]) == 22
    assert all(set(e) == {"provider", "consumer", "kind", "provider_field", "consumer_input"} for e in data["edges"])


# -- the health summary names the blocking tool first, with its failing call and what to do -------------------
def test_the_health_summary_names_the_blocking_tool_before_the_symptoms(built):
    for run in (built["locked-build"], libra("show", str(built["locked"]), cache=built["cache"])):
        out = run.stdout
        assert "blocking: tools that never succeeded and starve others of a value" in out, out
        assert out.index("blocking:") < out.index("most common rejections")
        blocking = out[out.index("blocking:") : out.index("templates matched")]
        assert "    login: 10 tools need its session_token:" in blocking
        call = re.search(r"failing call: login\((\{.*\})\) -> PermissionError: invalid credentials", blocking)
        assert call and set(json.loads(call.group(1))) == {"username", "password"}, blocking
        assert "what to do: give username, password" in blocking and "[fixtures]" in blocking
    health = json.loads(Path(built["locked"]).read_text())["stats"]["health"]
    assert [b["tool"] for b in health["blocking"]] == ["login"] and len(health["blocking"][0]["starves"]) == 10


def test_the_build_warning_is_printed_once_on_stderr(built):
    run = built["locked-build"]
    assert run.stderr.count("warning:") == 1 and "start with the blocking tool(s) login" in run.stderr
    [line] = [line for line in run.stderr.splitlines() if line.startswith("warning:")]  # one line, never wrapped
    assert line.endswith("their validation accepts."), run.stderr
    assert "warning" not in run.stdout


# -- explain shows a failed call's error text --------------------------------------------------------------
def test_explain_shows_the_error_text_of_a_failed_call(built):
    run = libra("explain", str(built["office"]), "list_files", cache=built["cache"])
    assert run.returncode == 0, run.stderr
    assert "-> error null" not in run.stdout
    assert "-> error PermissionError: invalid or expired session token" in run.stdout, run.stdout


# -- output that is not a terminal never wraps; a terminal wraps at its width ---------------------------------
def test_piped_output_keeps_every_line_whole(built):
    run = libra("show", str(built["locked"]), cache=built["cache"], env={"COLUMNS": ""})
    failing = [line for line in run.stdout.splitlines() if "failing call: login(" in line]
    assert len(failing) == 1 and len(failing[0]) > 80 and failing[0].endswith("invalid credentials"), run.stdout
    assert all(not line.startswith(" " * 8 + "PermissionError") for line in run.stdout.splitlines())
    # plain words: the paper's table numbers and per-candidate timings are for libra analyze
    for text in (run.stdout, built["shop-build"].stdout):
        assert "Table 5" not in text and "s / 1k" not in text


def test_piped_output_honours_columns(built):
    run = libra("explain", str(built["office"]), "list_files", cache=built["cache"], env={"COLUMNS": "60"})
    assert run.returncode == 0 and max(len(line) for line in run.stdout.splitlines()) <= 60


def _in_a_terminal(args: list[str], cache: Path, columns: int) -> str:
    """``libra ARGS`` with a pseudo-terminal of ``columns`` columns as its stdout (stderr piped apart)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in cli_env(cache).items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, *args],
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**env, "TERM": "xterm"},
    )
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed: the command ended
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    text = b"".join(chunks).decode("utf-8", "replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")


def test_a_terminal_wraps_at_its_width(built):
    text = _in_a_terminal(["show", str(built["locked"])], built["cache"], columns=70)
    lines = [line for line in text.splitlines() if line.strip()]
    assert max(len(line) for line in lines) <= 70, text
    assert "failing call: login(" in text and "invalid credentials" in text
    table = _in_a_terminal(["retrieve", str(built["shop"]), "cancel the order I just placed"], built["cache"], 60)
    assert "promoted by" in table and max(len(line) for line in table.splitlines()) <= 60, table


# -- help and options ---------------------------------------------------------------------------------------
COMMAND_ORDER = ["build", "show", "explain", "retrieve", "serve", "eval", "contracts", "analyze", "benchmarks"]


def test_help_lists_the_everyday_commands_first_and_bare_libra_is_help(tmp_path):
    for args in ([], ["-h"], ["--help"]):
        run = libra(*args, cache=tmp_path)
        assert run.returncode == 0 and run.stderr == "" and run.stdout.startswith("Usage: libra"), run.stderr
        listed = re.findall(r"^  ([a-z]+)  ", run.stdout.split("Commands:", 1)[1], re.MULTILINE)
        assert listed[: len(COMMAND_ORDER)] == COMMAND_ORDER, listed
    run = libra("--version", cache=tmp_path)
    assert run.returncode == 0 and re.fullmatch(r"\d+\.\d+\.\d+\n", run.stdout)


@pytest.mark.parametrize("command", [*COMMAND_ORDER, "version"])
def test_every_command_has_plain_help(command, tmp_path):
    run = libra(command, "-h", cache=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "<bool>" not in run.stdout and "Usage: libra " + command in run.stdout
    if command == "serve":
        assert "[[mcp]]" in " ".join(run.stdout.split())
    if command == "build":
        assert "libra-tools[ray]" in " ".join(run.stdout.split())
    if command == "contracts":
        assert "--tools" in run.stdout and "--config" in run.stdout


def test_contracts_takes_your_own_tools(tmp_path):
    run = libra("contracts", "--tools", str(SHOP / "tools.py"), "--workers", "0", cache=tmp_path / "cache")
    assert run.returncode == 0, run.stderr
    assert "tools: contracts" in run.stdout and "templates whose observed outcome matched" in run.stdout


# -- leftovers: lock files, SIGTERM, outputs into missing folders ---------------------------------------------
def test_no_lock_file_is_left_beside_an_output(built, tmp_path):
    assert not list(built["root"].glob(".*.lock"))  # three successful builds
    out = tmp_path / "lib.json"
    run = libra("build", "--tools", str(SHOP / "tools.py"), "--out", str(out), "--max-calls", "1", cache=tmp_path)
    assert run.returncode == 0 and not list(tmp_path.glob(".*.lock")), run.stderr


def test_an_output_in_a_missing_folder_is_refused(tmp_path):
    for option, command in (
        ("--out", ["build", "--tools", str(SHOP / "tools.py")]),
        ("--json", ["eval", "shop-tasks", "--method", "bm25"]),
    ):
        target = tmp_path / "no" / "such" / "dir" / "x.json"
        run = libra(*command, option, str(target), cache=tmp_path / "cache")
        assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
        assert f"the folder {target.parent} does not exist" in run.stderr and option in run.stderr
        assert not (tmp_path / "no").exists() and run.stdout == ""


def test_sigterm_cleans_up_and_says_so(tmp_path):
    """A build over an MCP server, stopped by SIGTERM: status 143, one ``terminated`` line, no temporary sandbox
    folder, no lock file and no process left."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    project = tmp_path / "notes.toml"
    project.write_text(
        f'[[mcp]]\nname = "notes"\ncommand = "{sys.executable}"\nargs = ["{NOTES_SERVER}"]\n'
        'env = { NOTES_DIR = "{sandbox}/notes" }\nstate = "process"\n\n'
        '[fixtures]\nusername = "alice"\npassword = "wonderland"\n'
    )
    out = tmp_path / "notes.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "build", "--config", str(project), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**cli_env(tmp_path / "cache"), "TMPDIR": str(tmpdir)},
        start_new_session=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "proposing and checking contracts" in line:
            break
    time.sleep(1.0)
    assert list(tmpdir.glob("libra-mcp-*")), "the build's sandbox folder exists while it runs"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "terminated" and "Traceback" not in err, err
    assert not list(tmpdir.glob("libra-mcp-*")) and not list(tmp_path.glob(".*.lock")) and not out.exists()
    deadline = time.monotonic() + 30
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(proc.pid) == []


# -- messages that send users the right way ------------------------------------------------------------------
def test_serving_python_tools_with_a_workdir_says_to_serve_without_it(built, tmp_path):
    run = libra("serve", str(built["shop"]), "--workdir", str(tmp_path), cache=built["cache"])
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "call_tool forwards to MCP servers only" in run.stderr and "without --workdir" in run.stderr
    config = tmp_path / "shop.toml"
    config.write_text(f'[[python]]\ntools = "{SHOP / "tools.py"}"\n')
    run = libra("serve", str(built["shop"]), "--workdir", str(tmp_path), "--config", str(config), cache=tmp_path)
    assert run.returncode == 2 and "without --workdir and --config" in run.stderr, run.stderr


def test_a_library_from_a_newer_libra_says_upgrade(built, tmp_path):
    doc = json.loads(built["shop"].read_text())
    doc["format_version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    run = libra("show", str(newer), cache=tmp_path)
    assert run.returncode == 2 and "written by a newer libra" in run.stderr, run.stderr
    assert "pip install --upgrade libra-tools" in run.stderr and "rebuild" not in run.stderr


def test_every_missing_type_hint_is_named_at_once(tmp_path):
    module = tmp_path / "untyped.py"
    module.write_text(
        "def add_item(token, title: str) -> str:\n    return title\n\n\n"
        "def remove_item(token: str, item_id) -> bool:\n    return True\n"
    )
    run = libra("build", "--tools", str(module), "--out", str(tmp_path / "x.json"), cache=tmp_path / "cache")
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "no type hint for 2 required parameter(s): add_item(token), remove_item(item_id)" in run.stderr
    assert not (tmp_path / "x.json").exists()


# -- eval on your own tasks warns when its scores cannot tell methods apart -----------------------------------
def test_eval_warns_when_k_reaches_the_catalog(built):
    run = libra(
        "eval", "--library", str(built["shop"]), "--tasks", str(SHOP / "tasks.jsonl"), "--method", "dense",
        "--embedder", "hash", cache=built["cache"],
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("warning:") == 1 and "K = 15 is at least the catalog's 10 tools" in run.stderr
    quiet = libra(
        "eval", "--library", str(built["shop"]), "--tasks", str(SHOP / "tasks.jsonl"), "--method", "dense",
        "--embedder", "hash", "--k", "5", cache=built["cache"],
    )  # fmt: skip
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr


def test_eval_warns_when_the_library_has_no_relation(built, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t", "query": "list my files", "gold": ["login", "list_files"]}) + "\n")
    run = libra(
        "eval", "--library", str(built["locked"]), "--tasks", str(tasks), "--method", "libra", "--embedder", "hash",
        "--k", "3", cache=built["cache"],
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "has 0 relations: libra ranks exactly like its base retriever" in run.stderr
