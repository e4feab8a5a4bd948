"""Updating a library instead of building it again (``libra build --update``): time and relations against full builds.

Two catalogs, both real:

- **MCP**: a project of four servers (npm filesystem and memory, PyPI git and time: the workspace example), then
  the same project with PyPI's SQLite server (``mcp-server-sqlite``, installed into ``~/.cache/libra/mcp-sqlite``
  with the MCP SDK it was written for). Measured through the CLI, whole commands: a full build of the four, a full
  build of the five, and ``--update`` of the four's library with the five. The update's relations are compared
  with the full build's, difference listed.
- **BFCL** (Python classes): a full build; the same catalog without one API class, as ``--update`` of it; the
  class added back, as ``--update`` of that; one tool's description changed, as ``--update`` of the full build
  (its statistics count the pairs re-tested and kept); and an update whose starting state changed (another
  password in the fixtures), which must refuse the evidence and say why.

Writes results/update.json (and .md).

    python benchmarks/bench_update.py [--skip-mcp] [--skip-bfcl]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, ROOT, save

WORKSPACE = ROOT / "examples" / "workspace"
SQLITE = ("mcp-server-sqlite==2025.4.25", "mcp>=1.6,<2")  # (the server predates the SDK's 2.x API)
BFCL_CLASS = "MessageAPI"  # removed, then added back
BFCL_TOOL = "TravelAPI.book_flight"  # whose description changes


def _keys(library: Any) -> set[tuple]:
    return {r.key for r in library.relations}


def _diff(full: set[tuple], other: set[tuple]) -> dict[str, Any]:
    def show(keys: set[tuple]) -> list[str]:
        return sorted(f"{p} -> {c} [{k}]" + (f" {f} -> {i}" if f else "") for p, c, k, f, i in keys)

    return {"same": full == other, "only_in_full_build": show(full - other), "only_in_update": show(other - full)}


# -- MCP --------------------------------------------------------------------------------------------------------
def _project(folder: Path, with_sqlite: bool, sqlite_bin: Path) -> Path:
    text = (WORKSPACE / "libra.toml").read_text()
    text = text.replace('template = "template"', f"template = {json.dumps(str(WORKSPACE / 'template'))}")
    if with_sqlite:
        # (inserted before [fixtures]: a table after it would belong to it)
        table = (
            "[[mcp]]\n"
            'name = "sqlite"\n'
            f"command = {json.dumps(str(sqlite_bin / 'mcp-server-sqlite'))}\n"
            'args = ["--db-path", "{sandbox}/data.sqlite"]\n'
            "restart_on_restore = true\n\n"
        )
        text = text.replace("[fixtures]", table + "[fixtures]", 1)
    path = folder / ("five.toml" if with_sqlite else "four.toml")
    path.write_text(text)
    return path


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (the servers and workers a build started)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _libra(*args: str) -> tuple[float, float]:
    """Run one CLI command in a child process; its wall time and CPU time (the machine is shared: the CPU time
    is the figure another load does not inflate as much)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    t0, c0 = time.perf_counter(), _cpu()
    proc = subprocess.run([sys.executable, "-m", "libra.cli", *args], env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if proc.returncode != 0:
        raise SystemExit(f"libra {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return wall, cpu


def bench_mcp() -> dict[str, Any]:
    from libra.library.artifact import Library
    from libra.runtime.mcp.setup import ensure_venv

    if not (WORKSPACE / "template" / ".git").is_dir():
        subprocess.run([sys.executable, str(WORKSPACE / "make_template.py")], check=True, capture_output=True)
    sqlite_bin = ensure_venv("mcp-sqlite", SQLITE)
    with tempfile.TemporaryDirectory(prefix="libra-bench-update-") as tmp:
        folder = Path(tmp)
        four, five = _project(folder, False, sqlite_bin), _project(folder, True, sqlite_bin)
        lib4, lib5, upd = folder / "four.json", folder / "five.json", folder / "five-updated.json"
        runs = {
            "full_build_four": _libra("build", "--config", str(four), "--out", str(lib4), "--quiet"),
            "full_build_five": _libra("build", "--config", str(five), "--out", str(lib5), "--quiet"),
            "update_four_to_five": _libra(
                "build", "--config", str(five), "--out", str(upd), "--quiet", "--update", str(lib4)
            ),
        }
        full, updated, before = Library.load(lib5), Library.load(upd), Library.load(lib4)
    return {
        "servers_before": ["fs", "memory", "git", "time"],
        "server_added": {"name": "sqlite", "package": SQLITE[0]},
        **{f"{k}_seconds": round(wall, 1) for k, (wall, _cpu) in runs.items()},
        **{f"{k}_cpu_seconds": round(cpu, 1) for k, (_wall, cpu) in runs.items()},
        "update_share_of_full_build": round(runs["update_four_to_five"][0] / runs["full_build_five"][0], 3),
        "update_cpu_share_of_full_build": round(runs["update_four_to_five"][1] / runs["full_build_five"][1], 3),
        "tools": {"four": len(before.catalog), "five": len(full.catalog)},
        "relations": {
            "four": len(before.relations),
            "five_full": len(full.relations),
            "five_update": len(updated.relations),
        },
        "update_stats": updated.stats["update"],
        "engine_calls": {
            "five_full": full.stats["engine"]["executed_calls"],
            "five_update": updated.stats["engine"]["executed_calls"],
        },
        "relations_vs_full_build": _diff(_keys(full), _keys(updated)),
    }


# -- BFCL -------------------------------------------------------------------------------------------------------
def _edited(source: Any, drop_group: str | None = None, describe: tuple[str, str] | None = None, fixtures=None) -> Any:
    """``source`` with one group of tools left out, one tool's description changed, or other fixtures: what a user
    editing their catalog does, over the same runtime."""
    from libra.catalog import Catalog
    from libra.sources.base import ToolSource

    class Edited(ToolSource):
        name = source.name
        contract_rules = source.contract_rules
        calling_convention = source.calling_convention

        def catalog(self) -> Catalog:
            tools = [t for t in source.catalog() if t.group != drop_group]
            if describe is not None:
                tools = [replace(t, description=describe[1]) if t.name == describe[0] else t for t in tools]
            return Catalog(tools, source.catalog().name)

        def fixtures(self) -> dict[str, Any]:
            return dict(fixtures) if fixtures is not None else source.fixtures()

        def untestable(self) -> dict[str, dict[str, str]]:
            return source.untestable()

        def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kwargs: Any) -> Any:
            return source.runtime(isolated=isolated, n_workers=n_workers, **kwargs)

    return Edited()


def _timed(source: Any, out: Path, update: Path | None = None) -> tuple[Any, float, list[str]]:
    from libra.induction.build import BuildOptions, build_library

    said: list[str] = []
    t0 = time.perf_counter()
    lib = build_library(source, out, BuildOptions(progress=False, resume=False), log=said.append, update=update)
    return lib, time.perf_counter() - t0, said


def bench_bfcl(quick: bool = False) -> dict[str, Any]:
    from libra.benchmarks.registry import get_benchmark

    bfcl = get_benchmark("bfcl")
    with tempfile.TemporaryDirectory(prefix="libra-bench-update-bfcl-") as tmp:
        folder = Path(tmp)
        full, t_full, _ = _timed(bfcl, folder / "full.json")
        without, t_without, _ = _timed(
            _edited(bfcl, drop_group=BFCL_CLASS), folder / "without.json", folder / "full.json"
        )
        back, t_back, _ = _timed(bfcl, folder / "back.json", folder / "without.json")
        tool = full.catalog[BFCL_TOOL]
        text = tool.description + " The booking is charged to the given card."
        edited = _edited(bfcl, describe=(BFCL_TOOL, text))
        redescribed, t_redescribed, _ = _timed(edited, folder / "redescribed.json", folder / "full.json")
        if quick:  # (the edited catalog's own full build and the refused update are two more full builds)
            redescribed_full, t_redescribed_full = full, float("nan")
            refused, t_refused, said = None, float("nan"), []
        else:
            redescribed_full, t_redescribed_full, _ = _timed(edited, folder / "redescribed-full.json")
            other = {**bfcl.fixtures(), "password": "not-the-password"}
            refused, t_refused, said = _timed(
                _edited(bfcl, fixtures=other), folder / "refused.json", folder / "full.json"
            )
    n = sum(1 for t in full.catalog if t.executable)
    removed = [t.name for t in full.catalog if t.group == BFCL_CLASS]
    return {
        "tools": n,
        "full_build_seconds": round(t_full, 1),
        "full_build_relations": len(full.relations),
        "remove_class": {
            "class": BFCL_CLASS,
            "tools_removed": len(removed),
            "update_seconds": round(t_without, 1),
            "relations": len(without.relations),
            "relations_naming_a_removed_tool": sum(
                1 for r in without.relations if r.provider in removed or r.consumer in removed
            ),
            "update_stats": without.stats["update"],
        },
        "add_class_back": {
            "update_seconds": round(t_back, 1),
            "relations": len(back.relations),
            "update_stats": back.stats["update"],
            "relations_vs_full_build": _diff(_keys(full), _keys(back)),
        },
        "change_one_description": {
            "tool": BFCL_TOOL,
            "update_seconds": round(t_redescribed, 1),
            "full_build_seconds": round(t_redescribed_full, 1),
            "pairs_of_that_tool": 2 * (n - 1),
            "update_stats": redescribed.stats["update"],
            "relations_vs_full_build": _diff(_keys(redescribed_full), _keys(redescribed)),
        },
        "starting_state_changed": None
        if refused is None
        else {
            "change": "fixtures: another password",
            "seconds": round(t_refused, 1),
            "said": [line for line in said if "not reusing" in line],
            "update_stats": refused.stats["update"],
        },
    }


def _markdown(result: dict[str, Any]) -> str:
    lines = ["# Updating a library (`libra build --update`)", ""]
    mcp = result.get("mcp")
    if mcp:
        lines += [
            "## MCP: four servers, then SQLite's added",
            "",
            f"- full build of the four: {mcp['full_build_four_seconds']} s; "
            f"of the five: {mcp['full_build_five_seconds']} s",
            f"- update of the four's library to the five: {mcp['update_four_to_five_seconds']} s "
            f"({mcp['update_share_of_full_build']:.0%} of the full build; CPU time "
            f"{mcp['update_cpu_share_of_full_build']:.0%})",
            f"- relations: full {mcp['relations']['five_full']}, update {mcp['relations']['five_update']}; "
            f"same: {mcp['relations_vs_full_build']['same']}",
            "",
        ]
    bfcl = result.get("bfcl")
    if bfcl:
        desc = bfcl["change_one_description"]
        refused = ((bfcl["starting_state_changed"] or {}).get("update_stats") or {}).get("refused")
        lines += [
            "## BFCL",
            "",
            f"- full build: {bfcl['full_build_seconds']} s, {bfcl['full_build_relations']} relations",
            f"- {bfcl['remove_class']['class']} removed (update): {bfcl['remove_class']['update_seconds']} s; added "
            f"back (update): {bfcl['add_class_back']['update_seconds']} s, same relations as the full build: "
            f"{bfcl['add_class_back']['relations_vs_full_build']['same']}",
            f"- {desc['tool']} re-described (update): {desc['update_seconds']} s, pairs re-tested "
            f"{desc['update_stats']['pairs_retested']} (its own: {desc['pairs_of_that_tool']}), kept "
            f"{desc['update_stats']['pairs_kept']}, tested outside them {desc['update_stats']['tested_outside_focus']}",
            f"- starting state changed: {refused}",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--skip-bfcl", action="store_true")
    parser.add_argument(
        "--quick-bfcl",
        action="store_true",
        help="leave out the edited catalog's full build (its update is compared with the original full build) "
        "and the refused update",
    )
    args = parser.parse_args()
    result: dict[str, Any] = {}
    previous = RESULTS / "update.json"
    if previous.exists():  # a part not run now keeps its figures, with the commit they were measured at
        old = json.loads(previous.read_text())
        for part in ("bfcl", "mcp"):
            if part in old:
                result[part] = {**old[part], "measured_at_commit": old[part].get("measured_at_commit", old["commit"])}
    if not args.skip_bfcl:
        result["bfcl"] = {**bench_bfcl(args.quick_bfcl), "quick": args.quick_bfcl}
    if not args.skip_mcp:
        result["mcp"] = bench_mcp()
    path = save("update", result)
    path.with_suffix(".md").write_text(_markdown(result) + "\n")
    print(json.dumps(result, indent=1)[:6000])


if __name__ == "__main__":
    main()
