"""A user's own tools as a :class:`Benchmark`, so every command drives them as it drives a benchmark.

Two shapes, both without adapter code:

- :class:`ToolsBenchmark`: Python tool sources (``--tools``, ``[[python]]``); the catalog and runtime come from
  the sources, fixtures from their ``FIXTURES`` and the project file; tasks from a tasks file when one is given.
  (MCP servers, ``[[mcp]]``, are :class:`libra.sources.mcp.McpSource`, see :mod:`libra.sources.project`.)
- :class:`LibraryBenchmark`: an already built library's own catalog with tasks from a file, for
  ``libra eval --library LIB --tasks FILE`` (no benchmark, no runtime: the library holds the catalog).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from libra.benchmarks.base import Benchmark, Task
from libra.catalog import Catalog
from libra.errors import ConfigError


class ToolsBenchmark(Benchmark):
    """Python tool sources (and project settings) as a benchmark; everything is resolved and checked here, in the
    constructor, so a bad source ends a command before any work. ``search`` adds folders where dotted module
    names are found (a project file's folder), in this process and in every worker."""

    description = "your own tools"

    def __init__(
        self,
        specs: Sequence[Any],
        *,
        name: str | None = None,
        fixtures: dict[str, Any] | None = None,
        tasks: Sequence[Task] = (),
        search: Sequence[str] = (),
    ) -> None:
        from libra.sources.python import add_search_path, fixtures_of, resolve_all, runtime_of

        self.specs = tuple(specs)
        self.search = tuple(str(s) for s in search)
        add_search_path(self.search)
        if not self.specs:
            raise ConfigError("no tools given: name a source with --tools MODULE[:OBJECT] or a [[python]] table")
        self.sources = resolve_all(self.specs)
        self.name = name or "+".join(dict.fromkeys(s.owner for s in self.sources))
        module_fixtures = fixtures_of(self.sources)
        clash = sorted(
            k for k in set(module_fixtures) & set(fixtures or {}) if module_fixtures[k] != (fixtures or {})[k]
        )
        if clash:
            raise ConfigError(
                f"fixture(s) {', '.join(clash)} have one value in the tool module and another in the project "
                "file: keep one"
            )
        self._fixtures = {**module_fixtures, **(fixtures or {})}
        self._tasks = list(tasks)
        runtime = runtime_of(self.sources, self.name)
        try:
            self._catalog: Catalog = runtime.catalog
        finally:
            runtime.close()

    def catalog(self) -> Catalog:
        return self._catalog

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def fixtures(self) -> dict[str, Any]:
        return dict(self._fixtures)

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kwargs: Any) -> Any:
        """In-process when not isolated (``--workers 0``); else workers that each rebuild the runtime from the
        source texts (:func:`libra.sources.python.make_tools_runtime`)."""
        from libra.sources.python import runtime_factory, runtime_of

        if not isolated:
            return runtime_of(self.sources, self.name)
        from libra.runtime.workers.isolation import IsolatedRuntime

        return IsolatedRuntime(runtime_factory(self.specs, self.name, self.search), n_workers=n_workers, **kwargs)


class LibraryBenchmark(Benchmark):
    """A built library's catalog with the tasks of a file: what ``eval --library LIB --tasks FILE`` scores."""

    description = "a library's own catalog with your tasks"

    def __init__(self, library_path: str | Path, tasks: Sequence[Task]) -> None:
        from libra.library.artifact import Library

        self.library_path = Path(library_path)
        self._catalog = Library.load(self.library_path).catalog
        self.name = self._catalog.name or self.library_path.name
        self._tasks = list(tasks)

    def catalog(self) -> Catalog:
        return self._catalog

    def tasks(self) -> list[Task]:
        return list(self._tasks)


class TasksOnBenchmark(Benchmark):
    """A benchmark with the tasks of a file in place of its own: everything else (catalog, runtime, fixtures, K,
    the library cache key) is the benchmark's, so a library built for it is reused."""

    def __init__(self, inner: Benchmark, tasks: Sequence[Task]) -> None:
        self.inner = inner
        self.name = inner.name
        self.default_k = inner.default_k
        self.contract_rules = inner.contract_rules
        self.calling_convention = inner.calling_convention
        self._tasks = list(tasks)

    def catalog(self) -> Catalog:
        return self.inner.catalog()

    def tasks(self) -> list[Task]:
        return list(self._tasks)

    def fixtures(self) -> dict[str, Any]:
        return self.inner.fixtures()

    def runtime(self, **kwargs: Any) -> Any:
        return self.inner.runtime(**kwargs)


class MixedBenchmark(Benchmark):
    """Python tool sources and MCP servers in one build (a project file with ``[[python]]`` and ``[[mcp]]``).

    The catalog is the union of the two (tool names must not clash), fixtures are merged, and the runtime is a
    :class:`~libra.runtime.composite.CompositeRuntime` whose state is the pair of both sides' states. Each side
    keeps its own contract conventions: MCP tools carry theirs (rule profile, one JSON object of arguments) in
    their metadata, which a model-backed proposer reads per tool.
    """

    description = "your own tools and MCP servers"

    def __init__(self, python: ToolsBenchmark, mcp: Any, *, name: str | None = None) -> None:
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

    def tasks(self) -> list[Task]:
        return []

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
