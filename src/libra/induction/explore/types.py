"""The small records the exploration passes between its phases: pool values, logged calls, planned tests, waves.

Why a module of their own: every phase reads them (binding takes pool values, planning makes tests, judging reads
them, checkpoints pickle them), so they sit below all phases and depend on none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from libra.induction.explore.worklist import Item
from libra.runtime.base import State

__all__ = [
    "FIXTURE",
    "NO_LITERAL",
    "Bound",
    "Call",
    "CallInfo",
    "Failed",
    "PoolValue",
    "SweepTest",
    "ValueTest",
    "Wave",
]

#: The provider name of the sandbox's facts (:attr:`Engine.fixtures`): values a caller of the sandbox knows, offered
#: like a tool's values but never the start of a relation.
FIXTURE = "<sandbox>"
#: Says "the template gives this input no literal" where None would be a literal like any other.
NO_LITERAL: Any = object()

#: A call to the runtime: the state it runs from, the tool and its arguments.
Call = tuple[State, str, dict[str, Any]]
#: A work item bound to concrete arguments: (item, arguments, input -> pool value id of the values it used).
Bound = tuple[Item, dict[str, Any], dict[str, int]]
#: A bound call that failed, with its value-independent refusal (``schedule.gate_message``) or None.
Failed = tuple[Item, dict[str, Any], dict[str, int], str | None]


@dataclass
class PoolValue:
    """A value a successful call contributed to the pool of the state it led to (or ran in)."""

    id: int
    tool: str
    export: str
    value: Any
    node: int
    call: int  # id of the provider call in the call log
    restated: bool = False  # a state-changing call re-stated a value already known on its path
    for_group: str = ""  # the tool group its list element names (a password listed for one app's account)
    record: str = ""  # the record it was read from (see :func:`.values.record_of`): its fields are its siblings
    in_text: bool = False  # read from inside a text reply (an export's ``from_text``), not a field of its own


@dataclass
class CallInfo:
    """A successful call in the call log."""

    node: int
    tool: str
    args: dict[str, Any]
    record: dict[str, Any] | None  # None once its wave is over: see CallsMixin._record
    suppliers: tuple[int, ...] = ()  # the calls (in the call log) that produced the values it used


@dataclass
class ValueTest:
    """A counterfactual control planned for one success: the consumer call, the value it used, the control."""

    pair: tuple[str, str, str, str]  # (provider, export, consumer, input)
    use: CallInfo
    vid: int
    control_args: dict[str, Any]
    #: a literal input the tool is not known to check (the caller's free choice, text or number), or a placed offer
    free_choice: bool = False
    #: the call's other inputs that hold a field of the value's own record, with that field's export: (input,
    #: export) pairs (a consumer may check a record's fields against each other, a customer's id and zip code)
    tied: tuple[tuple[str, str], ...] = ()


@dataclass
class SweepTest:
    """The before/after test of one consumer call around a provider's state change."""

    call_id: int  # the provider call
    before_node: int
    consumer: str
    args: dict[str, Any]


@dataclass
class Wave:
    """What one wave's successes ask for: tests to run and work items to enqueue."""

    controls: list[ValueTest] = field(default_factory=list)
    parent_tests: list[tuple[int, CallInfo]] = field(default_factory=list)  # (creator call, success after it)
    sweeps: list[SweepTest] = field(default_factory=list)
    new_items: list[Item] = field(default_factory=list)
    # successes of placed offers whose other inputs get their control on the side books (RetriesMixin._run_aside)
    placed: list[tuple[Item, dict[str, Any], dict[str, int], dict[str, Any]]] = field(default_factory=list)
