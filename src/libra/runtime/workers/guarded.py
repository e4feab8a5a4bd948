"""A runtime whose every call runs under the call guard, with its record bounded: what libra's own workers run.

It lives apart from :mod:`.guard` because the guard is standard-library only (a foreign interpreter loads it by
path, see :mod:`.remote_server`), while this wrapper speaks libra's records.
"""

from __future__ import annotations

import sys
from typing import Any

from libra.errors import LibraError
from libra.runtime.base import InvocationRecord
from libra.runtime.workers.guard import DEFAULT_MAX_RECORD_BYTES, CallGuard, bound_record, guarded


class GuardedRuntime:
    """A runtime whose calls run under a :class:`CallGuard` and whose records are bounded JSON data.

    What isolated workers run (``max_record_bytes`` comes from the pool's options). An oversized or unconvertible
    record becomes an ``error`` record saying why, and the call's state changes are dropped with it (the state
    given is returned), so the state never holds what the record does not show. An exception the inner runtime lets
    escape, other than libra's own errors and ``MemoryError`` (which the worker reports), also becomes an
    ``error`` record: nothing a tool does can end the worker's loop. Everything else is the inner runtime's.
    """

    def __init__(self, inner: Any, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES, **guard_options: Any) -> None:
        if max_record_bytes <= 0:
            raise ValueError(f"max_record_bytes must be > 0, got {max_record_bytes}")
        self.inner = inner
        self.max_record_bytes = int(max_record_bytes)
        self.guard = CallGuard(tuple(getattr(inner, "state_modules", ())), **guard_options)
        if "multiprocessing" in sys.modules:  # a worker process exits without running atexit, but runs these
            from multiprocessing import util

            util.Finalize(self, self.guard.close, exitpriority=10)
        self._passthrough = (LibraError, MemoryError)
        self._record = InvocationRecord

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _invoke(self, state: Any, tool: str, args: Any) -> tuple[Any, Any]:
        try:
            return self.inner.invoke(state, tool, args)
        except self._passthrough:
            raise
        except Exception as exc:  # noqa: BLE001 - a runtime's own failure on this call: data, not a crash
            msg = str(exc)
            return self._record("error", None, {}, f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__), state

    def invoke(self, state: Any, tool: str, args: Any = None) -> tuple[Any, Any]:
        (record, new), report = guarded(self.guard, self.max_record_bytes, self._invoke, state, tool, args)
        output, changes, error, problem = bound_record(
            record.output, record.state_changes, record.error, self.max_record_bytes
        )
        if problem is not None:
            record.status, record.output, record.state_changes, record.error, new = "error", None, {}, problem, state
        else:
            record.output, record.state_changes, record.error = output, changes, error
        if report:
            record.diagnostics = report
        return record, new

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.guard.close()
