"""The blind suite: catalogs written by authors who had never seen libra, built the way a new user builds them.

Why it exists: when the people who write the engine also write the catalogs it is measured on, both share one idea
of what a tool looks like, and the engine passes. Each folder of ``tests/blind`` was written by an author who was
given only ``tests/blind/BRIEF.md`` (an ordinary module, class or MCP server for a small app, the way a developer
publishes one) and who listed, in ``DEPENDENCIES.json``, the dependencies a user of the tools must respect and some
that do not exist, before libra ever ran on it. The folders are committed exactly as written.

How a catalog is built: through the public API, with the default options and no hints, as ``libra build --tools
FOLDER/ENTRY`` (Python) or a project file naming ``python server.py`` (MCP) would build it; the author's
``known_facts`` (a demo account, seeded ids: what the app's README tells its users) are the build's fixtures.

How the relations are matched against the author's list:

- a ``data`` dependency (the consumer takes a value the provider returns) is found when the library has a value
  relation (provenance or compatibility) from the provider to the consumer's named input (its first segment, so
  ``request.product_id`` is input ``request``);
- a ``state`` dependency (the provider must have changed the state first) is found by any relation between the two
  tools, since either kind makes retrieval bring the provider with the consumer;
- a ``not_dependencies`` pair is hit by any relation between the two tools.
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent / "blind"
CATALOGS: tuple[str, ...] = tuple(sorted(d.name for d in ROOT.iterdir() if (d / "DEPENDENCIES.json").is_file()))


@dataclass(frozen=True)
class Dependency:
    """One line of an author's list, with tool names as the library names them."""

    provider: str
    consumer: str
    kind: str  # "data", "state", or "none" for a pair that must not be related
    consumer_input: str | None = None
    why: str = ""


@cache
def declared(name: str) -> dict[str, Any]:
    """The author's ``DEPENDENCIES.json`` of catalog ``name``."""
    return json.loads((ROOT / name / "DEPENDENCIES.json").read_text(encoding="utf-8"))


def tool_name(name: str, operation: str) -> str:
    """The library's name for an operation: an MCP server's tools are ``SERVER.tool``, Python tools bare."""
    return f"{name}.{operation}" if declared(name)["style"] == "mcp" else operation


def _input(path: str | None) -> str | None:
    return re.split(r"[.\[]", path, maxsplit=1)[0] or None if path else None


def dependencies(name: str) -> list[Dependency]:
    d = declared(name)
    return [
        Dependency(
            tool_name(name, x["provider"]),
            tool_name(name, x["consumer"]),
            x["kind"],
            _input(x.get("consumer_input")),
            x.get("why", ""),
        )
        for x in d["dependencies"]
    ]


def exclusions(name: str) -> list[Dependency]:
    return [
        Dependency(tool_name(name, x["provider"]), tool_name(name, x["consumer"]), "none", None, x.get("why", ""))
        for x in declared(name)["not_dependencies"]
    ]


def no_valid_call(name: str) -> set[str]:
    """Operations the author says cannot succeed from the fresh state."""
    return {tool_name(name, x["operation"]) for x in declared(name).get("no_valid_call", [])}


def source(name: str) -> Any:
    """The catalog as a user's build input."""
    d = declared(name)
    folder = ROOT / name
    facts = dict(d.get("known_facts") or {})
    if d["style"] == "mcp":
        from libra.sources.mcp import McpSource

        server = {"name": name, "command": sys.executable, "args": [str(folder / d["entry"])]}
        return McpSource([server], name=name, fixtures=facts)
    from libra.sources.python import PythonSource, parse_spec

    return PythonSource([parse_spec(str(folder / d["entry"]))], name=name, fixtures=facts)


def satisfies(relation: tuple[str, str, str, str | None, str | None], dep: Dependency) -> bool:
    provider, consumer, kind, _field, consumer_input = relation
    if (provider, consumer) != (dep.provider, dep.consumer):
        return False
    if dep.kind in ("state", "none"):
        return True
    return kind != "state" and (dep.consumer_input is None or _input(consumer_input) == dep.consumer_input)


@dataclass
class Outcome:
    """One catalog's build, matched against its author's list."""

    name: str
    library: Any
    build_s: float
    found: list[Dependency] = field(default_factory=list)
    missing: list[Dependency] = field(default_factory=list)
    hits: list[tuple[Dependency, tuple]] = field(default_factory=list)
    never_succeeded: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        stats = self.library.stats
        return {
            "designed": len(self.found) + len(self.missing),
            "found": len(self.found),
            "excluded_hit": len(self.hits),
            "relations_total": len(self.library.relations),
            "build_s": round(self.build_s, 2),
            "never_succeeded": self.never_succeeded,
            "health_warning": (stats.get("health") or {}).get("warning"),
            "missing": [[d.provider, d.consumer, d.kind, d.consumer_input] for d in self.missing],
            "excluded_relations_found": [list(r) for _, r in self.hits],
        }


#: How the build's own report explains a provider that provides nothing (``stats.health.no_relation``).
CAUSE_WORDS = {
    "never_succeeded": "never succeeds in the build",
    "succeeded_outside_exploration": "succeeds only in contract checking, never in a state the exploration reaches",
    "no_exports": "returns nothing the build can offer",
    "reply_empty": "replies empty in every state the build reaches",
    "not_offered": "its values are never offered to this input",
    "offers_refused": "its values are offered but every offer is refused",
    "control_succeeds": "the control succeeds as well (the consumer takes any value of that kind)",
    "echoes_only": "only echoes values it was given, so it is not their origin",
    "other_groups_only": "its values are only offered across groups",
}


def why_missed(outcome: Outcome, dep: Dependency) -> str:
    """Why a designed dependency is missing from the library, read from the build's own report."""
    lib = outcome.library
    never = set(outcome.never_succeeded)
    if dep.consumer in never:
        return f"{dep.consumer} never succeeds in the build, so nothing can be shown to enable it"
    if dep.provider in never:
        return f"{dep.provider} never succeeds in the build"
    if any((r.provider, r.consumer) == (dep.provider, dep.consumer) for r in lib.relations):
        kinds = sorted(
            {
                f"{r.kind} into {r.consumer_input}"
                for r in lib.relations
                if (r.provider, r.consumer) == (dep.provider, dep.consumer)
            }
        )
        return f"related only as {', '.join(kinds)}, not as {dep.kind} into {dep.consumer_input}"
    causes = (lib.stats.get("health") or {}).get("no_relation") or {}
    for cause, tools in (causes.get("causes") or {}).items():
        if dep.provider in tools:
            return f"{dep.provider} provides no relation at all: {CAUSE_WORDS.get(cause, cause.replace('_', ' '))}"
    if dep.kind == "state":
        return f"no test showed {dep.consumer} failing before {dep.provider} changed the state and succeeding after"
    return f"{dep.provider}'s {dep.consumer_input} values never passed a counterfactual test in {dep.consumer}"


def build(name: str, workers: int | None = None) -> Outcome:
    """Build catalog ``name`` with the default options (``workers`` as ``--workers``) and match its relations."""
    from libra.induction.build import BuildOptions, build_library

    t0 = time.perf_counter()
    lib = build_library(source(name), None, BuildOptions(workers=workers, progress=False))
    build_s = time.perf_counter() - t0
    relations = sorted({r.key for r in lib.relations}, key=repr)
    deps = dependencies(name)
    found = [d for d in deps if any(satisfies(r, d) for r in relations)]
    missing = [d for d in deps if d not in found]
    hits = [(d, r) for d in exclusions(name) for r in relations if satisfies(r, d)]
    health = lib.stats.get("health") or {}
    never = sorted(health.get("tools_never_succeeded") or [])
    return Outcome(name, lib, build_s, found, missing, hits, never)
