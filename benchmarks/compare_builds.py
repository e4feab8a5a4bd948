"""Whether two versions of libra build the same libraries and print the same evaluation tables.

A refactoring that claims "no change in behaviour" is checked with this script, not by eye: run ``snapshot``
with the old code and with the new one (each from its own checkout, through the command line and the suite's
own build function), then ``diff`` the two folders. A snapshot keeps, per build, the relations as
(provider, consumer, kind, provider_field, consumer_input), the exploration's counters (``stats.engine``) and the
candidate count; per benchmark, the ``libra eval`` table (bm25, dense, libra) on the library that version built.

    python benchmarks/compare_builds.py snapshot OUT [--only bfcl,scitooleval,suite,appworld]
    python benchmarks/compare_builds.py diff OLD NEW [--only ...]

``appworld`` is built with ``--max-calls 40000`` (a capped build explores the same way, in a tenth of the
time). ``diff`` prints every difference and exits 1 if there is any; wall times are ignored.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from _common import ROOT

sys.path.insert(0, str(ROOT))

#: What each benchmark's snapshot builds with, beyond the defaults.
BENCHMARKS: dict[str, list[str]] = {"bfcl": [], "scitooleval": [], "appworld": ["--max-calls", "40000"]}
ALL = (*BENCHMARKS, "suite")
METHODS = ("bm25", "dense", "libra")


def _libra(*args: str) -> None:
    cmd = [str(Path(sys.executable).with_name("libra")), *args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _load(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    """What two builds must agree on: relations, exploration counters, candidate count."""
    stats = doc.get("stats") or {}
    return {
        "relations": sorted(edge_key(e) for e in edges_of(doc)),
        "engine": stats.get("engine"),
        "candidate_compositions": stats.get("candidate_compositions"),
        "value_relations": stats.get("value_relations"),
        "state_relations": stats.get("state_relations"),
    }


def edge_key(edge: dict[str, Any]) -> list[Any]:
    return [edge["provider"], edge["consumer"], edge["kind"], edge.get("provider_field"), edge.get("consumer_input")]


def edges_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The relations of a library file, through the library's own loader (its storage format is columnar)."""
    from libra.library.artifact import Library

    return Library.from_dict(doc).edges_json()


def snapshot_benchmark(name: str, out: Path) -> None:
    lib = out / f"{name}.lib.json.gz"
    _libra("build", name, "--out", str(lib), "--quiet", "--no-resume", *BENCHMARKS[name])
    (out / f"{name}.json").write_text(json.dumps(summarize(_load(lib)), indent=1, sort_keys=True))
    table = out / f"eval-{name}.json"
    _libra("eval", name, *[a for m in METHODS for a in ("--method", m)], "--library", str(lib), "--json", str(table))


def snapshot_suite(out: Path) -> None:
    from tests import generalization as gen

    result = {}
    for name in gen.CATALOGS:
        outcome = gen.build(name)
        result[name] = summarize(outcome.library.to_dict())
        print(f"suite {name}: {len(result[name]['relations'])} relations", flush=True)
    (out / "suite.json").write_text(json.dumps(result, indent=1, sort_keys=True))


def _diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            _diff(a.get(key), b.get(key), f"{where}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and a and isinstance(a[0], list):
        sa, sb = {json.dumps(x) for x in a}, {json.dumps(x) for x in b}
        out.extend(f"{where}: only old {x}" for x in sorted(sa - sb))
        out.extend(f"{where}: only new {x}" for x in sorted(sb - sa))
    elif a != b:
        out.append(f"{where}: {a!r} != {b!r}")


def _eval_rows(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    return {r["method"]: {k: r[k] for k in ("precision", "recall", "ndcg")} for r in doc["results"]}


def diff(old: Path, new: Path, only: set[str] | None = None) -> list[str]:
    problems: list[str] = []
    for path in sorted(old.glob("*.json")):
        if only is not None and path.stem.removeprefix("eval-") not in only:
            continue
        other = new / path.name
        if not other.exists():
            problems.append(f"{path.name}: missing in {new}")
            continue
        if path.name.startswith("eval-"):
            _diff(_eval_rows(path), _eval_rows(other), path.stem, problems)
        else:
            _diff(json.loads(path.read_text()), json.loads(other.read_text()), path.stem, problems)
    return problems


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("out", type=Path)
    snap.add_argument("--only", default=",".join(ALL))
    d = sub.add_parser("diff")
    d.add_argument("old", type=Path)
    d.add_argument("new", type=Path)
    d.add_argument("--only", default=",".join(ALL))
    args = ap.parse_args(argv)
    if args.cmd == "diff":
        problems = diff(args.old, args.new, set(args.only.split(",")))
        print("\n".join(problems) if problems else "identical")
        return 1 if problems else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only.split(","):
        if name == "suite":
            snapshot_suite(args.out)
        elif name in BENCHMARKS:
            snapshot_benchmark(name, args.out)
        else:
            raise SystemExit(f"unknown build {name!r}: choose from {', '.join(ALL)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
