"""Executable back ends: the Runtime protocol, the generic Python-object runtime, and the executor that runs tools
in sandboxed workers over a transport (isolated processes, another Python environment, or in-process)."""

from libra.runtime.base import (
    INVOCATION_RECORD_SCHEMA,
    STATUSES,
    InvocationRecord,
    Runtime,
    State,
    StatePart,
    ToolRuntimeError,
    UnknownToolError,
)
from libra.runtime.python.runtime import PythonRuntime
from libra.runtime.workers.executor import Executor
from libra.runtime.workers.guard import to_jsonable
from libra.runtime.workers.inprocess import InProcessTransport
from libra.runtime.workers.isolation import IsolatedRuntime, ProcessTransport, WorkerPool
from libra.runtime.workers.transport import Channel, Transport

__all__ = [
    "INVOCATION_RECORD_SCHEMA",
    "STATUSES",
    "Channel",
    "Executor",
    "InProcessTransport",
    "InvocationRecord",
    "IsolatedRuntime",
    "ProcessTransport",
    "PythonRuntime",
    "Runtime",
    "State",
    "StatePart",
    "ToolRuntimeError",
    "Transport",
    "UnknownToolError",
    "WorkerPool",
    "to_jsonable",
]
