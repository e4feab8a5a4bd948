"""Hidden prerequisites: gold tools a request never names, and how often a method retrieves a whole gold set
that holds one.

Why: averaged recall can rise because a method finds more of the tools a request spells out, while the tools an
agent cannot guess from the words (a sign-in before a purchase, a look-up of an id) stay missing. Counting the
tasks whose gold holds such a tool and whose every gold tool is in the top K says whether those are found too.

A request *names* a tool when every word of the tool's own name (``shop.add_item`` -> ``add``, ``item``;
``getStockInfo`` -> ``get``, ``stock``, ``info``) appears among the request's words, a trailing plural ``s`` aside.
The rule reads words only, never a retriever's scores, so it is the same for every method.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def words(text: str) -> set[str]:
    """Lower-case word stems of ``text``, identifiers split at ``_`` and at case changes."""
    return {_stem(w.lower()) for w in re.findall(r"[A-Za-z0-9]+", _CAMEL.sub(" ", text.replace("_", " ")))}


def names_tool(request: str, tool: str) -> bool:
    """Whether ``request`` names ``tool`` (see the module docstring); only the part after the last ``.`` counts."""
    own = words(tool.rsplit(".", 1)[-1])
    return bool(own) and own <= words(request)


def hidden_gold(request: str, gold: Iterable[str]) -> list[str]:
    """The gold tools ``request`` never names."""
    return [g for g in gold if not names_tool(request, g)]


@dataclass(frozen=True)
class HiddenView:
    """Of the tasks whose gold holds a tool the request never names (``tasks``), the share (percent) whose whole
    gold set is in the top K (``complete``); how many of those tasks have a gold set of at most K tools, the only
    ones that can be complete (``fits``); and the share of their unnamed gold tools that are in the top K
    (``found``), which still moves where gold sets are larger than K."""

    tasks: int
    complete: float
    fits: int = 0
    found: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "complete_percent": self.complete,
            "fits_k": self.fits,
            "found_percent": self.found,
        }


def hidden_view(rankings: Sequence[Sequence[str]], tasks: Sequence[Any], k: int) -> HiddenView:
    """See :class:`HiddenView`; ``rankings[i]`` is the ranked list for ``tasks[i]`` (each with ``query``, ``gold``)."""
    hidden = {i: hidden_gold(t.query, t.gold) for i, t in enumerate(tasks)}
    with_hidden = [i for i, h in hidden.items() if h]
    top = {i: set(rankings[i][:k]) for i in with_hidden}
    full = sum(1 for i in with_hidden if set(tasks[i].gold) <= top[i])
    fits = sum(1 for i in with_hidden if len(set(tasks[i].gold)) <= k)
    unnamed = sum(len(hidden[i]) for i in with_hidden)
    found = sum(1 for i in with_hidden for g in hidden[i] if g in top[i])
    return HiddenView(
        len(with_hidden),
        100.0 * full / len(with_hidden) if with_hidden else 0.0,
        fits,
        100.0 * found / unnamed if unnamed else 0.0,
    )
