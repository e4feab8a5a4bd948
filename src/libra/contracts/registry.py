"""Where contracts come from: the offline heuristics, an LLM, or any other proposer registered by name, behind
the same two calls (propose, revise)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from libra.catalog import Catalog, Tool
from libra.contracts.model import Contract
from libra.contracts.offline.proposer import OfflineProposer
from libra.errors import ConfigError


@runtime_checkable
class Proposer(Protocol):
    """Where contracts come from: the offline heuristics today, an LLM later, behind the same two calls."""

    name: str

    def propose(self, tool: Tool) -> Contract: ...

    def revise(self, contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> Contract | None: ...


_PROPOSERS: dict[str, type] = {"offline": OfflineProposer}


def register_proposer(name: str, factory: type) -> None:
    """Make another proposer (e.g. an LLM-backed one) selectable by name."""
    _PROPOSERS[name] = factory


def get_proposer(proposer: str | Proposer = "offline") -> Proposer:
    if not isinstance(proposer, str):
        return proposer
    try:
        return _PROPOSERS[proposer]()
    except KeyError:
        raise ConfigError(f"unknown contract proposer {proposer!r}: choose one of {sorted(_PROPOSERS)}") from None


def propose_contracts(catalog: Catalog, proposer: str | Proposer = "offline") -> dict[str, Contract]:
    """One contract per tool, each proposed from that tool's own metadata."""
    p = get_proposer(proposer)
    return {tool.name: p.propose(tool) for tool in catalog}
