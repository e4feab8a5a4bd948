"""The blind suite as figures: per catalog written by an author who never saw libra, the dependencies its author
listed, how many the default build found, independent pairs it related anyway, tools that never succeeded.

Builds every catalog of ``tests/blind`` as a user would (``tests/blind_suite.py``: default options, isolated
workers, the authors' known facts as fixtures) and writes benchmarks/results/blind.json, then prints a table.
``python benchmarks/bench_blind.py [CATALOG ...]`` builds only the named catalogs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _common import ROOT, save

sys.path.insert(0, str(ROOT))

from tests import blind_suite as blind  # noqa: E402


def known_file(outcomes: dict[str, blind.Outcome]) -> str:
    """``tests/blind_known.py``: what the blind suite's tests expect libra to miss, each with the reason the build's
    own report gives (the tests mark these as strict xfails, so a fix that makes one pass must update the file)."""
    misses = {(n, d.provider, d.consumer): blind.why_missed(o, d) for n, o in outcomes.items() for d in o.missing}
    hits = {
        (n, d.provider, d.consumer): f"libra relates them: {r[2]} {r[3]} -> {r[4]}"
        for n, o in outcomes.items()
        for d, r in o.hits
    }
    silent = {
        (n, t): "never succeeds in a build with the default options"
        for n, o in outcomes.items()
        for t in o.never_succeeded
        if t not in blind.no_valid_call(n)
    }
    lines = [
        '"""What the blind suite expects libra to miss today, with the reason each build\'s own report gives.',
        "",
        "Written by ``python benchmarks/bench_blind.py --known tests/blind_known.py``; the tests mark each entry as a",
        "strict xfail, so a change that finds one of these makes its test fail until this file is written again.",
        '"""',
        "",
        "KNOWN_MISSES: dict[tuple[str, str, str], str] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(misses.items())),
        "}",
        "KNOWN_HITS: dict[tuple[str, str, str], str] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(hits.items())),
        "}",
        "KNOWN_SILENT: dict[tuple[str, str], str] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(silent.items())),
        "}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    known = None
    if "--known" in argv:
        i = argv.index("--known")
        known = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    names = argv or list(blind.CATALOGS)
    unknown = sorted(set(names) - set(blind.CATALOGS))
    if unknown:
        raise SystemExit(f"unknown catalog(s) {unknown}: choose from {', '.join(blind.CATALOGS)}")
    outcomes = {name: blind.build(name) for name in names}
    catalogs = {name: o.summary() for name, o in outcomes.items()}
    if known:
        Path(known).write_text(known_file(outcomes), encoding="utf-8")
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
