"""A served library that follows its file: when the file is replaced, the next requests are answered by the new one.

Why: a library is rebuilt (``libra build --update``) while agents use it, and restarting the server would drop
their sessions. A build writes its file atomically (a rename over the old name), so the name always points at a
whole library, the old one or the new one. :class:`LiveLibrary` looks at the file's identity (inode, size,
modification time) at most every :data:`CHECK_EVERY_S` seconds, when a request comes; a new identity starts
loading the new library in a background thread, while the old one goes on answering. Only once the new
searcher is open and its model loaded is it swapped in, with one assignment: a request takes the served pair
(searcher, version) once, when it starts, so it is answered wholly by one library, and every request that starts
after the swap is answered by the new one. A file that cannot be loaded (a copy written in place, caught half
way) leaves the old library serving; the next change of the file is tried again.

Each answer names the library version that served it (:class:`LibraryVersion`): the SHA-256 of the file's bytes
and when the file was written.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["CHECK_EVERY_S", "LibraryVersion", "LiveLibrary"]

#: How often (at most) a request looks at the library file's identity: a stat is cheap, but not free.
CHECK_EVERY_S = 0.25


@dataclass(frozen=True)
class LibraryVersion:
    """Which library served an answer: the first 16 hex digits of its file's SHA-256, and when it was written."""

    sha256: str
    written_at: str


def file_identity(path: Path) -> tuple[int, int, int, int] | None:
    """What changes when a file is replaced or rewritten (None when there is no file)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_version(path: Path) -> tuple[LibraryVersion, tuple[int, int, int, int]] | None:
    """The version of the file at ``path`` with the identity it had while read, or None when it was replaced
    during the read (or is gone)."""
    before = file_identity(path)
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    if before is None or file_identity(path) != before:
        return None
    written = datetime.fromtimestamp(before[3] / 1e9, UTC).isoformat(timespec="seconds")
    return LibraryVersion(hashlib.sha256(raw).hexdigest()[:16], written), before


class LiveLibrary:
    """The searcher being served and its version, replaced when the file at ``path`` is (see the module docstring).

    ``loading`` serves first; ``open_`` opens a searcher over ``path`` (it runs in the reload thread, with the
    model loaded there too); ``say`` reports reloads (stderr by default).
    """

    def __init__(
        self,
        path: Path,
        loading: Any,
        open_: Callable[[], Any],
        say: Callable[[str], None] | None = None,
        check_every_s: float = CHECK_EVERY_S,
    ) -> None:
        self.path = Path(path)
        self._open = open_
        self._say = say or (lambda m: print(f"libra: {m}", file=sys.stderr, flush=True))
        self.check_every_s = check_every_s
        read = read_version(self.path)
        version, identity = read if read is not None else (LibraryVersion("unknown", ""), None)
        self._served: tuple[Any, LibraryVersion] = (loading, version)
        self._identity = identity  # of the file served, or being loaded
        self._next_check = 0.0
        self._lock = threading.Lock()
        self.swaps = 0

    def current(self) -> tuple[Any, LibraryVersion]:
        """The (searcher loading, version) to answer one request with; looks for a new file now and then."""
        now = time.monotonic()
        if now >= self._next_check:
            self._next_check = now + self.check_every_s
            self._look()
        return self._served

    def _look(self) -> None:
        identity = file_identity(self.path)
        if identity is None or identity == self._identity:
            return
        with self._lock:
            if identity == self._identity:
                return
            self._identity = identity  # (one reload per new file, however many requests notice it)
        threading.Thread(target=self._reload, daemon=True, name="libra-reload").start()

    def _reload(self) -> None:
        from libra.serve.loading import SearcherLoading

        read = read_version(self.path)
        if read is None:
            with self._lock:
                self._identity = None  # replaced while being read: the next look tries again
            return
        version, identity = read
        try:
            searcher = self._open()
            searcher.warm()
        except Exception as exc:  # noqa: BLE001 - the old library keeps serving; the reason goes to the log
            self._say(f"{self.path} changed but cannot be loaded, still serving {self._served[1].sha256}: {exc}")
            return
        if file_identity(self.path) != identity:
            with self._lock:
                self._identity = None  # replaced again meanwhile: what was opened may be either file
            return
        self._served = (SearcherLoading.opened(searcher), version)
        self.swaps += 1
        self._say(f"now serving {self.path} version {version.sha256} ({searcher.size} tools)")
