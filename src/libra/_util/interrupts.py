"""Steps Ctrl-C must not cut in half.

Ctrl-C raises ``KeyboardInterrupt`` wherever the main thread happens to be. Most of libra unwinds cleanly from any
point (pools close in ``finally`` blocks, files are written atomically), but a few steps talk to another process
and leave it broken when cut short: a worker start interrupted between connecting to multiprocessing's fork server
and handing it the new worker's descriptors crashes the fork server, which prints a traceback of its own.
:func:`interrupts_deferred` holds Ctrl-C until such a step is over, then delivers it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Run the block with SIGINT held back; one that arrived meanwhile is raised as soon as the block ends.

    Python handlers run in the main thread only, and only it may change them: elsewhere the block runs as is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            signal.raise_signal(signal.SIGINT)  # to the restored handler: KeyboardInterrupt by default
