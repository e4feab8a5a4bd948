"""The pool of values a walk of the sandbox builds: the nodes it reached and the values produced on the way to each.

Both walks -- contract checking and the exploration -- keep it the same way: every value gets an id, its place in
the walk's list of values; a node records the ids of the values produced on the way to it (:class:`.nodes.Node`);
a call from a node may use the values recorded on the node and its ancestors, since a value is only valid in the
state its call produced and the states below it. Each walk keeps its own kind of value (checking binds by names
and descriptions, the exploration credits providers): the pool holds any value with an ``id``, a producer, an
export and the value itself (:class:`.nodes.Produced`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from libra.probing.nodes import Node, Produced, child, lineage
from libra.runtime.base import State

P = TypeVar("P", bound=Produced)


class ValuePool(Generic[P]):
    """The nodes a walk reached (``nodes``, by id) and the values produced on the way (``values``, by id)."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.values: list[P] = []

    def lineage(self, node_id: int | None) -> list[Node]:
        """The node and its ancestors, deepest first (empty for None: the fresh state before any node)."""
        return lineage(self.nodes, node_id)

    def child(self, parent: int | None, state: State, creator: int) -> Node:
        """The new node a call made by ``creator`` led to from ``parent`` (None: the fresh state)."""
        return child(self.nodes, parent, state, creator)

    def add(self, node: Node, value: P) -> None:
        """Give ``value`` the next id and record it as produced on the way to ``node``."""
        value.id = len(self.values)
        self.values.append(value)
        node.add(value)

    def replace(self, node: Node, values: Sequence[P]) -> None:
        """Record ``values`` (given the next ids) as the values produced on the way to ``node``, instead of the ones
        recorded before: a revised contract exports other values from the same call."""
        for value in values:
            value.id = len(self.values)
            self.values.append(value)
        node.replace(values)

    def on_path(self, node_id: int) -> list[P]:
        """The values a call from ``node_id`` may use: those recorded on the node and its ancestors, deepest node
        first, each node's in the order they were recorded."""
        return [self.values[v] for n in self.lineage(node_id) for v in n.values]

    def last_change(self, node_id: int, fresh: State) -> Node:
        """The node of the latest call on ``node_id``'s lineage that changed the state (``fresh`` is the state
        before any node), or the node itself when no call on the way changed anything: what the state hinges on."""
        for n in self.lineage(node_id):
            before = fresh.fingerprint if n.parent is None else self.nodes[n.parent].state.fingerprint
            if n.state.fingerprint != before:
                return n
        return self.nodes[node_id]
