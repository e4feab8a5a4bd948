"""Updating a library after its catalog changed: build again only what the change can affect.

Given the library a catalog was built into before and the fingerprints of the build about to run
(:mod:`libra.induction.fingerprints`), tools are new, changed, removed or unchanged. An update then

- keeps the contracts of unchanged tools and proposes and checks only those of new and changed tools;
- explores as a build does, but tests only pairs with a new or changed tool on either side (the engine's
  ``focus``): values and states of unchanged tools are still produced and offered along every candidate, since
  new tools consume them (a card registered with a sign-in's token is what a changed booking tool needs);
- keeps every relation between two unchanged tools with its evidence, and drops those of removed tools.

Some unchanged tools are built again all the same (:func:`stale_tools`), because what the old build concluded
about their pairs rested on a tool that changed: when tools were added, a tool the old build never called
successfully (a new tool may be what it was waiting for: removing a sign-in and adding it back must find the
cart's relations again), and a tool a removed tool had a state or provenance relation to (it succeeded in states
that tool made, or with values it returned, which no call can make now), and in turn the tools those had such a
relation to. A changed tool re-tests only its own pairs: its state relations to others are
among them.

Evidence is reusable only when it would be found again: a build option that decides what a build finds, or a
part of the starting state both builds have, that changed refuses the update (one line saying which), and the
build starts over. So does a library that recorded no fingerprints (built before libraries kept them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from libra.catalog import Catalog
from libra.contracts.model import Contract
from libra.library.artifact import Candidate, Library, Relation, dedupe
from libra.library.fingerprints import BuildFingerprints, CatalogChanges

__all__ = ["KeptFlows", "UpdatePlan", "plan_update"]


def stale_tools(old: Library, changes: CatalogChanges) -> list[str]:
    """Unchanged tools whose pairs an update tests again (see the module docstring), sorted."""
    unchanged = set(changes.unchanged)
    stale: set[str] = set()
    if changes.added:
        health = old.stats.get("health") if isinstance(old.stats.get("health"), dict) else {}
        stale |= unchanged & set(health.get("tools_never_succeeded") or [])
    # what rested on a removed tool: the tools it had a state or provenance relation to, and in turn theirs (a
    # checkout that succeeded only on a cart that succeeded only once signed in rests on the sign-in too)
    resting = [(r.provider, r.consumer) for r in old.relations if r.kind in ("state", "provenance")]
    frontier = set(changes.removed)
    reached: set[str] = set()
    while frontier:
        frontier = {c for p, c in resting if p in frontier and c in unchanged and c not in reached}
        reached |= frontier
    stale |= reached
    return sorted(stale)


@dataclass(frozen=True)
class KeptFlows:
    """Where an update offers values between two unchanged tools, which it does not test: only to make the consumer
    succeed, so that the values and states a new or changed tool may consume exist.

    - A consumer of a group (a server, a class) with a new or changed tool is offered values as in a build (on a
      small budget per pair, see :data:`~libra.induction.explore.offers.UNTESTED_OFFERS_PER_PAIR`): within a group,
      sessions, ids and states chain through many tools, and the earlier build's relations do not record every
      offer that made one of them succeed (a test whose control also succeeded is no relation).
    - A consumer of a group with no such tool (``elsewhere``) is offered values only along the value relations the
      earlier build kept (``related``): those are the offers that made it succeed, and across groups most others
      were refused (the reason a joint build spends its offers where values fit).
    """

    related: frozenset[tuple[str, str, str, str]]  # (provider, field, consumer, input)
    elsewhere: frozenset[str]

    def allows(self, provider: str, field: str, consumer: str, param: str) -> bool:
        return consumer not in self.elsewhere or (provider, field, consumer, param) in self.related


@dataclass
class UpdatePlan:
    """What an update rebuilds (``changes.touched`` and the ``stale`` tools) and what it keeps from ``old``."""

    old: Library
    changes: CatalogChanges
    stale: list[str] = field(default_factory=list)

    @property
    def focus(self) -> frozenset[str]:
        return frozenset(self.changes.touched | set(self.stale))

    @property
    def kept(self) -> set[str]:
        """The tools whose pairs with one another keep their evidence."""
        return set(self.changes.unchanged) - set(self.stale)

    def kept_contracts(self, catalog: Catalog) -> dict[str, Contract]:
        """The stored contracts of the tools that did not change (stale ones too: their metadata is the same)."""
        keep = set(self.changes.unchanged)
        return {n: Contract.from_dict(c) for n, c in self.old.contracts.items() if n in keep and n in catalog}

    def focus_candidates(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        """The candidates the update tests: those with a new or changed tool on either side."""
        focus = self.focus
        return [c for c in candidates if c.provider in focus or c.consumer in focus]

    def kept_relations(self) -> list[Relation]:
        """The old relations between two kept tools, with their evidence."""
        keep = self.kept
        return [r for r in self.old.relations if r.provider in keep and r.consumer in keep]

    def kept_flows(self, catalog: Catalog) -> KeptFlows:
        """What an update offers along pairs of two unchanged tools (see :class:`KeptFlows`)."""
        focus = self.focus
        groups = {t.group for t in catalog if t.name in focus}
        return KeptFlows(
            frozenset(
                (r.provider, r.provider_field, r.consumer, r.consumer_input)
                for r in self.kept_relations()
                if r.provider_field and r.consumer_input
            ),
            frozenset(t.name for t in catalog if t.name not in focus and t.group not in groups),
        )

    def merge_health(self, health: dict[str, Any]) -> None:
        """An update's health, whole: a tool it did not build again keeps the old build's verdict on whether it
        was ever called successfully (this run offered it no values, so its own verdict says nothing)."""
        old = self.old.stats.get("health") if isinstance(self.old.stats.get("health"), dict) else {}
        before = set(old.get("tools_never_succeeded") or [])
        now = health.get("tools_never_succeeded")
        if isinstance(now, list):
            health["tools_never_succeeded"] = [t for t in now if t in self.focus or t in before]
        health["warning"] = None  # (its other counts cover only what was built again: nothing to warn about)

    def merge(self, found: Sequence[Relation]) -> list[Relation]:
        """The update's relations: the kept ones, and those it found with a new or changed tool on either side."""
        focus = self.focus
        fresh = [r for r in found if r.provider in focus or r.consumer in focus]
        return dedupe([*self.kept_relations(), *fresh])

    def stats(self, catalog: Catalog, n_candidates: int, n_tested: int, engine: Any) -> dict[str, Any]:
        """What the update rebuilt and kept: tools by change, tool pairs (ordered, both executable) re-tested and
        kept, candidate compositions re-tested and kept, relations kept, and the tool pairs the exploration really
        ran a counterfactual test of, with how many of them have no rebuilt tool on either side (none should)."""
        runnable = [t.name for t in catalog if t.executable]
        focus = self.focus
        n_focus = sum(1 for n in runnable if n in focus)
        n = len(runnable)
        kept_pairs = (n - n_focus) * (n - n_focus - 1)
        tested = {(p, c) for (p, _f, c, _i) in engine.pair_tests} | {
            (p, c) for (p, _f, c, _i) in engine.retry.pair_tests
        }
        return {
            "from_built_at": (self.old.fingerprints or {}).get("built_at", ""),
            **self.changes.to_dict(),
            "pairs_retested": n * (n - 1) - kept_pairs,
            "pairs_kept": kept_pairs,
            "candidates_retested": n_tested,
            "candidates_kept": n_candidates - n_tested,
            "stale": self.stale,
            "relations_kept": len(self.kept_relations()),
            "tested_tool_pairs": len(tested),
            "tested_outside_focus": sum(1 for p, c in tested if p not in focus and c not in focus),
        }


def plan_update(
    old: Library, new: BuildFingerprints, log: Callable[[str], None] = lambda msg: None
) -> tuple[UpdatePlan | None, str | None]:
    """The update of ``old`` to a build with fingerprints ``new``, or (when its evidence cannot be reused, so the
    build starts over) None and why, a line also given to ``log``."""
    if old.fingerprints is None:
        why = "it records no fingerprints (built by an older libra)"
    else:
        before = BuildFingerprints.from_dict(old.fingerprints)
        why = before.refusal(new)
    if why is not None:
        log(f"not reusing the library's evidence: {why}; building everything")
        return None, why
    changes = before.changes(new.tools)
    plan = UpdatePlan(old, changes, stale_tools(old, changes))
    log(f"updating: {changes.summary().replace(' since this library was built', '')}")
    if plan.stale:
        log(f"testing again the pairs of {len(plan.stale)} unchanged tools whose evidence rested on a changed tool")
    return plan, None
