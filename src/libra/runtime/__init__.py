"""Executable back ends: the Runtime protocol, the generic Python-object runtime and isolated worker pools."""

from .base import (
    INVOCATION_RECORD_SCHEMA,
    STATUSES,
    InvocationRecord,
    Runtime,
    State,
    StatePart,
    ToolRuntimeError,
    UnknownToolError,
    to_jsonable,
)
from .isolation import IsolatedRuntime, WorkerPool
from .python import PythonRuntime

__all__ = [
    "INVOCATION_RECORD_SCHEMA",
    "STATUSES",
    "InvocationRecord",
    "IsolatedRuntime",
    "PythonRuntime",
    "Runtime",
    "State",
    "StatePart",
    "ToolRuntimeError",
    "UnknownToolError",
    "WorkerPool",
    "to_jsonable",
]
