"""Your own tasks on a catalog: a built library's catalog with tasks from a file (``eval --library LIB --tasks FILE``),
or a benchmark's catalog with them in place of its own (``eval BENCH --tasks FILE``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from libra.benchmarks.base import Benchmark, Task
from libra.catalog import Catalog
from libra.library.artifact import Library


class LibraryBenchmark(Benchmark):
    """A built library's catalog with the tasks of a file: what ``eval --library LIB --tasks FILE`` scores."""

    description = "a library's own catalog with your tasks"

    def __init__(self, library_path: str | Path, tasks: Sequence[Task]) -> None:
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
