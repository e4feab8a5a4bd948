"""What a wave's outcomes ask for (Algorithm 1, lines 12-32, the planning half).

Each success is logged and planned (:meth:`PlanningMixin._on_success`): the free state test against the parent
state, a counterfactual control per upstream value it used, the state it created, the values it contributes to
the pool (:mod:`.values`) and the offers they make (:mod:`.offers`), and the before/after sweep of its state
change. Each refusal is noted: as evidence of a gate (:mod:`.schedule`), or as a set of inputs that exclude one
another. The tests planned here run in :mod:`.judging`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from libra.contracts.exclusive import exclusive_inputs
from libra.contracts.outcome import rejection_message
from libra.induction.explore.revising import MAX_REVISIONS, export_first_reply, other_than_own, revise_template
from libra.induction.explore.schedule import gate_message
from libra.induction.explore.state import EngineState
from libra.induction.explore.types import (
    FIXTURE,
    NO_LITERAL,
    Bound,
    CallInfo,
    Failed,
    PoolValue,
    SweepTest,
    ValueTest,
    Wave,
)
from libra.induction.explore.values import rewrote_in_place, scalars
from libra.induction.explore.worklist import Item
from libra.probing.nodes import Node, child
from libra.runtime.base import State

__all__ = ["PlanningMixin"]


class PlanningMixin(EngineState):
    """Planning what each success of a wave asks for, and learning from its refusals. Keeps ``_state_makers``
    (the tools whose success opened a state: see :meth:`_opened_states`)."""

    _state_makers: set[str] | None

    def _record_outcomes(
        self, batch: Sequence[Bound], results: Sequence[tuple[dict[str, Any], State]], wave: Wave
    ) -> list[Failed]:
        """Plan what each success asks for (:meth:`_on_success`) and note each refusal; returns the calls that
        failed, in batch order, each with its value-independent refusal (:func:`~.schedule.gate_message`) or
        None."""
        failed = []
        for (item, args, used), (rec, new_state) in zip(batch, results):
            self._poll_calls()
            outcome = self._classify(item.tool, rec)
            if outcome == "success":
                marks = (len(wave.controls), len(wave.sweeps), len(wave.parent_tests))
                self._on_success(item, args, used, rec, new_state, wave)
                self._prefetch(self._test_calls(wave, *marks))
                continue
            if self._learn_exclusive(item, args, rec, wave):
                continue
            if self._revise_literals(item, args, used, rec, wave):
                continue
            if self._other_than_own(item, args, rec, wave):
                continue
            self.fits.learn_refusal(self.catalog[item.tool], args, rejection_message(rec))
            if item.fixed:
                self._note_refusal(item, args, rec)
            if outcome == "failure":
                failed.append((item, args, used, gate_message(rejection_message(rec), args)))
        return failed

    def _learn_exclusive(self, item: Item, args: dict[str, Any], rec: dict[str, Any], wave: Wave) -> bool:
        """Learn from a refusal that the call gave several of a set of inputs that exclude one another, and run
        the item again; True when the refusal was about such a set (whether or not the item runs again).

        Why: contract checking splits such a template when it sees the refusal (see
        :func:`~libra.contracts.offline.proposer.exclusive_repairs`), but a tool behind a sign-in is often first
        called by the exploration, with a template that fills every optional input ("Exactly one of track_id,
        album_id or playlist_id must be given, found 3"). From then on :meth:`bind` keeps exactly one input of the
        set (the one on offer, else one in turn by state and template), and the refused item runs again, rebound.
        The refusal says nothing about the state, so it is no evidence of a gate
        (:meth:`~.schedule.ScheduleMixin._note_refusal`) and no call to retry with other values."""
        if rec.get("status") == "success":
            return False
        group = exclusive_inputs(rejection_message(rec) or "", self.catalog[item.tool].param_names)
        if group is None:
            return False
        if sum(1 for p in group.inputs if p in args) >= 2:
            self.exclusive[item.tool] = group
            wave.new_items.append(item)
        return True

    def _revise_literals(
        self, item: Item, args: dict[str, Any], used: dict[str, int], rec: dict[str, Any], wave: Wave
    ) -> bool:
        """Revise the item's template from a refusal of one of its own literals (:mod:`.revising`: a literal
        of the wrong form repaired from the message, an invented name the tool says names nothing observed from
        then on) and run the item again; True when it did. The refusal was about the literal, not the state, so
        it is no evidence of a gate."""
        key = (item.tool, item.template)
        if rec.get("status") == "success" or self.revisions.get(key, 0) >= MAX_REVISIONS:
            return False
        tool = self.catalog[item.tool]
        if self._bare_names is None:
            self._bare_names = {t.name.rsplit(".", 1)[-1] for t in self.catalog if t.executable}
        others = self._bare_names - {tool.name.rsplit(".", 1)[-1]}
        contract = self.contracts[item.tool]
        changed = revise_template(contract, tool, item.template, args, rec, pooled=used, others=others)
        if not changed:
            return False
        self.revisions[key] = self.revisions.get(key, 0) + 1
        self.revised[item.tool] = contract
        self.counters["literals_revised"] = self.counters.get("literals_revised", 0) + len(changed)
        wave.new_items.append(item)
        for param in changed:
            self.inputs.forget(item.tool, param)
            if contract.templates[item.template].arguments[param].kind == "observation":
                self._offer_known(item.tool, param, wave.new_items)
        return True

    def _other_than_own(self, item: Item, args: dict[str, Any], rec: dict[str, Any], wave: Wave) -> bool:
        """After a refusal saying the call aimed at its caller, run a variant of the item's template that passes a
        value of its own to the input that held one the path's state-changing calls were given
        (:func:`~.revising.other_than_own`); True when it did."""
        node = self.nodes[item.node]
        if node.creator < 0:
            return False
        own = {v for n in self._lineage(node.id) if n.creator >= 0 for v in scalars(self.calls[n.creator].args)}
        contract = self.contracts[item.tool]
        made = len(contract.templates)
        index = other_than_own(contract, self.catalog[item.tool], item.template, args, rec, own)
        if index is None:
            return False
        if len(contract.templates) > made:
            self.revised[item.tool] = contract
            self.counters["own_values_varied"] = self.counters.get("own_values_varied", 0) + 1
        wave.new_items.append(Item(item.node, item.tool, index))
        return True

    def _read_first_reply(self, item: Item, args: dict[str, Any], rec: dict[str, Any]) -> None:
        """On a tool's first success, give a contract that exports nothing of its replies the fields of this one
        (:func:`~.revising.export_first_reply`), once per tool."""
        key = (item.tool, -1)  # (in the books of revisions: checkpointed with them)
        if key in self.revisions:
            return
        self.revisions[key] = 1
        contract = self.contracts[item.tool]
        added = export_first_reply(contract, self.catalog[item.tool], item.template, args, rec)
        if added:
            self.revised[item.tool] = contract
            self.counters["exports_added"] = self.counters.get("exports_added", 0) + added
            pairs = self.inputs.add_candidates(item.tool, contract.exports[-added:])
            self.counters["candidates_added"] = self.counters.get("candidates_added", 0) + pairs

    def _offer_known(self, consumer: str, param: str, items: list[Item]) -> None:
        """Offer an input that has just become observed the values the pool already holds for it (a few per
        provider field, best-named first): they were made before the input took offers, and a sign-in made once
        early in the build would otherwise never reach it."""
        keys = {k: sim for sim, k in self.inputs.ranked_keys(consumer, param)}
        per_key: dict[tuple[str, str], int] = {}
        tool = self.catalog[consumer]
        known = [pv for pv in self.values if (pv.tool, pv.export) in keys]
        for pv in sorted(known, key=lambda v: -keys[(v.tool, v.export)]):
            k = (pv.tool, pv.export)
            if per_key.get(k, 0) >= self.config.offers_per_pair:
                continue
            if self.fits.as_passed(tool, param, pv.value) is None:
                continue
            per_key[k] = per_key.get(k, 0) + 1
            self._offer_items(pv, self.nodes[pv.node], consumer, param, None, False, items)

    def _on_success(
        self,
        item: Item,
        args: dict[str, Any],
        used: dict[str, int],
        rec: dict[str, Any],
        new_state: State,
        wave: Wave,
    ) -> None:
        """Log a successful call and plan everything it leads to: the free state test against the parent state,
        a control per upstream value it used (lines 17-19), the state it created, the values it exports and the
        offers they make (lines 24-25), and the before/after sweep of its state change (lines 26-32)."""
        self._read_first_reply(item, args, rec)
        node = self.nodes[item.node]
        call_id = len(self.calls)
        self.calls.append(
            CallInfo(
                item.node,
                item.tool,
                args,
                rec,
                tuple(sorted({self.values[v].call for v in used.values() if self.values[v].call >= 0})),
            )
        )
        self._plan_parent_test(item, args, rec, wave)
        self._plan_controls(item, args, used, rec, wave)
        if item.placement and len(used) > len(item.fixed):
            wave.placed.append((item, args, used, rec))
        changed = new_state.fingerprint != node.state.fingerprint
        if changed:
            # A number offer is a value test; the state it leads to (a brake pressed to 0.53 instead of the
            # template's 1.0) is a variant of the template's own and is not explored, so it spends no sweep.
            if node.depth >= self.config.max_depth:
                return
            if (item.number_offer or item.placement) and self._opened_states(item.tool):
                return
            if self._state_makers is not None:
                self._state_makers.add(item.tool)
            target = child(self.nodes, node.id, new_state, call_id)
        else:
            target = node
        fresh = self._pool_values(item, args, used, rec, node, target, call_id, changed)
        wave.new_items.extend(self._offers(fresh, target))
        if changed:
            self._plan_sweeps(item, node, target, call_id, wave)
            if self._mint_again(item, node, rec, fresh):
                wave.new_items.append(Item(target.id, item.tool, item.template))

    def _opened_states(self, tool: str) -> bool:
        """Whether a success of ``tool`` already led to a state the exploration goes on from.

        A number offer or a placed value (an id put into a nested field, a file into a folder) makes a variant of
        a state the tool's own template already made, so exploring it again would spend sweeps on look-alikes. But
        a tool whose every literal is refused (an order whose lines must name an existing product) succeeds only
        that way; its first such success is the only state in which what consumes its output (submitting that
        order) can succeed, so it is explored like any other."""
        if self._state_makers is None:
            self._state_makers = {self.calls[n.creator].tool for n in self.nodes if n.creator >= 0}
        return tool in self._state_makers

    def _mint_again(self, item: Item, node: Node, rec: dict[str, Any], fresh: list[PoolValue]) -> bool:
        """Whether a state-changing success runs its template once more, from the state it created.

        It does when its reply names a record it rewrote in place without being given its key
        (:func:`~.values.rewrote_in_place`): either it updates a record of its own choosing, or it created one
        whose key coincides with a record that was already there, and then the key it mints -- what a caller
        passes on to read, change or cancel what it made -- is withheld from it. A second call from the state it
        created mints a key no earlier state held, and its offers test it like any created record's. A call that
        is itself such a repeat (its state was created by the same tool) runs no third one.
        """
        if node.creator >= 0 and self.calls[node.creator].tool == item.tool:
            return False
        changes = rec.get("state_changes")
        return any(pv.record.startswith("response:") and rewrote_in_place(pv.value, changes) for pv in fresh)

    def _plan_parent_test(self, item: Item, args: dict[str, Any], rec: dict[str, Any], wave: Wave) -> None:
        """Every success reached after a state change is also a state test for free: the same call from the parent
        state (memoised, usually already run) tells whether the change that created this state enabled it."""
        node = self.nodes[item.node]
        if node.parent is not None and node.creator >= 0:
            creator = self.calls[node.creator].tool
            if (
                creator != item.tool
                and (creator, item.tool, "state", None, None) not in self.relations
                and not self.outside_focus(creator, item.tool)
            ):
                wave.parent_tests.append((node.creator, CallInfo(item.node, item.tool, args, rec)))

    def _plan_controls(
        self,
        item: Item,
        args: dict[str, Any],
        used: dict[str, int],
        rec: dict[str, Any],
        wave: Wave,
        aside: bool = False,
    ) -> None:
        """One counterfactual control per upstream value the success used (Algorithm 1, lines 17-19), each pair at
        most ``tests_per_pair`` times. An input with no valid control is an inconclusive test, counted, not run.

        Which controls keep a placed offer's placement: on the exploration's own books, every input's (the rule it
        has always run, kept so that its calls stay what they were; an input other than the placed one seldom has
        such a control, and its test is inconclusive there); on the side books (``aside``, see
        :meth:`~libra.induction.explore.retrying.RetriesMixin._run_aside`) only the placed input's, the call's
        other inputs, filled as usual, getting the usual control -- whether the edit needed *that* file's path,
        beside whether it needed the text placed in it.
        """
        cfg = self.config
        tool = self.catalog[item.tool]
        lineage: list[Node] | None = None
        offered = {p for p, _v in item.fixed}
        for param, vid in used.items():
            pv = self.values[vid]
            if pv.tool == FIXTURE or self.outside_focus(pv.tool, item.tool):
                continue  # a sandbox fact is not a provider; an update keeps the pair's evidence
            pair = (pv.tool, pv.export, item.tool, param)
            if (pv.tool, item.tool, "provenance", pv.export, param) in self.relations:
                self.counters["skipped_implied"] += 1
                continue
            if self.pair_tests.get(pair, 0) >= cfg.tests_per_pair:
                continue
            if pair in self.refuted:
                self.counters["skipped_refuted"] = self.counters.get("skipped_refuted", 0) + 1
                continue  # the provider's field is another kind (see kinds.KindsMixin)
            if pv.restated and self._known_moot(pair, pv):
                self.counters["skipped_moot"] = self.counters.get("skipped_moot", 0) + 1
                continue  # moot again, at no cost (see _moot)
            if lineage is None:
                lineage = self._lineage(item.node)
            tmpl_arg = self.contracts[item.tool].templates[item.template].arguments.get(param)
            template_literal = tmpl_arg.value if tmpl_arg is not None and tmpl_arg.kind == "literal" else NO_LITERAL
            if template_literal is not NO_LITERAL and template_literal == args[param]:
                continue  # the value on offer is the template's own literal: the provider changed nothing
            placed_here = bool(item.placement) and (param in offered or not aside)
            control = self._control_for(item, tool, param, args[param], pv, lineage, template_literal, placed_here)
            if control is None:
                self.counters["inconclusive_tests"] = self.counters.get("inconclusive_tests", 0) + 1
                continue
            self.pair_tests[pair] = self.pair_tests.get(pair, 0) + 1
            omit, lit = control
            control_args = {k: v for k, v in args.items() if k != param}
            if not omit:
                control_args[param] = lit
            # A free literal (text or number the tool never checked), or a folder offer (any folder would do when
            # the control succeeds too), shows no compatibility when both calls succeed: only provenance can be
            # concluded from such a test (see JudgingMixin._record_value_test).
            free_choice = (
                placed_here or template_literal is not NO_LITERAL and not self.inputs.checked_form(item.tool, param)
            )
            # another input filled from the same record (a customer's zip code beside its id): the call checks
            # them together, so the value cannot be varied alone (see kinds.KindsMixin._kind_probes)
            tied = tuple(
                (p, self.values[v].export)
                for p, v in used.items()
                if p != param and (self.values[v].call, self.values[v].record) == (pv.call, pv.record)
            )
            wave.controls.append(
                ValueTest(pair, CallInfo(item.node, item.tool, args, rec), vid, control_args, free_choice, tied)
            )

    def _mixed_path(self, node: Node, group: str) -> bool:
        """Whether a state was reached through a state change made by a tool of another group than ``group``.

        Sweeps are budgeted per provider and depth. In a catalog of separate apps or classes, every other group's
        state change is one more state in which a provider's change can be swept, and those mixed paths vastly
        outnumber the paths within the provider's own group (sign in -> act, lock -> brake -> start); yet another
        group's change seldom enables anything that the same change without it does not. Mixed paths therefore
        have their own small budget (``cross_group_sweeps_per_tool``) and cannot use up the one the provider's own
        chains need.
        """
        for n in self._lineage(node.id):
            if n.creator >= 0 and self.catalog[self.calls[n.creator].tool].group != group:
                return True
        return False

    def _plan_sweeps(self, item: Item, node: Node, target: Node, call_id: int, wave: Wave) -> None:
        """The state dependency sweep of a state change (Algorithm 1, lines 26-32): every other tool's templates
        re-run from the new state (line 32) and, where no state relation is known yet, tested before and after.

        The provider's other templates run in the state it created too (not as tests of it: a tool is not its
        own prerequisite): a switch turned off is turned on again there, so a gate that starts open is seen
        closing and opening -- the off-then-on chain of depth 2."""
        cfg = self.config
        tool = self.catalog[item.tool]
        mixed = self._mixed_path(node, tool.group)
        sweep_key = f"{item.tool}@{node.depth}" + ("@mixed" if mixed else "")
        if self.sweeps.get(sweep_key, 0) >= (cfg.cross_group_sweeps_per_tool if mixed else cfg.sweeps_per_tool):
            return
        across = not mixed and self.sweeps.get(sweep_key, 0) < cfg.cross_group_sweeps_per_tool
        self.sweeps[sweep_key] = self.sweeps.get(sweep_key, 0) + 1
        for consumer in self.catalog:
            if not consumer.executable or consumer.name not in self.contracts:
                continue
            self._poll_calls()
            if consumer.name == item.tool:
                for ti, tmpl in enumerate(self.contracts[consumer.name].templates):
                    if ti != item.template and tmpl.expected == "success":
                        wave.new_items.append(Item(target.id, consumer.name, ti))
                continue
            if (across or consumer.group == tool.group) and not self.outside_focus(item.tool, consumer.name):
                self._sweep_consumer(item, node, target, call_id, consumer.name, wave)

    def _sweep_consumer(self, item: Item, node: Node, target: Node, call_id: int, consumer: str, wave: Wave) -> None:
        """One consumer's part of a sweep: each of its templates, bound in the new state (preferring the provider's
        own values), re-runs there, and is tested before and after unless the state relation is known."""
        for ti, tmpl in enumerate(self.contracts[consumer].templates):
            if tmpl.expected != "success":
                continue
            probe = Item(target.id, consumer, ti)
            bound = self.bind(probe, prefer_call=call_id)
            if bound is None:
                continue
            wave.new_items.append(probe)
            if (item.tool, consumer, "state", None, None) not in self.relations:
                wave.sweeps.append(SweepTest(call_id, node.id, consumer, bound[0]))
            else:
                self.counters["skipped_implied"] += 1
