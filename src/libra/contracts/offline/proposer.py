"""The offline (LLM-free) contract proposer.

It reads one tool's public metadata -- name, description, parameter schemas and the optional response schema --
and nothing else (rules 39-40): no other tool, task, gold call or runtime value shapes a proposal. Every decision
is a small documented heuristic tied to the paper's shared contract rules (Figure 5) or the stateful-tool rules
(Figure 7); rule numbers in comments refer to Figure 5 unless marked "F7". The heuristics live by job beside this
module: :mod:`.vocabulary` (the words metadata is read with), :mod:`.decisions` (observation or literal),
:mod:`.templates`, :mod:`.exports`, :mod:`.outcomes`, and :mod:`.feedback` / :mod:`.revision` (revision from the
tool's own feedback).
"""

from __future__ import annotations

from typing import Any

from libra.catalog import Tool
from libra.contracts.model import Contract
from libra.contracts.offline.decisions import decide_parameter
from libra.contracts.offline.exports import argument_exports, response_exports
from libra.contracts.offline.outcomes import outcome_schemas
from libra.contracts.offline.revision import revise
from libra.contracts.offline.templates import propose_templates


def propose(tool: Tool) -> Contract:
    """The initial contract for one tool from its public metadata only: each parameter decided an observation or a
    literal (:func:`~.decisions.decide_parameter`), the templates (:func:`~.templates.propose_templates`), the
    exports of its arguments and response, and the outcome schemas."""
    decisions = {p: decide_parameter(tool, p, tool.param_schema(p)) for p in tool.param_names}
    templates = propose_templates(tool, decisions)
    exports = argument_exports(tool)
    taken = {e.name for e in exports}
    exports.extend(response_exports(tool, taken))
    success, failure = outcome_schemas(tool)
    notes = [f"{p}: {d.kind} ({d.reason})" for p, d in decisions.items()]
    return Contract(
        tool=tool.name,
        templates=templates,
        exports=exports,
        success=success,
        failure=failure,
        proposer="offline",
        notes=notes,
    )


class OfflineProposer:
    """The default heuristic proposer; plugs into the same :class:`~libra.contracts.registry.Proposer` slot as an
    LLM."""

    name = "offline"

    def propose(self, tool: Tool) -> Contract:
        return propose(tool)

    def revise(self, contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> Contract | None:
        return revise(contract, tool, feedback)
