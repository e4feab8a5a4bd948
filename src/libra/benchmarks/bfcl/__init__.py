"""The bfcl benchmark's adapter: its catalog, tasks, runtime and the paper's figures (see :mod:`.adapter`)."""

from libra._util.lazy import exports

__all__ = ["BFCLBenchmark"]
__getattr__, __dir__ = exports(__name__, {"BFCLBenchmark": ".adapter"})
