"""The runtime interface every catalog's executable back end implements.

Induction only ever talks to a :class:`Runtime`: it asks for a fresh state, invokes a tool on a state and gets a
normalized :class:`InvocationRecord` plus the new state. States are values, never mutated in place, so the engine
can keep a saved state and run a counterfactual control call from exactly the same point (paper §3.1).

State payloads may be split into content-addressed :class:`StatePart` s (one per stateful object). The worker pool
ships a part to a worker only when that worker does not hold it yet, which keeps isolated execution cheap when a
call touches one object out of many.

``InvocationRecord.state_changes`` is a structural diff (see :mod:`libra.runtime.diff` for the exact format)::

    {"<PartName>": {"changed": {"<path>": {"before": ..., "after": ...}},
                    "added":   {"<path>": <new value>},
                    "removed": {"<path>": <old value>}}}

An unchanged state gives ``{}``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from libra.catalog import Catalog
from libra.errors import LibraError

Status = Literal["success", "rejected", "error"]
STATUSES: tuple[str, ...] = ("success", "rejected", "error")

#: JSON Schema of the normalized invocation record; contract outcome schemas (S+ / S-) are written against it.
INVOCATION_RECORD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["status", "output", "state_changes", "error", "duration_ms"],
    "properties": {
        "status": {"enum": list(STATUSES)},
        "output": {"description": "the tool's JSON-able response (null when it raised)"},
        "state_changes": {"description": "structural diff of the runtime state before and after the call"},
        "error": {"type": ["string", "null"]},
        "duration_ms": {"type": "number"},
    },
    "additionalProperties": False,
}


def json_type(value: Any) -> str:
    """The JSON Schema type name of a Python value ("null" for anything JSON has no type for)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


@dataclass
class InvocationRecord:
    """What one call did, in the normalized form outcome schemas are written against (paper rules 34-38).

    ``diagnostics`` is what the worker's guard saw the call do beside its response (:mod:`libra.runtime.workers.guard`):
    ``stdout``/``stderr`` (printed text, cut) and ``restored`` (process-wide changes it undid); empty for a clean,
    silent call. It is not part of :meth:`to_dict`, the form contracts see, because it describes the sandbox, not
    the tool's response.
    """

    status: Status
    output: Any = None
    state_changes: Any = field(default_factory=dict)
    error: str | None = None
    duration_ms: float = 0.0
    diagnostics: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def ok(self) -> bool:
        return self.status == "success"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "output": self.output,
            "state_changes": self.state_changes,
            "error": self.error,
            "duration_ms": self.duration_ms,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> InvocationRecord:
        return cls(
            d["status"], d.get("output"), d.get("state_changes", {}), d.get("error"), float(d.get("duration_ms", 0.0))
        )


@dataclass(frozen=True)
class State:
    """An immutable handle on one runtime state.

    ``fingerprint`` is a content hash: two states with equal fingerprints are the same state, which is how the
    engine tells sigma' != sigma. ``payload`` is whatever the runtime needs to restore the state (a pickled
    snapshot, a key into a worker's store, ...); callers treat it as opaque.
    """

    fingerprint: str
    payload: Any = field(default=None, compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)


class ToolRuntimeError(LibraError):
    """A runtime cannot be built or was used wrongly (bad arguments, closed pool, unknown tool...)."""


class UnknownToolError(ToolRuntimeError):
    """A call named a tool the runtime does not have."""


@dataclass(frozen=True)
class StatePart:
    """One independently snapshotted piece of a state (e.g. one object instance).

    ``key`` is a content hash of the part, so equal keys mean interchangeable parts: that is what lets a worker
    keep parts cached and the caller send only a key. ``data`` is the runtime's snapshot (e.g. pickled bytes).
    """

    name: str
    key: str
    data: Any = field(compare=False, repr=False)


def parts_fingerprint(parts: tuple[StatePart, ...]) -> str:
    """Fingerprint of a state made of parts: a hash of the parts' names and keys, in order."""
    # one update of the joined bytes: the same digest as updating part by part, at a fraction of the calls
    return hashlib.sha256("".join(f"{p.name}\0{p.key}\0" for p in parts).encode()).hexdigest()


@runtime_checkable
class Runtime(Protocol):
    """An executable back end for one catalog.

    ``trusted`` is the runtime's own declaration that its tools are pure Python and deepcopy-safe, so they may run
    in-process for speed; untrusted runtimes execute in isolated worker processes.
    """

    catalog: Catalog
    trusted: bool

    def fresh(self) -> State:
        """The initial sandbox state."""
        ...

    def invoke(self, state: State, tool: str, args: dict[str, Any]) -> tuple[InvocationRecord, State]:
        """Run ``tool`` with ``args`` from ``state``; never mutates ``state``. Returns the record and the new state."""
        ...

    def close(self) -> None:
        """Release workers and other resources."""
        ...


def error_text(exc: BaseException) -> str:
    """How a failed call's exception reads in its record: ``Type: message`` (just ``Type`` without a message)."""
    msg = str(exc)
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
