"""Python tools and MCP servers in one build: what a project file with both ``[[python]]`` and ``[[mcp]]`` tables
builds."""

from __future__ import annotations

from typing import Any

from libra.catalog import Catalog
from libra.errors import ConfigError
from libra.sources.base import ToolSource
from libra.sources.mcp import McpSource
from libra.sources.python import PythonSource


class MixedSource(ToolSource):
    """Python tool sources and MCP servers in one build (a project file with ``[[python]]`` and ``[[mcp]]``).

    The catalog is the union of the two (tool names must not clash), fixtures are merged, and the runtime is a
    :class:`~libra.runtime.composite.CompositeRuntime` whose state is the pair of both sides' states. Each side
    keeps its own contract conventions: MCP tools carry theirs (rule profile, one JSON object of arguments) in
    their metadata, which a model-backed proposer reads per tool.
    """

    description = "your own tools and MCP servers"

    def __init__(self, python: PythonSource, mcp: McpSource, *, name: str | None = None) -> None:
        from dataclasses import replace

        self.python, self.mcp = python, mcp
        self.name = name or f"{python.name}+{mcp.name}"
        self.contract_rules = python.contract_rules
        self.calling_convention = python.calling_convention
        clash = sorted(set(python.catalog().names) & set(mcp.catalog().names))
        if clash:
            raise ConfigError(
                f"tool name(s) {', '.join(clash)} come from both a [[python]] source and an [[mcp]] server: "
                "give the source a namespace"
            )
        fix_py, fix_mcp = python.fixtures(), mcp.fixtures()
        differ = sorted(k for k in set(fix_py) & set(fix_mcp) if fix_py[k] != fix_mcp[k])
        if differ:
            raise ConfigError(
                f"fixture(s) {', '.join(differ)} have different values for the Python tools and the MCP "
                "servers: keep one"
            )
        self._fixtures = {**fix_py, **fix_mcp}
        conventions = {"contract_rules": mcp.contract_rules, "calling_convention": mcp.calling_convention}
        mcp_tools = [replace(t, metadata={**conventions, **t.metadata}) for t in mcp.catalog()]
        self._catalog = Catalog([*python.catalog(), *mcp_tools], name=self.name)

    def catalog(self) -> Catalog:
        return self._catalog

    def untestable(self) -> dict[str, dict[str, str]]:
        return self.python.untestable()

    def fixtures(self) -> dict[str, Any]:
        return dict(self._fixtures)

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kwargs: Any) -> Any:
        """Both sides' runtimes as one: the Python tools isolated as asked, the MCP servers as they always run."""
        from libra.runtime.composite import CompositeRuntime

        py = self.python.runtime(isolated=isolated, n_workers=n_workers, **kwargs)
        try:
            mcp = self.mcp.runtime()
        except BaseException:
            py.close()
            raise
        return CompositeRuntime([py, mcp], self._catalog, name=self.name)


#: The name this class had when every build input was a benchmark.
MixedBenchmark = MixedSource
