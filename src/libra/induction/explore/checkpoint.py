"""Checkpoints: the explored state saved between waves, so that a killed build resumes where it was.

A checkpoint holds the build's identity, the time it had run, how many rows of the memo store it covers (the memo
itself stays in its store), and the explored state (:class:`~.state.Explored`), pickled through fast gzip. A
checkpoint is resumed only by the same build (same identity), of the same exploration (:data:`CHECKPOINT_VERSION`)
and written in the same layout (:data:`CHECKPOINT_FORMAT`); anything else starts afresh. Because the exploration
order is deterministic, a resumed build ends with the same library.
"""

from __future__ import annotations

import gzip
import pickle
import zlib
from pathlib import Path

from libra._util.io import atomic_open
from libra.induction.explore.state import EngineState, Explored

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "CheckpointMixin"]

CHECKPOINT_VERSION = 36  # bump whenever the exploration changes: an old checkpoint must not be resumed
# The checkpoint's layout (the packed worklist of :mod:`.worklist` since 2): a change of layout alone changes no
# library, so it has its own number rather than CHECKPOINT_VERSION, which is part of a library's cache key.
# 3: the heaps remember the spent items they left out (worklist.PackedHeap), offers are counted per candidate
# position (pair_counts.PairCounts); 4: a heap keeps one array bucket per priority (worklist.PackedHeap);
# 5: the explored state is one object (state.Explored), its records pickled from the modules of explore/;
# 6: it holds the contracts the exploration revised (revising.py)
CHECKPOINT_FORMAT = 6


class CheckpointMixin(EngineState):
    """Saving and restoring the explored state."""

    def checkpoint(self, path: Path, identity: str, elapsed: float) -> None:
        """Save the explored state to ``path`` for the build ``identity``, which had run ``elapsed`` seconds."""
        # The memo lives in its store; the checkpoint records how many of its rows it covers (made durable first).
        payload = {
            "version": CHECKPOINT_VERSION,
            "format": CHECKPOINT_FORMAT,
            "identity": identity,
            "elapsed": elapsed,
            "memo_rows": self.memo.sync(),
            "explored": self.explored(),
        }
        # Streamed through fast gzip: a large build's pool of records and sandbox states compresses several-fold,
        # and is never held in memory twice. (The memo's states, most of it, are in the store, not here.)
        with atomic_open(path) as fh, gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=1) as gz:
            pickle.dump(payload, gz, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, path: Path, identity: str) -> bool:
        """Load a checkpoint written for the same build identity; False (and nothing loaded) otherwise."""
        try:
            with gzip.open(path, "rb") as fh:
                payload = pickle.load(fh)
        except (OSError, EOFError, zlib.error, pickle.UnpicklingError, AttributeError, ImportError):
            return False  # unreadable, truncated or from an older format: start afresh
        if (
            not isinstance(payload, dict)
            or payload.get("version") != CHECKPOINT_VERSION
            or payload.get("format") != CHECKPOINT_FORMAT
            or payload.get("identity") != identity
        ):
            return False
        explored = payload.get("explored")
        if not (isinstance(explored, Explored) and explored.complete()):
            return False
        if not self.memo.truncate(int(payload.get("memo_rows", -1))):
            return False  # (a store with fewer rows than the checkpoint saw is not this checkpoint's memo)
        self.adopt(explored)
        for name, contract in self.revised.items():  # (the templates the build had revised when it stopped)
            self.contracts[name] = contract
        self._present_by_node.clear()  # (keyed by node ids: the restored nodes are others)
        self._state_makers = None  # (derived from the restored nodes when first asked)
        self._present_by_path.clear()
        self.elapsed_before_resume = float(payload.get("elapsed", 0.0))
        return True
