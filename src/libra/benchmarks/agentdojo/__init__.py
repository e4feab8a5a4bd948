"""The AgentDojo benchmarks' adapter: one benchmark per task suite, with its catalog, tasks and runtime (see
:mod:`.adapter`)."""

from libra._util.lazy import exports

__all__ = [
    "AgentDojoBankingBenchmark",
    "AgentDojoBenchmark",
    "AgentDojoSlackBenchmark",
    "AgentDojoTravelBenchmark",
    "AgentDojoWorkspaceBenchmark",
]
__getattr__, __dir__ = exports(__name__, {name: ".adapter" for name in __all__})
