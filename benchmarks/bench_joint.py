"""Several unrelated sources in one build: what a joint build finds of what the separate builds find.

Builds each module of ``tests/joint`` alone, then all of them in one build (in-process, default options, no
hints), and writes benchmarks/results/joint.json with, per module, the relations among its own tools each build
finds, how many of the separate build's relations the joint build keeps, the designed relations each misses, and
wall times and calls; then prints a table. The target: the joint build keeps at least 90% of them.
``python benchmarks/bench_joint.py [MODULE ...]`` builds only the named modules (together and alone).
"""

from __future__ import annotations

import sys

from _common import ROOT, save

sys.path.insert(0, str(ROOT))

from tests import joint


def main(argv: list[str]) -> None:
    names = argv or list(joint.MODULES)
    unknown = sorted(set(names) - set(joint.MODULES))
    if unknown:
        raise SystemExit(f"unknown module(s) {unknown}: choose from {', '.join(joint.MODULES)}")
    result = joint.compare(names)
    path = save("joint", result)
    header = f"{'module':<10} {'designed':>8} {'separate':>8} {'joint':>6} {'kept':>5} {'build s':>8}"
    print(header)
    print("-" * len(header))
    for name, m in result["modules"].items():
        print(
            f"{name:<10} {m['designed']:>8} {m['separate']:>8} {m['joint']:>6} {m['kept']:>5} "
            f"{m['separate_build_s']:>8.2f}"
        )
    t = result["total"]
    print(
        f"{'total':<10} {'':>8} {t['separate']:>8} {'':>6} {t['kept']:>5} {t['separate_build_s']:>8.2f}"
        f"  joint build {t['joint_build_s']:.2f} s, kept {100 * t['kept_share']:.1f}%"
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
