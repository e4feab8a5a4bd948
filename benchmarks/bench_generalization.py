"""The generalization suite (catalogs nobody tuned the engine for) as figures: per catalog, designed relations
found and excluded ones hit.

Builds every catalog of ``tests/generalization`` with the default options and no hints (in-process, as the test
suite does) and writes benchmarks/results/generalization.json with, per catalog, ``designed``, ``found`` (of the
designed), ``excluded_hit``, ``relations_total``, ``build_s`` and the build's ``health`` summary, then prints a
table. ``python benchmarks/bench_generalization.py [CATALOG ...]`` builds only the named catalogs.
"""

from __future__ import annotations

import sys

from _common import ROOT, save

sys.path.insert(0, str(ROOT))

from tests import generalization as gen


def main(argv: list[str]) -> None:
    names = argv or list(gen.CATALOGS)
    unknown = sorted(set(names) - set(gen.CATALOGS))
    if unknown:
        raise SystemExit(f"unknown catalog(s) {unknown}: choose from {', '.join(gen.CATALOGS)}")
    catalogs: dict[str, dict] = {}
    for name in names:
        catalogs[name] = gen.build(name).summary()
    totals = {k: sum(c[k] for c in catalogs.values()) for k in ("designed", "found", "excluded_hit", "relations_total")}
    totals["build_s"] = round(sum(c["build_s"] for c in catalogs.values()), 2)
    path = save("generalization", {"catalogs": catalogs, "total": totals})

    header = f"{'catalog':<10} {'designed':>8} {'found':>6} {'excl.hit':>8} {'relations':>9} {'build s':>8}  health"
    print(header)
    print("-" * len(header))
    for name, c in {**catalogs, "total": {**totals, "health": None}}.items():
        health = c.get("health") or {}
        if name == "total":
            warn = ""
        elif not health:
            warn = "(no health summary)"
        else:
            warn = health.get("warning") or "ok"
        print(
            f"{name:<10} {c['designed']:>8} {c['found']:>6} {c['excluded_hit']:>8} {c['relations_total']:>9} "
            f"{c['build_s']:>8.2f}  {warn}"
        )
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
