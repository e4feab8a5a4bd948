"""Transports and channels: how an :class:`~libra.runtime.workers.executor.Executor` starts its workers and
talks to them.

Why a module of its own: every place tools can run (in-process, isolated processes, another Python
environment, Ray actors) is one :class:`Transport` that starts :class:`Channel` s; the executor and its call
stream use workers only through these two classes, so a new place to run tools implements them and nothing else.
"""

from __future__ import annotations

import math
import select
import signal
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any


def wait_readable(channels: Sequence[Channel], timeout_s: float) -> list[Channel]:
    """The channels among ``channels`` whose file descriptor is readable (or closed), waiting up to ``timeout_s``.

    Why not ``multiprocessing.connection.wait``: it builds a selector and registers every descriptor anew on each
    call, and a stream asks after every result whether the next one is back, several times per tool call; one
    ``poll`` object costs a fraction of that, and ``poll`` has no limit on descriptor numbers, unlike ``select``.
    A hang-up counts as readable, as there: reading it is what reports the worker lost.
    """
    poller = select.poll()
    by_fd: dict[int, Channel] = {}
    for channel in channels:
        fd = channel.fileno()
        by_fd[fd] = channel
        poller.register(fd, select.POLLIN)
    ready = poller.poll(max(0, math.ceil(timeout_s * 1000.0)))
    return [by_fd[fd] for fd, _events in ready if fd in by_fd]


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None:
        return "no exit code"
    if exitcode < 0:
        try:
            return f"signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


class WorkerLost(Exception):
    """A worker died or sent something unreadable; ``text`` becomes the error record of its call."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class Channel(ABC):
    """One worker of an executor: it answers the executor's requests one at a time."""

    #: what the worker said when it was ready ("pid", "network_isolation", ...)
    info: dict[str, Any]
    pid: int | None = None

    @abstractmethod
    def send(self, msg: tuple[Any, ...]) -> None:
        """Send a request; ``OSError``/``ValueError`` when the worker is gone (its reply then reports it)."""

    @abstractmethod
    def recv(self) -> tuple[Any, ...]:
        """The next reply; raises :class:`WorkerLost` when the worker died or answered garbage."""

    @abstractmethod
    def poll(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a reply; True when one can be read."""

    @abstractmethod
    def fileno(self) -> int:
        """A file descriptor that becomes readable with a reply (for :meth:`Transport.wait`)."""

    def stop(self) -> None:
        """Ask the worker to exit."""
        self.send(("close",))

    def join(self, timeout_s: float) -> None:  # noqa: B027 - a channel with no process to wait for waits for nothing
        """Give a stopping worker ``timeout_s`` to exit."""

    @abstractmethod
    def kill(self) -> None:
        """End the worker now, with every process it started, and release the channel."""


class Transport(ABC):
    """Starts the workers of an :class:`Executor`; the attributes below say how its workers behave."""

    #: what a worker is called in messages ("cannot send a call of X to a <noun>")
    noun = "worker"
    #: True when workers do not time calls: the executor then times each call itself
    times_calls = False
    #: True when workers only take states made of StateParts
    split_states_only = False
    #: how long a one-off request (a state, the catalog) may take, at least
    request_timeout_s = 60.0
    #: how long a worker asked to stop gets before it is killed
    stop_grace_s = 1.0
    #: True when the transport is plain, picklable settings that can start its workers in another process (or on
    #: another machine): only such transports are handed to the wrapper of :func:`transports_wrapped`
    remotable = False

    @abstractmethod
    def start(self) -> Channel:
        """Begin starting one worker and return at once (workers start in parallel)."""

    @abstractmethod
    def ready(self, channel: Channel, timeout_s: float) -> dict[str, Any]:
        """Wait for ``channel``'s ready message and return its info; kill it and raise ToolRuntimeError if it fails."""

    def wait(self, channels: list[Channel], timeout_s: float) -> list[Channel]:
        """The channels among ``channels`` with a reply to read, waiting up to ``timeout_s`` for one."""
        return wait_readable(channels, timeout_s)
