"""Keep Python's cyclic garbage collector off the objects a long-running process holds for its whole life.

Why a module of its own, standard library only: the processes that run tool calls (libra's workers and the servers
of a foreign interpreter, :mod:`libra.runtime.workers.remote_server`, which loads this file by path) and the caller that
runs a build's exploration all hold a large heap that outlives almost every collection: a foreign environment's
imported apps and ORM (over a million tracked objects for AppWorld, whose one full collection takes about half a
second), the catalog, contracts and embedding model of a build. A full collection walks all of it and finds
nothing to free; it comes back each time the survivors of young collections grow the old generation by a quarter,
so a process that churns through many medium-lived objects (a wave's records, items and states) pays for it over
and over. Neither function changes what any code computes: the collector only frees unreachable cycles, and
objects freed by reference counting are freed as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: allocations between two collections of the youngest generation while :func:`long_lived` runs (Python's default is
#: 700). Why this size: a call's records and work items live through a few thousand allocations, so with the default
#: they survive two young collections and are promoted to the old generation, whose growth is what triggers full
#: collections; fifty times as many lets most of them die young. The young generation then holds at most this many
#: objects more before it is collected (a few megabytes).
YOUNG_THRESHOLD = 35_000


def freeze_loaded() -> None:
    """Exempt everything the process holds now from every later collection (``gc.freeze``), after collecting
    what start-up left unreachable.

    For a process that built what it keeps (a worker's runtime, a server's backend) and will now answer requests
    until it exits: the frozen objects are freed by reference counting as before; only a cycle among them that
    becomes garbage later stays in memory, and start-up objects are held until exit anyway. Inside
    :func:`long_lived` it adds what was built since the block began (a build's contracts and engine, before the
    exploration), and the block's end unfreezes it with the rest.
    """
    gc.collect()
    gc.freeze()


@contextmanager
def long_lived() -> Iterator[None]:
    """While the block runs: the objects that exist when it starts are frozen (see :func:`freeze_loaded`, without
    the collection first: the caller's garbage is its own) and the youngest generation is collected every
    :data:`YOUNG_THRESHOLD` allocations. Both are undone at the end, so a program that calls libra as a library gets
    its collector back as it was (what the block froze is unfrozen only when nothing was frozen before it).
    """
    threshold = gc.get_threshold()
    froze = gc.get_freeze_count() == 0
    if froze:
        gc.freeze()
    gc.set_threshold(max(threshold[0], YOUNG_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        if froze:
            gc.unfreeze()
