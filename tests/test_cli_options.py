"""Every option of every command, given bad values: exit status 2 and exactly one ``error:`` line naming the
option, before any work starts.

"Before any work" is checked by what work would leave: nothing on stdout (commands print as they go), no cache
directory created (benchmarks, embeddings and libraries all go there), no output file written. The table is
checked against the commands themselves, so an option added without bad values here fails
:func:`test_the_table_covers_every_option`.

The CLI runs in-process through :func:`libra.cli.main.main`, which is what the ``libra`` script calls; a few cases also
run the real entry point in a subprocess (``tests/test_cli.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer

from libra.cli.main import app, main
from libra.cli.main import create_app as _register_optional_commands
from libra.induction.build import BuildOptions, build_library

from . import cli_toys  # noqa: F401 - registers the toy benchmarks the commands name
from .induction_toys import ShopBenchmark

POSITIVE_INT = ["0", "-3", "abc", "1.5", "inf", "nan"]
NON_NEGATIVE_INT = ["-1", "abc", "inf"]
POSITIVE_NUMBER = ["0", "-1", "inf", "-inf", "nan", "abc"]
UNIT_INTERVAL = ["-0.1", "1.5", "inf", "nan", "abc"]
CHOICE = ["nope", ""]
EMBEDDER = ["hash-abc", "hash-0", "hash-", "hash-99999999", "nope", "st:", "openai:", "openai:m@ftp://host"]
TEXT = ["", "   "]
URL = ["ftp://host", "localhost:8000", "http://"]
# "{missing}/x.json": libra creates the file an option names, never the folders above it
OUTPUT = ["{dir}", "{file}/x.json", "/proc/libra-test/x.json", "{missing}/x.json"]
OUTPUT_DIR = ["{file}", "{file}/sub", "/proc/libra-test", "{missing}/sub"]
LIBRARY = ["{missing}", "{dir}"]

# (command, option or argument name as click knows it, bad values); arguments are given in place of a good one.
TABLE: list[tuple[str, str, list[str]]] = [
    ("eval", "benchmark", ["nope"]),
    ("eval", "--method", ["magic", ""]),
    ("eval", "--k", POSITIVE_INT),
    ("eval", "--split", ["train", ""]),
    ("eval", "--embedder", EMBEDDER),
    ("eval", "--document", ["yaml", ""]),
    ("eval", "--library", LIBRARY),
    ("eval", "--json", OUTPUT),
    ("eval", "--runs", OUTPUT),
    ("eval", "--workers", NON_NEGATIVE_INT),
    ("eval", "--ks", POSITIVE_INT),
    ("eval", "--kc", POSITIVE_INT),
    ("eval", "--selection", CHOICE),
    ("eval", "--hops", POSITIVE_INT),
    ("eval", "--score-space", CHOICE),
    ("eval", "--temperature", POSITIVE_NUMBER),
    ("eval", "--decay", UNIT_INTERVAL),
    ("eval", "--tasks", ["{missing}", "{dir}", "{file}"]),
    ("eval", "--llm-base-url", URL),
    ("eval", "--llm-model", TEXT),
    ("eval", "--llm-cache", OUTPUT_DIR),
    ("eval", "--llm-concurrency", POSITIVE_INT),
    ("eval", "--base", ["magic", "toolreagt", ""]),
    ("eval", "--iterations", POSITIVE_INT),
    ("eval", "--tgr-neighbours", NON_NEGATIVE_INT),
    ("eval", "--plot", OUTPUT),
    ("contracts", "benchmark", ["nope"]),
    ("contracts", "--tools", ["", "nope_module_xyz", "tests.fixtures.shop_tools:Nope", "{file}", "{missing}"]),
    ("contracts", "--config", ["{missing}", "{dir}", "{file}"]),
    ("contracts", "--out", OUTPUT),
    ("contracts", "--json", OUTPUT),
    ("contracts", "--workers", NON_NEGATIVE_INT),
    ("contracts", "--proposer", CHOICE),
    ("contracts", "--llm-base-url", URL),
    ("contracts", "--llm-model", TEXT),
    ("contracts", "--llm-cache", OUTPUT_DIR),
    ("contracts", "--llm-concurrency", POSITIVE_INT),
    ("build", "benchmark", ["nope"]),
    ("build", "--out", OUTPUT),
    ("build", "--workers", NON_NEGATIVE_INT),
    ("build", "--executor", ["spark", "", "local:x", "ray:"]),
    ("build", "--proposer", CHOICE),
    ("build", "--llm-base-url", URL),
    ("build", "--llm-model", TEXT),
    ("build", "--llm-cache", OUTPUT_DIR),
    ("build", "--llm-concurrency", POSITIVE_INT),
    ("build", "--embedder", EMBEDDER),
    ("build", "--tau", UNIT_INTERVAL),
    ("build", "--credit", CHOICE),
    ("build", "--max-calls", POSITIVE_INT),
    ("build", "--max-depth", NON_NEGATIVE_INT),
    ("build", "--max-retry-calls", NON_NEGATIVE_INT),
    ("build", "--tools", ["", "nope_module_xyz", "tests.fixtures.shop_tools:Nope", "{file}", "{missing}"]),
    ("build", "--config", ["{missing}", "{dir}", "{file}"]),
    ("build", "--update", LIBRARY),
    ("show", "library", LIBRARY),
    ("show", "--json", OUTPUT),
    ("show", "--definitions", CHOICE),
    ("show", "--tools", ["", "nope_module_xyz", "tests.fixtures.shop_tools:Nope", "{file}", "{missing}"]),
    ("show", "--config", ["{missing}", "{dir}", "{file}"]),
    ("explain", "library", LIBRARY),
    ("explain", "tool", TEXT),
    ("analyze", "benchmark", ["nope"]),
    ("analyze", "--library", LIBRARY),
    ("analyze", "--tasks", ["{missing}", "{dir}", "{file}"]),
    ("analyze", "--k", POSITIVE_INT),
    ("analyze", "--embedder", EMBEDDER),
    ("analyze", "--document", ["yaml"]),
    ("analyze", "--json", OUTPUT),
    ("analyze", "--plot", OUTPUT),
    ("retrieve", "library", LIBRARY),
    ("retrieve", "query", TEXT),
    ("retrieve", "--k", POSITIVE_INT),
    ("retrieve", "--base", CHOICE),
    ("retrieve", "--embedder", EMBEDDER),
    ("retrieve", "--document", ["yaml"]),
    ("retrieve", "--ks", POSITIVE_INT),
    ("retrieve", "--selection", CHOICE),
    ("retrieve", "--hops", POSITIVE_INT),
    ("retrieve", "--score-space", CHOICE),
    ("retrieve", "--temperature", POSITIVE_NUMBER),
    ("retrieve", "--decay", UNIT_INTERVAL),
    ("retrieve", "--json", OUTPUT),
    ("retrieve", "--format", CHOICE),
    ("retrieve", "--call-id", TEXT),
    ("serve", "library", LIBRARY),
    ("serve", "--transport", CHOICE),
    ("serve", "--host", TEXT),
    ("serve", "--port", ["-1", "65536", "abc"]),
    ("serve", "--workdir", ["{missing}", "{file}"]),
    ("serve", "--config", ["{missing}", "{dir}", "{file}"]),
]


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lib") / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    return path


def _argv(command: str, name: str, value: str, lib: Path, out: Path) -> list[str]:
    """A command line that is valid except for ``name`` = ``value``."""
    positional = {
        "eval": {"benchmark": "shop-tasks"},
        "contracts": {"benchmark": "shop-tasks"},
        "build": {"benchmark": "shop-tasks"},
        "analyze": {"benchmark": "shop-tasks"},
        "show": {"library": str(lib)},
        "explain": {"library": str(lib), "tool": "Shop.login"},
        "retrieve": {"library": str(lib), "query": "add an item"},
        "serve": {"library": str(lib)},
    }[command]
    required = ["--out", str(out)] if command == "build" and name != "--out" else []
    if name.startswith("--"):
        return [command, *positional.values(), *required, name, value]
    return [command, *(value if arg == name else good for arg, good in positional.items()), *required]


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


CASES = [(command, name, value) for command, name, values in TABLE for value in values]


@pytest.mark.parametrize("command,name,value", CASES, ids=[f"{c} {n}={v!r}" for c, n, v in CASES])
def test_bad_value_is_one_error_line_before_any_work(command, name, value, library, tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(cache))
    work = tmp_path / "work"
    work.mkdir()
    (work / "file").write_text("a file, not a directory\n")
    value = value.format(dir=work, file=work / "file", missing=work / "missing.json")
    out = work / "out.json"
    before = sorted(work.iterdir())
    code, stdout, stderr = _run(_argv(command, name, value, library, out), capsys)
    lines = stderr.strip().splitlines()
    assert code == 2, stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert f"'{name}'" in lines[0], lines[0]  # names the option (or argument)
    assert "Traceback" not in stderr
    assert stdout == ""  # nothing started: every command prints as soon as it works
    assert not cache.exists()
    assert sorted(work.iterdir()) == before  # no output written, no write check left behind


def test_the_table_covers_every_option():
    _register_optional_commands()
    group = typer.main.get_command(app)
    listed = {(c, n) for c, n, _ in TABLE}
    missing = []
    for command_name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            if getattr(param, "is_flag", False) or param.name == "help":
                continue
            name = param.opts[0] if param.opts[0].startswith("--") else param.name
            if (command_name, name) not in listed:
                missing.append(f"{command_name} {name}")
    assert missing == []


def test_plot_without_matplotlib_fails_before_the_analyses(library, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, stdout, stderr = _run(
        ["analyze", "shop-tasks", "--library", str(library), "--plot", str(tmp_path / "m.png")], capsys
    )
    assert code == 2 and stdout == "" and stderr.count("\n") == 1 and "pip install 'libra-tools[plot]'" in stderr
    assert not (tmp_path / "cache").exists()


def test_cross_option_rules_still_fail_before_work(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    code, stdout, stderr = _run(["build", "shop-tasks", "--out", str(tmp_path / "l.json"), "--proposer", "llm"], capsys)
    assert code == 2 and stdout == "" and stderr.startswith("error: ") and "--llm-base-url" in stderr
    assert not (tmp_path / "l.json").exists() and not (tmp_path / "cache").exists()
    # the LLM retrieval methods without an endpoint, and LLM settings without an LLM method
    for argv in (
        ["eval", "shop-tasks", "--method", "toolrex"],
        ["eval", "shop-tasks", "--method", "dense", "--llm-model", "m"],
        ["eval", "shop-tasks", "--method", "dense", "--iterations", "3"],
    ):
        code, stdout, stderr = _run(argv, capsys)
        assert code == 2 and stdout == "" and stderr.count("\n") == 1 and stderr.startswith("error: "), stderr
        assert not (tmp_path / "cache").exists()
