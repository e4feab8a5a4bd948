"""The states a walk of the sandbox reaches, shared by contract checking and the exploration.

Both phases walk the same tree: a successful call that changes the sandbox leads to a *node* holding the state it
produced, and the values the call exported are valid only on that node and the nodes below it (a session token
means nothing in a fresh sandbox). Each phase keeps its own kind of pool value (checking binds by names and
descriptions, the exploration credits providers), but a node, how it records the values produced on the way to
it, and how its lineage is read are one concept, kept here once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from libra.runtime.base import State


class Produced(Protocol):
    """What a node records of a pool value: its id in its phase's value list, its producer, export and value."""

    id: int
    tool: str
    export: str
    value: Any


@dataclass
class Node:
    """A state reached during exploration and the values produced on the way to it."""

    id: int
    state: State
    parent: int | None
    depth: int
    values: list[int] = field(default_factory=list)
    creator: int = -1  # the call (in the phase's call log) that led here from the parent
    by_key: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (provider, export) -> value ids
    known: set[str] = field(default_factory=set)  # JSON of the values produced here

    def add(self, pv: Produced) -> None:
        self.values.append(pv.id)
        self.by_key.setdefault((pv.tool, pv.export), []).append(pv.id)
        self.known.add(json.dumps(pv.value, sort_keys=True))
        self.known.add(json.dumps([pv.tool, pv.export, pv.value], sort_keys=True))

    def replace(self, pvs: Sequence[Produced]) -> None:
        """Record ``pvs`` as the values produced here instead of the earlier ones (a revised contract exports
        other values from the same call)."""
        self.values, self.by_key, self.known = [], {}, set()
        for pv in pvs:
            self.add(pv)


def lineage(nodes: Sequence[Node], node_id: int | None) -> list[Node]:
    """The node and its ancestors, deepest first (empty for None: the fresh state before any node)."""
    out = []
    n = node_id
    while n is not None:
        out.append(nodes[n])
        n = nodes[n].parent
    return out


def child(nodes: list[Node], parent: int | None, state: State, creator: int) -> Node:
    """Append and return the node a call made by ``creator`` led to from ``parent`` (None: the fresh state, depth
    0), one level deeper."""
    depth = nodes[parent].depth + 1 if parent is not None else 1
    node = Node(len(nodes), state, parent, depth, creator=creator)
    nodes.append(node)
    return node
