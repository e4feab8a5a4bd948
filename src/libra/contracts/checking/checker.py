"""The contract checker: every pending template run pass after pass, retried when it fails, and each tool's
contract revised from its own feedback (see :func:`libra.contracts.check.check_contracts`)."""

from __future__ import annotations

from typing import Any

from libra.catalog import Tool
from libra.contracts.checking.retries import Retries
from libra.contracts.model import Contract
from libra.contracts.offline.feedback import (
    exclusive_repairs,
    literal_repairs,
    missing_references,
    uncovered_leaves,
    uncovered_text,
)
from libra.contracts.outcome import classify
from libra.contracts.summary import TemplateCheck, ToolCheck
from libra.contracts.validate import validate_contract
from libra.values.generator import literal_for


class Checker(Retries):
    """Contract checking over a catalog: passes over the pending templates (:meth:`run_pending`), and each tool's
    contract revised from its own feedback (:meth:`revise`) with the affected runs classified or run again."""

    def run_pending(self, tool_checks: dict[str, ToolCheck], fallback: bool = False) -> int:
        """One pass over every template not yet executed; returns how many ran.

        With ``fallback``, a template whose observations no seen value fits runs once from the fresh state with
        the values its own metadata suggests, so the tool still yields same-tool feedback for revision (a tool
        that needs a real upstream value simply fails).
        """
        ran = 0
        for tool in self.catalog:
            tc = tool_checks.get(tool.name)
            if tc is None or not tc.valid or not tool.executable:
                continue  # a tool the runtime cannot execute keeps its proposed contract unchecked
            done = {r.template.name for r in self.runs.get(tool.name, [])}
            for template, check in zip(self.contracts[tool.name].templates, tc.templates):
                if template.name in done:
                    continue
                bound = self._bind(tool, template)
                if bound is None and fallback and template.expected == "success":
                    args = {p: a.value for p, a in template.arguments.items() if a.kind == "literal"}
                    for p in template.observations:
                        ps = tool.param_schema(p)
                        args[p] = literal_for(p, ps, ps.get("description", ""), tool=tool.name)
                    bound = (None, args, {p: {"constructed": True} for p in template.observations})
                if bound is None:
                    continue
                self._execute(tool, template, check, *bound)
                if template.expected == "success" and check.observed != "success":
                    self._retry_with_fixtures(tool, template, check, bound[0], bound[1], bound[2])
                    self._retry_rebound(tool, template, check)
                if template.expected == "success" and check.observed != "success" and bound[0] is None:
                    self._retry_repaired(tool, template, check, bound[1], bound[2])
                if template.expected == "success" and check.observed != "success":
                    ran += self._retry_packed(tool, template, check)
                ran += 1
        return ran

    # -- revision ------------------------------------------------------------------------------------------
    def needs_revision(self, tool: str) -> bool:
        """Unmatched outcomes, or successful output/state structure that no export reaches."""
        contract = self.contracts[tool]
        for run in self.runs.get(tool, []):
            if run.check.observed == "unmatched":
                return True
            if run.check.observed == "success" and (
                uncovered_leaves(contract, run.args, run.record) or uncovered_text(contract, run.record)
            ):
                return True
        if any(classify(contract, r.record) == "unmatched" for r in self.contrast.get(tool, [])):
            return True
        feedback = self._feedback(tool)
        return bool(
            literal_repairs(contract, self.catalog[tool], feedback)
            or missing_references(contract, feedback)
            or exclusive_repairs(contract, self.catalog[tool], feedback)
        )

    def _feedback(self, tool: str) -> list[dict[str, Any]]:
        """Same-tool feedback: every template's current run, then the calls kept as contrasts."""
        runs = self.runs.get(tool, []) + self.contrast.get(tool, [])
        contract = self.contracts[tool]
        return [
            {
                "template": r.template.name,
                "expected": r.template.expected,
                "observed": classify(contract, r.record),
                "arguments": r.args,
                "record": r.record,
            }
            for r in runs
        ]

    def revise(self, tool: Tool, tc: ToolCheck) -> bool:
        contract = self.contracts[tool.name]
        if contract.revision >= self.max_revisions or not self.needs_revision(tool.name):
            return False
        feedback = self._feedback(tool.name)
        new = self.proposer.revise(contract, tool, feedback)
        if new is None:
            return False
        errors = validate_contract(new.to_dict(), tool)
        if errors:
            tc.errors.append(f"revision {new.revision} rejected: {errors[0]}")
            return False
        self.contracts[tool.name] = new
        tc.revision = new.revision
        tc.notes.extend(n for n in new.notes if n not in contract.notes)
        if [t.name for t in new.templates] != [t.name for t in contract.templates]:
            # A proposer may rewrite templates: keep results of the ones that survive, by name.
            old = {c.template: c for c in tc.templates}
            tc.templates = [old.get(t.name) or TemplateCheck(t.name, t.expected) for t in new.templates]
            for c, t in zip(tc.templates, new.templates):
                c.expected = t.expected
            keep = {t.name: t for t in new.templates}
            self.runs[tool.name] = [r for r in self.runs.get(tool.name, []) if r.template.name in keep]
            self.contrast[tool.name] = [r for r in self.contrast.get(tool.name, []) if r.template.name in keep]
            for r in self.runs[tool.name]:
                r.template = keep[r.template.name]
        for run in self.runs.get(tool.name, []):
            self._classify(run)
        self._promote_contrasts(tool, tc)
        self._rerun_changed(tool, tc, contract, new)
        return True

    def _promote_contrasts(self, tool: Tool, tc: ToolCheck) -> None:
        """After a revision, a call kept as a contrast may now read as the success the template's own run is not
        (the revision accepted its shape): the same call from that state becomes the template's result."""
        contract = self.contracts[tool.name]
        for template, check in zip(contract.templates, tc.templates):
            if template.expected != "success" or check.observed == "success":
                continue
            current = next((r for r in self.runs.get(tool.name, []) if r.template.name == template.name), None)
            if current is None:
                continue
            better = next(
                (
                    r
                    for r in self.contrast.get(tool.name, [])
                    if r.template.name == template.name
                    and r.args == current.args
                    and classify(contract, r.record) == "success"
                ),
                None,
            )
            if better is None:
                continue
            self.runs[tool.name] = [better if r is current else r for r in self.runs[tool.name]]
            self.contrast[tool.name] = [current if r is better else r for r in self.contrast[tool.name]]
            better.template, better.check = template, check
            check.status, check.error = better.record.get("status"), better.record.get("error")
            self._classify(better)
            check.gated_by = self._last_change(better.parent) if better.parent is not None else None

    def _rerun_changed(self, tool: Tool, tc: ToolCheck, old: Contract, new: Contract) -> None:
        """Run again the templates a revision rewrote under the same name (a literal repaired from a rejection):
        their stored run was a different call, so its result says nothing about the new template."""
        before = {t.name: t.to_dict() for t in old.templates}
        changed = {t.name for t in new.templates if t.name in before and before[t.name] != t.to_dict()}
        if not changed:
            return
        stale = [r for r in self.runs.get(tool.name, []) if r.template.name in changed]
        self.runs[tool.name] = [r for r in self.runs.get(tool.name, []) if r.template.name not in changed]
        self.contrast.setdefault(tool.name, []).extend(stale)
        for template, check in zip(new.templates, tc.templates):
            if template.name not in changed:
                continue
            check.observed, check.gated_by = "unbound", None
            bound = self._bind(tool, template)
            if bound is not None:
                self._execute(tool, template, check, *bound)
                self._retry_rebound(tool, template, check)
                if check.observed != "success":
                    self._retry_packed(tool, template, check)
