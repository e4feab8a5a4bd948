"""Find benchmarks by name.

Built-in adapters are imported lazily (BFCL needs ``bfcl-eval`` and AgentDojo ``agentdojo``; importing them eagerly
would make every command fail without them). Third-party adapters register through the ``libra.benchmarks``
entry-point group.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from libra.benchmarks.base import Benchmark
from libra.errors import ConfigError

_BUILTIN: dict[str, str] = {
    "agentdojo-banking": "libra.benchmarks.agentdojo.adapter:AgentDojoBankingBenchmark",
    "agentdojo-slack": "libra.benchmarks.agentdojo.adapter:AgentDojoSlackBenchmark",
    "agentdojo-travel": "libra.benchmarks.agentdojo.adapter:AgentDojoTravelBenchmark",
    "agentdojo-workspace": "libra.benchmarks.agentdojo.adapter:AgentDojoWorkspaceBenchmark",
    "appworld": "libra.benchmarks.appworld.adapter:AppWorldBenchmark",
    "bfcl": "libra.benchmarks.bfcl.adapter:BFCLBenchmark",
    "scitooleval": "libra.benchmarks.scitooleval.adapter:SciToolEvalBenchmark",
}

_extra: dict[str, type[Benchmark]] = {}


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Class decorator registering a benchmark adapter under ``cls.name``."""
    _extra[cls.name] = cls
    return cls


def _load(target: str) -> type[Benchmark]:
    mod, _, attr = target.partition(":")
    return getattr(importlib.import_module(mod), attr)


def available() -> list[str]:
    names = set(_BUILTIN) | set(_extra)
    try:
        names |= {ep.name for ep in entry_points(group="libra.benchmarks")}
    except Exception:  # noqa: BLE001 - broken third-party metadata must not break the CLI
        pass
    return sorted(names)


def get_benchmark(name: str) -> Benchmark:
    key = name.strip().lower()
    if key in _extra:
        return _extra[key]()
    if key in _BUILTIN:
        return _load(_BUILTIN[key])()
    for ep in entry_points(group="libra.benchmarks"):
        if ep.name == key:
            return ep.load()()
    raise ConfigError(f"unknown benchmark {name!r}: choose one of {', '.join(available())}")
