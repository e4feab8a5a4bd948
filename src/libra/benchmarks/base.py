"""Benchmarks as plug-ins: a catalog, its tasks and (optionally) an executable runtime.

Everything benchmark-specific (file formats, gold conversion, the paper's reported figures) lives in an adapter
module beside this one; the core never imports an adapter by name except through :mod:`.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from libra.catalog import Catalog


@dataclass(frozen=True)
class Task:
    """One retrieval query with its gold tools (ordered, distinct, fully qualified)."""

    id: str
    query: str
    gold: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gold", tuple(dict.fromkeys(self.gold)))


class Benchmark:
    """Base class of benchmark adapters.

    ``paper`` maps a method name to the (P, R, NDCG) the LIBRA paper reports at ``default_k``, so reports can put
    the published figures beside ours.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    default_k: ClassVar[int] = 15
    paper: ClassVar[dict[str, tuple[float, float, float]]] = {}
    #: which rule set an LLM contract proposer gets ("shared", "registry" or "stateful") and how tools are called
    contract_rules: ClassVar[str] = "shared"
    calling_convention: ClassVar[str] = "signature"

    def catalog(self) -> Catalog:
        raise NotImplementedError

    def tasks(self) -> list[Task]:
        raise NotImplementedError

    def fixtures(self) -> dict[str, Any]:
        """Facts about the sandbox the runtime starts in that any caller of it knows (e.g. the test account's
        credentials). Library construction may use them to fill inputs; they never come from tasks or gold."""
        return {}

    def runtime(self, **kwargs: Any):  # -> Runtime
        from libra.errors import ConfigError

        raise ConfigError(f"benchmark {self.name!r} has no executable runtime")
