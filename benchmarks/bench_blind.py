"""The blind suite as figures: per catalog written by an author who never saw libra, the dependencies its author
listed, how many the default build found, independent pairs it related anyway, tools that never succeeded.

Builds every catalog of ``tests/blind`` as a user would (``tests/blind_suite.py``: default options, isolated
workers, the authors' known facts as fixtures) and writes benchmarks/results/blind.json, then prints a table.
``python benchmarks/bench_blind.py [CATALOG ...]`` builds only the named catalogs.
"""

from __future__ import annotations

import sys

from _common import ROOT, save

sys.path.insert(0, str(ROOT))

from tests import blind_suite as blind  # noqa: E402


def main(argv: list[str]) -> None:
    names = argv or list(blind.CATALOGS)
    unknown = sorted(set(names) - set(blind.CATALOGS))
    if unknown:
        raise SystemExit(f"unknown catalog(s) {unknown}: choose from {', '.join(blind.CATALOGS)}")
    catalogs = {name: blind.build(name).summary() for name in names}
    keys = ("designed", "found", "excluded_hit", "relations_total")
    totals = {k: sum(c[k] for c in catalogs.values()) for k in keys}
    totals["never_succeeded"] = sum(len(c["never_succeeded"]) for c in catalogs.values())
    totals["build_s"] = round(sum(c["build_s"] for c in catalogs.values()), 2)
    path = save("blind", {"catalogs": catalogs, "total": totals})
    header = (
        f"{'catalog':<14} {'designed':>8} {'found':>6} {'excl.hit':>8} {'relations':>9} {'never':>6} {'build s':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, c in {**catalogs, "total": totals}.items():
        never = c["never_succeeded"] if isinstance(c["never_succeeded"], int) else len(c["never_succeeded"])
        print(
            f"{name:<14} {c['designed']:>8} {c['found']:>6} {c['excluded_hit']:>8} {c['relations_total']:>9} "
            f"{never:>6} {c['build_s']:>8.2f}"
        )
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
