"""Which work items run next: the worklist, its order, the budgets that bound it, and the states gated for a
consumer (Algorithm 1, lines 7-11: Pop).

Items wait in four lists (:class:`~.state.Explored`): offers within a group, offers across groups (and the number
and placed offers), probes, and probes of a state the tool's own group created; :meth:`ScheduleMixin._pop` says in
which order they are taken. A wave takes items until its batch is full, skipping those whose tool's budget is
spent, offers to a gated state, items that do not bind, and repeats (:meth:`ScheduleMixin._select_wave`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from libra.contracts.outcome import rejection_message
from libra.induction.explore.state import EngineState
from libra.induction.explore.types import Bound
from libra.induction.explore.values import scalars
from libra.induction.explore.worklist import Item
from libra.probing.memo import MemoKey, memo_key
from libra.probing.nodes import Node

__all__ = ["ScheduleMixin", "gate_message", "offered_inputs"]


def gate_message(message: str | None, args: dict[str, Any]) -> str | None:
    """The refusal as a gate's signature when it names none of the call's argument values, else None.

    Why: "No user is currently logged in." refuses a call whatever value it was given -- the state is refused,
    not the value -- while "Receiver 'x' not found" is about the value. Only the first kind says that other
    values offered in the same state will fail the same way. A value that happens to appear in the message makes
    the refusal count as value-specific, which errs towards trying more values.
    """
    if not message:
        return None
    low = message.lower()
    for v in scalars(args):
        text = v if isinstance(v, str) else json.dumps(v)
        if text and text.lower() in low:
            return None
    return " ".join(low.split())


def offered_inputs(item: Item) -> tuple[str, ...]:
    """The inputs an item offers values to (sorted; empty for a probe): what its refusals are evidence about."""
    return tuple(sorted(p for p, _v in item.fixed))


class ScheduleMixin(EngineState):
    """The worklist: queueing, popping, selecting a wave's items and charging their budgets, gated states."""

    #: a heap of offers is swept for spent items once it holds this many, and again whenever it has doubled
    DISCARD_AT = 1 << 16
    #: Distinct argument sets one value-independent refusal must have refused in a state before the consumer
    #: counts as gated there: one refusal could still be a coincidence of the value, two with different values
    #: are the state's answer.
    GATE_EVIDENCE = 2

    # ------------------------------------------------------------------------------------- the worklist
    def _enqueue(self, item: Item) -> None:
        """Queue a work item: a probe at the end of its queue, an offer in its heap by how well the offered value's
        name matches the input (a state test first: its names say nothing about its odds, and there are only a
        few per creator and consumer)."""
        if not item.fixed:
            node = self.nodes[item.node]
            near = (
                node.creator >= 0 and self.catalog[self.calls[node.creator].tool].group == self.catalog[item.tool].group
            )
            (self.near_probes if near else self.probes).append(item)
            return
        inputs = self.inputs
        tool = inputs.tools[item.tool]
        if len(item.fixed) == 1:  # every offer (the general form below, without its generators)
            ((p, v),) = item.fixed
            pv = self.values[v]
            near = inputs.same_group(pv, tool)
            sim = (
                2.0 if item.state_test else self.similarity(pv.export, inputs.offer_name(item.tool, p, item.placement))
            )
        else:
            near = all(inputs.same_group(self.values[v], tool) for _p, v in item.fixed)
            sim = (
                2.0
                if item.state_test
                else min(
                    self.similarity(self.values[v].export, inputs.offer_name(item.tool, p, item.placement))
                    for p, v in item.fixed
                )
            )
        self.enqueued += 1
        heap = self.queue if near and not (item.number_offer or item.placement) else self.far
        # (an item whose tool's budget is spent would only be popped to be dropped: see _discard_spent)
        heap.push(-round(float(sim), 6), self.enqueued, item, spent=self._spent(item))

    def _queue_planned(self, n: int) -> None:
        """Queue the next ``n`` of the wave's planned new items not queued yet, in the order they were planned
        (see :meth:`~libra.induction.explore.calls.CallsMixin._idle`)."""
        items, start = self._unqueued, self._queued_upto
        end = min(len(items), start + n)
        self._queued_upto = end
        for it in items[start:end]:
            self._enqueue(it)

    def _pending(self) -> bool:
        return bool(self.queue or self.far or self.probes or self.near_probes)

    def _pop(self) -> Item | None:
        """The next work item (None where a heap would pop only items left out as spent: see
        :meth:`_discard_spent`).

        Every tool's initial calls (Algorithm 1, lines 7-8) run before any offer. Offers never run out in a large
        catalog, so under a binding budget an initial call left behind them never runs, and its tool then
        provides nothing at all.

        A tool re-run in a state its own group's change created (sign in -> list the watchlist) goes before the
        offers across groups: the values only that state lists are the ones its group's consumers can use, and
        cross-group offers, which seldom succeed, would otherwise spend those consumers' budgets before the
        state is ever read. Probes of states another group created still wait for every offer.
        """
        if self.probes and self.probes.peek().node == 0:
            return self.probes.popleft()
        if self.queue:
            return self.queue.pop()
        if self.near_probes:
            return self.near_probes.popleft()
        if self.far:
            return self.far.pop()
        if self.probes:
            return self.probes.popleft()
        raise IndexError("empty worklist")

    def _discard_spent(self) -> None:
        """Drop the queued offers whose tool's budget is spent (:meth:`_spent`): they would only be popped to be
        dropped.

        Why: a large build queues millions of offers and runs a small share of them; most of the rest belong to
        consumers whose budget went on better-named offers (AppWorld: 3.4 M queued at the end of a 400k-call build,
        most of the caller's memory growth). Budgets only grow, so a spent item stays spent, and dropping it
        without side effects is all that popping it would have done; the heaps keep the exploration's order exactly
        as if the items were there (:class:`~.worklist.PackedHeap`). Swept only when a heap has doubled, so the
        cost per queued item stays constant."""
        for heap in (self.queue, self.far):
            if len(heap) >= max(self.DISCARD_AT, 2 * heap.kept_after_discard):
                heap.discard(self._spent)

    # ------------------------------------------------------------------------------ selecting a wave
    def _select_wave(self) -> list[Bound]:
        """Pop work items, bind them and charge their tool's budget, until a batch is full (Algorithm 1, lines
        10-11: Pop and Fill)."""
        cfg = self.config
        batch: list[Bound] = []
        while self._pending() and len(batch) < cfg.batch_size:
            item = self._pop()
            if item is None or not self._may_run(item):
                continue
            bound = self.bind(item)
            if bound is None:
                continue
            args, used = bound
            if self._admit(item, args, used):
                batch.append((item, args, used))
                # the wave's first run_many makes this call: the workers start on it while the rest is bound
                self._prefetch(((self.nodes[item.node].state, item.tool, args),))
            self._poll_calls()
        return batch

    def _budget(self, item: Item) -> tuple[dict[str, int], int]:
        """The per-tool budget an item's calls are charged to, and its limit.

        An offer of another group's value has a budget of its own (``cross_group_offers_per_tool``; its number and
        placed offers stop within it at ``number_offers_per_tool``, what all of a tool's number offers had before
        groups were told apart). Why: when several unrelated sources are built together, every value of every
        source is a candidate for the other sources' inputs of its type; those offers seldom succeed, and charged
        to the consumer's budget of offers (or of number offers) they spend what its own group's values need -- a
        module built with two others found a third of the relations it found alone. Apart, a group's own offers
        get exactly the budget they get when the group is built alone, and the offers across groups still run, on
        theirs."""
        cfg = self.config
        if item.fixed and not item.state_test and not self._near(item):
            if item.number_offer or item.placement:
                return self.per_tool_far, min(cfg.cross_group_offers_per_tool, cfg.number_offers_per_tool)
            return self.per_tool_far, cfg.cross_group_offers_per_tool
        if item.number_offer or item.placement:
            return self.per_tool_numbers, cfg.number_offers_per_tool
        return (
            (self.per_tool, cfg.max_calls_per_tool) if item.fixed else (self.per_tool_probes, cfg.max_probes_per_tool)
        )

    def _near(self, item: Item) -> bool:
        """Whether every value an item offers belongs to its tool's own group (or the sandbox): see
        :meth:`~.inputs.InputRules.same_group`."""
        tool = self.inputs.tools[item.tool]
        return all(self.inputs.same_group(self.values[v], tool) for _p, v in item.fixed)

    def _spent(self, item: Item) -> bool:
        """Whether an item's tool has spent the budget it would be charged to, for good (budgets only grow).

        State tests have their own cap (per creator and consumer), so a consumer whose budget went on value tests
        early still gets them: the states that need them are often reached late."""
        budget, limit = self._budget(item)
        return budget.get(item.tool, 0) >= limit and not item.state_test

    def _may_run(self, item: Item) -> bool:
        """Whether an item may still run: its tool's budget is not spent and, for an offer, its state is not gated."""
        if self._spent(item):
            return False
        if item.fixed and self.gated(item.node, item.tool, offered_inputs(item)):
            self.counters["skipped_gated"] = self.counters.get("skipped_gated", 0) + 1
            return False
        return True

    def _admit(self, item: Item, args: dict[str, Any], used: dict[str, int]) -> bool:
        """Whether a bound call is new, charging its tool's budget when it will run; False for a repeat.

        The same call credited to different providers is a different test (its outcome is memoised, so only the
        credit is new); the same call with the same credit is a repeat. Budgets bound execution: a memoised
        repeat costs nothing.
        """
        call_key, key = self._item_key(item, args, used)
        if key in self.seen_items:
            return False
        self.seen_items.add(key)
        if call_key not in self.memo or self._owed(call_key):
            budget, _limit = self._budget(item)
            budget[item.tool] = budget.get(item.tool, 0) + 1
        return True

    def _item_key(self, item: Item, args: dict[str, Any], used: dict[str, int]) -> tuple[MemoKey, bytes]:
        """A bound call's memo key, and a 128-bit digest of (state, tool, arguments, credit) that tells a repeat."""
        call_key = memo_key(self.nodes[item.node].state, item.tool, args)
        credit = sorted((p, self.values[v].tool, self.values[v].export) for p, v in used.items())
        return call_key, hashlib.blake2b(json.dumps([*call_key, credit]).encode(), digest_size=16).digest()

    # ------------------------------------------------------------------------------------ gated states
    def _note_refusal(self, item: Item, args: dict[str, Any], rec: dict[str, Any]) -> None:
        """Remember an offer the consumer refused in a state for a reason that names none of its arguments."""
        sig = gate_message(rejection_message(rec), args)
        if sig is not None:
            seen = self.refusals.setdefault((item.node, item.tool, offered_inputs(item)), {}).setdefault(sig, set())
            seen.add(json.dumps(args, sort_keys=True, default=str))

    def gated(self, node_id: int, consumer: str, inputs: tuple[str, ...]) -> bool:
        """Whether offers to ``consumer`` in this state can only fail: the state is gated for it.

        Why: a consumer behind a sign-in refuses every value offered before the sign-in with the same message, and
        in a stateful catalog most explored states are such states; without this, a consumer's whole budget of
        bound calls goes on them and the values listed after the sign-in, the ones that can succeed, arrive when
        nothing is left. A state is gated for a consumer when :data:`GATE_EVIDENCE` different calls there got the
        same value-independent refusal (:func:`gate_message`), and a state inherits its parent's gate when a tool
        of another group created it (another app's change does not open this one's gate: see
        :meth:`~libra.induction.explore.planning.PlanningMixin._mixed_path`). Probes and sweeps still run in gated
        states, so the state test that finds the gate's opener is unaffected; only offers, which test values, are
        skipped.

        Offers are gated per input: the evidence is refusals of values offered to the same inputs. A refusal that
        names no value is not always the state's answer: wrong values offered to a token input are refused with
        "not authorized", which names nothing, in a state where the user is signed in; that says nothing about a
        path offered to the same tool's file input there (a listing's file offered to a reader). In a state that
        refuses every call, offers to each input meet the refusal in turn, after :data:`GATE_EVIDENCE` of them.
        """
        group = self.catalog[consumer].group
        n: Node | None = self.nodes[node_id]
        while n is not None:
            refused = self.refusals.get((n.id, consumer, inputs))
            if refused and any(len(v) >= self.GATE_EVIDENCE for v in refused.values()):
                return True
            if n.parent is None or n.creator < 0 or self.catalog[self.calls[n.creator].tool].group == group:
                return False
            n = self.nodes[n.parent]
        return False
