"""The workspace example end to end through the CLI, as a user runs it from the README.

Creates the example's sandbox template when it is missing (``examples/workspace/make_template.py``, the
documented step), builds ``examples/workspace/libra.toml`` with ``libra build --config`` (the servers are found in
libra's server directories, which ``make mcp-servers`` fills: no PATH edit), then scores the example's own tasks
with ``libra eval --tasks`` at K = 5 and 10 for bm25, dense and libra. Records the build's wall time (the whole
command, server starts included), its relation list and health summary, and the eval figures.

Writes results/workspace.json.

    python benchmarks/bench_workspace.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, save

EXAMPLE = ROOT / "examples" / "workspace"
METHODS = ("bm25", "dense", "libra")
KS = (5, 10)


def libra(*args: str) -> None:
    """Run one CLI command in a child process with this checkout's sources first, failing loudly."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "libra.cli", *args], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"libra {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")


def main() -> None:
    if not (EXAMPLE / "template" / ".git").is_dir():
        subprocess.run([sys.executable, str(EXAMPLE / "make_template.py")], check=True, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="libra-bench-ws-") as tmp:
        lib, show = Path(tmp) / "workspace.lib.json.gz", Path(tmp) / "show.json"
        t0 = time.perf_counter()
        libra("build", "--config", str(EXAMPLE / "libra.toml"), "--out", str(lib))
        wall = time.perf_counter() - t0
        libra("show", str(lib), "--json", str(show))
        shown = json.loads(show.read_text())
        evals = {}
        for k in KS:
            out = Path(tmp) / f"eval-{k}.json"
            libra(
                "eval",
                "--library",
                str(lib),
                "--tasks",
                str(EXAMPLE / "tasks.jsonl"),
                *(a for m in METHODS for a in ("--method", m)),
                "--k",
                str(k),
                "--json",
                str(out),
            )
            evals[str(k)] = json.loads(out.read_text())
    stats = shown["stats"]
    relations = sorted(
        f"{e['provider']} -> {e['consumer']} [{e['kind']}]"
        + (f" {e['provider_field']} -> {e['consumer_input']}" if e.get("provider_field") else "")
        for e in shown["edges"]
    )
    path = save(
        "workspace",
        {
            "command": "libra build --config examples/workspace/libra.toml",
            "build_wall_seconds": round(wall, 1),
            "tools": stats["tools"],
            "relations_by_kind": stats["relations"],
            "relations": relations,
            "health": stats.get("health"),
            "network_isolation": stats.get("network_isolation"),
            "n_tasks": evals[str(KS[0])]["n_tasks"],
            "eval": {
                k: {r["method"]: {m: round(r[m], 1) for m in ("precision", "recall", "ndcg")} for r in e["results"]}
                for k, e in evals.items()
            },
        },
    )
    print(f"build {wall:.1f} s, {len(relations)} relations; wrote {path}")


if __name__ == "__main__":
    main()
