"""Freeze SciToolEval's executable subset by running every task's gold tool chain in the offline runtime.

A task is kept when every tool of its path is executable and the chain, started from the task's input (the
record's ``Parameter``, the level-1 reference run's input, or the input named in the question), runs without a
rejection or an error. Writes ``src/libra/benchmarks/data/scitooleval/frozen_subset.json`` deterministically
(sorted keys, task ids in file order); rerun it after changing the tools or the RDKit pin.

    python benchmarks/freeze_scitooleval.py [--out PATH] [--workers 2] [--in-process]
"""

from __future__ import annotations

import argparse
import collections
import sys
from importlib.metadata import version
from pathlib import Path

from libra._util.io import atomic_write_json
from libra.benchmarks.scitooleval.adapter import (
    FROZEN_VERSION,
    load_all_tasks,
    load_catalog,
    make_scitooleval_runtime,
    run_chain,
)

DEFAULT_OUT = (
    Path(__file__).resolve().parents[1] / "src" / "libra" / "benchmarks" / "data" / "scitooleval" / "frozen_subset.json"
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--in-process", action="store_true", help="run tools in this process (faster, no crash isolation)")
    args = ap.parse_args(argv)

    catalog = load_catalog()
    tasks = load_all_tasks()
    runtime = make_scitooleval_runtime(isolated=not args.in_process, n_workers=args.workers)
    kept: list[str] = []
    excluded: dict[str, str] = {}
    inputs: dict[str, str] = {}
    try:
        for task in tasks:
            res = run_chain(runtime, task, catalog)
            if res.ok:
                kept.append(task.id)
                inputs[task.id] = res.calls[0]["args"][catalog[res.calls[0]["tool"]].param_names[0]]
            else:
                excluded[task.id] = res.reason
    finally:
        runtime.close()

    payload = {
        "version": FROZEN_VERSION,
        "task_ids": kept,
        "excluded": excluded,
        "start_inputs": inputs,
        "environment": {"rdkit": version("rdkit"), "selfies": version("selfies")},
        "note": "written by benchmarks/freeze_scitooleval.py; see docs/scitooleval.md",
    }
    atomic_write_json(args.out, payload)
    kinds = collections.Counter(r.split(":", 1)[0] for r in excluded.values())
    by_split = collections.Counter(t.split("-", 1)[0] for t in kept)
    print(
        f"kept {len(kept)} of {len(tasks)} tasks ({dict(sorted(by_split.items()))}); excluded "
        f"{len(excluded)}: {dict(kinds.most_common())}"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
