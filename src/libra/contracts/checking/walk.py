"""The checking walk: templates run from the states earlier successful calls led to, their observations bound to
the values those calls exported, every call through the memo of invocations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from libra.catalog import Catalog, Tool
from libra.contracts.checking.binding import FIXTURE, FIXTURE_NODE, PoolValue, fill, fitting
from libra.contracts.model import Contract, Template
from libra.contracts.outcome import classify, extract
from libra.contracts.registry import Proposer
from libra.contracts.summary import TemplateCheck, ToolCheck
from libra.probing.calls import MemoCalls
from libra.probing.memo import MemoStore
from libra.probing.nodes import Node
from libra.probing.pool import ValuePool
from libra.probing.rebind import Rebound
from libra.runtime.base import Runtime, State


@dataclass
class Run:
    """One call of a template: what it passed, what it returned and where it ran from (and led to, when it
    succeeded: ``node``)."""

    tool: str
    template: Template
    check: TemplateCheck
    args: dict[str, Any]
    record: dict[str, Any]
    post: State
    parent: int | None
    node: int | None = None


class Walk:
    """The state of one checking walk -- the pool of values by state, the runs of every template, the calls kept as
    contrasts -- and its basic moves: bind a template, execute it, adopt a variant that succeeds. Retries
    (:class:`~.retries.Retries`) and passes with revision (:class:`~.checker.Checker`) build on it."""

    def __init__(
        self,
        catalog: Catalog,
        runtime: Runtime,
        contracts: dict[str, Contract],
        proposer: Proposer,
        max_revisions: int,
        fixtures: dict[str, Any] | None = None,
        memo: MemoStore | None = None,
    ) -> None:
        self.catalog = catalog
        self.runtime = runtime
        self.contracts = contracts
        self.proposer = proposer
        self.max_revisions = max_revisions
        self.memo = memo if memo is not None else MemoStore()
        self.invoker = MemoCalls(self.memo, runtime)  # counts the calls, keeps every call's memo key in order
        self.fresh = self.memo.keep(runtime.fresh())
        # The states successful calls led to (parent None is the fresh state), the values they exported (by id),
        # and the run that created each node (``Node.creator`` indexes ``made``).
        self.pool: ValuePool[PoolValue] = ValuePool()
        self.made: list[Run] = []
        self.runs: dict[str, list[Run]] = {}
        # Calls kept only as feedback: the failing half of a contrast (same call, earlier state).
        self.contrast: dict[str, list[Run]] = {}
        self.revised: set[str] = set()  # tools a revision changed
        # Per (tool, template): the bindings run and the retries spent on other equally fitting values (_rebinds).
        self.rebound: dict[tuple[str, str], Rebound] = {}
        # Sandbox fixtures are in every pool, from the fresh state on (they hold in it by definition).
        self.fixtures = [
            PoolValue(FIXTURE_NODE, FIXTURE, str(k), FIXTURE, "$", v) for k, v in sorted((fixtures or {}).items())
        ]

    def _creator(self, node: Node) -> str:
        """The tool whose call led to ``node``."""
        return self.made[node.creator].tool

    def _node_values(self, contract: Contract, run: Run, node_id: int) -> list[PoolValue]:
        """The values a successful run adds to the checking pool.

        An argument that was the template's own invented literal, passed to a call that changed nothing (a
        search's criterion), is left out: the sandbox never showed it, and binding it elsewhere (a made-up phone
        number as a contact's number) only feeds the next tool a value its validation rejects, while the records
        the same search listed sit unused. A literal a call wrote into the state (a created file's name) stays.
        """
        by_name = {e.name: e for e in contract.exports}
        out = []
        seen = set()
        unchanged = run.record.get("state_changes") in (None, {}, [])
        invented = [a.value for a in run.template.arguments.values() if a.kind == "literal"]
        for x in extract(contract, run.args, run.record):
            exp = by_name.get(x.name)
            if exp is None or not exp.propagate or x.value in ("", None) or isinstance(x.value, bool):
                continue
            if unchanged and x.source == "arguments" and any(x.value == v for v in invented):
                continue
            key = (x.name, json.dumps(x.value))
            if key in seen:
                continue
            seen.add(key)
            out.append(
                PoolValue(node_id, run.tool, x.name, x.source, x.path, x.value, str(exp.schema.get("description", "")))
            )
        return out

    def _add_node(self, run: Run) -> None:
        """A successful call's post-state becomes a base for later calls.

        Only expected-success templates feed the value pool: an expected-failure template carries a value built
        to not exist, which must never be offered to another call even if this tool happened to accept it.
        """
        node = self.pool.child(run.parent, run.post, len(self.made))
        self.made.append(run)
        run.node = node.id
        if run.template.expected == "success":
            self.pool.replace(node, self._node_values(self.contracts[run.tool], run, node.id))

    def _state(self, node: int | None) -> State:
        """The state of a node (None: the fresh state)."""
        return self.fresh if node is None else self.pool.nodes[node].state

    def _pool(self, node: Node | None) -> list[PoolValue]:
        """The values a call from ``node`` may bind (None: the fresh state, which holds only the fixtures)."""
        return self.fixtures + self.pool.on_path(node.id) if node is not None else self.fixtures

    def _scored(
        self, tool: Tool, template: Template, pool: list[PoolValue]
    ) -> dict[str, list[tuple[float, int, PoolValue, Any]]] | None:
        """For each observation of ``template``, the pooled values that fit it as (score, -node, value, argument);
        None when some observation has none."""
        out: dict[str, list[tuple[float, int, PoolValue, Any]]] = {}
        for p in template.observations:
            scored = fitting(tool, p, template.arguments[p], pool)
            if not scored:
                return None
            out[p] = scored
        return out

    def _bases(self) -> list[Node | None]:
        """The states a template may run from: the fresh one when fixtures can fill it, then every node."""
        return ([None] if self.fixtures else []) + list(self.pool.nodes)

    def _bind(
        self, tool: Tool, template: Template
    ) -> tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]] | None:
        """The base node and concrete arguments for a template, or None when some observation has no value."""
        literal_args = {p: a.value for p, a in template.arguments.items() if a.kind == "literal"}
        if not template.observations:
            return None, literal_args, {}
        best: tuple[float, int, int] | None = None
        chosen: tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]] | None = None
        for node in self._bases():
            scored = self._scored(tool, template, self._pool(node))
            if scored is None:
                continue
            picks = {p: max(sc, key=lambda z: (z[0], z[1])) for p, sc in scored.items()}
            total = sum(z[0] for z in picks.values())
            key = (total, -node.depth, -node.id) if node is not None else (total, 0, 1)
            if best is None or key > best:
                best, chosen = key, (node.id if node is not None else None, *fill(literal_args, picks))
        return chosen

    def _checked_templates(self, tool_checks: dict[str, ToolCheck]) -> Iterator[tuple[Tool, Template, TemplateCheck]]:
        """(tool, template, check) of every executable tool whose contract passed validation, in catalog order:
        the later passes over the checked templates all walk the same set in the same order."""
        for tool in self.catalog:
            tc = tool_checks.get(tool.name)
            if tc is None or not tc.valid or not tool.executable:
                continue
            yield from (
                (tool, template, check) for template, check in zip(self.contracts[tool.name].templates, tc.templates)
            )

    # -- execution -----------------------------------------------------------------------------------------
    def _execute(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int | None,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> Run:
        """Run one template from a base node and record it as the template's result."""
        state = self._state(parent)
        record, post = self.invoker.invoke(state, tool.name, args)
        check.arguments, check.bindings = args, binds
        check.status, check.error = record.get("status"), record.get("error")
        run = Run(tool.name, template, check, args, record, post, parent)
        self.runs.setdefault(tool.name, []).append(run)
        self._classify(run)
        return run

    def _adopt(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int | None,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> bool:
        """Run a variant of a template that did not succeed; keep it as the template's result if it succeeds.

        The failed run stays as feedback (a contrast for revision); a failing variant is kept as feedback too.
        """
        old = next(r for r in reversed(self.runs[tool.name]) if r.template.name == template.name)
        trial = TemplateCheck(template.name, template.expected)
        run = self._execute(tool, template, trial, parent, args, binds)
        self.runs[tool.name].remove(run if trial.observed != "success" else old)
        self.contrast.setdefault(tool.name, []).append(run if trial.observed != "success" else old)
        if trial.observed != "success":
            return False
        run.check = check
        check.observed, check.arguments, check.bindings = trial.observed, trial.arguments, trial.bindings
        check.status, check.error = trial.status, trial.error
        return True

    def _classify(self, run: Run) -> None:
        contract = self.contracts[run.tool]
        run.check.observed = classify(contract, run.record)
        if run.check.observed == "success":
            if run.node is None:
                self._add_node(run)
            elif run.template.expected == "success":
                self.pool.replace(self.pool.nodes[run.node], self._node_values(contract, run, run.node))
