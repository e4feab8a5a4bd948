"""Rebinding: which other observed values a failed call is retried with, shared by contract checking and the
exploration.

Why: a caller fills an input with the observed value whose name fits it best, and observed values of one name
often denote different kinds of thing (a listing's ``path`` holds folders and files alike; an ``id`` may be an
order's or a draft's). The name cannot tell them apart, so a call that failed with one of them says little about
the others: the tool may want exactly the other kind (an editor that works only on a file). Both walks of the
sandbox -- contract checking (:meth:`libra.contracts.checking.retries.Retries._rebinds`) and the exploration
(:meth:`libra.induction.explore.engine.Engine._rebinds`) -- therefore retry such a call with the next values that fit as
well, by one rule:

- only values that fit each input's name *at least as well* as the one the failed call took (a worse-named value
  is a worse guess, not an equal one);
- one input varied at a time, the others keeping the values that ran (:func:`varied_picks`);
- never a binding already run, and at most :data:`REBINDS` retries per memory (:func:`take_untried`), in a
  deterministic order the caller gives.

What counts as fitting, and what one memory covers (a template's life in checking, a tested pair in the
exploration), is the caller's: each walks its own pool with its own name rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["REBINDS", "Rebound", "signature", "take_untried", "varied_picks"]

#: How many other equally fitting bindings one memory retries a failed call with, over its whole life.
REBINDS = 2

T = TypeVar("T")
P = TypeVar("P")


@dataclass
class Rebound:
    """What one memory of rebinding remembers: the bindings run (as :func:`signature` strings), the retries spent,
    and (for a caller that looks again as its pool grows) how many nodes existed at its last look."""

    tried: set[str] = field(default_factory=set)
    runs: int = 0
    nodes: int = -1


def signature(inputs: Iterable[str], args: Mapping[str, Any]) -> str:
    """The values a call passed to ``inputs``, as one comparable string."""
    return json.dumps([args.get(p) for p in inputs], sort_keys=True, default=str)


def varied_picks(candidates: Mapping[str, Sequence[T]]) -> list[dict[str, T]]:
    """For inputs each with its candidates best first: the all-first pick, then one input at a time varied over
    its later candidates (inputs in the mapping's order, candidates in theirs), the others keeping their first.

    Why one at a time: a call whose inputs are all replaced at once says nothing about which one was wrong, and
    the combinations grow as a product; varying one input keeps the retries few and each one a single question.
    """
    first = {p: c[0] for p, c in candidates.items()}
    return [first] + [{**first, p: z} for p, c in candidates.items() for z in c[1:]]


def take_untried(
    memory: Rebound, inputs: Sequence[str], options: Iterable[tuple[Any, Mapping[str, Any], P]], limit: int = REBINDS
) -> list[P]:
    """The payloads of ``options`` -- (sort key, arguments, payload) -- to run next, by sort key: those whose
    values in ``inputs`` differ from every binding ``memory`` has seen, at most ``limit`` runs over the memory's
    life (``memory.runs`` counts the retries already run; the caller adds the ones it runs). The ones returned
    count as tried."""
    out: list[P] = []
    if memory.runs >= limit:
        return out
    for _key, args, payload in sorted(options, key=lambda o: o[0]):
        sig = signature(inputs, args)
        if sig in memory.tried:
            continue
        memory.tried.add(sig)
        out.append(payload)
        if memory.runs + len(out) >= limit:
            break
    return out
