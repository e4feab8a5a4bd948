"""Counterfactual controls: the valid, different value that replaces a provider's value in a consumer's call.

A control must be a *valid, different* value, or its failure proves only that it was malformed (an ``observed +
"_other"`` phone number). An optional input is omitted instead (the paper's control); a required one takes the
first candidate of :func:`control_choices` that fits the input's schema (:meth:`ControlsMixin.control_value`), and
with none the test is inconclusive rather than judged on a malformed control.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from libra.catalog import Tool
from libra.induction.explore.state import EngineState
from libra.induction.explore.types import NO_LITERAL, PoolValue
from libra.induction.explore.values import is_number
from libra.induction.explore.worklist import Item
from libra.probing.nodes import Node
from libra.schema import schema_type
from libra.values.generator import literal_for, sentinel_for

__all__ = ["NEAR_FRACTION", "ControlsMixin", "control_choices", "near", "unseen_number"]

NEAR_FRACTION = 0.25  # numbers this close, relative to their magnitude, may be one value to a tolerant tool


def near(candidate: Any, observed: Any) -> bool:
    """Whether a numeric control lies too close to the observed number to test it: within
    :data:`NEAR_FRACTION` of the larger magnitude.

    Why: tools commonly treat nearby numbers alike -- a lookup within a radius, a tolerance, rounding, a bucket.
    A control next to the observed value then succeeds for that reason alone, and its success would be read as
    "any value works" (a coordinate 2.0 replacing a located 2.35 falls inside a 50 km match radius). A control
    must be *different* in the sense the tool can tell; a far one tests that, and with none the test is
    inconclusive rather than rejected on a control that was never different.
    """
    if not (is_number(candidate) and is_number(observed)):
        return False
    scale = max(abs(float(candidate)), abs(float(observed)))
    return scale > 0 and abs(float(candidate) - float(observed)) <= NEAR_FRACTION * scale


def unseen_number(known: Iterable[Any]) -> int | None:
    """The next whole number past every whole number in ``known`` (at least 1), or None when ``known`` holds none.

    Why: records are most often numbered by small counters (1, 2, 3, ...), so a plausible small number -- the
    proposer's ordinary literal for an id is 2 -- names an existing record of almost any table. A number one past
    every number the sandbox has shown for an input's kinds is of the same form and range, yet names none of
    them: what a control for a record's number must be (a valid, different value no call produced)."""
    nums = [k for k in known if isinstance(k, int) and not isinstance(k, bool)]
    return max(1, max(nums) + 1) if nums else None


def control_choices(
    param: str,
    schema: dict[str, Any],
    observed: Any,
    alternatives: Sequence[Any] = (),
    template_literal: Any = NO_LITERAL,
    unseen: int | None = None,
) -> list[Any]:
    """Candidate replacements for a required input's value, best first; the engine takes the first that fits the
    input's schema (formats and patterns included) and differs from the observed value.

    For an input the template fills with a literal (a number on offer), the control is that literal, or another
    ordinary literal of the proposer: what the call does without the provider; for a number, then other observed
    numbers of the same kind, and never one :func:`near` the observed number. For an observed input, in order: a
    neutral placeholder for strings that must refer to something (a plausible guess could name an existing
    record), or for whole numbers the number past every number of the input's kinds (``unseen``, see
    :func:`unseen_number`: a small guess names an existing record as readily), the proposer's ordinary literals,
    a sentinel, and last other observed values of the same kind (valid in form because the sandbox produced
    them). The observed values come last because they are real records: a consumer that accepts any existing
    file or user succeeds with another one too, which tests whether *some* record works, not whether this
    provider's value was needed (Algorithm 1, line 17: a test value not produced by t_p); they replace the
    malformed guess where nothing constructed is valid.
    """
    out: list[Any] = []
    desc = schema.get("description", "")
    if template_literal is not NO_LITERAL:
        out.append(template_literal)
        out.extend(literal_for(param, schema, desc, option=o) for o in range(3))
        if is_number(observed):
            # a number on offer: other observed numbers of the same kind are valid too, and are the far
            # replacements when the proposer's literals all lie next to the observed value (see near)
            out.extend(alternatives)
            return [c for c in out if c is not None and c != observed and not near(c, observed)]
        return [c for c in out if c is not None and c != observed]
    if schema_type(schema) in (None, "string") and "enum" not in schema:
        out.append("libra_control_value")
        out.append(sentinel_for(schema))
    elif unseen is not None and schema_type(schema) == "integer" and "enum" not in schema:
        out.append(unseen)
    out.extend(literal_for(param, schema, desc, option=o) for o in range(3))
    out.append(sentinel_for(schema))
    out.extend(alternatives)
    return [c for c in out if c is not None and c != observed]


class ControlsMixin(EngineState):
    """Choosing a control's value for one input of a success."""

    def _control_for(
        self,
        item: Item,
        tool: Tool,
        param: str,
        observed: Any,
        pv: PoolValue,
        lineage: list[Node],
        template_literal: Any,
        placed_here: bool,
    ) -> tuple[bool, Any] | None:
        """The control of ``param`` in a success of ``item``: (omit?, literal), or None when none is valid.

        The control of a placed offer (``placed_here``) keeps the placement and changes only the value placed, to
        one no call made: whether the call needed *that* folder or record, not whether it needed one at all (a
        tool that creates missing parents succeeds either way, and is no consumer of the folder). Any other input
        takes :meth:`control_value`, with the other observed values of its kind as the last resort.
        """
        if placed_here:
            placed = self.inputs.placed(
                item.tool, param, item.placement, sentinel_for({"type": "string"}), template_literal
            )
            if placed is None or self.fits.as_passed(tool, param, placed) is None:
                return None
            return False, placed
        if param not in tool.required:
            return True, None
        alternatives = self._control_alternatives(item.tool, param, pv, lineage)
        unseen = self._unseen(item.tool, param, observed, lineage) if template_literal is NO_LITERAL else None
        return self.control_value(tool, param, observed, alternatives, template_literal, unseen)

    def control_value(
        self,
        tool: Tool,
        param: str,
        observed: Any,
        alternatives: Sequence[Any] = (),
        template_literal: Any = NO_LITERAL,
        unseen: int | None = None,
    ) -> tuple[bool, Any] | None:
        """An independently constructed replacement for ``param``: (omit?, literal), or None when no valid,
        different value exists (the test is then inconclusive, never judged on a malformed control).

        An optional input is omitted (the paper's control). A required one takes the first of
        :func:`control_choices` that validates against the input's JSON Schema, declared formats and patterns
        included.
        """
        if param not in tool.required:
            return True, None
        for lit in control_choices(param, tool.param_schema(param), observed, alternatives, template_literal, unseen):
            if self.fits.as_passed(tool, param, lit) is not None:
                return False, lit
        return None

    def absent_value(self, consumer: str, param: str, observed: Any, lineage: list[Node]) -> Any | None:
        """A value of ``param``'s form that no call produced: the first of the string placeholder, the number past
        every number of the input's kinds and a sentinel that fits the input, or None. What a consumer does with it
        is what it does with a value that names nothing (see :mod:`.kinds`), and none a call on the path showed.
        The proposer's ordinary literals are no such value: a common user name or a small number may well name a
        record."""
        tool = self.catalog[consumer]
        schema = tool.param_schema(param)
        unseen = self._unseen(consumer, param, observed, lineage)
        known = [n.known for n in lineage]
        for lit in ("libra_control_value", unseen, sentinel_for(schema)):
            if lit is None or lit == observed or any(json.dumps(lit, sort_keys=True) in k for k in known):
                continue  # (a placeholder an earlier call took, and handed back, may now name a record)
            if self.fits.as_passed(tool, param, lit) is not None:
                return lit
        return None

    def _unseen(self, consumer: str, param: str, observed: Any, lineage: list[Node]) -> int | None:
        """:func:`unseen_number` of the observed value and every value on the path of a (provider, export) the
        input's name rule admits (:meth:`~.inputs.InputRules.ranked_keys`); None for an input that takes no whole
        number."""
        if schema_type(self.catalog[consumer].param_schema(param)) != "integer":
            return None
        allowed = self.inputs.allowed(consumer, param)
        known: list[Any] = [observed]
        for n in lineage:
            keys = n.by_key.keys() & allowed.keys()  # (the smaller of the two is walked)
            for key in keys:
                known.extend(self.values[vid].value for vid in n.by_key[key])
        return unseen_number(known)

    def _control_alternatives(self, consumer: str, param: str, pv: PoolValue, lineage: list[Node]) -> list[Any]:
        """Other observed values of the same kind on the consumer's path, deepest first: values of the same
        (provider, export) as the one tested, then values the input's name rule accepts
        (:meth:`~.inputs.InputRules.ranked_keys`). Something produced them, so their form is one the sandbox
        itself uses."""
        seen = {json.dumps(pv.value, sort_keys=True)}
        out: list[Any] = []
        keys = [(pv.tool, pv.export)] + [
            k for _sim, k in self.inputs.ranked_keys(consumer, param) if k != (pv.tool, pv.export)
        ]
        for key in keys:
            if len(out) >= 8:
                break
            for n in lineage:
                for vid in n.by_key.get(key, ()):
                    v = self.values[vid].value
                    j = json.dumps(v, sort_keys=True)
                    if j not in seen:
                        seen.add(j)
                        out.append(v)
        return out
