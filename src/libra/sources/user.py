"""Where the build inputs lived when every one was a benchmark; the names live on in their own modules."""

from libra.eval.own_tasks import LibraryBenchmark, TasksOnBenchmark
from libra.sources.mixed import MixedBenchmark, MixedSource
from libra.sources.python import PythonSource, ToolsBenchmark

__all__ = ["LibraryBenchmark", "MixedBenchmark", "MixedSource", "PythonSource", "TasksOnBenchmark", "ToolsBenchmark"]
