"""The build's input: a catalog of tools, the runtime that executes them, and what is known about its fresh state.

Everything ``libra build`` can take is a :class:`ToolSource`: Python modules and classes, MCP servers, both at
once, a project file naming them, and every benchmark (a benchmark is a source plus tasks and the paper's
figures, :class:`libra.benchmarks.base.Benchmark`). The build reads a source only through this interface, so a
new kind of source needs no change anywhere else.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from libra.catalog import Catalog
from libra.errors import ConfigError

#: Which rule set an LLM contract proposer is given: "shared" (plain functions), "registry" (a registry of
#: functions with declared outputs, as SciToolEval's) or "stateful" (tools that change a shared state).
ContractRules = Literal["shared", "registry", "stateful"]
#: How a tool takes its arguments: Python keyword arguments ("signature") or one JSON object ("json_object").
CallingConvention = Literal["signature", "json_object"]


class ToolSource:
    """A catalog with its executable runtime.

    Subclasses give :meth:`catalog` and :meth:`runtime`; the rest has defaults that fit a source with no
    fixtures and no servers to record.
    """

    name: str = ""
    description: ClassVar[str] = ""
    contract_rules: ContractRules = "shared"
    calling_convention: CallingConvention = "signature"

    def catalog(self) -> Catalog:
        """The tools, with their JSON Schemas and descriptions."""
        raise NotImplementedError

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kwargs: Any) -> Any:
        """A runtime over the tools (a :class:`libra.runtime.base.Runtime`): in isolated worker processes unless
        ``isolated`` is false and the source may run in-process. ``kwargs`` are the worker pool's options."""
        raise ConfigError(f"{self.name or type(self).__name__!r} has no executable runtime")

    def fixtures(self) -> dict[str, Any]:
        """Facts about the fresh state any caller of the tools knows (a test account's credentials). The build may
        use them to fill inputs; they never come from tasks or gold."""
        return {}

    def untestable(self) -> dict[str, dict[str, str]]:
        """Tool -> its parameters no JSON value can build (a ``Callable``, a class without a schema), each with its
        type. Such a tool stays in the catalog for retrieval; the build says it cannot test it."""
        return {}

    def server_configs(self) -> list[dict[str, Any]] | None:
        """How to start the source's MCP servers again (``[[mcp]]`` tables), for a library that records them so a
        gateway can forward calls; ``None`` for a source without servers."""
        return None
