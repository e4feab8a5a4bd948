"""Contracts proposed without an LLM: templates and literals read from each tool's schema and description, revised
from the tool's own rejection messages."""

from libra.contracts.offline.proposer import OfflineProposer

__all__ = ["OfflineProposer"]
