"""The collector settings of long-running processes (runtime/heap.py) and the executor's wait for replies."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref

from libra.runtime.workers.executor import Channel, wait_readable
from libra.runtime.workers.heap import YOUNG_THRESHOLD, long_lived


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_long_lived_freezes_and_gives_the_collector_back() -> None:
    gc.unfreeze()  # whatever an earlier test froze in this process (the server's start-up does)
    before_threshold = gc.get_threshold()
    with long_lived():
        assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] >= YOUNG_THRESHOLD
        # garbage made inside the block is still collected: only what existed before is frozen
        cycle = _Cycle()
        ref = weakref.ref(cycle)
        del cycle
        gc.collect()
        assert ref() is None
    assert gc.get_threshold() == before_threshold and gc.get_freeze_count() == 0


def test_long_lived_leaves_an_earlier_freeze_alone() -> None:
    gc.freeze()
    try:
        threshold = gc.get_threshold()
        with long_lived():
            assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        # still frozen (an unfreeze would leave none): the block did not undo what it had not done
        assert gc.get_freeze_count() > 0 and gc.get_threshold() == threshold
    finally:
        gc.unfreeze()


def test_freeze_loaded_collects_start_up_garbage_first() -> None:
    code = (
        "import gc\n"
        "from libra.runtime.workers.heap import freeze_loaded\n"
        "class C:\n    def __init__(self): self.me = self\n"
        "import weakref\nc = C(); r = weakref.ref(c); del c\n"
        "freeze_loaded()\n"
        "assert r() is None, 'the cycle was frozen instead of collected'\n"
        "assert gc.get_freeze_count() > 1000\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


class _PipeChannel(Channel):
    """The read end of a pipe, as a channel (only fileno matters to wait_readable)."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()

    def send(self, msg):  # pragma: no cover - not used
        raise NotImplementedError

    def recv(self):  # pragma: no cover - not used
        raise NotImplementedError

    def poll(self, timeout_s: float) -> bool:  # pragma: no cover - not used
        return False

    def fileno(self) -> int:
        return self.r

    def kill(self) -> None:
        for fd in (self.r, self.w):
            try:
                os.close(fd)
            except OSError:
                pass


def test_wait_readable_names_the_channels_with_a_reply_or_a_hang_up() -> None:
    quiet, talking, gone = _PipeChannel(), _PipeChannel(), _PipeChannel()
    try:
        assert wait_readable([quiet, talking, gone], 0.0) == []
        assert wait_readable([quiet], 0.05) == []
        os.write(talking.w, b"x")
        assert wait_readable([quiet, talking, gone], 1.0) == [talking]
        os.close(gone.w)  # a worker that died: its end of the pipe hangs up, which must wake the caller
        gone.w = -1
        assert set(wait_readable([quiet, talking, gone], 1.0)) == {talking, gone}
    finally:
        for ch in (quiet, talking, gone):
            ch.kill()
