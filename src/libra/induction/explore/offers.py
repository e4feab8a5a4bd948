"""Offers: each new pool value offered to the consumer inputs it is a candidate for (Algorithm 1, line 25).

An offer is a work item that runs a consumer's template in the value's state with the value bound to one input;
its success is then tested against a control (:mod:`.planning`, :mod:`.judging`). Offers are bounded per candidate
pair (``offers_per_pair``, ``tests_per_pair``): once a pair is settled -- tested enough, its relation known, or its
field refuted as another kind (:mod:`.kinds`) -- its values are offered no more, except as a few state tests of a
state some call of the consumer's group created (:meth:`OffersMixin._take_state_offer`). A value that cannot fit
the input, or whose test would be moot again, is no offer.
"""

from __future__ import annotations

from typing import Any

from libra.induction.explore.state import EngineState
from libra.induction.explore.types import PoolValue
from libra.induction.explore.worklist import Item
from libra.probing.nodes import Node

__all__ = ["OffersMixin"]

_NO_REFERENCES: dict[str, Any] = {}  # a contract without nested references (read only)

#: Offers per (provider field, consumer input) when an update tests neither tool (both unchanged): the offers
#: only make the consumer succeed, so that the values and states a changed tool may need exist, and a couple of
#: values per pair do that; the full ``offers_per_pair`` is for pairs whose relation is being tested.
UNTESTED_OFFERS_PER_PAIR = 2


class OffersMixin(EngineState):
    """The work items a success's new values make."""

    def _offers(self, fresh: list[PoolValue], target: Node) -> list[Item]:
        """Work items offering each new value to the inputs it is a candidate for (Algorithm 1, line 25).

        An input receives offers where the consumer's template observes it, and where the template fills a number
        or an input of a checked form with a literal (:meth:`~.inputs.InputRules.offered_literal`): a timestamp, a
        coordinate or a unit one tool returns and another takes is a candidate like an id is, and such a literal
        is no less replaceable than an observation (its control is the template's own literal). Other literals
        (flags, closed sets, free text) are the caller's choice and are not offered, except that a creating tool's
        path input takes a produced path as the folder its own name is placed in
        (:meth:`~.inputs.InputRules.placed_path`), and a structured literal takes a value as the reference leaf
        inside it, on the same budget and rules as number offers. These literal offers queue behind the others,
        on their own budget (``BuildConfig.number_offers_per_tool``), are never state tests and explore no state
        (see :meth:`~libra.induction.explore.planning.PlanningMixin._on_success`); a value equal to the template's
        literal is no offer (the call would be the template's own).
        """
        items: list[Item] = []
        for pv in fresh:
            self._poll_calls()
            self._offer_value(pv, target, items)
        return items

    def _offer_value(self, pv: PoolValue, target: Node, items: list[Item]) -> None:
        """Append the offers of one new value to ``items``: to each candidate input it is meant for and fits, unless
        its test would be moot again (see :meth:`~libra.induction.explore.judging.JudgingMixin._moot`: no offer,
        no charge to the consumer), and, beyond a few per pair (offers queue up faster than tests conclude; beyond
        a few per pair they only repeat), only as a state test.

        (This loop visits every candidate input of every new value, millions in a large build: what does not
        change from one input to the next is taken out of it; the verdicts and counts are those of the rules.)
        """
        key = (pv.tool, pv.export)
        consumers = self.inputs.by_provider.get(key, ())
        if not consumers:
            return
        offers, slots = self.pair_offers.row(key, consumers), self.pair_offers.slots(key, consumers)
        nested, tools, schema_ids = self.inputs.nested, self.inputs.tools, self.fits.schema_ids
        pair_tests, relations, counters, refuted = self.pair_tests, self.relations, self.counters, self.refuted
        tests_per_pair, offers_per_pair = self.config.tests_per_pair, self.config.offers_per_pair
        focus = self.focus
        # an update tests no pair of two unchanged tools: offers along one only make the consumer succeed, for
        # the values and states a changed tool may need (where they go: update.KeptFlows), and a couple of values
        # per pair do that
        kept_pair = focus is not None and pv.tool not in focus
        flows = self.kept_flows
        # whether the value fits an input, per validator: a function of the two (see FitChecker), and the value's
        # many candidate inputs share a few validators
        fits: dict[int, bool] = {}
        # the part of _take_state_offer that depends on the value and the state only
        state_offer = not (target.parent is None or target.creator < 0 or pv.call == target.creator)
        for at, (consumer, param) in enumerate(consumers):
            if pv.for_group and not self.inputs.meant_for(pv, consumer):
                continue
            leaf = nested.get(consumer, _NO_REFERENCES).get(param)
            if leaf is None:
                schema_id = schema_ids.get((consumer, param))
                if schema_id is None:
                    schema_id = self.fits.schema_id(tools[consumer], param)
                fit = fits.get(schema_id)
                if fit is None:
                    fit = fits[schema_id] = self.fits.as_passed(tools[consumer], param, pv.value) is not None
                if not fit:
                    counters["skipped_unfit"] += 1  # wrong type or format: the offer could only fail
                    continue
            if pv.restated and self._known_moot((pv.tool, pv.export, consumer, param), pv):
                counters["skipped_moot"] = counters.get("skipped_moot", 0) + 1
                continue
            kept = kept_pair and consumer not in focus
            if kept and flows is not None and not flows.allows(pv.tool, pv.export, consumer, param):
                counters["skipped_kept"] = counters.get("skipped_kept", 0) + 1
                continue
            slot = at if slots is None else slots[at]
            settled_or_spent = (
                offers[slot] >= (UNTESTED_OFFERS_PER_PAIR if kept else offers_per_pair)
                or pair_tests.get((pv.tool, pv.export, consumer, param), 0) >= tests_per_pair
                or (pv.tool, consumer, "provenance", pv.export, param) in relations
                or (refuted and (pv.tool, pv.export, consumer, param) in refuted)
            )
            if settled_or_spent:
                if not state_offer or not self._take_state_offer(pv, target, consumer, param):
                    counters["skipped_implied"] += 1
                    continue
            else:
                offers[slot] += 1
            self._offer_items(pv, target, consumer, param, leaf, settled_or_spent, items)

    def _offer_items(
        self,
        pv: PoolValue,
        target: Node,
        consumer: str,
        param: str,
        leaf: Any,
        state_test: bool,
        items: list[Item],
    ) -> None:
        """Append an offer of ``pv`` to ``param`` per template of ``consumer`` that takes it: an observed input
        (as a state test only when the pair is settled), a number or checked literal (a number offer), a creating
        tool's path or a structured literal's reference leaf (a placed offer).

        A value picked out of text (any path or hash a reply prints) is offered only where an input must name
        something that exists: filling a literal with it is a long shot on a budget shared with the number and
        folder offers, which would go to such guesses first."""
        numeric = self.inputs.offered_literal(consumer, param)
        for ti, tmpl in enumerate(self.contracts[consumer].templates):
            arg = tmpl.arguments.get(param)
            if tmpl.expected != "success" or arg is None:
                continue
            if arg.kind == "observation":
                items.append(Item(target.id, consumer, ti, ((param, pv.id),), state_test=state_test))
            elif pv.in_text:
                continue
            elif arg.kind == "literal" and numeric and not state_test and arg.value != pv.value:
                items.append(Item(target.id, consumer, ti, ((param, pv.id),), number_offer=True))
            elif (
                arg.kind == "literal"
                and not state_test
                and (leaf is not None or self.inputs.placed_path(consumer, param))
            ):
                placement = "leaf" if leaf is not None else "folder"
                if self.inputs.placed(consumer, param, placement, pv.value, arg.value) is not None:
                    items.append(Item(target.id, consumer, ti, ((param, pv.id),), placement=placement))

    def _take_state_offer(self, pv: PoolValue, target: Node, consumer: str, param: str) -> bool:
        """Whether a value whose pair is settled as a value test is still offered, as a test of ``target``.

        In a state some call created, a success is also a state test against the parent state (the file listed
        after changing directory is only readable there), so a few such offers per (creator, consumer input) go
        ahead until that dependency is known. Across groups the sweeps suffice, and the creator's own value is a
        value test, not a state test.
        """
        if target.parent is None or target.creator < 0 or pv.call == target.creator:
            return False
        creator = self.calls[target.creator].tool
        tool = self.catalog[consumer]
        key = (creator, consumer, param)
        if (
            creator == consumer
            or self.outside_focus(creator, consumer)  # (an update keeps that pair's evidence: no test to run)
            or self.catalog[creator].group != tool.group
            or not self.inputs.same_group(pv, tool)
            or (creator, consumer, "state", None, None) in self.relations
            or self.state_offers.get(key, 0) >= self.config.state_offers_per_pair
        ):
            return False
        self.state_offers[key] = self.state_offers.get(key, 0) + 1
        return True
