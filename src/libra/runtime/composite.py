"""Several runtimes as one: what a project file with both ``[[python]]`` sources and ``[[mcp]]`` servers builds.

Why it can be this small: the runtimes share nothing but the caller. Python tools keep their state in their own
objects (snapshotted by their runtime), MCP servers in the sandbox directory and their processes, so a joint
state is simply the pair of the two states, and a call changes only the part of the runtime that owns the tool.
The pair is a value like any state (its fingerprint hashes both fingerprints), so memoising, controls from a saved
state and before/after sweeps work unchanged. Relations across the two sides are found through values: an id one
side prints is offered to the other side's inputs like any other.

What it does not do: a Python tool does not see the MCP sandbox as state. A Python tool that writes into the
sandbox directory would change files behind the MCP runtime's back; keep such tools as MCP servers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Self

from libra.catalog import Catalog
from libra.runtime.base import InvocationRecord, State, ToolRuntimeError, UnknownToolError


def joint_state(states: Sequence[State]) -> State:
    """The state made of one state per runtime, in the composite's order."""
    fp = hashlib.sha256("\0".join(s.fingerprint for s in states).encode()).hexdigest()
    return State(fp, tuple(states))


class CompositeRuntime:
    """Runtimes with disjoint tool names behind one :class:`~libra.runtime.base.Runtime` (see the module docstring).

    Calls go to the runtime that owns the tool; a batch (:meth:`invoke_many`) is split by owner so each runtime
    still gets its calls as one batch (an isolated pool keeps its workers busy).
    """

    def __init__(self, runtimes: Sequence[Any], catalog: Catalog | None = None, name: str = "catalog") -> None:
        if not runtimes:
            raise ToolRuntimeError("a composite runtime needs at least one runtime")
        self.runtimes = list(runtimes)
        self.owner: dict[str, int] = {}
        for i, rt in enumerate(self.runtimes):
            for tool in rt.catalog:
                if tool.name in self.owner:
                    raise ToolRuntimeError(f"tool {tool.name!r} is offered by two sources: give one a namespace")
                self.owner[tool.name] = i
        self.catalog = (
            catalog if catalog is not None else Catalog([t for rt in self.runtimes for t in rt.catalog], name=name)
        )
        self.trusted = all(getattr(rt, "trusted", False) for rt in self.runtimes)
        self.closed = False

    def fresh(self) -> State:
        return joint_state([rt.fresh() for rt in self.runtimes])

    def _owner(self, tool: str) -> int:
        i = self.owner.get(tool)
        if i is None:
            raise UnknownToolError(f"no tool named {tool!r} in this catalog")
        return i

    @staticmethod
    def _parts(state: State) -> tuple[State, ...]:
        if not isinstance(state.payload, tuple):
            raise ToolRuntimeError("this state does not come from a composite runtime")
        return state.payload

    def invoke(self, state: State, tool: str, args: dict[str, Any]) -> tuple[InvocationRecord, State]:
        i = self._owner(tool)
        parts = list(self._parts(state))
        record, after = self.runtimes[i].invoke(parts[i], tool, args)
        parts[i] = after
        return record, joint_state(parts)

    def invoke_many(
        self, calls: Sequence[tuple[State, str, Mapping[str, Any]]]
    ) -> list[tuple[InvocationRecord, State]]:
        by_owner: dict[int, list[int]] = {}
        for n, (_state, tool, _args) in enumerate(calls):
            by_owner.setdefault(self._owner(tool), []).append(n)
        out: list[tuple[InvocationRecord, State] | None] = [None] * len(calls)
        for i, ns in by_owner.items():
            rt = self.runtimes[i]
            batch = [(self._parts(calls[n][0])[i], calls[n][1], dict(calls[n][2])) for n in ns]
            results = rt.invoke_many(batch) if hasattr(rt, "invoke_many") else [rt.invoke(*c) for c in batch]
            for n, (record, after) in zip(ns, results):
                parts = list(self._parts(calls[n][0]))
                parts[i] = after
                out[n] = (record, joint_state(parts))
        return out  # type: ignore[return-value]

    @property
    def network_isolation(self) -> str:
        from libra.runtime.workers import sandbox

        return sandbox.weakest(getattr(rt, "network_isolation", sandbox.ALLOWED) for rt in self.runtimes)

    @property
    def hint_conflicts(self) -> dict[str, str]:
        """Each side's record of author hints its tools contradicted (see
        :class:`~libra.runtime.mcp.runtime.McpRuntime`)."""
        out: dict[str, str] = {}
        for rt in self.runtimes:
            out.update(getattr(rt, "hint_conflicts", None) or {})
        return out

    @property
    def servers_learned(self) -> dict[str, dict[str, Any]]:
        """What the MCP side learned about each of its servers (see
        :attr:`~libra.runtime.mcp.runtime.McpRuntime.servers_learned`)."""
        out: dict[str, dict[str, Any]] = {}
        for rt in self.runtimes:
            out.update(getattr(rt, "servers_learned", None) or {})
        return out

    def close(self) -> None:
        errors = []
        for rt in self.runtimes:
            try:
                rt.close()
            except Exception as exc:  # noqa: BLE001 - close the others, then report
                errors.append(exc)
        self.closed = True
        if errors:
            raise errors[0]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
