"""Why a tool provides nothing: the cause, read from a finished exploration, of every tool with no outgoing relation.

Why it exists: a tool with no outgoing relation can never be lifted by propagation (the paper's Table 3 "no edge"
case), and on a catalog nobody tuned the build for a user needs to know whether that is because the tool never
worked, because what it returns is nobody's input, or because every test of its values came out "any value will
do". The causes are stated in terms of Algorithm 1's own steps, so each one points at the step that stopped:

- ``never_succeeded``: no call of the tool succeeded anywhere in the build: nothing to export.
- ``succeeded_outside_exploration``: it succeeded only in contract checking or in a retry of a failed call, never
  in one of the exploration's own calls, so no value of it entered the pool the exploration offers from (the
  build's ``tools_never_succeeded`` rightly leaves it out: it was seen working).
- ``exports_nothing``: its contract exports no value that propagates (only flags, counters, acknowledgements).
- ``reply_not_exported``: it exports only its own arguments, which the calls that supplied them already provided
  (under ``origin`` credit a call is not the source of what it was given); the reply's fields do not propagate.
- ``reply_empty``: its reply exports were empty in every success (a search or listing that found nothing).
- ``echoes_only``: every value it returned was already shown on its path (its input, or what the calls that supplied
  its input returned): under ``origin`` credit the earlier call is their source.
- ``not_offered``: it produced values, but no candidate input of another tool fits them (type, format, names).
- ``offers_refused``: its values were offered, and no consumer succeeded with one (or no valid control existed).
- ``other_groups_only``: consumers succeeded with its values only in other groups (another app's inputs that take
  any value), and their controls succeeded too.
- ``control_succeeds``: a consumer of its own group succeeded with its values, and with the control too: the
  consumer takes any value, so the value was not necessary.

Separately, ``changed_state`` lists those of them whose calls changed the state: their before/after sweeps found no
consumer that fails before the change and succeeds after it.

The counts go to the build's health summary (``stats.health.no_relation``) and ``libra show``; they describe the
exploration and change nothing in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from libra.contracts.outcome import extract
from libra.induction.judges import is_empty

if TYPE_CHECKING:
    from libra.induction.explore.engine import Engine

#: The causes, in the order of Algorithm 1's steps (the first one that applies is a tool's cause).
CAUSES = (
    "never_succeeded",
    "succeeded_outside_exploration",
    "exports_nothing",
    "reply_not_exported",
    "reply_empty",
    "echoes_only",
    "not_offered",
    "offers_refused",
    "other_groups_only",
    "control_succeeds",
)

#: Successful calls of a tool re-read (from the memo) to tell an empty reply from an echo.
SAMPLE_CALLS = 20


def no_relation_causes(engine: Engine, succeeded: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """``{"causes": {cause: [tools]}, "changed_state": [tools]}`` over the executable tools that provide no relation.

    ``succeeded`` names the tools seen succeeding anywhere in the build (contract checking and retries included),
    so that a tool the exploration never ran successfully is not reported as never having succeeded at all: the
    health summary's ``tools_never_succeeded`` and this report then agree. Must be called before the engine's memo is
    closed: it re-reads a few records of tools that produced no value.
    """
    providers = {r.provider for r in engine.result()}
    calls: dict[str, list[int]] = {}
    for i, info in enumerate(engine.calls):
        calls.setdefault(info.tool, []).append(i)
    valued = {pv.tool for pv in engine.values}
    offered = engine.pair_offers.providers()
    tested: dict[str, set[str]] = {}
    for pair in engine.pair_tests:
        if engine.concluded_tests(pair) <= 0:  # every test of the pair was moot (JudgingMixin._moot): not tested
            continue
        tested.setdefault(pair[0], set()).add(pair[2])
    creators = {engine.calls[n.creator].tool for n in engine.nodes if n.creator >= 0}
    group = {t.name: t.group for t in engine.catalog}
    causes: dict[str, list[str]] = {c: [] for c in CAUSES}
    changed: list[str] = []
    for tool in engine.catalog:
        name = tool.name
        if not tool.executable or name not in engine.contracts or name in providers:
            continue
        cause = _cause(
            engine, name, calls.get(name, []), valued, offered, tested.get(name, set()), group, name in succeeded
        )
        causes[cause].append(name)
        if name in creators:
            changed.append(name)
    return {"causes": {c: sorted(v) for c, v in causes.items() if v}, "changed_state": sorted(changed)}


def _cause(
    engine: Engine,
    name: str,
    calls: list[int],
    valued: set[str],
    offered: set[str],
    tested: set[str],
    group: dict[str, str],
    seen_working: bool = False,
) -> str:
    """The first step of Algorithm 1 at which ``name``'s values stopped (see the module docstring)."""
    if not calls:
        return "succeeded_outside_exploration" if seen_working else "never_succeeded"
    contract = engine.contracts[name]
    propagating = [e for e in contract.exports if e.propagate]
    if not propagating:
        return "exports_nothing"
    if name not in valued:
        if all(e.source == "arguments" for e in propagating):
            return "reply_not_exported"
        reply = {e.name for e in propagating if e.source != "arguments"}
        for call in calls[:SAMPLE_CALLS]:
            info = engine.calls[call]
            for ex in extract(contract, info.args, engine._record(info)):
                if ex.name in reply and not is_empty(ex.value):
                    return "echoes_only"
        return "reply_empty"
    if name not in offered:
        return "not_offered"
    if not tested:
        return "offers_refused"
    if all(group.get(c) != group.get(name) for c in tested):
        return "other_groups_only"
    return "control_succeeds"


def cause_counts(report: dict[str, Any]) -> dict[str, int]:
    """``{cause: number of tools}`` of a :func:`no_relation_causes` report, in :data:`CAUSES` order."""
    found = report.get("causes") or {}
    return {c: len(found[c]) for c in CAUSES if found.get(c)}


__all__ = ["CAUSES", "cause_counts", "no_relation_causes"]
