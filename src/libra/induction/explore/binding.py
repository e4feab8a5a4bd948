"""Binding a work item's inputs to concrete arguments (Algorithm 1, line 11: Fill).

An item says which template of which tool to run in which state, and which value is on offer to which input. The
rest of its inputs are filled here: a template's literal stays (unless a sandbox fact or a field of the offered
value's own record fits it), an observed input takes the best pool value on the item's path (:meth:`_best_value`),
and an optional observation with nothing to observe is left out. A binding that would pass one value in two roles
is not made (:func:`offer_coincides`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from libra.catalog import Tool
from libra.contracts.exclusive import one_of
from libra.contracts.model import Argument
from libra.induction.explore.state import EngineState
from libra.induction.explore.types import FIXTURE, PoolValue
from libra.induction.explore.worklist import Item
from libra.probing.nodes import Node
from libra.values.generator import literal_for

__all__ = ["BindingMixin", "held_text", "holding", "offer_coincides"]

_NO_KEYS: frozenset[tuple[str, str]] = frozenset()
#: What a fill found: (rank, pool value, the argument it passes); ranks compare within one kind of search.
Fill = tuple[Any, ...]


def held_text(value: Any) -> str | None:
    """The string a filled input holds (None for anything else); a one-element list holds its string, since a
    scalar may fill a list input."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value if isinstance(value, str) else None


def holding(on_offer: set[str | None], args: dict[str, Any]) -> frozenset[str]:
    """The strings a call under binding already passes: the values on offer and the inputs filled so far."""
    return frozenset({*on_offer, *map(held_text, args.values())} - {None})


def offer_coincides(args: dict[str, Any], used: dict[str, int], offered: dict[str, int]) -> bool:
    """Whether a string on offer to one input is also what the call passes in another input it filled itself.

    Why: a call that receives the same string in two roles (a customer id as the id and as the zip code) cannot
    tell the roles apart, and whatever it then writes or returns ties the value to both: every relation learned
    from it is a coincidence of values across fields. Such a binding is not made; the offer is tested where the
    other inputs hold their own values.
    """
    for param, vid in offered.items():
        value = args.get(param)
        if not isinstance(value, str) or used.get(param) != vid:
            continue
        if any(p != param and p in used and p not in offered and args.get(p) == value for p in args):
            return True
    return False


@dataclass
class _Binding:
    """One item's binding in progress: what :meth:`BindingMixin.bind` fills input by input."""

    item: Item
    tool: Tool
    fixed: dict[str, int]  # input -> pool value on offer
    prefer_call: int | None
    siblings: frozenset[tuple[int, str]]  # the records of the values on offer
    offered: set[int]  # the values on offer to an input of the template
    on_offer: set[str | None]  # their strings
    args: dict[str, Any] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)
    lineage: list[Node] | None = None  # the item's path, taken when first needed


class BindingMixin(EngineState):
    """Filling an item's inputs from the pool. Keeps ``_present_by_node`` and ``_present_by_path`` (see
    :meth:`_present_keys`)."""

    #: (node, consumer, input) -> the node's key count and its keys the input admits
    _present_by_node: dict[tuple[int, str, str], tuple[int, frozenset[tuple[str, str]]]]
    #: (deepest node, consumer, input) -> the path's key count and its admitted keys, ranked
    _present_by_path: dict[tuple[int, str, str], tuple[int, list[tuple[float, tuple[str, str]]]]]

    #: entries of each cache of :meth:`_present_keys` at most (a cleared cache only computes again)
    PRESENT_CACHE = 1 << 14

    def bind(self, item: Item, prefer_call: int | None = None) -> tuple[dict[str, Any], dict[str, int]] | None:
        """Concrete arguments for an item, and the pool value each filled input took, or None when a required
        observation has no fitting value.

        The values on offer are taken before any input is filled: a value offered to one input never also fills
        another as its sibling or best-named value (one value in two roles, see :func:`offer_coincides`), also
        when the offer is passed as a one-element list.
        """
        tmpl = self.contracts[item.tool].templates[item.template]
        fixed = dict(item.fixed)
        offered = {v for p, v in fixed.items() if p in tmpl.arguments}
        b = _Binding(
            item,
            self.catalog[item.tool],
            fixed,
            prefer_call,
            self._records(fixed.values()),
            offered,
            {held_text(self.values[v].value) for v in offered},
        )
        for param, arg in tmpl.arguments.items():
            if param in fixed and arg.kind in ("observation", "literal"):
                if not self._bind_offer(b, param, arg):
                    return None
            elif arg.kind == "literal":
                self._bind_literal(b, param, arg)
            elif arg.kind == "observation":
                self._bind_observation(b, param)
        if offer_coincides(b.args, b.used, fixed):
            return None
        return self._one_of_exclusive(b)

    def _bind_offer(self, b: _Binding, param: str, arg: Argument) -> bool:
        """The value on offer to ``param`` (a literal input receives one only when it is a number or of a checked
        form: see :mod:`.offers`), placed as the offer says; False when it does not fit."""
        pv = self.values[b.fixed[param]]
        offer = self.inputs.placed(b.item.tool, param, b.item.placement, pv.value, arg.value)
        val = None if offer is None else self.fits.as_passed(b.tool, param, offer)
        if val is None:
            return False
        b.args[param], b.used[param] = val, pv.id
        return True

    def _bind_literal(self, b: _Binding, param: str, arg: Argument) -> None:
        """A literal input keeps the template's literal, unless a field of the offered value's own record fits it
        (the longitude beside an offered latitude), or a sandbox fact fits it by name or description
        ("phone_number: The phone number to search for." beside the sandbox's own phone number): a search for an
        invented number finds nothing."""
        b.args[param] = arg.value
        tool_name = b.item.tool
        sibling = (
            self._sibling_value(tool_name, b.tool, param, b.siblings, b.offered | set(b.used.values()))
            if self.inputs.offered_literal(tool_name, param)
            else None
        )
        if sibling is not None:
            b.args[param], b.used[param] = sibling[1], sibling[0].id
        elif self.inputs.known_fits(tool_name, param):
            best = self._fill(b, param)
            if best is not None:
                b.args[param], b.used[param] = best[2], best[1].id

    def _bind_observation(self, b: _Binding, param: str) -> None:
        """An observed input takes the best value on the path (:meth:`_best_value`). With none, an optional input
        is left out; a required one takes the value the tool's own metadata suggests: if the tool really needs a
        pre-existing value the call fails and teaches nothing; if it accepts any value, the observation was
        over-cautious and the call still opens the states that follow."""
        best = self._fill(b, param)
        if best is not None:
            b.args[param], b.used[param] = best[2], best[1].id
        elif param in b.tool.required:
            schema = b.tool.param_schema(param)
            b.args[param] = literal_for(param, schema, schema.get("description", ""), tool=b.tool.name)

    def _fill(self, b: _Binding, param: str) -> Fill | None:
        """:meth:`_best_value` for ``param`` given what the binding holds so far."""
        if b.lineage is None:
            b.lineage = self._lineage(b.item.node)
        taken = b.offered | set(b.used.values())
        return self._best_value(
            b.item.tool,
            b.tool,
            param,
            b.lineage,
            b.prefer_call,
            b.siblings,
            taken,
            holding(b.on_offer, b.args),
            self._records(b.offered | set(b.used.values())),
        )

    def _one_of_exclusive(self, b: _Binding) -> tuple[dict[str, Any], dict[str, int]]:
        """The binding with at most one input of a set the tool said exclude one another
        (:meth:`~libra.induction.explore.planning.PlanningMixin._learn_exclusive`): the one on offer, else one in
        turn by state and template."""
        args, used = b.args, b.used
        group = self.exclusive.get(b.item.tool)
        if group is not None:
            keep = one_of(args, group, [p for p in b.fixed if p in args], b.item.node + b.item.template)
            if keep is not None:
                args = {p: v for p, v in args.items() if p not in group.inputs or p == keep}
                used = {p: v for p, v in used.items() if p in args}
        return args, used

    def _records(self, vids: Iterable[int]) -> frozenset[tuple[int, str]]:
        """The (call, record) pairs the given pool values were read from (fixtures have none)."""
        return frozenset((pv.call, pv.record) for pv in (self.values[v] for v in vids) if pv.call >= 0 and pv.record)

    def _sibling_value(
        self, consumer: str, tool: Tool, param: str, siblings: frozenset[tuple[int, str]], taken: Iterable[int] = ()
    ) -> tuple[PoolValue, Any] | None:
        """A value for ``param`` read from the same record as a value on offer, best-named first, or None.

        Why: a consumer that takes several fields of one record (a customer's id and zip code to verify them, a
        latitude and longitude) checks them against each other. Filled independently, the other field takes the
        best-named value of *any* record -- the first customer's zip code beside the offered customer's id -- and
        every offer but the first record's fails for the mismatch, so only that record is ever seen succeeding
        (and if its orders cannot be cancelled, nothing cancellable is ever listed). The offered value's own
        record is what a caller would take its other fields from. Only inputs the name rule already admits for
        the value (:meth:`~.inputs.InputRules.ranked_keys`) take a sibling, and a field fills one input only
        (``taken``: the values the binding already uses), or the call would get one value in two roles (see
        :func:`offer_coincides`). Which relations a test can conclude is unchanged.

        A field fills an input only if it is its record's best-named field for that input (what the name rule
        would pick among the record's fields). When that field is already taken -- it is the value on offer, in
        another input -- the input takes no sibling (None) and is filled as without this rule. Why: a caller
        passes a record's fields in their own roles. A record's first name offered as a last name would otherwise
        make the first-name input take the record's *last* name (the next best-named field, 0.79 alike): the
        permuted call tests neither field, yet where it succeeds (any names will do) and so does its control,
        name similarity alone concludes a ``first_name -> last_name`` compatibility. Ties count against the
        sibling: a taken field named as well as it for the input leaves the role ambiguous.
        """
        if not siblings:
            return None
        taken = set(taken)
        allowed = self.inputs.allowed(consumer, param)
        best: tuple[tuple[float, int], PoolValue, Any] | None = None
        best_taken = float("-inf")  # the best name similarity of a record field already in another input
        for call in sorted({c for c, _r in siblings}):
            for vid in self.call_values.get(call, ()):
                pv = self.values[vid]
                sim = allowed.get((pv.tool, pv.export))
                if sim is None or (pv.call, pv.record) not in siblings or not self.inputs.meant_for(pv, consumer):
                    continue
                if pv.id in taken:
                    best_taken = max(best_taken, sim)
                    continue
                val = self.fits.as_passed(tool, param, pv.value)
                if val is not None and (best is None or (sim, -pv.id) > best[0]):
                    best = ((sim, -pv.id), pv, val)
        if best is None or best_taken >= best[0][0]:
            return None  # no field of the record, or its best-named one is in another role already
        return best[1], best[2]

    def _best_value(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        lineage: list[Node],
        prefer_call: int | None,
        siblings: frozenset[tuple[int, str]] = frozenset(),
        taken: Iterable[int] = (),
        held: frozenset[str] = frozenset(),
        records: frozenset[tuple[int, str]] = frozenset(),
    ) -> Fill | None:
        """The pool value an incidental fill takes: a field of the offered value's own record first (see
        :meth:`_sibling_value`), then the calling provider's own value, then the best-named producer, then the
        deepest state, then the oldest value.

        A string another input of the call already holds (``held``: the offers and the inputs filled so far, see
        :func:`holding`) is taken only when no other value fits. Why: a tool that takes two values of one kind
        (two files to compare, a source and a destination, two cities, two currencies) is meant for two different
        ones; given the same value in both roles it compares a file with itself or converts a currency into
        itself, which tools refuse or answer with nothing, and a test cannot tell the roles apart. Where the value
        is new in a state, every input prefers it: a file just created fills both inputs of a comparison, in the
        sweep that tests the creation (which prefers the creator's values) and in the offer of the new name (the
        deepest state's value is the best), so without this rule no test shows that the comparison needs the file
        created. With a second value of the kind on the path, the call gets two.

        That second value is not taken from a record the call already passes a value of (``records``): a record's
        fields fill their own roles or none (:meth:`_sibling_value`), and a record's last name in the first-name
        input beside its first name offered as the last name is the permutation the sibling rule refuses. Such a
        binding then holds one value twice, and :func:`offer_coincides` drops it.
        """
        sibling = self._sibling_value(consumer, tool, param, siblings, taken)
        if sibling is not None:
            return ((True, 2.0), sibling[0], sibling[1])
        if held:
            best = self._best_fill(consumer, tool, param, lineage, prefer_call, held, records)
            if best is not None:
                return best
        return self._best_fill(consumer, tool, param, lineage, prefer_call, frozenset())

    def _best_fill(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        lineage: list[Node],
        prefer_call: int | None,
        held: frozenset[str],
        records: frozenset[tuple[int, str]] = frozenset(),
    ) -> Fill | None:
        """:meth:`_best_value` after the sibling: the best value whose string ``held`` does not list, read from none
        of ``records``: the calling provider's own value first (``prefer_call``), else the best on the path."""
        if prefer_call is not None:
            best = self._best_of_call(consumer, tool, param, prefer_call, held, records)
            if best is not None:
                return best
        return self._best_on_path(consumer, tool, param, lineage, held, records)

    def _best_of_call(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        call: int,
        held: frozenset[str],
        records: frozenset[tuple[int, str]],
    ) -> Fill | None:
        """The best of the values one call produced for ``param`` (a sweep prefers the provider's own values):
        better name, the consumer's own group, deeper state, older value."""
        allowed = self.inputs.allowed(consumer, param)
        best: Fill | None = None
        for vid in self.call_values.get(call, ()):
            pv = self.values[vid]
            if not self.inputs.meant_for(pv, consumer):
                continue
            sim = allowed.get((pv.tool, pv.export))
            if sim is None:
                continue
            val = self.fits.as_passed(tool, param, pv.value)
            if val is not None and held_text(val) not in held and (pv.call, pv.record) not in records:
                rank = (True, sim, self.inputs.same_group(pv, tool), True, self.nodes[pv.node].depth, -pv.id)
                if best is None or rank > best[0]:
                    best = (rank, pv, val)
        return best

    def _best_on_path(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        lineage: list[Node],
        held: frozenset[str],
        records: frozenset[tuple[int, str]],
    ) -> Fill | None:
        """The best value on the path for ``param``: best-named key first; within a key, the deepest state's
        first fitting value; among equally named keys, the consumer's own group (a sandbox fact counts as every
        group's), then a tool's value before a sandbox fact (the fallback: a tool that reveals the same fact is
        what a caller would use), the deeper state, the older value.

        Why the group first: another group's tool is another app or module, and an equally named value of it
        is not the same fact -- a bakery's product names fit a garage's ``username`` as well as the garage's test
        account does when the input's description says "user name", and the sign-in would take a loaf of bread
        for a mechanic whenever the two are built together."""
        keys = self.inputs.ranked_keys(consumer, param)
        allowed = self.inputs.allowed(consumer, param)
        # Only a key with a value somewhere on the path can fill the input: when the path holds fewer keys than the
        # input admits (the usual case for an input many tools can fill), the keys are taken from the path's side,
        # in the same order, and the search is the same.
        total = sum(len(n.by_key) for n in lineage)
        if total < len(keys) * len(lineage):
            keys = self._present_keys(consumer, param, lineage, allowed, total)
        best: Fill | None = None
        for sim, key in keys:
            if best is not None and sim < best[0][1]:
                break
            for n in lineage:  # deepest first: the first fitting value of a key is its best
                hit = self._first_fit(consumer, tool, param, n.by_key.get(key), held, records)
                if hit is not None:
                    rank = (False, sim, self.inputs.same_group_key(key, tool), key[0] != FIXTURE, n.depth, -hit[0].id)
                    if best is None or rank > best[0]:
                        best = (rank, hit[0], hit[1])
                    break
        return best

    def _first_fit(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        vids: list[int] | None,
        held: frozenset[str],
        records: frozenset[tuple[int, str]],
    ) -> tuple[PoolValue, Any] | None:
        """The first of ``vids`` that fits ``param``, with the argument it passes (see :meth:`_best_fill`)."""
        if not vids:
            return None
        for vid in vids:
            pv = self.values[vid]
            if not self.inputs.meant_for(pv, consumer):
                continue
            val = self.fits.as_passed(tool, param, pv.value)
            if val is not None and held_text(val) not in held and (pv.call, pv.record) not in records:
                return pv, val
        return None

    def _present_keys(
        self, consumer: str, param: str, lineage: list[Node], allowed: dict[tuple[str, str], float], total: int
    ) -> list[tuple[float, tuple[str, str]]]:
        """The keys ``allowed`` admits that hold a value somewhere on ``lineage``, best match first, as
        :meth:`~.inputs.InputRules.ranked_keys` orders them; ``total`` is the number of keys the lineage's nodes
        hold together.

        Why cached: an input is filled on the same path over and over (a sweep binds every tool in a new state,
        the probes it queues bind them there again, and every path shares its ancestors), and the intersection of
        a node's keys with the input's was most of a binding's cost. Nothing here can go stale: a node's keys only
        grow (values are added, never removed, and a key once added stays), so a node holding as many keys as
        when its entry was made holds the same keys, and a path (fixed by its deepest node) holding as many in
        total holds the same keys on every node. An entry whose count differs is recomputed.
        """
        path_key = (lineage[0].id, consumer, param)
        hit = self._present_by_path.get(path_key)
        if hit is not None and hit[0] == total:
            return hit[1]
        by_node = self._present_by_node
        if len(by_node) >= self.PRESENT_CACHE:
            by_node.clear()
        present: set[tuple[str, str]] = set()
        for n in lineage:
            node_key = (n.id, consumer, param)
            got = by_node.get(node_key)
            if got is None or got[0] != len(n.by_key):
                common = n.by_key.keys() & allowed.keys()  # walks the smaller of the two, in C
                got = by_node[node_key] = (len(n.by_key), frozenset(common) if common else _NO_KEYS)
            present |= got[1]
        keys = sorted(((allowed[k], k) for k in present), key=lambda x: (-x[0], x[1]))
        if len(self._present_by_path) >= self.PRESENT_CACHE:
            self._present_by_path.clear()
        self._present_by_path[path_key] = (total, keys)
        return keys
