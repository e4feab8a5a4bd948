"""Development and test halves of a benchmark's tasks, fixed by rule so every choice can be made on one half.

Why: a default chosen by looking at all of a benchmark's tasks is fitted to them, and its figures on those same tasks
say more about the fitting than about the next catalog. Options are compared on the ``dev`` half only; the ``test``
half (and the full set) are only reported.

The rule, the same for every benchmark and stable as tasks come and go:

- tasks that are variants of one another (an adapter's :meth:`~libra.benchmarks.base.Benchmark.split_unit`, e.g.
  AppWorld's three phrasings of one scenario) stay in the same half, or the test half would hold near copies of
  development tasks;
- units are halved within each stratum (:meth:`~libra.benchmarks.base.Benchmark.split_stratum`, e.g. BFCL's
  combination of API classes, SciToolEval's level), so both halves hold the benchmark's groups in the same
  proportions;
- within a stratum, units are ordered by a hash of their id and dealt alternately, the first to ``dev``; the turn
  carries over from one stratum to the next, so strata of odd size still give halves of (nearly) equal size.

Nothing here reads a task's gold: which half a task falls in depends on its id and its group only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from libra.errors import ConfigError

SPLITS: tuple[str, ...] = ("all", "dev", "test")
#: Mixed into every hash, so the order is this rule's own and not that of any other use of the ids.
SALT = "libra-split-v1"


def _order(unit: str) -> str:
    return hashlib.sha256(f"{SALT}:{unit}".encode()).hexdigest()


def halves(
    tasks: Sequence[Any], unit: Callable[[Any], str], stratum: Callable[[Any], str]
) -> tuple[list[Any], list[Any]]:
    """(dev, test): the tasks of each half in their original order (see the module docstring)."""
    first: dict[str, str] = {}  # unit -> the stratum of its first task (a variant may lack its group's label)
    for t in tasks:
        first.setdefault(unit(t), stratum(t))
    units: dict[str, list[str]] = {}
    for u, s in first.items():
        units.setdefault(s, []).append(u)
    dev_units: set[str] = set()
    turn = 0
    for s in sorted(units):
        for u in sorted(units[s], key=_order):
            if turn % 2 == 0:
                dev_units.add(u)
            turn += 1
    dev = [t for t in tasks if unit(t) in dev_units]
    test = [t for t in tasks if unit(t) not in dev_units]
    return dev, test


def check_split(name: str) -> str:
    if name not in SPLITS:
        raise ConfigError(f"unknown split {name!r}: use {', '.join(SPLITS)}")
    return name


def split_tasks(bench: Any, tasks: Sequence[Any], split: str = "all") -> list[Any]:
    """The tasks of ``split`` among ``tasks`` of ``bench``: all of them, or its development or test half. A
    benchmark without its own units or strata (your own tasks) is halved task by task."""
    if check_split(split) == "all":
        return list(tasks)
    unit = getattr(bench, "split_unit", None) or (lambda t: t.id)
    stratum = getattr(bench, "split_stratum", None) or (lambda t: "")
    dev, test = halves(tasks, unit, stratum)
    return dev if split == "dev" else test
