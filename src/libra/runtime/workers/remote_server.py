"""Server side of :mod:`libra.runtime.workers.remote`: runs inside a *foreign* Python environment.

Why a separate file: a catalog whose dependencies clash with ours (AppWorld pins pydantic<2...) lives in its own
virtual environment, whose interpreter has only the standard library and the foreign packages. This file is
therefore standard-library only, never imports ``libra``, and is started by path::

    <foreign python> -I remote_server.py --backend /path/to/backend.py[:factory]
    <foreign python> -I remote_server.py --backend some.module[:factory]

The factory (default ``make_backend``) is called with the options dict of the ``init`` message and returns a
*backend*, an object with:

- ``fresh() -> [(name, key, data), ...]``: the initial state as content-addressed parts (``key`` is a content
  hash of ``data``; equal keys must mean interchangeable data, see :func:`content_key`).
- ``invoke(parts, tool, args) -> dict`` with ``status`` ("success" | "rejected" | "error"), ``output`` (plain
  data), ``error`` (str or None), ``state_changes`` (plain data) and ``parts`` (the complete new state, same form
  as ``fresh()``; unchanged parts keep their key). It must not assume ``parts`` is the state it left behind.
- optionally ``catalog() -> [tool dict, ...]`` and ``load_state(config) -> parts``.
- optionally, in an ``invoke`` result, ``reads``: the names of the parts the call's result depends on, given only
  when the call left every part as it was and depended on nothing else that varies between states (see
  :class:`ReadMemo`: a repeat of the call from a state that agrees on those parts is then answered without it).

Wire format (both directions): frames of an 8-byte big-endian length followed by a pickle of plain data (tuples,
lists, dicts, str, bytes, numbers, None). The client unpickles with a loader that refuses every global, so a
misbehaving tool cannot make the caller run code. Requests::

    ("init", options, memory_mb, allow_network, cache_size[, max_record_bytes[, cache_bytes]])
                                                            -> ("ready", info) | ("failed", text)
    ("catalog", id)                                         -> ("catalog", id, [tool dict...])
    ("fresh", id) / ("load", id, config)                    -> ("state", id, items)
    ("call", id, items, tool, args)                         -> ("done", id, record, items) | ("miss", id, [keys])
    ("held", id)                                            -> ("held", id, [keys, least recently used first])
    ("close",)

``items`` are ``(name, key, data-or-None)``: ``None`` means "the receiver already holds this key". The server
keeps a bounded LRU of parts (``lru.py``, loaded by path: ``cache_size`` parts and ``cache_bytes`` bytes of them);
the client mirrors it and sends only keys for those, and the server answers "miss" when it does not hold one. The
mirror stays exact because both sides store every part of a message, in its order, weighed the same way (see
:mod:`libra.runtime.workers.worker`). Isolation is set up here, in the child, by ``sandbox.py`` (next to this file,
loaded by
path): its own network namespace and the ``socket`` patch unless network is allowed, its own session with every
process a call starts killed when the call ends, and the address space capped with ``RLIMIT_AS`` at its size
after start-up + memory_mb. The ready message says which network isolation the OS granted.
Each call runs under :mod:`libra.runtime.workers.guard` (loaded by path; standard-library only too): its record is made
JSON data of at most ``max_record_bytes`` (default 1 MiB; larger becomes an ``error`` record and keeps the state),
what it changes in ``os.environ``, ``sys.path``, the working directory and other modules' attributes is undone,
and what it prints through ``sys.stdout``/``sys.stderr`` comes back in the record's ``diagnostics``. Anything
else the backend prints goes to stderr, because stdout carries the protocol.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import pickle
import struct
import sys
import traceback
from typing import Any, BinaryIO

PROTOCOL = 4  # readable by every Python 3.8+ on the other side
_HEADER = struct.Struct(">Q")


# ---------------------------------------------------------------------------------------------------------------
# helpers a backend may use
# ---------------------------------------------------------------------------------------------------------------
def content_key(data: bytes) -> str:
    """Content hash used as a part key."""
    return hashlib.sha256(data).hexdigest()


def error_text(exc: BaseException) -> str:
    msg = str(exc)
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


# ---------------------------------------------------------------------------------------------------------------
# framing
# ---------------------------------------------------------------------------------------------------------------
def write_frame(stream: BinaryIO, obj: Any) -> None:
    blob = pickle.dumps(obj, protocol=PROTOCOL)
    stream.write(_HEADER.pack(len(blob)))
    stream.write(blob)
    stream.flush()


def read_exact(stream: BinaryIO, n: int) -> bytes:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO) -> Any:
    (size,) = _HEADER.unpack(read_exact(stream, _HEADER.size))
    return pickle.loads(read_exact(stream, size))


# ---------------------------------------------------------------------------------------------------------------
# isolation and the part store: libra.runtime.workers.sandbox and .lru, loaded by path (standard library only)
# ---------------------------------------------------------------------------------------------------------------
def load_path(path: str, name: str) -> Any:
    """The module of the Python file ``path``, imported as ``name``."""
    mod_spec = importlib.util.spec_from_file_location(name, path)
    if mod_spec is None or mod_spec.loader is None:
        raise ImportError(f"cannot load a module from {path!r}")
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[name] = module
    mod_spec.loader.exec_module(module)
    return module


def _load_sibling(name: str) -> Any:
    """A standard-library-only module of libra.runtime, loaded by path from next to this file."""
    return load_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py"), "_libra_remote_" + name)


SANDBOX = _load_sibling("sandbox")
GUARD: Any = _load_sibling("guard")  # per-call purity and bounded records
_Store = _load_sibling("lru").PartStore  # the LRU of parts, the client's mirror applies the same policy
HEAP = _load_sibling("heap")  # the collector kept off what the backend loaded at start
NETWORK_DISABLED = SANDBOX.NETWORK_DISABLED
block_network = SANDBOX.block_network
limit_memory = SANDBOX.limit_memory


# ---------------------------------------------------------------------------------------------------------------
# backend loading
# ---------------------------------------------------------------------------------------------------------------
def load_factory(spec: str) -> Any:
    """``path/to/file.py[:factory]`` (loaded by path) or ``package.module[:factory]``; factory defaults to
    make_backend."""
    target, sep, attr = spec.rpartition(":")
    if not sep or "/" in attr or attr.endswith(".py"):
        target, attr = spec, "make_backend"
    if target.endswith(".py") or os.sep in target:
        module = load_path(target, "_libra_remote_backend_" + hashlib.sha1(target.encode()).hexdigest()[:10])
    else:
        module = importlib.import_module(target)
    return getattr(module, attr)


class ReadMemo:
    """Records of calls that changed no part, answered again for a repeat of the call from any state that agrees
    on the parts the call read.

    Why: a build runs the same call (the same tool and arguments) from many states that differ only in parts the
    call never looks at -- a read of one app's data from states that differ in another app's, a request with an
    invalid token from states that differ anywhere. The caller's memo is keyed by whole states and cannot see
    that; only the backend knows what a call read. A backend that knows declares it in the result (``reads``,
    a list of part names); the record then stands for every state whose parts of those names have the same keys,
    because a call is a pure function of its arguments and of what it reads (the backend's contract), so the same
    arguments and the same parts read give the same execution and the same record. Example: ``notes.show(id=3)``
    read only the ``notes`` part; from a state that differs only in the ``mail`` part it answers the same.

    Only records whose call left the parts as given (same names and keys) and reported no diagnostics (nothing
    printed, nothing restored by the guard) are kept, since a repeat answered here runs nothing: it prints
    nothing and changes nothing. Keys are exact: the tool, the pickle of the arguments (order and types
    included: ``1`` and ``1.0`` are different calls) and the keys of the parts read. Records are kept pickled in
    a bounded LRU (``max_bytes`` of pickles, :data:`MAX_ENTRIES` records), and each hit unpickles a fresh copy.
    """

    MAX_ENTRIES = 50_000

    def __init__(self, max_bytes: int) -> None:
        self.records = _Store(self.MAX_ENTRIES, max_bytes)
        #: (tool, pickled arguments) -> the tuples of part names its kept records read
        self.reads: dict[tuple[str, bytes], list[tuple[str, ...]]] = {}
        self.hits = 0

    @staticmethod
    def call_key(tool: str, args: Any) -> tuple[str, bytes] | None:
        try:
            return (tool, pickle.dumps(args, protocol=PROTOCOL))
        except Exception:  # noqa: BLE001 - arguments that do not pickle are simply never memoized
            return None

    def find(self, call: tuple[str, bytes], keys: dict[str, str]) -> dict[str, Any] | None:
        """The kept record of ``call`` for a state whose part keys are ``keys`` (name -> key), or None."""
        for names in self.reads.get(call, ()):
            try:
                entry = (call, names, tuple(keys[n] for n in names))
            except KeyError:
                continue
            if self.records.touch(entry):
                self.hits += 1
                return pickle.loads(self.records.items[entry])
        return None

    def add(self, call: tuple[str, bytes], names: Any, keys: dict[str, str], record: dict[str, Any]) -> None:
        """Keep ``record`` of ``call``, which read the parts ``names`` of the state whose part keys are ``keys``."""
        names = tuple(sorted(set(names)))
        if not all(n in keys for n in names):
            return
        if len(self.reads) >= self.MAX_ENTRIES:  # the index outgrew the records it points to: start afresh
            self.reads.clear()
            self.records.clear()
        known = self.reads.setdefault(call, [])
        if names not in known:
            known.append(names)
        self.records.put((call, names, tuple(keys[n] for n in names)), pickle.dumps(record, protocol=PROTOCOL))


#: the bytes of pickled records a server's :class:`ReadMemo` keeps
READ_MEMO_BYTES = 24 * 1024 * 1024


def _wire(parts: Any, store: _Store, known: set[str]) -> tuple[tuple[str, str, Any], ...]:
    """Backend parts -> wire items, storing every part and leaving out data the client holds (``known``)."""
    out = []
    for name, key, data in parts:
        if not store.touch(key):  # a held key: touching it is what storing it again does (see PartStore.touch)
            store.put(key, data)
        out.append((str(name), str(key), None if key in known else data))
    return tuple(out)


def _start(out: BinaryIO, options: Any, memory_mb: Any, isolation: str) -> tuple[Any, Any] | None:
    """Build the backend and its guard, cap the memory and say ``ready``; None (having said ``failed``) when the
    backend cannot be built."""
    try:
        backend = FACTORY(dict(options or {}))
        # pure calls, bounded records (runtime/guard.py); the backend keeps the directory it was started in
        guard = GUARD.CallGuard(scratch=False, capture_fds=False)
        HEAP.freeze_loaded()  # before the cap: the backend's imports and objects are never walked again
        limit_memory(memory_mb)
        SANDBOX.keep_children()
        write_frame(
            out, ("ready", {"pid": os.getpid(), "python": sys.version.split()[0], "network_isolation": isolation})
        )
    except BaseException as exc:  # noqa: BLE001 - report why the backend cannot be built, then exit
        traceback.print_exc(file=sys.stderr)
        write_frame(out, ("failed", error_text(exc)))
        return None
    return backend, guard


class _Server:
    """What a server keeps between requests: the backend and its guard, the part store and the read memo."""

    def __init__(self, backend: Any, guard: Any, store: Any, memory_mb: Any, max_record_bytes: Any) -> None:
        self.backend = backend
        self.guard = guard
        self.store = store
        self.memo = ReadMemo(READ_MEMO_BYTES)
        self.memory_mb = memory_mb
        self.max_record_bytes = max_record_bytes

    def answer(self, kind: str, req_id: Any, msg: Any) -> tuple[Any, ...]:
        """The reply to a request other than ``close``."""
        store, backend = self.store, self.backend
        if kind == "call":
            _, _, items, tool, args = msg
            return self.call(req_id, items, tool, args)
        if kind == "fresh":
            return ("state", req_id, _wire(backend.fresh(), store, set()))
        if kind == "load":
            loader = getattr(backend, "load_state", None)
            if loader is None:
                raise RuntimeError(
                    "this backend has no load_state(config): it cannot start from a task's configuration"
                )
            return ("state", req_id, _wire(loader(msg[2]), store, set()))
        if kind == "held":
            return ("held", req_id, list(store.items))
        if kind == "catalog":
            lister = getattr(backend, "catalog", None)
            if lister is None:
                raise RuntimeError("this backend has no catalog(): pass the catalog to the client")
            return ("catalog", req_id, list(lister()))
        return ("raise", req_id, f"unknown request {kind!r}")

    def call(self, req_id: Any, items: Any, tool: str, args: Any) -> tuple[Any, ...]:
        """Run a call from the state ``items`` (a ``miss`` when a part it names is not held)."""
        store = self.store
        given = {key: data for _, key, data in items if data is not None}
        missing = [key for _, key, data in items if data is None and key not in given and key not in store.items]
        if missing:
            return ("miss", req_id, missing)
        # every part is looked up before any is stored, so the bound cannot evict one still to be read
        parts = [
            (name, key, data if data is not None else given[key] if key in given else store.items[key])
            for name, key, data in items
        ]
        for _, key, data in parts:
            if not store.touch(key):  # as in _wire
                store.put(key, data)
        record, new_parts = self._run(parts, items, tool, args)
        SANDBOX.end_call()  # what the call started dies with it, before the client hears back
        sent = {key for _, key, _ in items}
        new_items = _wire(new_parts, store, sent)
        same = [k for _, k, _ in new_items] == [k for _, k, _ in items] and [n for n, _, _ in new_items] == [
            n for n, _, _ in items
        ]
        return ("done", req_id, record, None if same else new_items)

    def _run(self, parts: list[Any], items: Any, tool: str, args: Any) -> tuple[dict[str, Any], Any]:
        """The record of a call and the parts of the state it left: from the read memo when it holds the call,
        else from the backend under the guard; a tool's exception (memory included) is an error record."""
        memo = self.memo
        call = memo.call_key(tool, args)
        keys = {name: key for name, key, _ in items}
        reused = None if call is None else memo.find(call, keys)
        try:
            if reused is not None:
                return reused, parts
            result = GUARD.invoke_backend(self.guard, self.backend, parts, tool, args, self.max_record_bytes)
            record = {
                "status": result.get("status", "success"),
                "output": result.get("output"),
                "error": result.get("error"),
                "state_changes": result.get("state_changes") or {},
                "diagnostics": result["diagnostics"],
            }
            new_parts = result.get("parts") or parts
            reads = result.get("reads")
            if (
                reads is not None
                and call is not None
                and not record["diagnostics"]
                and [(n, k) for n, k, _ in new_parts] == [(n, k) for n, k, _ in items]
            ):
                memo.add(call, reads, keys, record)
            return record, new_parts
        except MemoryError as exc:
            memory_mb = self.memory_mb
            return {
                "status": "error",
                "output": None,
                "error": error_text(exc)
                + (f" (the server's memory cap of {memory_mb:g} MB was reached)" if memory_mb else ""),
                "state_changes": {},
            }, parts
        except Exception as exc:  # noqa: BLE001 - a tool's exception is an error record
            return {"status": "error", "output": None, "error": error_text(exc), "state_changes": {}}, parts


def serve(inp: BinaryIO, out: BinaryIO, init: Any, isolation: str) -> None:
    """Answer requests until ``close`` or end of input; ``init`` is the init request, already read and applied."""
    _, options, memory_mb, _allow_network, cache_size = init[:5]
    max_record_bytes = init[5] if len(init) > 5 else GUARD.DEFAULT_MAX_RECORD_BYTES
    cache_bytes = init[6] if len(init) > 6 else None
    started = _start(out, options, memory_mb, isolation)
    if started is None:
        return
    backend, guard = started
    store = _Store(max(1, int(cache_size)), None if cache_bytes is None else int(cache_bytes))
    server = _Server(backend, guard, store, memory_mb, max_record_bytes)

    while True:
        try:
            msg = read_frame(inp)
        except EOFError:
            return
        kind = msg[0]
        if kind == "close":
            return
        req_id = msg[1]
        try:
            write_frame(out, server.answer(kind, req_id, msg))
        except MemoryError as exc:
            write_frame(out, ("raise", req_id, f"the server ran out of memory ({error_text(exc)})"))
        except Exception as exc:  # noqa: BLE001 - a broken backend: tell the client, keep serving
            traceback.print_exc(file=sys.stderr)
            write_frame(out, ("raise", req_id, error_text(exc)))


#: the backend factory named by ``--backend``, loaded by :func:`main` once the sandbox is entered
FACTORY: Any = None


def main(argv: list[str]) -> int:
    global FACTORY
    if len(argv) != 2 or argv[0] != "--backend":
        print("usage: remote_server.py --backend PATH.py[:factory] | module[:factory]", file=sys.stderr)
        return 2
    # stdout/stdin carry the protocol: keep private copies and point fd 1 at stderr and fd 0 at /dev/null, so a
    # backend that prints or reads cannot corrupt the stream.
    out = os.fdopen(os.dup(1), "wb")
    inp = os.fdopen(os.dup(0), "rb")
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = sys.stderr
    # The sandbox comes first, before the backend's imports can start threads (a namespace holds only for the
    # threads started after it), so the init request that says whether network is allowed is read first.
    try:
        init = read_frame(inp)
    except EOFError:
        return 0
    if init[0] != "init":
        write_frame(out, ("failed", f"expected an init request, got {init[0]!r}"))
        return 1
    isolation = SANDBOX.enter(bool(init[3]))
    try:
        FACTORY = load_factory(argv[1])
    except BaseException as exc:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        write_frame(out, ("failed", f"cannot load backend {argv[1]!r}: {error_text(exc)}"))
        return 1
    try:
        serve(inp, out, init, isolation)
    finally:
        SANDBOX.end_call()
    # skip interpreter teardown: a backend's non-daemon threads (e.g. an ASGI test client's portal) would keep the
    # process alive until the client kills it
    out.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
