"""Peak resident memory of a build: the caller and the worker processes it started.

Why: a build's memory, not only its time, decides whether a large catalog fits on a machine; the caller holds the
engine's exploration and the workers hold sandboxed runtimes. The caller's peak comes from ``getrusage``; a worker's
from its ``VmHWM`` (the kernel's high-water mark of its resident set) in ``/proc``, read whenever the build samples
(once per wave, at most once a second) and once more before the workers stop, so a worker that is replaced
mid-build still counts up to its last sample. Where ``/proc`` is missing, the workers' figure falls back to
``RUSAGE_CHILDREN`` (the largest finished child), but only there: that figure also counts a child between its
fork and its exec, when it is an image of the caller, so a worker started late in a build (a replacement) would
report the caller's size.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


def _rusage_mb(who: int) -> float:
    kb = resource.getrusage(who).ru_maxrss
    return kb / (1024 * 1024) if sys.platform == "darwin" else kb / 1024  # macOS reports bytes, Linux kilobytes


def _status_mb(pid: int) -> tuple[float, float]:
    """(VmHWM, VmRSS) of ``pid`` in MB, zeros when the process is gone or /proc has no such fields."""
    hwm = rss = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return hwm, rss


def descendants(pid: int) -> list[int]:
    """Process ids below ``pid`` (children, grandchildren, ...), read from /proc; empty where it has none."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                kids = [int(x) for x in Path(f"/proc/{p}/task/{t}/children").read_text().split()]
            except (OSError, ValueError):
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


@dataclass
class PeakMemory:
    """Samples the resident memory of this process and its descendants; :meth:`to_dict` is the build's figure."""

    interval_s: float = 1.0
    workers_mb: float = 0.0  # the largest peak of one worker
    tree_mb: float = 0.0  # the largest sampled sum of caller and workers at one moment
    _last: float = field(default=-1e9, repr=False)
    _hwm: dict[int, float] = field(default_factory=dict, repr=False)

    def sample(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.interval_s:
            return
        self._last = now
        _own_hwm, total = _status_mb(os.getpid())
        for pid in descendants(os.getpid()):
            hwm, rss = _status_mb(pid)
            self._hwm[pid] = max(self._hwm.get(pid, 0.0), hwm)
            total += rss
        self.workers_mb = max([self.workers_mb, *self._hwm.values()])
        self.tree_mb = max(self.tree_mb, total)

    def to_dict(self) -> dict[str, float]:
        """Peaks in MB: ``caller`` (this process), ``worker`` (the largest worker), ``total`` (the largest sampled
        sum of both), and ``workers_seen`` (worker processes sampled)."""
        caller = _rusage_mb(resource.RUSAGE_SELF)
        # RUSAGE_CHILDREN only where /proc gave nothing: it also counts a child's image between fork and exec,
        # which is the caller's own memory (a worker started mid-build would report the caller's size)
        worker = self.workers_mb if self._hwm else _rusage_mb(resource.RUSAGE_CHILDREN)
        return {
            "caller": round(caller, 1),
            "worker": round(worker, 1),
            "total": round(max(self.tree_mb, caller), 1),
            "workers_seen": len(self._hwm),
        }
