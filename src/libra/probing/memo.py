"""The engine's memo of invocations, kept on disk (SQLite) with a small in-memory LRU in front.

Why: a build memoises every invocation by (state fingerprint, tool, arguments) and keeps the record and the state
each call led to. A large catalog makes hundreds of thousands of calls, and every state-changing one carries a new
snapshot of the part it changed (AppWorld's app databases are hundreds of kilobytes each), so a memo held whole in
memory grows to gigabytes. Here the records and the states live in one SQLite file; the engine holds *light*
states (the fingerprint only, ``payload=None``) and the store turns them back into full states for the calls of
the current wave. States travel by content key: a state row lists its parts' keys, and a part's bytes are stored
once whatever number of states share it.

Three tables:

- ``memo(seq, key, record, state)``: one row per distinct invocation, in the order the engine memoised them
  (``seq``); ``key`` is a digest of the memo key, ``record`` the pickled, compressed record, ``state`` the
  fingerprint of the state the call led to;
- ``states(fp, split, parts)``: how to rebuild a state: its parts' (name, key) pairs, or one opaque payload;
- ``parts(key, data)``: the content-addressed snapshots (bytes compressed when that pays, see :func:`_pack_part`).

What stays in memory is bounded: the records most recently used (:data:`RECORD_CACHE` entries and
:data:`RECORD_CACHE_BYTES`), state parts (:data:`PART_CACHE_BYTES`), :data:`FULL_STATE_CACHE` full states and the
layouts of recent states, plus the set of content keys already stored (a few dozen bytes per distinct state and
part). The engine's call log gives its records back to the store after each wave (``Engine._record``).

Crash safety: rows are committed once per batch (WAL journal), and :meth:`MemoStore.sync` makes everything
durable before a checkpoint records how many memo rows it covers. Resuming cuts the memo back to that count
(:meth:`MemoStore.truncate`), so a build killed between checkpoints resumes with exactly the memo its checkpoint
saw; states and parts are content-addressed, so extra rows of them are harmless.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sqlite3
import tempfile
import weakref
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from libra.runtime.base import State, StatePart
from libra.runtime.workers.lru import PartStore

MemoKey = tuple[str, str, str]
Entry = tuple[dict[str, Any], State]

#: records kept in memory in front of the store (a wave re-reads the records of its own calls)
RECORD_CACHE = 4096
#: bytes of records (pickled) kept in memory at most
RECORD_CACHE_BYTES = 32 * 1024 * 1024
#: bytes of state parts kept in memory in front of the store: a wave runs from a few dozen states at most
PART_CACHE_BYTES = 64 * 1024 * 1024
#: state parts kept in memory at most, whatever their size (an in-process runtime's payloads are objects)
PART_CACHE = 4096
#: full states kept in memory (their parts are shared with the part cache): the states of one wave
FULL_STATE_CACHE = 32
#: state layouts (part names and keys) kept in memory
STATE_CACHE = 4096

_SCHEMA = (
    (
        "CREATE TABLE IF NOT EXISTS memo (seq INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, record BLOB NOT "
        "NULL, state TEXT NOT NULL)"
    ),
    "CREATE TABLE IF NOT EXISTS states (fp TEXT PRIMARY KEY, split INTEGER NOT NULL, parts BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS parts (key TEXT PRIMARY KEY, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


def memo_key(state: State, tool: str, args: dict[str, Any]) -> MemoKey:
    """The key of one invocation: the state it runs from (by fingerprint), the tool and its arguments (as sorted
    JSON). Contract checking and the exploration memoise by this one key, so a call either made is the other's."""
    return (state.fingerprint, tool, json.dumps(args, sort_keys=True, default=repr))


def digest(key: MemoKey) -> bytes:
    """A 16-byte content key of a memo key: unique in practice, and a quarter of its text's size as an index."""
    return hashlib.blake2b("\0".join(key).encode(), digest_size=16).digest()


def _pack(obj: Any) -> tuple[bytes, int]:
    """Pickled, compressed when that pays (a short rejection is left as it is; a tag byte says which), and the
    pickle's length: what the object weighs in memory, roughly, whatever it compresses to."""
    raw = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return (b"z" + zlib.compress(raw, 1) if len(raw) > 512 else b"p" + raw), len(raw)


def _unpack(blob: bytes) -> tuple[Any, int]:
    blob = bytes(blob)
    raw = zlib.decompress(blob[1:]) if blob[:1] == b"z" else blob[1:]
    return pickle.loads(raw), len(raw)


#: parts of at least this many bytes are stored compressed (see :func:`_pack_part`)
PART_COMPRESS_BYTES = 512


def _pack_part(data: Any) -> bytes:
    """A state part as stored: bytes compressed (tag ``Z``) when that makes them smaller, else as they are (``B``);
    any other payload pickled (``P``).

    Why compress: the parts that fill a store are serialized databases (an app's SQLite file, hundreds of
    kilobytes, mostly free pages and repeated rows), which zlib at its fastest level shrinks many times over, and
    a build writes thousands of them (AppWorld: gigabytes uncompressed). Compressing costs less CPU than SQLite
    spends writing the bytes it saves (its WAL pages, checksums and checkpoints), and the bytes read back are
    the same: the content key is the data's, not the blob's.
    """
    if isinstance(data, (bytes, bytearray)):
        raw = bytes(data)
        if len(raw) >= PART_COMPRESS_BYTES:
            packed = zlib.compress(raw, 1)
            if len(packed) < len(raw):
                return b"Z" + packed
        return b"B" + raw
    return b"P" + pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)


def _unpack_part(blob: bytes) -> Any:
    """The part :func:`_pack_part` stored (stores written before compression hold ``B`` and ``P`` blobs only)."""
    tag = blob[:1]
    if tag == b"Z":
        return zlib.decompress(blob[1:])
    if tag == b"B":
        return blob[1:]
    return pickle.loads(blob[1:])


def _is_split(payload: Any) -> bool:
    return isinstance(payload, tuple) and bool(payload) and all(isinstance(p, StatePart) for p in payload)


class MemoStore:
    """A mapping memo key -> (record, light state) backed by SQLite; see the module docstring.

    ``path`` None keeps the store in a private temporary directory removed by :meth:`close`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        record_cache: int = RECORD_CACHE,
        part_cache_bytes: int = PART_CACHE_BYTES,
        record_cache_bytes: int = RECORD_CACHE_BYTES,
    ) -> None:
        self._tmp: str | None = None
        if path is None:
            self._tmp = tempfile.mkdtemp(prefix="libra-memo-")
            path = os.path.join(self._tmp, "memo.sqlite")
            # an engine dropped without close() (a script, a test) still leaves no directory behind
            weakref.finalize(self, shutil.rmtree, self._tmp, True)
        self.path = Path(path)
        self.db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        for stmt in _SCHEMA:
            self.db.execute(stmt)
        # digest -> (record, state fingerprint, its pickled size): records can be large (a diff of a big value)
        self.records = PartStore(record_cache, record_cache_bytes, size=lambda entry: entry[2])
        self.layouts = PartStore(STATE_CACHE)  # fingerprint -> (split, parts)
        self.parts = PartStore(PART_CACHE, part_cache_bytes)  # part key -> data
        # fingerprint -> full state, for the few states a wave runs from; their parts are (mostly) the cached ones
        self.full_states = PartStore(FULL_STATE_CACHE)
        # content keys this process stored (the tables hold them too): a state the engine sees again, or a part
        # many states share, is written once without asking the database
        self._known_states: set[str] = set()
        self._known_parts: set[str] = set()
        self._rows = self._count()

    # -- the mapping the engine uses -------------------------------------------------------------------
    def __len__(self) -> int:
        return self._rows

    def __contains__(self, key: MemoKey) -> bool:
        d = digest(key)
        return self.records.touch(d) or self.db.execute("SELECT 1 FROM memo WHERE key=?", (d,)).fetchone() is not None

    def get(self, key: MemoKey) -> Entry | None:
        """The memoised (record, light state) of ``key``, or None."""
        d = digest(key)
        if self.records.touch(d):
            rec, fp, _n = self.records.get(d)
        else:
            row = self.db.execute("SELECT record, state FROM memo WHERE key=?", (d,)).fetchone()
            if row is None:
                return None
            (rec, n), fp = _unpack(row[0]), row[1]
            self.records.put(d, (rec, fp, n))
        return rec, State(fp)

    def get_many(self, keys: Iterable[MemoKey]) -> dict[MemoKey, Entry]:
        """The memoised entries of those ``keys`` that are memoised, looked up in a few queries."""
        out: dict[MemoKey, Entry] = {}
        ask: dict[bytes, MemoKey] = {}
        for key in keys:
            d = digest(key)
            if self.records.touch(d):
                rec, fp, _n = self.records.get(d)
                out[key] = (rec, State(fp))
            else:
                ask[d] = key
        wanted = list(ask)
        for i in range(0, len(wanted), 500):  # under SQLite's limit of bound parameters
            chunk = wanted[i : i + 500]
            rows = self.db.execute(
                f"SELECT key, record, state FROM memo WHERE key IN ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
            for d, blob, fp in rows:
                rec, n = _unpack(blob)
                self.records.put(d, (rec, fp, n))
                out[ask[d]] = (rec, State(fp))
        return out

    def __getitem__(self, key: MemoKey) -> Entry:
        hit = self.get(key)
        if hit is None:
            raise KeyError(key)
        return hit

    def put_many(self, entries: Iterable[tuple[MemoKey, dict[str, Any], State]]) -> list[State]:
        """Memoise new invocations in one transaction; returns the light states the calls led to."""
        out = []
        self.db.execute("BEGIN")
        try:
            rows = []
            for key, rec, state in entries:
                out.append(self._keep(state))
                d = digest(key)
                blob, n = _pack(rec)
                rows.append((d, blob, state.fingerprint))
                self.records.put(d, (rec, state.fingerprint, n))
            self.db.executemany("INSERT INTO memo (key, record, state) VALUES (?, ?, ?)", rows)
            self.db.execute("COMMIT")
            self._rows += len(rows)
        except BaseException:
            self.db.execute("ROLLBACK")
            self._rows = self._count()
            self.records.clear()
            raise
        return out

    def values(self) -> Iterator[Entry]:
        """Every memoised (record, light state), in the order they were memoised; one row in memory at a time."""
        last = 0
        while True:
            rows = self.db.execute(
                "SELECT seq, record, state FROM memo WHERE seq > ? ORDER BY seq LIMIT 1000", (last,)
            ).fetchall()
            if not rows:
                return
            for seq, blob, fp in rows:
                last = seq
                yield _unpack(blob)[0], State(fp)

    # -- states by content key -----------------------------------------------------------------------
    def keep(self, state: State) -> State:
        """Store ``state``'s content (if new) and return its light form."""
        self.db.execute("BEGIN")
        try:
            light = self._keep(state)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return light

    def _keep(self, state: State) -> State:
        fp = state.fingerprint
        if fp in self._known_states:
            return State(fp)
        payload = state.payload
        if payload is None and self._layout(fp) is not None:
            self._known_states.add(fp)  # a light state already stored (e.g. before a resume)
            return State(fp)
        if _is_split(payload):
            layout: tuple[bool, Any] = (True, tuple((p.name, p.key) for p in payload))
            for p in payload:
                self._put_part(p.key, p.data)
        else:
            layout = (False, fp)
            self._put_part(fp, payload)
        self.db.execute(
            "INSERT OR IGNORE INTO states (fp, split, parts) VALUES (?, ?, ?)",
            (fp, int(layout[0]), pickle.dumps(layout[1], protocol=pickle.HIGHEST_PROTOCOL)),
        )
        self.layouts.put(fp, layout)
        self._known_states.add(fp)
        return State(fp)

    def _put_part(self, key: str, data: Any) -> None:
        if key in self._known_parts:
            return
        blob = _pack_part(data)
        self.db.execute("INSERT OR IGNORE INTO parts (key, data) VALUES (?, ?)", (key, blob))
        self._known_parts.add(key)
        self.parts.put(key, data)  # the next wave likely runs from the state it belongs to

    def _layout(self, fp: str) -> tuple[bool, Any] | None:
        if self.layouts.touch(fp):
            return self.layouts.get(fp)
        row = self.db.execute("SELECT split, parts FROM states WHERE fp=?", (fp,)).fetchone()
        if row is None:
            return None
        layout = (bool(row[0]), pickle.loads(row[1]))
        self.layouts.put(fp, layout)
        return layout

    def _part(self, key: str) -> Any:
        if self.parts.touch(key):
            return self.parts.get(key)
        row = self.db.execute("SELECT data FROM parts WHERE key=?", (key,)).fetchone()
        if row is None:
            raise KeyError(f"state part {key} is not in the memo store {self.path}")
        data = _unpack_part(bytes(row[0]))
        self.parts.put(key, data)
        return data

    def full(self, state: State) -> State:
        """The state with its payload, as a runtime needs it (light states are rebuilt from the store)."""
        fp = state.fingerprint
        if state.payload is not None:
            return state
        if self.full_states.touch(fp):
            return self.full_states.get(fp)
        layout = self._layout(fp)
        if layout is None:
            return state  # never stored: a runtime whose states carry no payload
        split, parts = layout
        full = State(
            fp, tuple(StatePart(name, key, self._part(key)) for name, key in parts) if split else self._part(parts)
        )
        self.full_states.put(fp, full)
        return full

    # -- checkpoints ---------------------------------------------------------------------------------
    def sync(self) -> int:
        """Make every committed row durable (a checkpoint is written next); returns the number of memo rows."""
        self.db.execute("PRAGMA wal_checkpoint(FULL)")
        return self._rows

    def truncate(self, rows: int) -> bool:
        """Cut the memo back to its first ``rows`` rows (what a checkpoint saw); False when it holds fewer."""
        if self._count() < rows:
            return False
        self.db.execute("DELETE FROM memo WHERE seq > ?", (rows,))
        self.records.clear()
        self._rows = self._count()
        return self._rows == rows

    def clear(self) -> None:
        """Forget everything (a build starting afresh)."""
        self.db.execute("BEGIN")
        for table in ("memo", "states", "parts"):
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("COMMIT")
        for cache in (self.records, self.layouts, self.parts, self.full_states):
            cache.clear()
        self._known_states.clear()
        self._known_parts.clear()
        self._rows = 0

    def retain(self, keys: Iterable[MemoKey]) -> int:
        """Keep only the memo rows of ``keys``, in their order of memoisation, renumbered from 1; returns how many.

        Why: a build's exploration starts from the calls contract checking made through the same store (see
        :func:`~libra.contracts.check.check_contracts`), and from nothing else. A store reused for a resume may
        hold more rows (an earlier exploration's); those are dropped, so the exploration sees exactly what this
        build's checking ran, whatever ran before. The rows stay numbered 1..n so that :meth:`truncate` keeps
        meaning "the first n rows". States and parts are content-addressed and stay.
        """
        wanted = [(digest(k),) for k in keys]
        self.db.execute("BEGIN")
        try:
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS retained (key BLOB PRIMARY KEY)")
            self.db.execute("DELETE FROM retained")
            self.db.executemany("INSERT OR IGNORE INTO retained (key) VALUES (?)", wanted)
            self.db.execute(
                "CREATE TEMP TABLE kept AS SELECT key, record, state FROM memo WHERE key IN (SELECT key FROM "
                "retained) ORDER BY seq"
            )
            self.db.execute("DELETE FROM memo")
            self.db.execute("INSERT INTO memo (key, record, state) SELECT key, record, state FROM kept ORDER BY rowid")
            self.db.execute("DROP TABLE kept")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        finally:
            self.records.clear()
        self._rows = self._count()
        return self._rows

    def claim(self, scope: str) -> bool:
        """Mark the store as holding the calls of ``scope``; a store marked for another scope (or for none) is
        cleared first. Returns whether its rows were kept.

        Why: a build reuses the store next to its checkpoint, and contract checking reads it before the build's
        identity (which depends on the checked contracts) is known. Calls memoised for another catalog (a tool
        whose schema changed) must not answer this one's.
        """
        row = self.db.execute("SELECT value FROM meta WHERE name='scope'").fetchone()
        kept = row is not None and row[0] == scope
        if not kept:
            self.clear()
            self.db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('scope', ?)", (scope,))
        return kept

    def _count(self) -> int:
        row = self.db.execute("SELECT COALESCE(MAX(seq), 0), COUNT(*) FROM memo").fetchone()
        return int(row[1])

    def held(self) -> dict[str, int]:
        """What the store holds in memory (entries and bytes of its caches) and on disk: for stats and tests."""
        return {
            "records_in_memory": len(self.records.items),
            "record_bytes_in_memory": self.records.bytes,
            "states_in_memory": len(self.layouts.items),
            "full_states_in_memory": len(self.full_states.items),
            "parts_in_memory": len(self.parts.items),
            "part_bytes_in_memory": self.parts.bytes,
            "known_keys": len(self._known_states) + len(self._known_parts),
            "rows": self._rows,
            "disk_bytes": self.disk_bytes(),
        }

    def disk_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.files() if p.exists())

    def files(self) -> list[Path]:
        return [self.path, self.path.with_name(self.path.name + "-wal"), self.path.with_name(self.path.name + "-shm")]

    def close(self, remove: bool = False) -> None:
        """Close the database; ``remove`` deletes its files (a finished build), a temporary store always goes."""
        try:
            self.db.close()
        except sqlite3.Error:
            pass
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
        elif remove:
            for p in self.files():
                p.unlink(missing_ok=True)

    # pickling an engine (e.g. a checkpoint) must never drag the store along
    def __reduce__(self) -> Any:
        raise TypeError("a MemoStore is not picklable: checkpoints record its row count")
