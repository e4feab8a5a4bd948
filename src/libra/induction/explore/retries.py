"""The exploration's retries of failed calls, kept on books of their own.

Why retries at all: a call that failed with one observed value of a name says little about the other values of
that name (a listing's ``path`` holds folders and files alike; an editor refuses the folder and takes the file
listed beside it). A value refused for its *form* says nothing about whether the call needed a provider's value,
and trying the next equally named value is how a user would fix the call (the rule is
:mod:`libra.probing.rebind`'s, shared with contract checking).

Why books of their own: the exploration's budgets are what decide which offers, controls, sweeps and probes run,
and a build's relations follow from them. Retries charged to those budgets take calls from offers (on a large
catalog they crowd out more relations than they add), so they are not: they have their own budget
(:func:`retry_budget`), their own record of pairs tested and items run, and the relations only they find are kept
apart (:class:`RetryLedger`). Nothing the exploration decides reads those books, so with or without retries it
runs the same calls in the same order, and retries only add relations. The one thing both share is the memo
(results depend only on state and arguments); a call a retry made first still counts as the exploration's own
when the exploration makes it (:attr:`RetryLedger.made`), exactly as a call contract checking made does.

The same books hold the side tests of a placed offer's success (the usual control of the ``path`` beside an
edit's placed text, see :meth:`libra.induction.explore.planning.PlanningMixin._plan_controls`): tests the
exploration's own rule leaves out, added the same way, without changing what it runs. The phase that runs the
retries and those tests is :mod:`.retrying`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from libra.induction.config import DEFAULT_RETRY_SHARE
from libra.probing.rebind import Rebound

__all__ = ["RETRY_COUNTERS", "RetryLedger", "retry_budget"]

#: Counters of the retries' own calls and tests, kept in :attr:`RetryLedger.counters` (the names the engine's
#: counters use, so the same code counts either) and reported in ``stats.engine`` under ``retry_*`` names.
RETRY_COUNTERS = (
    "executed_calls",
    "memo_hits",
    "provenance_tests",
    "state_tests",
    "skipped_implied",
    "inconclusive_tests",
)


def retry_budget(max_calls: int, max_retry_calls: int | None) -> int:
    """Calls the retries may execute over a whole build: ``max_retry_calls``, or by default
    :data:`~libra.induction.config.DEFAULT_RETRY_SHARE` of ``max_calls``. They come on top of ``max_calls``,
    never out of it, so a build's extra cost for them is bounded by this number."""
    if max_retry_calls is not None:
        return max(0, int(max_retry_calls))
    return int(max_calls * DEFAULT_RETRY_SHARE)


@dataclass
class RetryLedger:
    """What the retries keep apart from the exploration's books (checkpointed with them).

    - ``relations``: relations the retries' tests kept that the exploration had not (the exploration's own are
      looked up too, so no retry tests a relation already known, but none is written there), and ``refuted`` the
      pairs their kind checks refuted (read with the exploration's, written apart: see ``KindsMixin``);
    - ``pair_tests``: tests per (provider, export, consumer, input) the retries ran, capped like the
      exploration's but counted apart, and ``pair_moot``/``moot_values`` their moot tests (``JudgingMixin._moot``);
    - ``seen``: digests of the retry calls run (state, tool, arguments, credit), so none runs twice;
    - ``made``: memo keys of calls a retry executed that the exploration has not made itself yet;
    - ``rebound``: per (consumer template, offer), the bindings tried and retries spent (:mod:`.rebind`);
    - ``counters``: the retries' calls and tests (:data:`RETRY_COUNTERS`, plus ``retries`` and ``successes``);
    - ``succeeded``: tools seen succeeding in a retry (for the build's health summary).
    """

    relations: dict[tuple, Any] = field(default_factory=dict)
    refuted: dict[tuple[str, str, str, str], str] = field(default_factory=dict)
    pair_tests: dict[tuple[str, str, str, str], int] = field(default_factory=dict)
    pair_moot: dict[tuple[str, str, str, str], int] = field(default_factory=dict)
    moot_values: set[tuple[tuple[str, str, str, str], str]] = field(default_factory=set)
    seen: set[bytes] = field(default_factory=set)
    made: set[Any] = field(default_factory=set)
    rebound: dict[tuple[Any, ...], Rebound] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=lambda: {k: 0 for k in (*RETRY_COUNTERS, "retries", "successes")})
    succeeded: set[str] = field(default_factory=set)

    def stats(self, known: Collection[tuple]) -> dict[str, int]:
        """The retries' figures as ``stats.engine`` reports them: ``calls_retries`` (calls executed for retries
        and their tests, on top of the exploration's), ``retries`` (retried calls), ``retry_successes``,
        ``retry_tests`` and ``retry_relations`` (relations only the retries found: not in ``known``, the
        exploration's own relation keys)."""
        c = self.counters
        return {
            "calls_retries": c["executed_calls"],
            "retries": c["retries"],
            "retry_successes": c["successes"],
            "retry_tests": c["provenance_tests"] + c["state_tests"],
            "retry_relations": sum(1 for k in self.relations if k not in known),
        }
