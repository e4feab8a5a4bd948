"""Tool calls on Ray: a transport of the executor whose workers live in Ray actors, one sandboxed runtime each.

Why Ray: a build's cost is its tool invocations, and they are independent given their state, so a catalog that
outgrows one machine should run them on an existing distributed engine rather than on a pool of our own. Ray is
only a *transport* here (:class:`~libra.runtime.workers.transport.Transport`): the executor keeps everything else (the
order of results, timeouts, replacing lost workers, shipping states as content-addressed parts and mirroring what
each worker holds), so a build on Ray finds the same library as a local one.

How a worker runs: each Ray actor (:class:`_Host`, one CPU) starts **one sandboxed worker subprocess** through the
very transport the build would use locally (:class:`~libra.runtime.workers.isolation.ProcessTransport`'s worker, or a
foreign interpreter's server from :class:`~libra.runtime.workers.remote.InterpreterTransport`) and relays the executor's
messages to it. Why a subprocess and not the worker code inside the actor: the sandbox (:mod:`.sandbox`) takes the
worker's process off the network (its own network namespace), makes it a child subreaper, caps its address space
and kills what each call started; done to the actor's own process, that would cut the actor off from Ray, cap
Ray's own threads and buffers, and let a tool that crashes or hangs take the actor down. In its own subprocess the
guarantees are exactly those of a local worker (same code, same crash and timeout texts), and the actor stays a
thin relay that Ray can schedule, restart and kill.

Messages: a request is one actor method call whose argument is the executor's message; states travel as they do
locally, as parts keyed by content, with data only for parts the worker does not hold yet. The actor answers on a
Ray object reference; :meth:`RayTransport.wait` waits on those. A call that overruns is charged by the executor
as locally, then :meth:`_RayChannel.kill` asks the actor to kill its worker's process tree (the actor takes two
concurrent calls for that) and ends the actor; a new actor replaces it.

Sessions: :func:`ray_session` connects to a cluster at an address, or starts a private local Ray on 127.0.0.1
(``num_cpus`` = workers, no dashboard, quiet logs) and stops it afterwards; a Ray already initialised by the
caller is used as is and left running.
"""

from __future__ import annotations

import importlib.util
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from libra.errors import ConfigError
from libra.runtime.base import ToolRuntimeError
from libra.runtime.workers.executor import transports_wrapped
from libra.runtime.workers.transport import Channel, Transport, WorkerLost

#: the one line a build prints when Ray is asked for but not installed
RAY_MISSING = "--executor ray needs Ray, which is not installed: pip install 'libra-tools[ray]'"
EXECUTORS = ("local", "ray")
#: how long the actor gets to kill its worker before the actor itself is ended
_TERMINATE_S = 10.0


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


@dataclass(frozen=True)
class ExecutorSpec:
    """Where a build's tool calls run: ``local`` (worker processes here) or ``ray`` (actors of a Ray cluster at
    ``address``; None = a private local Ray started for the build)."""

    kind: str = "local"
    address: str | None = None

    @classmethod
    def parse(cls, text: str) -> ExecutorSpec:
        """``local``, ``ray`` or ``ray:ADDRESS`` (ADDRESS as ``ray.init`` takes it: ``HOST:PORT``, ``ray://HOST:PORT``
        or ``auto``). Refuses an unknown kind, and ``ray`` when Ray is not installed (before any work)."""
        kind, _, address = text.strip().partition(":")
        kind = kind.lower()
        if kind not in EXECUTORS:
            raise ValueError(f"must be local, ray or ray:ADDRESS; got {text!r}")
        if kind == "local":
            if address:
                raise ValueError(f"local takes no address; got {text!r}")
            return cls()
        if ":" in text and not address.strip():
            raise ValueError(
                f"ray: needs an address after the colon (e.g. ray:10.0.0.5:6379), or plain ray; got {text!r}"
            )
        if not ray_available():
            raise ConfigError(RAY_MISSING)
        return cls("ray", address.strip() or None)

    def __str__(self) -> str:
        return self.kind if self.address is None else f"{self.kind}:{self.address}"


# -- the actor ---------------------------------------------------------------------------------------------------
class _Host:
    """A Ray actor owning one sandboxed worker started by ``inner`` (a remotable transport) and relaying to it."""

    def __init__(self, inner: Transport, start_timeout_s: float) -> None:
        self.inner = inner
        self.channel: Channel | None = None
        try:
            self.channel = inner.start()
            info = inner.ready(self.channel, start_timeout_s)
            self.started: tuple[str, Any] = ("ready", {**info, "ray_node": _node_id()})
        except ToolRuntimeError as exc:
            self.started = ("failed", str(exc))
        except Exception as exc:  # noqa: BLE001 - reported to the driver as a failed start
            self.started = ("failed", f"{type(exc).__name__}: {exc}")

    def ready(self) -> tuple[str, Any]:
        return self.started

    def request(self, msg: tuple[Any, ...]) -> tuple[Any, ...]:
        """Send one request to the worker and return its reply (``("lost", text)`` when the worker is gone)."""
        assert self.channel is not None
        began = time.perf_counter()
        try:
            self.channel.send(msg)
            reply = self.channel.recv()
        except WorkerLost as lost:
            return ("lost", lost.text)
        except (OSError, ValueError, EOFError):
            return ("lost", f"a {self.inner.noun} went away")
        if self.inner.times_calls and reply[0] == "done":  # the worker does not time calls: time them here
            reply[2].duration_ms = (time.perf_counter() - began) * 1000.0
        return reply

    def stop(self, grace_s: float) -> None:
        if self.channel is not None:
            try:
                self.channel.stop()
                self.channel.join(grace_s)
            except (OSError, ValueError, AssertionError):
                pass
            self.channel.kill()

    def terminate(self) -> None:
        """Kill the worker and everything it started (runs beside a blocked :meth:`request`)."""
        if self.channel is not None:
            self.channel.kill()


def _node_id() -> str | None:
    try:
        import ray

        return ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - informational only
        return None


_ACTOR: Any = None


def _actor_class() -> Any:
    global _ACTOR
    if _ACTOR is None:
        import ray

        # one CPU per sandboxed runtime; two concurrent calls so terminate() can run beside a hung request()
        _ACTOR = ray.remote(num_cpus=1, max_concurrency=2, max_restarts=0)(_Host)
    return _ACTOR


# -- the driver side ---------------------------------------------------------------------------------------------
class _RayChannel(Channel):
    """One actor as seen by the executor: the reply of the request in flight is a Ray object reference."""

    def __init__(self, actor: Any, grace_s: float) -> None:
        self.actor = actor
        self.grace_s = grace_s
        self.info = {}
        self.pending: Any = None
        self.stopping: Any = None
        self.started = actor.ready.remote()

    def send(self, msg: tuple[Any, ...]) -> None:
        if msg[0] == "close":
            self.stopping = self.actor.stop.remote(self.grace_s)
        else:
            self.pending = self.actor.request.remote(msg)

    def recv(self) -> tuple[Any, ...]:
        import ray

        ref, self.pending = self.pending, None
        try:
            reply = ray.get(ref)
        except ray.exceptions.RayError as exc:
            raise WorkerLost(f"Ray actor lost ({type(exc).__name__})") from None
        if reply[0] == "lost":
            raise WorkerLost(reply[1])
        return reply

    def poll(self, timeout_s: float) -> bool:
        import ray

        return bool(ray.wait([self.pending], timeout=max(0.0, timeout_s))[0])

    def fileno(self) -> int:
        raise OSError("a Ray actor has no file descriptor: RayTransport.wait waits on object references")

    def join(self, timeout_s: float) -> None:
        import ray

        if self.stopping is not None:
            ray.wait([self.stopping], timeout=timeout_s + _TERMINATE_S)

    def kill(self) -> None:
        import ray

        try:
            if self.stopping is None:
                ray.wait([self.actor.terminate.remote()], timeout=_TERMINATE_S)
            ray.kill(self.actor, no_restart=True)
        except Exception:  # noqa: BLE001, S110 - an actor already gone (or a Ray already shut down) needs no killing
            pass


class RayTransport(Transport):
    """The workers of ``inner`` (a remotable transport), each started inside its own Ray actor (see the module doc).

    The caller must have connected to Ray (:func:`ray_session`). Crash and timeout texts, timing and the state
    protocol are ``inner``'s; ``noun`` says the worker runs on Ray.
    """

    times_calls = False  # the actor times calls for a worker that does not

    def __init__(self, inner: Transport, start_timeout_s: float = 300.0) -> None:
        if not inner.remotable:
            raise ToolRuntimeError(f"{type(inner).__name__} cannot start its workers on Ray")
        self.inner = inner
        self.start_timeout_s = start_timeout_s
        self.noun = f"{inner.noun} on Ray"
        self.split_states_only = inner.split_states_only
        self.request_timeout_s = inner.request_timeout_s
        self.stop_grace_s = inner.stop_grace_s

    def start(self) -> Channel:
        return _RayChannel(
            _actor_class().options(scheduling_strategy="SPREAD").remote(self.inner, self.start_timeout_s),
            self.stop_grace_s,
        )

    def ready(self, channel: Channel, timeout_s: float) -> dict[str, Any]:
        import ray

        assert isinstance(channel, _RayChannel)
        try:
            status, detail = ray.get(channel.started, timeout=max(timeout_s, self.start_timeout_s))
        except ray.exceptions.GetTimeoutError:
            channel.kill()
            raise ToolRuntimeError(
                f"a Ray actor did not start within {max(timeout_s, self.start_timeout_s):.0f}s: does the "
                "cluster have a free CPU per worker?"
            ) from None
        except ray.exceptions.RayError as exc:
            channel.kill()
            raise ToolRuntimeError(
                f"a Ray actor failed to start ({type(exc).__name__}): is libra-tools installed on every node?"
            ) from None
        if status != "ready":
            channel.kill()
            raise ToolRuntimeError(f"on Ray: {detail}")
        return dict(detail)  # the worker's "pid" is on the actor's node: channel.pid stays None, nothing to signal here

    def wait(self, channels: list[Channel], timeout_s: float) -> list[Channel]:
        import ray

        by_ref = {c.pending: c for c in channels if isinstance(c, _RayChannel) and c.pending is not None}
        if not by_ref:
            return []
        refs = list(by_ref)
        done, rest = ray.wait(refs, num_returns=1, timeout=max(0.0, timeout_s))
        if done and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            done = done + more
        return [by_ref[r] for r in done]


def ray_wrapper(start_timeout_s: float = 300.0) -> Any:
    """The wrapper :func:`~libra.runtime.workers.executor.transports_wrapped` takes to put remotable transports on
    Ray."""
    return lambda inner: RayTransport(inner, start_timeout_s)


@contextmanager
def on_ray(start_timeout_s: float = 300.0) -> Iterator[None]:
    """Executors created in this block start their workers as Ray actors (Ray must be initialised)."""
    with transports_wrapped(ray_wrapper(start_timeout_s)):
        yield


def cluster_cpus() -> int:
    """CPUs of the connected Ray cluster (at least 1): the default number of workers on Ray."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


@contextmanager
def ray_session(address: str | None, num_cpus: int | None) -> Iterator[None]:
    """Ray for the block: the caller's if already initialised, else a connection to ``address``, else a private
    local Ray on 127.0.0.1 with ``num_cpus`` CPUs. What this function started or connected, it stops after."""
    import ray

    if ray.is_initialized():
        yield
        return
    quiet = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "configure_logging": True,
    }
    try:
        if address is None:
            ray.init(address="local", num_cpus=num_cpus, _node_ip_address="127.0.0.1", **quiet)
        else:
            quiet.pop("include_dashboard")
            ray.init(address=address, **quiet)
    except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; one line says what failed
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        raise ConfigError(
            f"cannot start or reach {where}: {type(exc).__name__}: "
            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        ) from None
    try:
        yield
    finally:
        ray.shutdown()


__all__ = [
    "EXECUTORS",
    "RAY_MISSING",
    "ExecutorSpec",
    "RayTransport",
    "cluster_cpus",
    "on_ray",
    "ray_available",
    "ray_session",
    "ray_wrapper",
]
