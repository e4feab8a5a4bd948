"""The retry phase of a wave: its failed calls retried with other equally named values, and the side tests of its
placed offers, all on books of their own (:mod:`.retries`), so that the exploration runs the same calls with or
without them and they only add relations."""

from __future__ import annotations

import json
from collections import ChainMap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from libra.catalog import Tool
from libra.contracts.outcome import rejection_message
from libra.induction.explore.binding import offer_coincides
from libra.induction.explore.retries import retry_budget
from libra.induction.explore.schedule import gate_message, offered_inputs
from libra.induction.explore.state import EngineState
from libra.induction.explore.types import FIXTURE, Failed, PoolValue, Wave
from libra.induction.explore.worklist import Item
from libra.probing.nodes import Node
from libra.probing.rebind import REBINDS, Rebound, signature, take_untried, varied_picks

__all__ = ["RetriesMixin"]

#: Bindings of one call to try next, best first: (arguments, input -> pool value id).
Alternatives = list[tuple[dict[str, Any], dict[str, int]]]
#: A failed call still to retry: (item, its next bindings, its value-independent refusal or None).
Pending = tuple[Item, Alternatives, str | None]


class RetriesMixin(EngineState):
    """Retries of failed calls and the side tests of placed offers, on the retries' own books."""

    def _run_aside(self, wave: Wave, failed: Sequence[Failed]) -> None:
        """Tests the exploration's own books leave out, run on books of their own: retry each failed call of the
        wave with the next bindings :meth:`_rebinds` gives, one at a time, until one succeeds or they run out, and
        test each success as the exploration tests its own (a control per upstream value it used, and the free
        state test against the parent state); and give the other inputs of each placed offer's success (the
        ``path`` beside an edit's placed text) the usual control (see
        :meth:`~libra.induction.explore.planning.PlanningMixin._plan_controls`).

        Why retries: a value refused for its form (a folder where an editor wants a file) says nothing about
        whether the call needed the provider's value, and trying the next equally named value is how a user would
        fix the call (:mod:`libra.probing.rebind`). A retry's success is tested, not explored: its values and the
        state it leads to join no pool and queue no work, so what the exploration does next never depends on it.

        Why books of their own (:meth:`_aside`, :mod:`.retries`): charged to the exploration's budgets, retries
        take calls from offers, and on a large catalog crowd out more relations than they add. So they have their
        own budget of executed calls (:func:`~libra.induction.explore.retries.retry_budget`, on top of
        ``max_calls``), their own tested pairs and items, their relations kept apart: the exploration runs exactly
        the calls it runs without them, and they only add relations.

        Retries run in rounds: every call's first retry in one batch, the second retry of those that failed again
        in the next, so a call whose first retry succeeds spends no more. No retry runs in a state gated for the
        consumer (:meth:`~.schedule.ScheduleMixin.gated`), and a call whose retry got the same refusal naming none
        of its values as the call itself (:func:`~.schedule.gate_message`: "Not signed in.") is retried no further:
        two values refused alike are the state's answer, which every other value would get too.
        """
        budget = retry_budget(self.config.max_calls, self.config.max_retry_calls)
        if (failed or wave.placed) and self.retry.counters["executed_calls"] < budget:
            with self._aside():
                if wave.placed:
                    tests = Wave()
                    for item, args, used, rec in wave.placed:
                        offered = {p for p, _v in item.fixed}
                        self._plan_controls(
                            item, args, {p: v for p, v in used.items() if p not in offered}, rec, tests, aside=True
                        )
                    self._run_within(tests, budget)
                pending = [
                    (item, alts, sig) for item, args, used, sig in failed if (alts := self._rebinds(item, args, used))
                ]
                while pending and (room := budget - self.retry.counters["executed_calls"]) > 0:
                    pending = self._retry_round(pending, room, budget)
        self.counters.update(self.retry.stats(self.relations))

    def _retry_round(self, pending: list[Pending], room: int, budget: int) -> list[Pending]:
        """One round of retries (at most ``room`` calls, each call's next binding) and the tests of its successes
        (within what is left of ``budget``); returns the calls to retry again."""
        batch = self._next_retries(pending, room)
        if not batch:
            return []
        self.counters["retries"] += len(batch)
        for item, _a, _u, _alts, _sig in batch:
            self.retry.rebound[self._rebind_key(item)].runs += 1
        results = self.run_many([(self.nodes[it.node].state, it.tool, a) for it, a, _u, _q, _s in batch], "retries")
        tests = Wave()
        again = []
        for (item, args, used, alts, sig), (rec, _state) in zip(batch, results):
            outcome = self._classify(item.tool, rec)
            if outcome == "success":
                self.counters["successes"] += 1
                self.retry.succeeded.add(item.tool)
                self._plan_parent_test(item, args, rec, tests)
                self._plan_controls(item, args, used, rec, tests, aside=True)
            elif outcome == "failure" and alts and (sig is None or gate_message(rejection_message(rec), args) != sig):
                again.append((item, alts, sig))
        self._run_within(tests, budget)
        return again

    def _next_retries(
        self, pending: list[Pending], room: int
    ) -> list[tuple[Item, dict[str, Any], dict[str, int], Alternatives, str | None]]:
        """The round's retries: for each pending call (at most ``room``) not in a gated state, its next binding not
        run as a retry before (taken off its alternatives)."""
        batch: list[tuple[Item, dict[str, Any], dict[str, int], Alternatives, str | None]] = []
        for item, alts, sig in pending:
            if len(batch) >= room:
                break
            if self.gated(item.node, item.tool, offered_inputs(item)):
                continue
            while alts:
                args, used = alts.pop(0)
                _call_key, key = self._item_key(item, args, used)
                if key not in self.retry.seen:
                    self.retry.seen.add(key)
                    batch.append((item, args, used, alts, sig))
                    break
        return batch

    def _run_within(self, tests: Wave, budget: int) -> None:
        """Run side tests (:meth:`~.judging.JudgingMixin._run_tests`) that fit in what is left of the side books'
        ``budget``: each control may take a second call (the state before its value's provider) and a third (the
        absent value of a kind check, :mod:`.kinds`), so the tests kept are the first whose calls could not exceed
        it, however many of them turn out memoised; the probes of the kind checks keep within what is left then
        (:meth:`~.kinds.KindsMixin._probe_room`)."""
        room = max(0, budget - self.retry.counters["executed_calls"])
        per_control = 3  # the control, the state before its provider, the absent value of a kind check
        tests.controls = tests.controls[: room // per_control]
        tests.parent_tests = tests.parent_tests[: room - per_control * len(tests.controls)]
        if tests.controls or tests.parent_tests:
            self._run_tests(tests)

    @contextmanager
    def _aside(self) -> Iterator[None]:
        """Run the retries on their own books (:class:`~libra.induction.explore.retries.RetryLedger`): the
        relations they keep, the pairs they test and everything they count go there, and the calls they execute
        are theirs (:meth:`~.calls.CallsMixin.run_many`). The exploration's relations are looked up too (no retry
        tests a relation already known) but never written, so nothing the exploration decides later differs for
        the retries."""
        books = (self.relations, self.refuted, self.pair_tests, self.pair_moot, self.moot_values, self.counters)
        self.relations = ChainMap(self.retry.relations, books[0])  # type: ignore[assignment]
        self.refuted = ChainMap(self.retry.refuted, books[1])  # type: ignore[assignment]
        self.pair_tests = self.retry.pair_tests
        self.pair_moot = self.retry.pair_moot
        self.moot_values = self.retry.moot_values
        self.counters = self.retry.counters
        self._retrying = True
        try:
            yield
        finally:
            self.relations, self.refuted, self.pair_tests, self.pair_moot, self.moot_values, self.counters = books
            self._retrying = False

    # ------------------------------------------------------------------------------- other bindings to try
    def _rebind_key(self, item: Item) -> tuple[Any, ...]:
        """What one rebinding memory covers: a consumer template with what was on offer to it (the provider field
        and input, and its placement), or with nothing on offer (a probe)."""
        offered = tuple((p, self.values[v].tool, self.values[v].export) for p, v in item.fixed)
        return (item.tool, item.template, item.placement, offered)

    def _rebinds(self, item: Item, args: dict[str, Any], used: dict[str, int]) -> Alternatives:
        """Other bindings for a call that failed, best first: each an input the call filled by the name rule
        (:meth:`~.binding.BindingMixin._best_value`) given another observed value that fits that input's name at
        least as well (:meth:`_equally_named`), one input at a time, never a binding already run, at most
        :data:`~libra.probing.rebind.REBINDS` over the life of one (consumer, template, offer) memory.

        Why: the name rule takes the best-named value, and observed values of one name often denote different
        kinds of thing (a listing's ``path`` holds folders and files alike; an ``id`` may be an order's or a
        draft's). A call that failed with one of them says little about the others: an editor offered a text to
        find in a file fails for the folder the name rule filled its ``path`` with, and succeeds for the file
        listed beside it, which is then the test of both values. The value on offer is never varied (it is what
        the call tests), nor a field of its own record (:meth:`~.binding.BindingMixin._sibling_value`,
        deliberately that record's); an input that kept the template's own literal was filled by no rule and has
        nothing to vary. The rule, shared with contract checking, is :mod:`libra.probing.rebind`'s; the memory is
        per offer rather than per call so the retries stay bounded however often a pair is offered.
        Deterministic order: higher total name fit, then inputs in the template's order, each input's values as
        the name rule ranks them (see :meth:`_equally_named`).
        """
        fixed = dict(item.fixed)
        siblings = self._records(fixed.values())
        tmpl = self.contracts[item.tool].templates[item.template]
        named = [
            p
            for p, vid in used.items()
            if p not in fixed
            and p in tmpl.arguments
            and (self.values[vid].call, self.values[vid].record) not in siblings
        ]
        if not named:
            return []
        memory = self.retry.rebound.setdefault(self._rebind_key(item), Rebound())
        if memory.runs >= REBINDS:
            return []  # (and nothing more to remember: a large build fails hundreds of thousands of calls)
        inputs = sorted(args)
        memory.tried.add(signature(inputs, args))
        candidates = self._rebind_candidates(item, args, used, named)
        options = []
        for i, picks in enumerate(varied_picks(candidates)):
            if i == 0:
                continue  # the binding that ran
            new_args, new_used = dict(args), dict(used)
            for p, (_sim, pv, val) in picks.items():
                if pv is not None:
                    new_args[p], new_used[p] = val, pv.id
            if offer_coincides(new_args, new_used, fixed):
                continue
            total = round(sum(z[0] for z in picks.values()), 6)
            options.append(((-total, i), new_args, (new_args, new_used)))
        return take_untried(memory, inputs, options, REBINDS)

    def _rebind_candidates(
        self, item: Item, args: dict[str, Any], used: dict[str, int], named: list[str]
    ) -> dict[str, list[tuple[float, PoolValue | None, Any]]]:
        """Per input filled by the name rule, the value that ran (first) and its equally named alternatives."""
        tool = self.catalog[item.tool]
        lineage = self._lineage(item.node)
        taken = set(used.values())
        candidates: dict[str, list[tuple[float, PoolValue | None, Any]]] = {}
        for p in named:
            ran = self.values[used[p]]
            sim = self.inputs.allowed(item.tool, p).get((ran.tool, ran.export))
            if sim is None:
                continue
            alts = self._equally_named(item.tool, tool, p, ran, sim, lineage, taken)
            if alts:
                candidates[p] = [(sim, None, args[p])] + alts
        return candidates

    def _equally_named(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        ran: PoolValue,
        sim: float,
        lineage: list[Node],
        taken: set[int],
        limit: int = 2 * REBINDS,
    ) -> list[tuple[float, PoolValue, Any]]:
        """Up to ``limit`` observed values on the path other than ``ran`` that fit ``param`` and whose (provider,
        export) fits its name at least as well (``sim``), as (similarity, value, argument), ranked as
        :meth:`~.binding.BindingMixin._best_value` ranks its keys: better name, the consumer's own group first, a
        tool's value before a sandbox fact, deeper state first, older value first. Values equal to the one that
        ran are no alternative, nor values another input already takes (``taken``)."""
        allowed = self.inputs.allowed(consumer, param)
        keys = [k for s, k in self.inputs.ranked_keys(consumer, param) if s >= sim]
        # (as in _best_value: when the path holds fewer keys than qualify, take them from the path's side)
        if sum(len(n.by_key) for n in lineage) < len(keys) * len(lineage):
            keys = sorted(
                {k for n in lineage for k in n.by_key if allowed.get(k, -1.0) >= sim}, key=lambda k: (-allowed[k], k)
            )
        seen = {json.dumps(ran.value, sort_keys=True, default=str)}
        found: list[tuple[tuple[Any, ...], PoolValue, Any]] = []
        for key in keys:
            for n in lineage:
                for vid in n.by_key.get(key, ()):
                    pv = self.values[vid]
                    if vid in taken or not self.inputs.meant_for(pv, consumer):
                        continue
                    val = self.fits.as_passed(tool, param, pv.value)
                    if val is None:
                        continue
                    j = json.dumps(val, sort_keys=True, default=str)
                    if j in seen:
                        continue
                    seen.add(j)
                    rank = (allowed[key], self.inputs.same_group_key(key, tool), key[0] != FIXTURE, n.depth, -pv.id)
                    found.append((rank, pv, val))
        found.sort(key=lambda f: f[0], reverse=True)
        return [(f[0][0], f[1], f[2]) for f in found[:limit]]
