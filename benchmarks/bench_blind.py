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


def _expected(outcome: blind.Outcome, name: str) -> dict[str, dict[tuple, str]]:
    """What one build misses, relates and never calls, each with the reason its report gives."""
    return {
        "misses": {(name, d.provider, d.consumer): blind.why_missed(outcome, d) for d in outcome.missing},
        "hits": {
            (name, d.provider, d.consumer): f"libra relates them: {r[2]} {r[3]} -> {r[4]}" for d, r in outcome.hits
        },
        "silent": {
            (name, t): "never succeeds in a build with the default options"
            for t in outcome.never_succeeded
            if t not in blind.no_valid_call(name)
        },
    }


def known_file(runs: list[dict[str, blind.Outcome]]) -> str:
    """``tests/blind_known.py``: what the blind suite's tests expect libra to miss, each with the reason the build's
    own report gives (the tests mark these as strict xfails, so a fix that makes one pass must update the file).

    Over several builds of each catalog (``runs``), an entry every build has is expected; one only some builds have
    is listed as unstable instead (a non-strict xfail, with how many builds had it). Builds of a catalog make the
    same calls (states are keyed by their content alone), so there should be none; the runs are how a change that
    breaks that shows, without the suite failing on or hiding what it moved."""
    per_run = [
        {kind: {k: v for n, o in outcomes.items() for k, v in _expected(o, n)[kind].items()} for kind in KINDS}
        for outcomes in runs
    ]
    stable: dict[str, dict[tuple, str]] = {}
    unstable: dict[tuple, str] = {}
    for kind in KINDS:
        every = set.intersection(*(set(r[kind]) for r in per_run))
        some = set.union(*(set(r[kind]) for r in per_run))
        stable[kind] = {k: next(r[kind][k] for r in per_run if k in r[kind]) for k in every}
        for k in some - every:
            n = sum(1 for r in per_run if k in r[kind])
            why = next(r[kind][k] for r in per_run if k in r[kind])
            unstable[k] = f"{KINDS[kind]} in {n} of {len(per_run)} builds ({why})"
    lines = [
        '"""What the blind suite expects libra to miss today, with the reason each build\'s own report gives.',
        "",
        "Written by ``python benchmarks/bench_blind.py --known tests/blind_known.py [--runs N]``; the tests mark each",
        "entry as a strict xfail, so a change that finds one of these makes its test fail until this file is written",
        "again. ``KNOWN_UNSTABLE`` holds what only some of the N builds had: non-strict xfails (see known_file).",
        '"""',
        "",
    ]
    for kind, const in (("misses", "KNOWN_MISSES"), ("hits", "KNOWN_HITS"), ("silent", "KNOWN_SILENT")):
        size = "tuple[str, str, str]" if kind != "silent" else "tuple[str, str]"
        lines += [
            f"{const}: dict[{size}, str] = {{",
            *(f"    {k!r}: {v!r}," for k, v in sorted(stable[kind].items())),
            "}",
        ]
    lines += [
        "KNOWN_UNSTABLE: dict[tuple[str, ...], str] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(unstable.items())),
        "}",
    ]
    return "\n".join(lines) + "\n"


#: What each kind of expected entry is, as an unstable entry's reason says it.
KINDS = {"misses": "missed", "hits": "related", "silent": "never succeeded"}


def main(argv: list[str]) -> None:
    known, runs = None, 1
    if "--known" in argv:
        i = argv.index("--known")
        known = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    names = argv or list(blind.CATALOGS)
    unknown = sorted(set(names) - set(blind.CATALOGS))
    if unknown:
        raise SystemExit(f"unknown catalog(s) {unknown}: choose from {', '.join(blind.CATALOGS)}")
    all_runs = [{name: blind.build(name) for name in names} for _ in range(max(1, runs))]
    outcomes = all_runs[0]
    catalogs = {name: o.summary() for name, o in outcomes.items()}
    if known:
        Path(known).write_text(known_file(all_runs), encoding="utf-8")
    keys = ("designed", "found", "excluded_hit", "relations_total")
    totals = {k: sum(c[k] for c in catalogs.values()) for k in keys}
    totals["never_succeeded"] = sum(len(c["never_succeeded"]) for c in catalogs.values())
    totals["build_s"] = round(sum(c["build_s"] for c in catalogs.values()), 2)
    if len(all_runs) > 1:  # (the figures above are the first build's; the others give the spread)
        found = [sum(len(o.found) for o in r.values()) for r in all_runs]
        totals["runs"], totals["found_per_run"] = len(all_runs), found
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
