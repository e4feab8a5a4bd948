"""``libra show`` prints the build health summary a library records, and nothing for libraries without one."""

from __future__ import annotations

import json

from libra.catalog import Catalog, Tool
from libra.library.artifact import Library, Relation

from .test_cli import run

NEVER = [f"Phone.tool_{i}" for i in range(8)]
HEALTH = {
    "tools": 12,
    "tools_never_succeeded": NEVER,
    "templates": 43,
    "templates_matched": 17,
    "inconclusive_tests": 6,
    "top_rejections": [["Error: [auth] user not signed in", 31], ["phone number must start with +", 9]],
    "warning": "8 of 12 tools never succeeded: relations through them cannot be found",
}


def _library(tmp_path, stats):
    catalog = Catalog(
        [Tool(name=n, description="A phone action.") for n in [*NEVER, "Phone.a", "Phone.b", "Phone.c", "Phone.d"]],
        name="phone",
    )
    lib = Library(
        catalog, relations=[Relation("Phone.a", "Phone.b", "state")], stats=stats, meta={"benchmark": "phone"}
    )
    path = tmp_path / "phone.json.gz"
    lib.save(path)
    assert Library.load(path).stats == stats  # the summary survives the file round trip
    return path


def test_show_prints_the_build_health(tmp_path):
    path = _library(tmp_path, {"tools": 12, "value_relations": 0, "state_relations": 1, "health": HEALTH})
    j = tmp_path / "show.json"
    out = run("show", str(path), "--json", str(j))
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # rich wraps long lines at the terminal width
    assert "build health:" in text
    assert "never called successfully: 8" in text
    assert ", ".join(NEVER[:5]) + " and 3 more" in text and NEVER[5] not in text
    assert "templates matched: 17 of 43" in text and "inconclusive tests: 6" in text
    assert "31 x Error: [auth] user not signed in" in text  # brackets printed as written, not read as markup
    assert "9 x phone number must start with +" in text
    assert "warning: 8 of 12 tools never succeeded" in text
    assert json.loads(j.read_text())["stats"]["health"] == HEALTH


def test_show_without_health_prints_no_block(tmp_path):
    path = _library(tmp_path, {"tools": 12, "value_relations": 0, "state_relations": 1})
    out = run("show", str(path))
    assert out.returncode == 0, out.stderr
    assert "build health" not in out.stdout and "relations: provenance 0" in out.stdout


def test_a_healthy_build_shows_no_warning(tmp_path):
    healthy = {**HEALTH, "tools_never_succeeded": [], "warning": None, "top_rejections": []}
    path = _library(tmp_path, {"tools": 12, "health": healthy})
    out = run("show", str(path))
    assert out.returncode == 0, out.stderr
    assert "never called successfully: 0" in out.stdout
    assert "warning" not in out.stdout and "most common rejections" not in out.stdout
