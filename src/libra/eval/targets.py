"""What an evaluation scores: a named benchmark, your own tasks on a benchmark's catalog, or your own tasks on a
library's own catalog.

Why one function for ``eval`` and ``analyze``: both take the same three inputs and must refuse the same mistakes
(tasks without a catalog, gold names the catalog lacks) before any method runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from libra.errors import ConfigError


def eval_target(benchmark: str | None, tasks_path: Path | None, library: Path | None) -> Any:
    """The benchmark ``eval`` and ``analyze`` score: a named one (with its tasks, or those of ``--tasks``), or, with
    ``--tasks`` and ``--library`` and no name, the library's own catalog. Gold names are checked against the
    catalog here, before any method runs."""
    from libra.benchmarks.registry import get_benchmark

    if tasks_path is None:
        if benchmark is None:
            raise ConfigError(
                "give a benchmark name, or --library LIB with --tasks FILE to score your own tasks on the "
                "library's catalog"
            )
        return get_benchmark(benchmark)
    from libra.eval.own_tasks import LibraryBenchmark, TasksOnBenchmark
    from libra.eval.tasks_file import check_gold, read_tasks

    tasks = read_tasks(tasks_path)
    if benchmark is not None:
        bench: Any = TasksOnBenchmark(get_benchmark(benchmark), tasks)
    elif library is None:
        raise ConfigError(
            "--tasks without a benchmark needs --library LIB: the tasks are scored on the library's own catalog"
        )
    else:
        bench = LibraryBenchmark(library, tasks)
    check_gold(tasks, bench.catalog(), str(tasks_path))
    return bench
