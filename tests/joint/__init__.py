"""Three unrelated services, each a module of its own with its own fixtures, built one by one and together.

Why: a project file often names several servers or modules that have nothing to do with each other, and a build
of them together must find what the builds of each find alone. Together, every value of every service is a
candidate for every other service's inputs of its type (a bakery's order numbers for a course's id, a garage's
plates for a product code): those offers seldom succeed, and the exploration must not spend on them the calls,
the gates and the fills a service's own values need. :func:`build` builds modules with
:class:`libra.sources.python.PythonSource` (one spec each, as ``--tools`` does), :func:`compare` builds each alone
and all at once and matches the relations (``tests/test_joint_build.py``, ``benchmarks/bench_joint.py``).

Each module is written the way its author would write it alone: module functions over module globals or a class,
type hints, docstrings, validation that raises. Each declares ``FIXTURES`` (what its README tells a user) and
``DESIGNED`` relations in the shape of :mod:`tests.generalization` (tool names as a build of the module names them).
"""

from __future__ import annotations

import functools
import importlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.generalization import RelationKey, missing_relations

#: The services, by module name under this package, with the ``--tools`` spec a user would give for each.
SPECS = {"bakery": f"{__name__}.bakery", "garage": f"{__name__}.garage:Garage", "courses": f"{__name__}.courses"}
MODULES = tuple(SPECS)


@dataclass
class Built:
    """One build of one or more of the modules: its relations, wall time and calls."""

    modules: tuple[str, ...]
    relations: list[RelationKey]
    build_s: float
    stats: dict[str, Any] = field(default_factory=dict)

    def of(self, module: str) -> list[RelationKey]:
        """The relations between tools of ``module`` (or a fixture and one of its tools)."""
        own = tool_names(module)
        return [r for r in self.relations if r[1] in own and (r[0] in own or r[0] not in self.tools)]

    @property
    def tools(self) -> set[str]:
        return set().union(*(tool_names(m) for m in self.modules))


@functools.cache
def tool_names(module: str) -> frozenset[str]:
    """The published names of a module's tools (their own names: no two of the modules share one)."""
    from libra.sources.python import PythonSource, parse_spec

    return frozenset(PythonSource([parse_spec(SPECS[module])]).catalog().names)


def build(modules: Sequence[str]) -> Built:
    """Build ``modules`` together with the default options and no hints, in-process, from freshly imported modules
    (their globals the ones their source defines, whatever an earlier build did to them)."""
    from libra.induction.build import BuildOptions, build_library
    from libra.sources.python import PythonSource, parse_spec

    for m in modules:
        importlib.reload(importlib.import_module(f"{__name__}.{m}"))
    source = PythonSource([parse_spec(SPECS[m]) for m in modules])
    t0 = time.perf_counter()
    lib = build_library(source, None, BuildOptions(workers=0, progress=False))
    build_s = time.perf_counter() - t0
    found = sorted({r.key for r in lib.relations}, key=repr)
    return Built(tuple(modules), found, build_s, dict(getattr(lib, "stats", {}) or {}))


def designed(module: str) -> list[tuple]:
    return list(importlib.import_module(f"{__name__}.{module}").DESIGNED)


def compare(modules: Sequence[str] = MODULES) -> dict[str, Any]:
    """Each module built alone and all built together: per module, the relations each build finds among its own
    tools, how many of the separate build's the joint build finds, and the designed relations each misses."""
    alone = {m: build([m]) for m in modules}
    joint = build(modules)
    per: dict[str, Any] = {}
    for m in modules:
        sep, together = set(alone[m].of(m)), set(joint.of(m))
        per[m] = {
            "separate": len(sep),
            "joint": len(together),
            "kept": len(sep & together),
            "lost": sorted(map(list, sep - together)),
            "designed": len(designed(m)),
            "designed_missing_separate": [list(s) for s in missing_relations(sep, designed(m))],
            "designed_missing_joint": [list(s) for s in missing_relations(together, designed(m))],
            "separate_build_s": round(alone[m].build_s, 2),
            "separate_calls": alone[m].stats.get("engine", {}).get("executed_calls"),
        }
    separate = sum(p["separate"] for p in per.values())
    kept = sum(p["kept"] for p in per.values())
    return {
        "modules": per,
        "total": {
            "separate": separate,
            "kept": kept,
            "kept_share": round(kept / separate, 3) if separate else 1.0,
            "joint_relations": len(joint.relations),
            "across_modules": sorted(
                map(list, set(joint.relations) - set().union(*(set(joint.of(m)) for m in modules)))
            ),
            "separate_build_s": round(sum(b.build_s for b in alone.values()), 2),
            "joint_build_s": round(joint.build_s, 2),
            "joint_calls": joint.stats.get("engine", {}).get("executed_calls"),
        },
    }
