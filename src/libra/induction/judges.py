"""The three tests of Algorithm 1 as pure functions over invocation records (paper §3.1, Appendix Algorithm 1).

Each judge takes the runs a test made -- a normalized invocation record (``{"status", "output", "state_changes",
"error"}``) together with the outcome the tool's contract gives it (``"success"``, ``"failure"`` or
``"unmatched"``) -- and returns a :class:`Verdict`: the relation is *kept*, *rejected*, or the runs cannot decide
(*inconclusive*). The engine executes; these functions only judge, so every rule can be checked by hand on
constructed records (``tests/test_judges.py``).

Beyond the algorithm's lines, one rule applies to the value tests: a relation needs evidence that the provider's
value *mattered*. A success that produced nothing (an empty result and no state change) says nothing about the
value it was given: a search returns ``[]`` for any criterion, so a control that errors (say, because omitting the
only criterion is refused) does not make the criterion's provider necessary, and ``[]`` on both sides of a
compatibility test shows no compatibility at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from libra.contracts.text_values import is_empty_text

Outcome = Literal["success", "failure", "unmatched"]
Decision = Literal["kept", "rejected", "inconclusive"]


@dataclass(frozen=True)
class Run:
    """One execution a test made: its record and the outcome the consumer's contract classifies it as."""

    outcome: str
    record: Mapping[str, Any]


@dataclass(frozen=True)
class Verdict:
    """What a test concluded, and why (kept in evidence and statistics)."""

    decision: Decision
    reason: str

    @property
    def kept(self) -> bool:
        return self.decision == "kept"

    @property
    def inconclusive(self) -> bool:
        return self.decision == "inconclusive"


def kept(reason: str) -> Verdict:
    return Verdict("kept", reason)


def rejected(reason: str) -> Verdict:
    return Verdict("rejected", reason)


def inconclusive(reason: str) -> Verdict:
    return Verdict("inconclusive", reason)


def is_empty(value: Any) -> bool:
    """None, ``""``, containers holding nothing else (``[]``, ``{}``, ``{"results": []}``), and text that says
    nothing was found (``"No matches found"``, ``"[]"`` printed as text:
    :func:`~libra.contracts.text_values.is_empty_text`).

    Such a value names no record and carries no content: it is what a call returns whatever it was given. Zero and
    ``False`` are not empty; they are answers. An empty result is thus a success that is no evidence in a value
    test, the way an empty list already was; the outcome a contract gives it (success) and the library format
    stay as they were.
    """
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip() or is_empty_text(value)
    if isinstance(value, Mapping):
        return all(is_empty(v) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(is_empty(v) for v in value)
    return False


def produced_something(record: Mapping[str, Any]) -> bool:
    """Whether a run has a non-empty output or changed the state."""
    return not is_empty(record.get("output")) or not is_empty(record.get("state_changes"))


def differs_substantively(use: Mapping[str, Any], control: Mapping[str, Any]) -> bool:
    """Whether the run with the provider's value produced a non-empty output or state change that the control did
    not produce too: the only sign, when both succeed, that the value changed what the call did."""
    out, changes = use.get("output"), use.get("state_changes")
    return (not is_empty(out) and out != control.get("output")) or (
        not is_empty(changes) and changes != control.get("state_changes")
    )


def _undecided(*runs: Run) -> Verdict | None:
    """A run whose record neither outcome schema describes decides nothing (the contract is what is in doubt)."""
    for r in runs:
        if r.outcome not in ("success", "failure"):
            return inconclusive(f"a run's outcome is {r.outcome!r}")
    return None


def _use_fails_or_undecided(use: Run, control: Run) -> Verdict | None:
    """Line 16, shared by both value judges: no relation without a success with the provider's value, and no
    verdict when either run is one the contract cannot classify."""
    if use.outcome != "success":
        return rejected("the consumer did not succeed with the provider's value (line 16)")
    return _undecided(use, control)


def judge_provenance(use: Run, control: Run, omitted: bool = False) -> Verdict:
    """Input provenance (Algorithm 1, lines 16-21): the consumer succeeds with the provider's value (line 16,
    succ(r_use)) and fails when that input is replaced by a test value the provider did not produce, or omitted
    (lines 17-19, r_alt), from the same saved state; then E_prov gets (t_p, f_out, t_i, f_in) (lines 20-21).

    When the control *omitted* the input (``omitted``), the success must have produced something (a non-empty
    output or a state change): a search refused without its only criterion and returning ``[]`` with it shows
    that some criterion is needed, not that the provider's value did anything. A control that replaced the value
    with a valid one differs from the use only in that value, so a refusal against an empty success (reading an
    empty file that exists) is the value's doing.
    """
    settled = _use_fails_or_undecided(use, control)
    if settled is not None:
        return settled
    if control.outcome != "failure":
        return rejected("the control succeeds too: the value is not necessary (line 20)")
    if omitted and not produced_something(use.record):
        return rejected(
            "the success with the value produced nothing and the control omitted it: no evidence the value mattered"
        )
    return kept("succeeds with the provider's value, fails with the control (lines 20-21)")


def judge_compatibility(use: Run, control: Run, similarity: float, tau: float) -> Verdict:
    """Compatibility (Algorithm 1, line 22-23): the consumer succeeds with the provider's value and with the control,
    and the output and input field names are aligned, cos(h_f(f_out), h_f(f_in)) > tau.

    Both successes must differ where it counts: the run with the value has a non-empty output or state change
    the control's run does not share. Two empty results, or two identical ones, show the value made no
    difference, whatever the names say.
    """
    settled = _use_fails_or_undecided(use, control)
    if settled is not None:
        return settled
    if control.outcome != "success":
        return rejected("the control fails: a provenance test, not a compatibility one (line 22)")
    if not similarity > tau:
        return rejected(f"field names not aligned: cos {similarity:.3f} <= tau {tau} (line 22)")
    if not differs_substantively(use.record, control.record):
        return rejected("both succeed alike or with nothing: no evidence the value mattered")
    return kept("both succeed, differently, and the field names align (lines 22-23)")


def judge_state(before: Run, after: Run) -> Verdict:
    """State dependency (Algorithm 1, lines 26-31): after a provider call changed the state (line 26, sigma' !=
    sigma), a consumer call with identical arguments fails before it (line 28, r_before) and succeeds after it
    (line 29, r_after); then E_state gets (t_i, t_c) (lines 30-31).

    The arguments are identical, so the change of outcome is the state's doing: an empty success after a refusal
    (an empty watch list once signed in) is evidence here, unlike in a value test.
    """
    undecided = _undecided(before, after)
    if undecided is not None:
        return undecided
    if before.outcome != "failure":
        return rejected("the consumer already succeeds before the provider ran (line 30)")
    if after.outcome != "success":
        return rejected("the consumer still fails after the provider ran (line 30)")
    return kept("fails before the provider's state change, succeeds after it (lines 30-31)")


__all__ = [
    "Run",
    "Verdict",
    "differs_substantively",
    "is_empty",
    "judge_compatibility",
    "judge_provenance",
    "judge_state",
    "produced_something",
]
