"""AgentDojo (Debenedetti et al. 2024) as retrieval benchmarks with an executable runtime, one per task suite.

``agentdojo-workspace``, ``agentdojo-travel``, ``agentdojo-banking`` and ``agentdojo-slack`` each have the suite's
own catalog, tasks and runtime, taken from the ``agentdojo`` package without hints: tools exactly as the suite's
function registry describes them, the state its default environment, the tasks its user tasks' prompts with the
functions of their ground-truth calls as gold (see :mod:`libra.benchmarks.agentdojo.suites` for the details and
:mod:`libra.benchmarks.agentdojo.runtime` for the runtime). Nothing is added for libra: no fixtures, no parameter
examples, no sandbox scenario. The LIBRA paper does not evaluate AgentDojo, so there are no published figures.
"""

from __future__ import annotations

from typing import Any, ClassVar

from libra.benchmarks.agentdojo.suites import BENCHMARK_VERSION, load_catalog, load_tasks, require_agentdojo
from libra.benchmarks.base import Benchmark, Task
from libra.catalog import Catalog


class AgentDojoBenchmark(Benchmark):
    """One AgentDojo task suite (``suite``); the subclasses below are the four the package ships."""

    suite: ClassVar[str] = ""
    default_k = 10
    paper: ClassVar[dict[str, tuple[float, float, float]]] = {}

    def __init__(self) -> None:
        require_agentdojo()

    def catalog(self) -> Catalog:
        return load_catalog(self.suite)

    def tasks(self) -> list[Task]:
        return load_tasks(self.suite)

    def runtime(self, **kwargs: Any):
        """The suite's runtime from its default environment (``isolated=True`` for worker processes)."""
        from libra.benchmarks.agentdojo.runtime import make_agentdojo_runtime

        return make_agentdojo_runtime(self.suite, **kwargs)


class AgentDojoWorkspaceBenchmark(AgentDojoBenchmark):
    name = "agentdojo-workspace"
    suite = "workspace"
    description = (
        f"AgentDojo {BENCHMARK_VERSION} workspace suite: 40 user tasks over 24 e-mail, calendar and drive tools"
    )


class AgentDojoTravelBenchmark(AgentDojoBenchmark):
    name = "agentdojo-travel"
    suite = "travel"
    description = (
        f"AgentDojo {BENCHMARK_VERSION} travel suite: 20 user tasks over 28 hotel, restaurant, car and flight tools"
    )


class AgentDojoBankingBenchmark(AgentDojoBenchmark):
    name = "agentdojo-banking"
    suite = "banking"
    description = (
        f"AgentDojo {BENCHMARK_VERSION} banking suite: 16 user tasks over 11 account, transaction and file tools"
    )


class AgentDojoSlackBenchmark(AgentDojoBenchmark):
    name = "agentdojo-slack"
    suite = "slack"
    description = f"AgentDojo {BENCHMARK_VERSION} slack: 21 user tasks over 11 channel, message and web tools"


BENCHMARKS: tuple[type[AgentDojoBenchmark], ...] = (
    AgentDojoWorkspaceBenchmark,
    AgentDojoTravelBenchmark,
    AgentDojoBankingBenchmark,
    AgentDojoSlackBenchmark,
)
