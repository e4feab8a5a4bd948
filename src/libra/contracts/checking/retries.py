"""Retries of a template that did not succeed in contract checking: other equally fitting values, the sandbox's
fixtures, a literal repaired from the rejection, values packed into one text input, other states."""

from __future__ import annotations

import json
from typing import Any

from libra.catalog import Tool
from libra.contracts.checking.binding import FIXTURE, MIN_SCORE, coerce, fill, fitting, fixture_score
from libra.contracts.checking.walk import Run, Walk
from libra.contracts.model import Argument, Template
from libra.contracts.outcome import rejection_message
from libra.contracts.packed import packed_value
from libra.contracts.summary import TemplateCheck, ToolCheck
from libra.contracts.text_values import is_empty_text
from libra.probing.rebind import REBINDS, Rebound, signature, take_untried, varied_picks
from libra.schema import schema_type
from libra.values.repair import message_parameter, repair_literal

#: How many other states a failed template is re-run from, looking for the state change that lets it succeed.
RETRY_STATES = 4


#: How many times a text input is re-packed from successive rejections ("missing start", then "missing end").
PACK_ROUNDS = 4


def empty_text_output(output: Any) -> bool:
    """A reply in text that says it found nothing: a blank or empty-result string
    (:func:`~libra.contracts.text_values.is_empty_text`), alone, as the only text block of a list, or as the only
    field of an object (``{"content": "No matches"}``)."""
    if isinstance(output, dict) and len(output) == 1:
        output = next(iter(output.values()))
    if isinstance(output, list) and len(output) == 1:
        output = output[0]
    return isinstance(output, str) and (not output.strip() or is_empty_text(output))


class Retries(Walk):
    """The checking walk's retries of a success template whose run failed (or printed that it found nothing): each
    keeps the first variant that succeeds as the template's result, and every failure as feedback."""

    def _rebinds(
        self, tool: Tool, template: Template, check: TemplateCheck
    ) -> list[tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]]]:
        """Other bindings for a success template whose bound run failed, best first: for each observation a
        value that fits its name at least as well as the one the failed run took, differing from every binding
        already run in at least one observation, at most :data:`REBINDS` over the template's life.

        Why: binding picks, for each observation, the value whose name fits best, and observed values of one
        name often denote different kinds of thing (a listing's ``path`` holds folders and files alike; an
        ``id`` may be an order's or a draft's). The name cannot tell them apart, so a run that failed with one of
        them says little about the others: the tool may want exactly the other kind (an editor that works only
        on a file). A worse-named value is a worse guess, not an equal one, so it is not tried. Values that
        appear in later passes (a file another tool wrote) count too, so the outcome does not hinge on which
        tool happened to run first. Deterministic order: higher total fit, then bases as binding ranks them
        (shallowest, then oldest), within a base the best values, then one input at a time varied over its
        other values, oldest first. The rule is :mod:`libra.probing.rebind`'s, shared with the exploration
        (:meth:`libra.induction.explore.engine.Engine._rebinds`); this method supplies checking's pool and name score.
        """
        obs = template.observations
        binds0 = check.bindings or {}
        if not obs or any("score" not in binds0.get(p, {}) for p in obs) or check.arguments is None:
            return []
        memory = self._rebound(tool, template)
        memory.tried.add(signature(obs, check.arguments))
        if memory.runs >= REBINDS or memory.nodes == len(self.pool.nodes):
            return []
        # Bases looked at before offered every value they hold (or the retries ran out): only new ones can add.
        bases = self._bases() if memory.nodes < 0 else self.pool.nodes[memory.nodes :]
        memory.nodes = len(self.pool.nodes)
        want = {p: binds0[p]["score"] for p in obs}
        literal_args = {p: a.value for p, a in template.arguments.items() if a.kind == "literal"}
        ranked: list[
            tuple[
                tuple[float, int, int, int],
                dict[str, Any],
                tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]],
            ]
        ] = []
        for node in bases:
            scored = self._scored(tool, template, self._pool(node))
            if scored is None:
                continue
            fit = {
                p: sorted((z for z in sc if round(z[0], 3) >= want[p]), key=lambda z: (-z[0], -z[1], z[2].id))
                for p, sc in scored.items()
            }
            if not all(fit.values()):
                continue
            where = (0, 0) if node is None else (node.depth, node.id)
            for i, picks in enumerate(varied_picks({p: fit[p] for p in obs})):
                total = round(sum(z[0] for z in picks.values()), 3)
                args, binds = fill(literal_args, picks)
                ranked.append(((-total, *where, i), args, (node.id if node is not None else None, args, binds)))
        return take_untried(memory, obs, ranked, REBINDS)

    def _rebound(self, tool: Tool, template: Template) -> Rebound:
        """The rebinding memory of one template (a template a revision rewrote starts afresh)."""
        key = (tool.name, json.dumps(template.to_dict(), sort_keys=True, default=str))
        return self.rebound.setdefault(key, Rebound())

    def _retry_rebound(self, tool: Tool, template: Template, check: TemplateCheck) -> int:
        """Run a success template whose bound run failed with the next values that fit it as well
        (:meth:`_rebinds`); the first success becomes its result, and every failure stays as feedback for revision
        (a refusal of the right kind of value says what else is wrong: an edit's text that is not in the file).
        Returns how many calls it made."""
        if template.expected != "success" or check.observed != "failure":
            return 0
        ran = 0
        for parent, args, binds in self._rebinds(tool, template, check):
            self._rebound(tool, template).runs += 1
            ran += 1
            if self._adopt(tool, template, check, parent, args, binds):
                break
        return ran

    def retry_rebound(self, tool_checks: dict[str, ToolCheck]) -> int:
        """:meth:`_retry_rebound` for every failed success template, with the values later calls produced."""
        ran = 0
        for tool, template, check in self._checked_templates(tool_checks):
            if template.observations:
                ran += self._retry_rebound(tool, template, check)
        return ran

    def _reveal(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> bool:
        """Run a template whose success printed that it found nothing ("No results", "Notes: []") from another
        state; keep the run as the template's result when it succeeds with something to show.

        Why: revision learns what a text reply holds (an embedded JSON list, ids, lines) from a reply that holds
        it, and a listing from the fresh state is often empty. Only an empty reply in text triggers this (see
        :func:`empty_text_output`); the empty run stays as feedback.
        """
        trial = TemplateCheck(template.name, template.expected)
        run = self._execute(tool, template, trial, parent, args, binds)
        self.runs[tool.name].remove(run)
        if trial.observed != "success" or empty_text_output(run.record.get("output")):
            self.contrast.setdefault(tool.name, []).append(run)
            return False
        old = next(r for r in reversed(self.runs[tool.name]) if r.template.name == template.name)
        self.runs[tool.name] = [run if r is old else r for r in self.runs[tool.name]]
        self.contrast.setdefault(tool.name, []).append(old)
        run.check = check
        check.observed, check.arguments, check.bindings = trial.observed, trial.arguments, trial.bindings
        check.status, check.error = trial.status, trial.error
        return True

    def _retry_repaired(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> bool:
        """Repair a constructed value the tool's validation rejected, from its message, and run once more.

        Why: a template whose observations nothing produced runs with values its metadata suggests; when the
        tool rejects one for its form ("must start with '+' and country code") the message says how to fix it
        (the paper's feedback loop, as :func:`~libra.contracts.offline.proposer.literal_repairs` does for literals).
        Without the repair the tool is never seen succeeding in checking, so its response is never observed and
        revision never exports what it returns (a message id).
        """
        constructed = {p: args[p] for p, b in binds.items() if b.get("constructed") and p in args}
        run = next((r for r in reversed(self.runs.get(tool.name, [])) if r.template.name == template.name), None)
        message = rejection_message(run.record) if run is not None else None
        if not constructed or not message:
            return False
        param = message_parameter(message, constructed, others=[p for p in args if p not in constructed])
        if param is None:
            return False
        value = repair_literal(param, tool.param_schema(param), constructed[param], message)
        if value is None or value == constructed[param]:
            return False
        return self._adopt(tool, template, check, None, {**args, param: value}, binds)

    def _retry_packed(self, tool: Tool, template: Template, check: TemplateCheck, limit: int = PACK_ROUNDS) -> int:
        """Pack more values into a text input the tool rejected for holding too few, from its message; returns
        how many calls it made.

        Why: a tool that takes several values packed into one string ("two sequences separated by a comma", "a
        path and a line, comma-separated") is bound to one observed value of that kind and refuses it, saying
        what is missing. :func:`~libra.contracts.packed.packed_value` builds what the message asks for, from
        the rejected value and the other observed values that fit the input (best first); a message that asks
        for one more part at a time is followed for at most ``limit`` rounds. An invented value (a literal) this
        loop packed, which the tool then refuses for its parts' form, is repaired from that message as any
        literal is (:func:`~libra.schema.repair_literal`) and packed again in the next round; a literal refused
        before any packing is left to revision, which rewrites the template itself. Without this the tool is never
        seen succeeding. The run that succeeds becomes the template's result; failures stay as feedback.
        """
        ran = 0
        packed_params: set[str] = set()
        run = next((r for r in reversed(self.runs.get(tool.name, [])) if r.template.name == template.name), None)
        for _ in range(limit):
            message = rejection_message(run.record) if run is not None else None
            if run is None or not message or check.observed == "success":
                return ran
            changed = None
            for p, value in run.args.items():
                ps = tool.param_schema(p)
                if not isinstance(value, str) or schema_type(ps) not in (None, "string"):
                    continue
                others = self._alternatives(tool, template, p, run)
                packed = packed_value(value, message, str(ps.get("description", "")), others)
                if packed is None and p in packed_params and self._invented(template, p, check):
                    # a packed literal whose parts the tool refuses for their form: repair it, then pack again
                    packed = (
                        repair_literal(p, ps, value, message)
                        if message_parameter(message, {p: value}, [q for q in run.args if q != p]) == p
                        else None
                    )
                if packed is not None and packed != value and coerce(ps, packed) is not None:
                    changed = {**run.args, p: packed}
                    packed_params.add(p)
                    break
            if changed is None:
                return ran
            ran += 1
            if self._adopt(tool, template, check, run.parent, changed, dict(check.bindings or {})):
                return ran
            run = self.contrast[tool.name][-1]  # the packed call just refused: its message asks for the next part
        return ran

    @staticmethod
    def _invented(template: Template, param: str, check: TemplateCheck) -> bool:
        """Whether a call's value for ``param`` is the proposer's own (a literal, or constructed for an
        observation nothing produced), not a value the sandbox showed."""
        arg = template.arguments.get(param)
        return arg is not None and (
            arg.kind == "literal" or bool((check.bindings or {}).get(param, {}).get("constructed"))
        )

    def _alternatives(self, tool: Tool, template: Template, param: str, run: Run) -> list[Any]:
        """Other observed values that fit an observation input from a run's base, best first (none for a literal)."""
        arg = template.arguments.get(param)
        if arg is None or arg.kind != "observation":
            return []
        node = self.pool.nodes[run.parent] if run.parent is not None else None
        # a number coerced to text is not another value of a text input's kind
        text = [pv for pv in self._pool(node) if isinstance(pv.value, str)]
        scored = [(-s, pv.id, val) for s, _, pv, val in fitting(tool, param, arg, text) if val != run.args.get(param)]
        return [v for _, _, v in sorted(scored, key=lambda z: (z[0], z[1]))]

    def _retry_with_fixtures(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int | None,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> None:
        """Offer the sandbox's fixtures to the literal inputs of a success template the tool did not accept.

        A literal is the proposer's guess; a fixture whose name or description fits the input is a value the
        sandbox is known to hold (its test account's number, its user name). Tried only after the literal failed,
        so a template that creates a new record with a fresh literal keeps its own value.
        """
        fixed = dict(args)
        fills = dict(binds)
        for p, a in template.arguments.items():
            if a.kind != "literal":
                continue
            ps = tool.param_schema(p)
            scored = [
                (fixture_score(p, Argument.observation(str(ps.get("description", "")), field=p), ps, pv), pv)
                for pv in self.fixtures
            ]
            scored = [(sc, pv) for sc, pv in scored if sc >= MIN_SCORE and coerce(ps, pv.value) is not None]
            if scored:
                sc, pv = max(scored, key=lambda z: z[0])
                if coerce(ps, pv.value) != args.get(p):
                    fixed[p] = coerce(ps, pv.value)
                    fills[p] = {
                        "tool": FIXTURE,
                        "export": pv.export,
                        "source": FIXTURE,
                        "path": "$",
                        "score": round(sc, 3),
                    }
        if fixed != args:
            self._adopt(tool, template, check, parent, fixed, fills)

    def _last_change(self, node: int) -> str:
        """The tool of the latest call on a node's lineage that changed the state: what the state hinges on
        (states are tried shallowest first, so this is the one change the retried call needed)."""
        return self._creator(self.pool.last_change(node, self.fresh))

    def _same_group(self, tool: Tool, other: str) -> bool:
        """One class or one app: the tools whose state changes most likely gate this one."""
        if other.split(".")[0] == tool.name.split(".")[0] and "." in tool.name:
            return True
        return bool(tool.group) and other in self.catalog and self.catalog[other].group == tool.group

    def retry_elsewhere(self, tool_checks: dict[str, ToolCheck], limit: int = RETRY_STATES) -> int:
        """Re-run each failed success template that needs no observation from states other calls produced (and
        each whose success printed an empty result, see :meth:`_reveal`).

        The same call before and after a state change is the contrast that shows a gate (a read refused until a
        sign-in) and tells a refusal's payload from a success's. States are tried shallowest first (the fewest
        calls that could make the difference), tools of the same group (one class, one app) before the rest, at
        most ``limit`` distinct states per template; the first success becomes the template's result, with the
        tool of the last state-changing call on that state's lineage as ``gated_by``.
        """
        ran = 0
        for tool, template, check in self._checked_templates(tool_checks):
            if template.expected != "success" or template.observations or check.observed == "unbound":
                continue
            run = next((r for r in reversed(self.runs.get(tool.name, [])) if r.template.name == template.name), None)
            if run is None or check.observed == "success" and not empty_text_output(run.record.get("output")):
                continue
            tried = {self._state(run.parent).fingerprint}
            tried |= {
                self._state(r.parent).fingerprint
                for r in self.contrast.get(tool.name, [])
                if r.template.name == template.name
            }
            bases = sorted(self.pool.nodes, key=lambda n: (not self._same_group(tool, self._creator(n)), n.depth, n.id))
            for node in bases:
                if len(tried) > limit or node.state.fingerprint in tried:
                    continue
                tried.add(node.state.fingerprint)
                ran += 1
                if check.observed == "success":
                    if self._reveal(tool, template, check, node.id, dict(run.args), dict(check.bindings)):
                        break
                elif self._adopt(tool, template, check, node.id, dict(run.args), dict(check.bindings)):
                    check.gated_by = self._last_change(node.id)
                    break
        return ran
