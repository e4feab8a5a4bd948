"""Every source of entropy a tool can read, fixed for the duration of one call and restored after it.

Why: induction compares calls. Two identical calls from one state must give identical records, and a read call
must not look like a state change, or the engine sees relations that are noise (paper §3.1 assumes a call is a
function of the state and the arguments). Tools reach for the clock and the OS random source all the time:
``uuid.uuid4()`` ids, ``datetime.now()`` timestamps, ``secrets.token_hex()`` session tokens. Inside
:func:`fixed_entropy` each of them is a function of a seed the runtime derives from (state, tool, arguments):

- **Clock**: ``time.time``/``time_ns``/``gmtime``/``localtime``/``strftime``, ``datetime.now``/``utcnow``/
  ``today`` and ``date.today`` read a fixed instant, via the maintained ``time-machine`` package, which patches
  these at C level (so ``from time import time`` and ``from datetime import datetime`` in a tool's module are
  covered too, which attribute patching cannot do). The clock does not tick during the call. The default instant
  is :data:`FIXED_NOW`, 2025-01-01 12:00 UTC, with the process time zone set to UTC for the call: a recent date,
  so "is this date in the future" checks behave like today's for dates a user would write; noon, so the date is
  the same in any time zone a tool converts to; one constant, so results do not depend on when or where the
  build ran. The monotonic clocks (``perf_counter``, ``monotonic``) and ``time.sleep`` are left alone: they
  measure and spend durations. A tool that polls the wall clock until a deadline passes would wait forever (the
  isolated workers' timeout ends it); give such a catalog ``clock=None``.
- **OS randomness**: ``os.urandom`` (and ``random``'s own reference to it, taken at import time, which serves
  ``random.SystemRandom`` and therefore ``secrets``; ``uuid.uuid4`` calls ``os.urandom``) returns a
  deterministic byte stream derived from the seed.
- **Pseudo-random generators**: the module-level ``random`` functions are seeded from the seed, and a
  ``random.Random()`` created during the call without a seed draws its seed from the same stream; numpy's legacy
  global generator is seeded too when numpy is already imported.

Everything is restored afterwards (the generator states, the patched functions, the real clock), so nothing
leaks into the caller or into the next call. Not covered: entropy read by C extensions directly from the kernel
(e.g. ``getrandom``) and clocks of other processes.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import os
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

#: The instant every call sees as "now" unless the runtime is given another (see the module docstring for why).
FIXED_NOW = _dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=_dt.UTC)


class DeterministicBytes:
    """``os.urandom`` replacement: a byte stream that is a pure function of the seed and the draw count."""

    def __init__(self, seed: int) -> None:
        self.seed = seed.to_bytes(16, "big", signed=False)
        self.count = 0

    def __call__(self, n: int) -> bytes:
        if n < 0:
            raise ValueError("negative argument not allowed")
        self.count += 1
        return hashlib.shake_256(self.seed + self.count.to_bytes(8, "big")).digest(n) if n else b""


@functools.lru_cache(maxsize=64)
def _destination(clock: _dt.datetime) -> _dt.datetime | int:
    """Where time-machine should travel for ``clock``: an aware UTC datetime, which makes it set the process time
    zone to UTC for the call (so naive local times read the same on every machine), or, when the process already
    runs in UTC, the bare timestamp, which fixes the same instant without two ``tzset`` calls per call."""
    if clock.tzinfo is None:
        clock = clock.replace(tzinfo=_dt.UTC)
    if time.timezone == 0 and time.altzone == 0 and os.environ.get("TZ") in (None, "", "UTC", "UTC0", "Etc/UTC"):
        return int(clock.timestamp() * 1_000_000) / 1_000_000 if clock.microsecond else int(clock.timestamp())
    return clock.astimezone(_dt.UTC)


@contextlib.contextmanager
def fixed_clock(clock: _dt.datetime | None) -> Iterator[None]:
    """Run the block at the instant ``clock`` (time does not tick), or on the real clock when ``clock`` is None."""
    if clock is None:
        yield
        return
    try:
        import time_machine
    except ImportError:
        from libra.errors import MissingDependencyError

        raise MissingDependencyError(
            "fixing the clock per call needs time-machine: pip install 'time-machine>=2.14,<4' (or pass clock=None)"
        ) from None
    with time_machine.travel(_destination(clock), tick=False):
        yield


@contextlib.contextmanager
def fixed_entropy(
    seed: int, clock: _dt.datetime | None = FIXED_NOW, randomness: bool = True
) -> Iterator[DeterministicBytes | None]:
    """Fix the clock (unless ``clock`` is None) and, if ``randomness``, every random source from ``seed``.

    Yields the deterministic byte source (None when randomness is left alone) so callers can derive further seeds
    from the same stream.
    """
    if not randomness:
        with fixed_clock(clock):
            yield None
        return
    seed &= (1 << 128) - 1
    stream = DeterministicBytes(seed)
    saved_state = random.getstate()
    saved_urandom, saved_random_urandom = os.urandom, getattr(random, "_urandom", None)
    saved_seed = random.Random.seed
    numpy_random = _numpy_random()
    saved_numpy = numpy_random.get_state() if numpy_random is not None else None

    def seed_from_stream(self: random.Random, a: Any = None, version: int = 2) -> None:
        if a is None:
            a = int.from_bytes(stream(32), "big")
        saved_seed(self, a, version)

    try:
        os.urandom = stream  # type: ignore[assignment]
        if saved_random_urandom is not None:
            random._urandom = stream  # type: ignore[attr-defined]
        random.Random.seed = seed_from_stream  # type: ignore[method-assign]
        random.seed(seed)
        if numpy_random is not None:
            numpy_random.seed(seed % 2**32)
        with fixed_clock(clock):
            yield stream
    finally:
        os.urandom = saved_urandom  # type: ignore[assignment]
        if saved_random_urandom is not None:
            random._urandom = saved_random_urandom  # type: ignore[attr-defined]
        random.Random.seed = saved_seed  # type: ignore[method-assign]
        random.setstate(saved_state)
        if numpy_random is not None and saved_numpy is not None:
            numpy_random.set_state(saved_numpy)


def _numpy_random() -> Any:
    """numpy's legacy global generator module if numpy is already imported (never imports numpy itself)."""
    np = sys.modules.get("numpy")
    return getattr(np, "random", None) if np is not None else None
