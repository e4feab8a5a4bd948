"""Libraries that keep up with their tools: fingerprints, ``libra show --tools``, ``libra build --update``.

Every build here is real and runs the ``libra`` command in a process of its own, over a copy of the shop tools
that a test edits between builds as a user edits their module (a process imports a module once, so each
version of the file needs its own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from libra.library.artifact import Library
from libra.library.check import check_library
from libra.library.fingerprints import BuildFingerprints

ROOT = Path(__file__).resolve().parents[1]
SHOP = ROOT / "tests" / "fixtures" / "shop_tools.py"


def _libra(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "LIBRA_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "libra.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def _build(cwd: Path, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    done = _libra("build", "--tools", "shop.py", "--out", out, "--workers", "1", "--quiet", *extra, cwd=cwd)
    assert done.returncode == 0, done.stderr + done.stdout
    return done


def _words(done: subprocess.CompletedProcess[str]) -> str:
    """The command's output with its lines joined (the terminal width wraps long lines)."""
    return " ".join(done.stdout.split())


def _edges(path: Path) -> list[tuple]:
    return sorted(r.key for r in Library.load(path).relations)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture()
def shop(tmp_path: Path) -> Path:
    (tmp_path / "shop.py").write_text(SHOP.read_text())
    _build(tmp_path, "full.json")
    return tmp_path


def test_a_library_records_its_fingerprints_and_one_without_them_still_loads(shop: Path) -> None:
    doc = json.loads((shop / "full.json").read_text())
    prints = BuildFingerprints.from_dict(doc["fingerprints"])
    assert sorted(prints.tools) == sorted(t["name"] for t in doc["catalog"]["tools"])
    assert "fixtures" in prints.start and any(p.startswith("state shop:") for p in prints.start)
    assert prints.option_values["config.max_calls"] > 0 and prints.built_at
    old = {k: v for k, v in doc.items() if k != "fingerprints"}
    check_library(old)
    assert Library.from_dict(old).fingerprints is None
    bad = {**doc, "fingerprints": {**doc["fingerprints"], "tools": {"nosuch": "0" * 64}}}
    with pytest.raises(Exception, match="fingerprints.tools.nosuch"):
        check_library(bad)


def test_show_names_the_tools_changed_since_the_build(shop: Path) -> None:
    same = _libra("show", "full.json", "--tools", "shop.py", cwd=shop)
    assert "no tools changed since this library was built" in _words(same)
    _edit(shop / "shop.py", "Show the title and price of a product.", "Show a product's title and its price.")
    _edit(shop / "shop.py", 'return {"order_id": order_id', 'return {"order_id": order_id, "note": "ok"')
    shown = _libra("show", "full.json", "--tools", "shop.py", "--json", "show.json", cwd=shop)
    assert "2 tools changed since this library was built (changed: checkout, get_product)" in _words(shown)
    assert json.loads((shop / "show.json").read_text())["changes"]["changed"] == ["checkout", "get_product"]


def test_a_changed_docstring_retests_only_that_tools_pairs(shop: Path) -> None:
    # the cart needs a sign-in's token and a search's product: its providers must run as in a full build
    _edit(shop / "shop.py", "Put a product in the signed-in account's cart.", "Put one product in the cart.")
    done = _build(shop, "updated.json", "--update", "full.json")
    assert "update: 1 tools added, removed or changed" in done.stdout
    update = Library.load(shop / "updated.json").stats["update"]
    n = len(Library.load(shop / "full.json").catalog)
    assert update["changed"] == ["add_to_cart"]
    assert update["pairs_retested"] == 2 * (n - 1) and update["pairs_kept"] == (n - 1) * (n - 2)
    assert update["stale"] == [] and update["tested_tool_pairs"] >= 1 and update["tested_outside_focus"] == 0
    _build(shop, "fresh.json")  # a full build of the edited tools
    assert _edges(shop / "updated.json") == _edges(shop / "fresh.json")
    # values of two unchanged tools went only along the pairs the earlier build related, and in fewer calls
    engine = Library.load(shop / "updated.json").stats["engine"]
    assert engine["skipped_kept"] > 0
    assert engine["executed_calls"] < Library.load(shop / "fresh.json").stats["engine"]["executed_calls"]


def test_a_removed_tool_takes_its_relations_and_adding_it_back_restores_them(shop: Path) -> None:
    text = (shop / "shop.py").read_text()
    start = text.index("def login(")
    end = text.index("\ndef ", start + 1)
    (shop / "shop.py").write_text(text[:start] + text[end + 1 :])
    _build(shop, "without.json", "--update", "full.json")
    without = _edges(shop / "without.json")
    assert without and not [e for e in without if "login" in e[:2]]
    update = Library.load(shop / "without.json").stats["update"]
    # the cart succeeded only once signed in: its pairs are tested again, and fail now, as in a full build
    assert update["removed"] == ["login"] and "add_to_cart" in update["stale"]
    _build(shop, "without-full.json")
    assert without == _edges(shop / "without-full.json")
    (shop / "shop.py").write_text(text)
    _build(shop, "back.json", "--update", "without.json")
    assert Library.load(shop / "back.json").stats["update"]["added"] == ["login"]
    assert _edges(shop / "back.json") == _edges(shop / "full.json")


def test_an_update_whose_starting_state_changed_refuses_the_evidence(shop: Path) -> None:
    _edit(shop / "shop.py", '"p-102": {"title": "Linen notebook", "price": 8.0},', "")
    done = _build(shop, "moved.json", "--update", "full.json")
    assert "not reusing the library's evidence: the starting state changed" in done.stdout
    assert "state shop:PRODUCTS" in done.stdout
    refused = Library.load(shop / "moved.json").stats["update"]["refused"]
    assert refused.startswith("the starting state changed")
    _build(shop, "budget.json", "--update", "full.json", "--max-depth", "2")
    assert "the build options changed" in Library.load(shop / "budget.json").stats["update"]["refused"]
    assert "config.max_depth" in Library.load(shop / "budget.json").stats["update"]["refused"]


def test_update_refuses_a_missing_library_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SHOP.read_text())
    done = _libra("build", "--tools", "shop.py", "--out", "x.json", "--update", "nothere.json", cwd=tmp_path)
    assert done.returncode == 2 and "no library file at nothere.json" in done.stderr + done.stdout
    assert not (tmp_path / "x.json").exists()


NOTES = ROOT / "tests" / "mcp_servers" / "signin_server.py"


def _server_table(name: str) -> str:
    return (
        f'[[mcp]]\nname = "{name}"\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([str(NOTES)])}\n'
        f'env = {{ NOTES_DIR = "{{sandbox}}/{name}" }}\nstate = "process"\n'
    )


def test_a_server_added_to_a_project_is_the_only_thing_built(tmp_path: Path) -> None:
    """Real MCP servers: the project gains a second server; show names its tools, --update builds only them."""
    account = '[fixtures]\nusername = "alice"\npassword = "wonderland"\n'
    (tmp_path / "one.toml").write_text(_server_table("notes") + account)
    (tmp_path / "two.toml").write_text(_server_table("notes") + _server_table("diary") + account)
    budget = ("--max-calls", "300", "--max-depth", "2")  # (servers are slow to restart: a small build)
    done = _libra("build", "--config", "one.toml", "--out", "one.json", "--quiet", *budget, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    prints = Library.load(tmp_path / "one.json").fingerprints
    assert prints is not None and prints["start"]["sandbox template"] == "none"
    shown = _libra("show", "one.json", "--config", "two.toml", cwd=tmp_path)
    assert "4 tools changed since this library was built (added: diary.add_note, diary.read_note" in _words(shown)
    done = _libra(
        "build", "--config", "two.toml", "--out", "two.json", "--quiet", *budget, "--update", "one.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    two, one = Library.load(tmp_path / "two.json"), Library.load(tmp_path / "one.json")
    update = two.stats["update"]
    assert len(update["added"]) == 4 and update["changed"] == [] and update["relations_kept"] == len(one.relations)
    assert one.relations and {r.key for r in one.relations} <= {r.key for r in two.relations}
    assert any(r.provider == "diary.sign_in" and r.consumer == "diary.add_note" for r in two.relations)
