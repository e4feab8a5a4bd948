"""The in-process transport: workers that are runtimes in the caller's process (no isolation, no timeouts).

Why: it runs a runtime through the executor's bookkeeping (states shipped as parts, the caller's mirror of what
each worker holds) without a process, for tests and trusted code, and to check that a transport gives the same
records as direct calls.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any

from libra.runtime.base import ToolRuntimeError
from libra.runtime.workers import sandbox
from libra.runtime.workers.lru import DEFAULT_CACHE_BYTES
from libra.runtime.workers.transport import Channel, Transport
from libra.runtime.workers.worker import RuntimeFactory, WorkerServer


class _LocalChannel(Channel):
    """A worker that is an object in the caller's process: requests are answered as they are sent."""

    def __init__(self, factory: RuntimeFactory, cache_size: int, cache_bytes: int | None = None) -> None:
        self.info = {}
        self.pid = os.getpid()
        self.error: BaseException | None = None
        self.server: WorkerServer | None = None
        self.replies: deque[tuple[Any, ...]] = deque()
        try:
            self.server = WorkerServer(factory(), cache_size, cache_bytes=cache_bytes)
        except Exception as exc:  # noqa: BLE001 - reported by ready()
            self.error = exc

    def send(self, msg: tuple[Any, ...]) -> None:
        if msg[0] != "close" and self.server is not None:
            self.replies.append(self.server.handle(msg))

    def recv(self) -> tuple[Any, ...]:
        return self.replies.popleft()

    def poll(self, timeout_s: float) -> bool:
        return bool(self.replies)

    def fileno(self) -> int:
        raise OSError("an in-process worker has no file descriptor")

    def kill(self) -> None:
        self.replies.clear()


class InProcessTransport(Transport):
    """Workers that are runtimes in the caller's process: the executor's bookkeeping without isolation.

    Calls cannot be interrupted, so ``timeout_s`` is not enforced, and tools reach the network and the caller's
    memory: use it for trusted runtimes and to check that a transport gives the same records as direct calls.
    """

    noun = "in-process worker"

    def __init__(
        self, factory: RuntimeFactory, cache_size: int = 4096, cache_bytes: int | None = DEFAULT_CACHE_BYTES
    ) -> None:
        self.factory = factory
        self.cache_size = cache_size
        self.cache_bytes = cache_bytes

    def start(self) -> Channel:
        return _LocalChannel(self.factory, self.cache_size, self.cache_bytes)

    def ready(self, channel: Channel, timeout_s: float) -> dict[str, Any]:
        from libra.runtime.base import error_text

        assert isinstance(channel, _LocalChannel)
        if channel.server is None:
            raise ToolRuntimeError(f"the runtime factory failed: {error_text(channel.error or RuntimeError())}")
        runtime = channel.server.runtime
        return {
            "catalog": runtime.catalog,
            "trusted": bool(getattr(runtime, "trusted", False)),
            "pid": channel.pid,
            "network_isolation": sandbox.ALLOWED,
        }

    def wait(self, channels: list[Channel], timeout_s: float) -> list[Channel]:
        return [c for c in channels if c.poll(0.0)]
