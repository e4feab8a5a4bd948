"""What contract checking reports: per template, per tool and over the whole catalog."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from libra.contracts.model import Contract
from libra.probing.memo import MemoKey


@dataclass
class TemplateCheck:
    """What happened to one template: its expected and observed outcome and where observations came from."""

    template: str
    expected: str
    observed: str = "unbound"  # success | failure | unmatched | unbound
    status: str | None = None
    arguments: dict[str, Any] | None = None
    bindings: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    # The tool whose state change let this template succeed after it failed from an earlier state (a gate).
    gated_by: str | None = None

    @property
    def matched(self) -> bool:
        return self.observed == self.expected


@dataclass
class ToolCheck:
    tool: str
    valid: bool = True
    errors: list[str] = field(default_factory=list)
    revision: int = 0
    templates: list[TemplateCheck] = field(default_factory=list)
    # What revisions learned, as their notes say it (a declared type the tool does not return, a refusal shape,
    # a literal repaired from a rejection).
    notes: list[str] = field(default_factory=list)


@dataclass
class CheckSummary:
    """Counts over the whole catalog plus per-tool detail and the final (possibly revised) contracts."""

    tools: int = 0
    templates: int = 0
    matched: int = 0
    revised: int = 0
    invalid: int = 0
    unbound: int = 0
    unmatched: int = 0
    calls: int = 0
    gated: int = 0  # templates seen failing from one state and succeeding after another tool changed it
    memo_hits: int = 0  # calls answered by the memo of invocations instead of the runtime (``calls`` ran)
    type_mismatches: int = 0  # tools whose declared response type the observed outputs contradicted
    per_tool: dict[str, ToolCheck] = field(default_factory=dict)
    contracts: dict[str, Contract] = field(default_factory=dict)
    # The memo keys of every call checking made (run or answered by the memo), in order: what an exploration
    # over the same memo store takes over (:meth:`~libra.induction.explore.engine.Engine.start`).
    memo_keys: list[MemoKey] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            k: getattr(self, k)
            for k in (
                "tools",
                "templates",
                "matched",
                "revised",
                "invalid",
                "unbound",
                "unmatched",
                "calls",
                "memo_hits",
                "gated",
                "type_mismatches",
            )
        }

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = self.counts()
        d["per_tool"] = {}
        for name, tc in self.per_tool.items():
            row = asdict(tc)
            for t, obj in zip(row["templates"], tc.templates):
                t["matched"] = obj.matched
            d["per_tool"][name] = row
        return d
