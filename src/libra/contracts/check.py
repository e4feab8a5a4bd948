"""Contract checking: execute every candidate call, compare observed with expected outcomes, revise on feedback.

Observations are filled from a pool of values exported by earlier successful calls. A value is only valid in
the state its call produced (a session token means nothing in a fresh sandbox), so each successful call becomes
a node carrying its post-call state (:class:`~libra.probing.nodes.Node`, the exploration's own), and a template
is run from the node whose lineage supplies all of its observations. Several passes let a value produced by one
tool fill another tool's observation, which is how multi-step prerequisites (sign in, then act) get exercised.

Every call goes through a memo of invocations (:class:`~libra.probing.memo.MemoStore`, keyed by state,
tool and arguments). A build passes the store its exploration then uses, so the exploration takes checking's
records instead of running those calls again (:attr:`CheckSummary.memo_keys`).
"""

from __future__ import annotations

from typing import Any

from libra.catalog import Catalog
from libra.contracts.checking.checker import Checker
from libra.contracts.model import MAX_REVISIONS, Contract
from libra.contracts.registry import Proposer, get_proposer, propose_contracts
from libra.contracts.summary import CheckSummary, TemplateCheck, ToolCheck
from libra.contracts.validate import validate_contract
from libra.probing.memo import MemoStore
from libra.runtime.base import Runtime


def check_contracts(
    catalog: Catalog,
    runtime: Runtime,
    contracts: dict[str, Contract] | None = None,
    *,
    proposer: str | Proposer = "offline",
    passes: int = 3,
    max_revisions: int = MAX_REVISIONS,
    fixtures: dict[str, Any] | None = None,
    memo: MemoStore | None = None,
) -> CheckSummary:
    """Execute every contract's templates against ``runtime`` and revise contracts from same-tool feedback.

    Templates whose observations cannot be filled from values seen so far are reported as ``unbound``. Revised
    records are re-classified in place rather than re-executed: a call from the same state with the same
    arguments is deterministic in a sandbox, and classification is a pure function of the record; a template a
    revision rewrote is run again. ``fixtures`` (the benchmark's sandbox facts, e.g. its test account) are
    offered to every input whose name or description fits them, as induction does. A success template that
    failed is re-run from the states other calls produced, so a gate shows in checking (``gated_by``).

    Calls go through ``memo`` (a temporary store when None): a build passes the store its exploration uses, and
    the summary's ``memo_keys`` tell the exploration which of its rows are checking's calls.
    """
    prop = get_proposer(proposer)
    contracts = dict(contracts) if contracts is not None else propose_contracts(catalog, prop)
    summary = CheckSummary(tools=len(catalog))
    tool_checks: dict[str, ToolCheck] = {}
    for tool in catalog:
        contract = contracts.get(tool.name)
        if contract is None:
            contract = prop.propose(tool)
            contracts[tool.name] = contract
        errors = validate_contract(contract.to_dict(), tool)
        tool_checks[tool.name] = ToolCheck(
            tool.name,
            valid=not errors,
            errors=errors,
            revision=contract.revision,
            templates=[TemplateCheck(t.name, t.expected) for t in contract.templates],
        )
    checker = Checker(catalog, runtime, contracts, prop, max_revisions, fixtures, memo)
    try:
        _check_passes(catalog, checker, tool_checks, passes)
    finally:
        if memo is None:
            checker.memo.close()
    summary.per_tool = tool_checks
    summary.contracts = checker.contracts
    summary.calls = checker.invoker.calls
    summary.memo_hits = checker.invoker.hits
    summary.memo_keys = list(checker.invoker.keys)
    summary.invalid = sum(1 for tc in tool_checks.values() if not tc.valid)
    summary.revised = len(checker.revised)
    for tc in tool_checks.values():
        if not tc.valid:
            continue
        summary.templates += len(tc.templates)
        summary.matched += sum(1 for t in tc.templates if t.matched)
        summary.unbound += sum(1 for t in tc.templates if t.observed == "unbound")
        summary.unmatched += sum(1 for t in tc.templates if t.observed == "unmatched")
        summary.gated += sum(1 for t in tc.templates if t.gated_by and t.observed == "success")
    summary.type_mismatches = sum(1 for c in checker.contracts.values() if "declared_type_mismatch" in c.flags)
    return summary


def _check_passes(catalog: Catalog, checker: Checker, tool_checks: dict[str, ToolCheck], passes: int) -> None:
    """Run, re-run elsewhere and revise, pass after pass (see :func:`check_contracts`)."""
    revised = checker.revised
    for _ in range(max(1, passes)):
        ran = checker.run_pending(tool_checks)
        ran += checker.retry_elsewhere(tool_checks)
        ran += checker.retry_rebound(tool_checks)
        for tool in catalog:
            tc = tool_checks[tool.name]
            if tc.valid and checker.revise(tool, tc):
                revised.add(tool.name)
        if ran == 0:
            break
    # Tools whose observations nothing produced get one run with constructed values, for feedback only.
    if checker.run_pending(tool_checks, fallback=True):
        for tool in catalog:
            tc = tool_checks[tool.name]
            if tc.valid and checker.revise(tool, tc):
                revised.add(tool.name)
    # A revision may have added exports that now bind other tools' observations: give them one more chance.
    if revised and checker.run_pending(tool_checks) + checker.retry_elsewhere(tool_checks) + checker.retry_rebound(
        tool_checks
    ):
        for tool in catalog:
            tc = tool_checks[tool.name]
            if tc.valid and checker.revise(tool, tc):
                revised.add(tool.name)
