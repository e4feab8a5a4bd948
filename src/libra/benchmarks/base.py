"""Benchmarks as plug-ins: a tool source (catalog, runtime, fixtures) with tasks and the paper's figures.

Everything benchmark-specific (file formats, gold conversion, the paper's reported figures) lives in an adapter
module beside this one; the core never imports an adapter by name except through :mod:`.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from libra.sources.base import ToolSource


@dataclass(frozen=True)
class Task:
    """One retrieval query with its gold tools (ordered, distinct, fully qualified)."""

    id: str
    query: str
    gold: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gold", tuple(dict.fromkeys(self.gold)))


class Benchmark(ToolSource):
    """A tool source with tasks: base class of benchmark adapters.

    ``paper`` maps a method name to the (P, R, NDCG) the LIBRA paper reports at ``default_k``, so reports can put
    the published figures beside ours; ``paper_notes`` says, per method, how the paper's setting differs.
    """

    name: ClassVar[str] = ""
    default_k: ClassVar[int] = 15
    paper: ClassVar[dict[str, tuple[float, float, float]]] = {}
    paper_notes: ClassVar[dict[str, str]] = {}

    def tasks(self) -> list[Task]:
        raise NotImplementedError

    def split_unit(self, task: Task) -> str:
        """Tasks with the same unit fall in the same half of :mod:`.splits` (variants of one task share one)."""
        return task.id

    def split_stratum(self, task: Task) -> str:
        """The group a task is halved within (:mod:`.splits`): both halves keep the groups' proportions."""
        return ""
