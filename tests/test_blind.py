"""The blind suite (``tests/blind``, see :mod:`tests.blind_suite`): catalogs libra's authors never wrote.

First the catalogs are checked as their authors checked them (each folder's own ``check_*.py`` script, run as
written), so a failure below is libra's, not the catalog's. Then every catalog is built with the default options
and each dependency its author listed is a test of its own: found, or a strict xfail naming why libra misses it (a
non-strict one where only some builds miss it);
each pair the author listed as not a dependency must not be related; and no tool may end the build without a
single successful call unless its author said no valid call exists.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import blind_suite as blind
from tests.blind_known import KNOWN_HITS, KNOWN_MISSES, KNOWN_SILENT, KNOWN_UNSTABLE

_BUILDS: dict[str, blind.Outcome] = {}


def built(name: str) -> blind.Outcome:
    """Each catalog is built once per test session."""
    if name not in _BUILDS:
        _BUILDS[name] = blind.build(name)
    return _BUILDS[name]


def _marks(key: tuple, known: dict) -> list:
    """A strict xfail for what every build misses; a non-strict one for what only some builds miss (the exploration
    does not yet always make the same calls: see benchmarks/bench_blind.py's known_file)."""
    if key in known:
        return [pytest.mark.xfail(strict=True, reason=known[key])]
    if key in KNOWN_UNSTABLE:
        return [pytest.mark.xfail(strict=False, reason=KNOWN_UNSTABLE[key])]
    return []


def _cases(kind: str) -> list:
    out = []
    for name in blind.CATALOGS:
        deps = blind.dependencies(name) if kind == "designed" else blind.exclusions(name)
        known = KNOWN_MISSES if kind == "designed" else KNOWN_HITS
        for d in deps:
            key = (name, d.provider, d.consumer)
            out.append(pytest.param(name, d, id=f"{name}:{d.provider}->{d.consumer}", marks=_marks(key, known)))
    return out


@pytest.mark.parametrize("name", blind.CATALOGS)
def test_the_authors_own_check_passes(name):
    folder = blind.ROOT / name
    script = next(folder.glob("check_*.py"))
    out = subprocess.run([sys.executable, script.name], cwd=folder, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


@pytest.mark.parametrize(("name", "dep"), _cases("designed"))
def test_designed_dependency_is_found(name, dep):
    outcome = built(name)
    assert dep in outcome.found, f"{dep.provider} -> {dep.consumer} ({dep.kind}, {dep.consumer_input}): {dep.why}"


@pytest.mark.parametrize(("name", "dep"), _cases("excluded"))
def test_independent_pair_is_not_related(name, dep):
    hits = [r for d, r in built(name).hits if d == dep]
    assert hits == [], f"{dep.provider} -> {dep.consumer} must not be related ({dep.why}): {hits}"


def _silent_cases() -> list:
    out = []
    for name in blind.CATALOGS:
        d = blind.declared(name)
        named = {blind.tool_name(name, x[k]) for x in d["dependencies"] for k in ("provider", "consumer")}
        for tool in sorted(named - blind.no_valid_call(name)):
            out.append(pytest.param(name, tool, id=f"{name}:{tool}", marks=_marks((name, tool), KNOWN_SILENT)))
    return out


@pytest.mark.parametrize(("name", "tool"), _silent_cases())
def test_tool_succeeds_at_least_once(name, tool):
    """Every tool a dependency names succeeds at least once (those its author says cannot are not asked)."""
    assert tool not in built(name).never_succeeded
