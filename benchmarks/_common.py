"""Shared bits of the benchmark scripts: machine facts and result files."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "src"))


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d"),
    }


def speed_probe(repeats: int = 5) -> float:
    """Seconds a fixed single-threaded workload takes here (the best of ``repeats``): pure Python, pickling and an
    in-memory SQLite table, the three things a build's processes mostly do.

    Why: this machine is shared, and its speed has been seen to change between runs of the same code by more than
    the changes being measured. A build's wall time recorded with the probe taken just before it can be compared
    across days as wall / probe; a change in the code shows in that ratio, a slower machine does not.
    """
    import pickle
    import sqlite3

    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        rows = [{"id": i, "name": f"item-{i}", "tags": [i % 7, i % 11]} for i in range(60_000)]
        blob = pickle.dumps(rows)
        pickle.loads(blob)
        db = sqlite3.connect(":memory:")
        db.execute("create table t (id integer primary key, name text)")
        db.executemany("insert into t values (?, ?)", ((r["id"], r["name"]) for r in rows))
        db.execute("select count(*), sum(length(name)) from t where name like '%7%'").fetchone()
        db.close()
        sum(hash(r["name"]) & 0xFF for r in rows)
        best = min(best, time.perf_counter() - t0)
    return round(best, 4)


def git_rev() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return ""


def save(name: str, payload: dict[str, Any]) -> Path:
    from libra._util.io import atomic_write_json

    path = RESULTS / f"{name}.json"
    atomic_write_json(path, {"machine": machine(), "commit": git_rev(), **payload})
    return path
