"""Python objects as a runtime: each public method or module function is a tool, the objects and module globals
are the state (snapshotted per attribute, big containers watched for writes), every call sees a fixed clock and
seeded entropy."""

from libra.runtime.python.runtime import PythonRuntime

__all__ = ["PythonRuntime"]
