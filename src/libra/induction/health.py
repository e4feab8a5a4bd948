"""A build's health summary: a build that ends with most tools never succeeding, or with no relation at all,
must say so instead of reporting success silently, and must say where to start.

The summary is kept in the library's ``stats["health"]`` and printed by ``libra build`` and ``libra show``;
:func:`warn` prints its warning at the end of the build.

Why *blocking* tools: a build where one tool's refusal (a sign-in without a working password) leaves ten others
without the value they need (its session token) counts ten tools' refusals for every one of the cause's, so the
most common rejections are symptoms. The tools to fix first are those whose never succeeding starves the most
others of a value; :func:`blocking_tools` names them with their failing call and what to give them.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from libra.induction.explore.engine import Engine

#: Blocking tools the summary names at most (the most starving first).
BLOCKING_LIMIT = 5


def top_messages(messages: Iterable[str | None], n: int = 5, width: int = 120) -> list[list[Any]]:
    """The ``n`` most common messages as ``[message, count]``, each cut to ``width`` characters (ties in first-seen
    order), so a build's most frequent refusals can be read at a glance."""
    counts = Counter(str(m).strip()[:width] for m in messages if m is not None and str(m).strip())
    return [[m, c] for m, c in counts.most_common(n)]


def health_summary(
    tools: Sequence[str],
    succeeded: Iterable[str],
    templates: int,
    templates_matched: int,
    inconclusive_tests: int,
    rejections: Iterable[str | None],
    relations: int,
) -> dict[str, Any]:
    """A build's health in a few numbers, with a plain warning when the library is unlikely to be worth anything.

    A build that ends with most tools never succeeding, or with no relation at all, ranks exactly like its base
    retriever; without a word about it a user cannot tell a catalog that has no compositions from one the
    contracts never managed to call. The warning fires when more than half the executable tools never succeeded,
    or when no relation was found. ``rejections`` from :func:`rejection_messages` also knows the build's failed
    calls by tool, so the summary names the blocking tools (``blocking``, see :func:`blocking_tools`).
    """
    ok = set(succeeded)
    never = sorted(t for t in tools if t not in ok)
    blocking = rejections.blocking(never) if isinstance(rejections, Rejections) else []
    problems = []
    if len(never) * 2 > len(tools):
        problems.append(f"{len(never)} of {len(tools)} tools never succeeded")
    if relations == 0:
        problems.append("the library has 0 relations")
    warning = None
    if problems:
        start = (
            f"start with the blocking tool(s) {', '.join(b['tool'] for b in blocking)} (libra show lists their "
            "failing calls), then"
            if blocking
            else "look at"
        )
        warning = "; ".join(problems) + (
            f": retrieval with it ranks like the base retriever. {templates_matched} of {templates} contract "
            f"templates matched their expected outcome; {start} the most common rejections "
            "(stats.health.top_rejections) and give the tools fixtures, examples or response schemas their "
            "validation accepts."
        )
    return {
        "tools": len(tools),
        "tools_never_succeeded": never,
        "templates": int(templates),
        "templates_matched": int(templates_matched),
        "inconclusive_tests": int(inconclusive_tests),
        "top_rejections": top_messages(rejections),
        "blocking": blocking,
        "warning": warning,
    }


@dataclass
class Rejections:
    """The error messages of a build's failed calls (iterating gives them, as :func:`top_messages` reads them),
    and what :func:`blocking_tools` needs to name the tools whose failures starve others: one failing call per
    tool that contract checking ran, and which tools' values could fill which inputs."""

    engine: Any
    summary: Any
    failing: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, tc in self.summary.per_tool.items():
            for t in tc.templates:
                if t.status not in (None, "success") and name not in self.failing:
                    self.failing[name] = {"arguments": t.arguments, "error": t.error or t.status}

    def __iter__(self) -> Iterator[str | None]:
        for rec, _state in self.engine.memo.values():
            if rec.get("status") != "success":
                yield rec.get("error") or (
                    json.dumps(rec.get("output"), default=repr) if rec.get("output") is not None else rec.get("status")
                )
        for tc in self.summary.per_tool.values():
            for t in tc.templates:
                if t.status is not None and t.status != "success":
                    yield t.error or t.status

    def blocking(self, never: Sequence[str]) -> list[dict[str, Any]]:
        return blocking_tools(self.engine, never, self.failing)


def rejection_messages(engine: Engine, summary: Any) -> Rejections:
    """The error message of every failed call: each distinct call the engine ran once, and contract checking's
    (see :class:`Rejections`)."""
    return Rejections(engine, summary)


def starved_inputs(engine: Engine, never: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """``{blocking tool: {starved tool: [inputs]}}``: for each tool that never succeeded, the other tools that never
    succeeded either and have a required input only tools that never succeeded could fill (by the build's own
    candidate rules: a provider export the input may take, no sandbox fact for it)."""
    from libra.induction.explore.types import FIXTURE

    failed = set(never)
    runnable = {t.name for t in engine.catalog if t.executable and t.name in engine.contracts}
    # A tool's own arguments exported back are no value it provides: the caller had them already.
    replies = {name: {e.name for e in c.exports if e.source != "arguments"} for name, c in engine.contracts.items()}
    out: dict[str, dict[str, list[str]]] = {}
    for tool in engine.catalog:
        if tool.name not in failed or tool.name not in runnable:
            continue
        for param in tool.required:
            providers = {
                prov
                for _sim, (prov, export) in engine.inputs.ranked_keys(tool.name, param)
                if prov == FIXTURE or export in replies.get(prov, ())
            }
            if FIXTURE in providers or any(p not in failed and p in runnable for p in providers):
                continue  # a value was there to be had: this input did not starve
            for provider in sorted(providers - {tool.name}):
                out.setdefault(provider, {}).setdefault(tool.name, []).append(param)
    return out


def advice(tool: Any, call: dict[str, Any] | None) -> str:
    """One line saying what to give a blocking tool so that a call of it can succeed."""
    names = list((call or {}).get("arguments") or {}) or tool.required or tool.param_names
    if not names:
        return f"make {tool.name} succeed from the fresh state (its failing call is above)"
    listed = ", ".join(names)
    first = names[0]
    return (
        f"give {listed} a value {tool.name} accepts: a fact of the fresh state as a fixture (FIXTURES = "
        f'{{"{first}": ...}} in the module, or [fixtures] {first} = ... in the project file), or examples '
        f'(@libra.tool(examples={{"{first}": [...]}}), or "examples" in its JSON Schema)'
    )


def blocking_tools(
    engine: Engine, never: Sequence[str], failing: dict[str, dict[str, Any]], limit: int = BLOCKING_LIMIT
) -> list[dict[str, Any]]:
    """The tools that never succeeded and starve the most others of a value, most starving first: each with the
    tools and inputs it starves, its failing call (``arguments`` and ``error``, None when it was never called) and
    :func:`advice`."""
    starved = starved_inputs(engine, never)
    ranked = sorted(starved.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:limit]
    out = []
    for name, victims in ranked:
        tool = engine.catalog[name]
        call = failing.get(name)
        out.append(
            {
                "tool": name,
                "starves": sorted(victims),
                "inputs": sorted({p for ps in victims.values() for p in ps}),
                "call": call,
                "advice": advice(tool, call),
            }
        )
    return out


def warn(message: str, progress: bool) -> None:
    """The health warning on stderr: yellow through rich when the build shows progress to a terminal, one plain
    line otherwise (rich would wrap it at 80 columns in a log file)."""
    if progress and sys.stderr.isatty():
        from rich.console import Console

        Console(stderr=True).print(f"[yellow]warning:[/yellow] {message}", markup=True, highlight=False)
    else:
        print(f"warning: {message}", file=sys.stderr)


__all__ = ["Rejections", "blocking_tools", "health_summary", "rejection_messages", "top_messages", "warn"]
