"""A searcher opened, then its embedding model loaded, in a background thread: what lets a server answer the
handshake before a large library has loaded, and what a reload swaps in (:mod:`.reload`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from libra.search.searcher import Searcher

__all__ = ["SearcherLoading"]


class SearcherLoading:
    """A :class:`~libra.search.searcher.Searcher` opened, then its embedding model loaded, in a background thread.

    The server answers the handshake and ``tools/list`` while this runs (``size`` is known beforehand, from the
    cached index), so a client that gives a server a few seconds to start never times out on a large library;
    a search waits only for what is left. Both steps hold the interpreter for much of their time, so
    :meth:`start` comes after the SDK is imported: started earlier they would delay the handshake they exist to
    let through.
    """

    def __init__(self, open_: Callable[[], Searcher], size: int) -> None:
        self.size = size
        self._open = open_
        self._future: Future[Searcher] = Future()
        self._started = threading.Lock()

    @classmethod
    def opened(cls, searcher: Searcher) -> SearcherLoading:
        """An already open searcher (its model still loads in :meth:`start`)."""
        loading = cls(lambda: searcher, searcher.size)
        loading._future.set_result(searcher)
        return loading

    def start(self, then: Callable[[], None] | None = None) -> None:
        """Start loading, once; ``then`` runs in the loading thread when the model has loaded (or failed to)."""
        if self._started.acquire(blocking=False):
            threading.Thread(target=self._load, args=(then,), daemon=True, name="libra-load").start()

    def _load(self, then: Callable[[], None] | None = None) -> None:
        if not self._future.done():
            try:
                self._future.set_result(self._open())
            except BaseException as exc:  # noqa: BLE001 - handed to every search, which returns it as a tool error
                self._future.set_exception(exc)
                return
        # A model that fails to load is not lost: the first search tries again and returns the reason.
        with contextlib.suppress(Exception):
            self._future.result().warm()
        if then is not None:
            then()

    def result(self) -> Searcher:
        """The searcher, waiting for it to open (starting the load if nothing did)."""
        if not self._future.done():
            self.start()
        return self._future.result()

    async def get(self) -> Searcher:
        """:meth:`result` without blocking the event loop while it waits."""
        if not self._future.done():
            import anyio

            return await anyio.to_thread.run_sync(self.result)
        return self._future.result()
