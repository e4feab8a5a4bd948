"""The per-call guard of tool workers: every record is JSON data of bounded size, and every call starts clean.

Two jobs, both done in the process that runs the tools (an isolated worker or a remote server), before a record is
serialised and sent, so nothing a tool returns or changes reaches the caller or the next call:

**Records are bounded JSON data.** :func:`to_jsonable` is libra's one normaliser of tool outputs (re-exported by
:mod:`libra.runtime.base`). It converts any returned value into plain JSON data of exact built-in types (an ``int``
subclass or an enum member would otherwise need the tool's module to unpickle in the caller), and it refuses,
with an :class:`UnserializableOutput` that says what it was, what cannot become a record:

- a *cyclic* structure (a dict or list that contains itself, an object graph with a back reference): the walk
  keeps the containers on its current path and stops at the first one met again, instead of expanding it until
  the depth limit, which for a structure with two back references takes 2**50 steps;
- an integer longer than Python converts to text (``sys.get_int_max_str_digits()``, 4,300 digits by default):
  ``json.dumps`` would raise in the caller and stop its build;
- a record larger than the cap (``max_record_bytes``, default :data:`DEFAULT_MAX_RECORD_BYTES`): the walk counts
  the JSON size it produces and stops as soon as the cap is passed, so a 50 MB string, a list of a million items
  or a small structure whose levels share one child (astronomically large once expanded) all cost at most the
  cap's worth of work. The error gives the size (estimated with shared parts counted once per use) and the cap.

Lone surrogates (``"\\ud800"``, which no UTF-8 encoder accepts) are replaced by U+FFFD in strings and keys, so
a value that reaches a later call's arguments, a hash or a library file encodes.

**Calls are pure within a worker.** :class:`CallGuard` wraps each call and undoes what the tool changed outside
the state the runtime snapshots (a tool module's own globals are state, see :mod:`libra.runtime.python.runtime`; they
are exempt here):

- ``os.environ`` and ``sys.path`` are compared with a copy taken before the call (a dict and a list compare in
  microseconds) and put back when they differ;
- each call runs in a scratch working directory (one per worker, emptied after a call that left files in it);
  a call that changed directory is moved back;
- what a call printed is captured: ``sys.stdout``/``sys.stderr`` are swapped for writers that keep the first
  :data:`MAX_TEXT_CHARS` characters, and, in isolated workers, file descriptors 1 and 2 point at files read and
  emptied after each call, so output of C code and child processes is captured too. Nothing reaches the
  caller's terminal; the text is on the record (``InvocationRecord.diagnostics``);
- attributes of *other* modules that a call sets or deletes (``json.dumps = ...``, a ``mock.patch`` left
  active) are restored after it. Why this design: copying every module's namespace before each call costs
  about 0.4 ms in a BFCL worker (381 modules, 17k names), more than the call; comparing with one snapshot is
  cheap but calls arbitrary ``__eq__`` (a replaced NumPy array cannot be compared) and takes a library's own
  cache updates for changes. Instead each plain module's class is switched once to a :class:`types.ModuleType`
  subclass whose ``__setattr__``/``__delattr__`` note the old value in a journal while a call runs: a call that
  changes nothing costs a dictionary look-up per attribute set (libra's fixed clock sets a dozen), restoring
  costs in proportion to what changed. Not seen: writes through a module's ``__dict__`` and ``global``
  statements in a module's own functions (how a library keeps its caches, which are not the tool's business),
  and attributes of classes (``socket.socket.connect = ...``). CPython's only hook for those is the audit hook,
  which also fires on every ``id()`` (hundreds per call in the snapshotter) and measured 40 us a call, as much
  as a BFCL call itself; for the same reason writes outside the scratch directory are not reported. New
  attributes that are submodules are kept, since the import system binds them and caches the import.

This module is standard-library only and imports nothing from ``libra`` at module level, because
:mod:`libra.runtime.workers.remote_server` loads it by path inside a foreign interpreter.
"""

from __future__ import annotations

import contextvars
import dataclasses
import datetime as _dt
import decimal
import enum
import fcntl
import glob
import io
import math
import numbers
import os
import pathlib
import re
import reprlib
import shutil
import sys
import tempfile
import types
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

#: Default cap of a record's JSON size (output, state changes and error together). Why 1 MiB: it is about 250k
#: tokens, more than any agent's context can take as one tool response, while a build that keeps thousands of
#: records in memory stays small even if every one of them were that large.
DEFAULT_MAX_RECORD_BYTES = 1 << 20
#: How much of a call's printed text (per stream) and of an error message is kept.
MAX_TEXT_CHARS = 8192
#: Containers nested deeper than this are summarised with :mod:`reprlib` (bounded) instead of converted.
MAX_DEPTH = 50

_SURROGATES = re.compile("[\ud800-\udfff]")
_ABSENT = object()
_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 3, 200, 200

#: the record cap :func:`to_jsonable` applies when not given one; a guard sets it around each call
_LIMIT: contextvars.ContextVar[int] = contextvars.ContextVar("libra_max_record_bytes", default=DEFAULT_MAX_RECORD_BYTES)


class UnserializableOutput(ValueError):
    """A returned value that cannot become a record: cyclic, an integer too long to print, or over the cap."""


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so it encodes as UTF-8 (the same object when clean)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text)
    return text


def clip_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` cleaned and cut to ``limit`` characters, saying how much was cut."""
    text = clean_text(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit:,} more characters cut]"


def _int_digits_limit() -> int:
    getter = getattr(sys, "get_int_max_str_digits", None)
    return int(getter()) if getter is not None else 0


class _Refused(Exception):
    """Raised inside the walk; carries the message and the path back up to where it is reported."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.path: list[str] = []

    def text(self) -> str:
        return self.what.format(path="$" + "".join(reversed(self.path)))


class _Over(Exception):
    """The walk passed the size cap."""


def _step(key: Any) -> str:
    return f"[{key}]" if isinstance(key, int) else f"[{clip_text(repr(key), 60)}]"


#: What :meth:`_Walk._typed` answers for a value of none of the types it knows.
_NOT_TYPED = object()


def iso_duration(delta: _dt.timedelta) -> str:
    """A duration in ISO 8601 (``P1DT2H30M``), the form pydantic writes and reads back."""
    sign = "-" if delta < _dt.timedelta(0) else ""
    delta = abs(delta)
    hours, rest = divmod(delta.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    secs = seconds + delta.microseconds / 1e6
    time_part = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n) + (
        f"{secs:g}S" if secs else ""
    )
    out = f"{sign}P" + (f"{delta.days}D" if delta.days else "") + (f"T{time_part}" if time_part else "")
    return out if out not in ("P", "-P") else "PT0S"


class _Walk:
    """One conversion: the remaining size budget and the containers on the current path (to see cycles)."""

    __slots__ = ("active", "budget", "int_bits")

    def __init__(self, limit: int) -> None:
        self.budget = limit
        self.active: set[int] = set()
        digits = _int_digits_limit()
        self.int_bits = int((digits - 1) * 3.32) if digits else 0

    def spend(self, n: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise _Over

    def key(self, k: Any) -> str:
        if type(k) is not str:
            k = str.__str__(k) if isinstance(k, str) else str(k)
        k = clean_text(k)
        self.spend(len(k) + 4)
        return k

    def enter(self, value: Any) -> int:
        i = id(value)
        if i in self.active:
            raise _Refused(f"output is cyclic: {{path}} is a {type(value).__name__} that contains itself")
        self.active.add(i)
        return i

    def conv(self, v: Any, depth: int) -> Any:
        """The JSON data of ``v``: values of exact built-in types here (what outputs are made of, each passing
        through this call), subclasses and other kinds in :meth:`_other`."""
        t = type(v)
        if t is str:
            self.spend(len(v) + 2)
            return clean_text(v)
        if t is int:
            bits = v.bit_length()
            if self.int_bits and bits > self.int_bits:
                self._check_printable(v, bits)
            self.spend(int(bits * 0.30103) + 2)
            return v
        if t is float:
            self.spend(8)
            return v if math.isfinite(v) else repr(v)
        if v is None or t is bool:
            self.spend(5)
            return v
        if depth >= MAX_DEPTH:
            text = clean_text(_SHORT.repr(v))
            self.spend(len(text) + 2)
            return text
        if isinstance(v, dict):
            return self.mapping(v, v.items(), depth)
        if isinstance(v, (list, tuple, set, frozenset)):
            return self.sequence(v, depth)
        return self._other(v, depth)

    @staticmethod
    def _check_printable(v: int, bits: int) -> None:
        """Refuse an integer too long for Python to convert to text (``json.dumps`` would raise in the caller)."""
        try:
            str(v)
        except ValueError:
            raise _Refused(
                f"output holds an integer of about {int(bits * 0.30103) + 1:,} digits at {{path}}, "
                "more than the "
                f"{_int_digits_limit():,} Python converts to text"
            ) from None

    def _other(self, v: Any, depth: int) -> Any:
        """The JSON data of a value that is not of an exact JSON type nor a container: built-in subclasses (an
        ``IntEnum`` member) as their base type, numbers, dates, numpy scalars, objects as their public attributes,
        and the repr of anything else."""
        if isinstance(v, bool):
            return self.conv(bool(v), depth)
        if isinstance(v, int):  # int subclasses and IntEnum members: plain ints
            return self.conv(int.__int__(v), depth)
        if isinstance(v, str):
            return self.conv(str.__str__(v), depth)
        if isinstance(v, float):
            return self.conv(float.__float__(v), depth)
        if isinstance(v, (decimal.Decimal, numbers.Real)):
            # Decimal / mpmath results: JSON numbers, like the float they stand for.
            try:
                return self.conv(float(v), depth)
            except (TypeError, ValueError, OverflowError):
                return self.conv(str(v), depth)
        typed = self._typed(v, depth)
        if typed is not _NOT_TYPED:
            return typed
        item = getattr(v, "item", None)
        if item is not None and callable(item):  # numpy scalars
            try:
                scalar = item()
            except Exception:  # noqa: BLE001 - not a scalar after all (an array of several items): fall through
                scalar = v
            if scalar is not v:
                return self.conv(scalar, depth + 1)
        attrs = getattr(v, "__dict__", None)
        if isinstance(attrs, dict):
            return self.mapping(
                v, ((k, x) for k, x in attrs.items() if not (isinstance(k, str) and k.startswith("_"))), depth
            )
        return self.conv(repr(v), depth)

    def _typed(self, v: Any, depth: int) -> Any:
        """The JSON form typed Python code gives the values its signatures use: dates and durations in ISO 8601,
        an enum member as its value, UUIDs and paths as text, a pydantic model as its own dump, a dataclass as its
        fields (pydantic's serializer writes them the same way); :data:`_NOT_TYPED` for anything else."""
        if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
            return self.conv(v.isoformat(), depth)
        if isinstance(v, _dt.timedelta):
            return self.conv(iso_duration(v), depth)
        if isinstance(v, enum.Enum):  # a member stands for its value, as typed frameworks serialize it
            return self.conv(v.value, depth + 1)
        if isinstance(v, (uuid.UUID, pathlib.PurePath)):
            return self.conv(str(v), depth)
        dump = getattr(type(v), "model_dump", None)
        if callable(dump):  # a pydantic model: its own JSON form (aliases, serializers, computed fields)
            try:
                return self.conv(v.model_dump(mode="json"), depth + 1)
            except Exception:  # noqa: BLE001 - a model whose serializer fails: read its attributes instead
                pass
        if dataclasses.is_dataclass(v) and not isinstance(v, type):  # slotted ones have no __dict__
            return self.mapping(v, ((f.name, getattr(v, f.name)) for f in dataclasses.fields(v)), depth)
        return _NOT_TYPED

    def mapping(self, owner: Any, items: Any, depth: int) -> dict[str, Any]:
        i = self.enter(owner)
        self.spend(2)
        out: dict[str, Any] = {}
        for k, x in items:
            try:
                out[self.key(k)] = self.conv(x, depth + 1)
            except _Refused as exc:
                exc.path.append(_step(k))
                raise
        self.active.discard(i)
        return out

    def sequence(self, v: Any, depth: int) -> list[Any]:
        i = self.enter(v)
        self.spend(2)
        items: Any = v
        if isinstance(v, (set, frozenset)):
            try:
                items = sorted(v)
            except TypeError:
                items = sorted(v, key=repr)
        out = []
        for n, x in enumerate(items):
            try:
                out.append(self.conv(x, depth + 1))
            except _Refused as exc:
                exc.path.append(_step(n))
                raise
            self.spend(2)
        self.active.discard(i)
        return out


def approx_json_size(value: Any, stop: int) -> int:
    """The JSON size ``value`` would have, counting each shared container once per use, up to ``stop``.

    Sizes of containers are remembered by identity, so a structure whose levels share one child is measured in
    time proportional to its distinct parts; back references count nothing.
    """
    memo: dict[int, int] = {}
    active: set[int] = set()

    def size(v: Any, depth: int) -> int:
        if isinstance(v, str):
            return len(v) + 2
        if isinstance(v, bool) or v is None:
            return 5
        if isinstance(v, int):
            return int(v.bit_length() * 0.30103) + 2
        if not isinstance(v, (dict, list, tuple, set, frozenset)) or depth > MAX_DEPTH:
            return 8
        i = id(v)
        if i in memo:
            return memo[i]
        if i in active:
            return 0
        active.add(i)
        total = 2
        if isinstance(v, dict):
            for k, x in v.items():
                total += (len(k) if isinstance(k, str) else 8) + 4 + size(x, depth + 1)
                if total >= stop:
                    break
        else:
            for x in v:
                total += 2 + size(x, depth + 1)
                if total >= stop:
                    break
        active.discard(i)
        memo[i] = total = min(total, stop)
        return total

    return size(value, 0)


def _too_large(values: Sequence[Any], limit: int) -> str:
    stop = max(limit, 1) * 1000
    size = sum(approx_json_size(v, stop) for v in values)
    shown = f"more than {stop:,}" if size >= stop else f"about {size:,}"
    return f"record too large: {shown} bytes as JSON, over the cap of {limit:,} bytes (max_record_bytes)"


def to_jsonable(value: Any, limit: int | None = None) -> Any:
    """``value`` as plain JSON data (built-in types only), or :class:`UnserializableOutput` saying why it cannot be.

    ``limit`` caps the JSON size (default: the cap of the guard the call runs under, else
    :data:`DEFAULT_MAX_RECORD_BYTES`). See the module docstring for the rules.
    """
    cap = _LIMIT.get() if limit is None else int(limit)
    try:
        return _Walk(cap).conv(value, 0)
    except _Refused as exc:
        raise UnserializableOutput(exc.text()) from None
    except _Over:
        raise UnserializableOutput(_too_large([value], cap)) from None
    except RecursionError:
        raise UnserializableOutput("output nests too deeply to convert") from None


def bound_record(
    output: Any, state_changes: Any, error: str | None, limit: int
) -> tuple[Any, Any, str | None, str | None]:
    """(output, state_changes, error, problem): the three parts of a record as JSON data within ``limit`` bytes
    together, or ``problem`` saying why they cannot be (then the record must become an ``error`` record)."""
    if error is not None:
        error = clip_text(str(error))
    walk = _Walk(limit - (len(error) if error else 0))
    try:
        return walk.conv(output, 0), walk.conv(state_changes, 0), error, None
    except _Refused as exc:
        return None, {}, error, exc.text()
    except _Over:
        return None, {}, error, _too_large([output, state_changes], limit)
    except RecursionError:
        return None, {}, error, "output nests too deeply to convert"


# ---------------------------------------------------------------------------------------------------------------
# per-call purity
# ---------------------------------------------------------------------------------------------------------------
#: journal of (module, attribute) -> old value (or _ABSENT) while a call runs; None between calls
_JOURNAL: dict[tuple[types.ModuleType, str], Any] | None = None
#: the modules watched: those that existed before the current call. A module imported during a call is created
#: as a :class:`_WatchedModule` too (the import system makes modules with ``type(sys)``), but the import system's
#: own writes to it are not the call's changes to keep out of later calls.
_WATCHED: set[types.ModuleType] = set()


class _WatchedModule(types.ModuleType):
    """A plain module whose attribute writes are journaled while a guarded call runs (see the module docstring)."""

    def __setattr__(self, name: str, value: Any) -> None:
        journal = _JOURNAL
        if journal is not None and self in _WATCHED and (self, name) not in journal:
            journal[self, name] = self.__dict__.get(name, _ABSENT)
        types.ModuleType.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        journal = _JOURNAL
        if journal is not None and self in _WATCHED and (self, name) not in journal:
            journal[self, name] = self.__dict__.get(name, _ABSENT)
        types.ModuleType.__delattr__(self, name)


class _Capped(io.TextIOBase):
    """A text stream keeping the first ``limit`` characters written to it and counting the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.reset()

    def reset(self) -> None:
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        s = str(s)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(s[:room])
            self.kept += min(room, len(s))
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        out = "".join(self.parts)
        return out + (f"... [{self.dropped:,} more characters cut]" if self.dropped else "")


def _make_scratch() -> tuple[str, int]:
    """A fresh ``libra-call-*`` directory holding ``.lock`` (locked while its process lives) and ``cwd/``."""
    _sweep_stale()
    root = tempfile.mkdtemp(prefix="libra-call-")
    os.mkdir(os.path.join(root, "cwd"))
    # Locked under another name first, then renamed: another process's sweep only looks at ``.lock``, so it never
    # sees this directory's lock free (it would remove the directory while this process sets it up).
    lock = os.open(os.path.join(root, ".lock-new"), os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(os.path.join(root, ".lock-new"), os.path.join(root, ".lock"))
    return root, lock


def _sweep_stale() -> None:
    """Remove scratch directories whose worker died without cleaning up (their lock is free again)."""
    for lock_path in glob.glob(os.path.join(tempfile.gettempdir(), "libra-call-*", ".lock")):
        try:
            fd = os.open(lock_path, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        shutil.rmtree(os.path.dirname(lock_path), ignore_errors=True)
        os.close(fd)


def _restore_environ(before: Mapping[str, str]) -> str:
    """Make ``os.environ`` (and so the C environment) equal ``before``; says which names had changed."""
    now = dict(os.environ)
    changed = sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k))
    os.environ.clear()
    os.environ.update(before)
    return "os.environ[" + ", ".join(changed) + "]"


def _empty(folder: str) -> None:
    for entry in os.scandir(folder):
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


class CallGuard:
    """Makes each call pure and its printed text captured (see the module docstring); one per tool process.

    ``exempt_modules`` names modules whose globals are the runtime's state (left alone). ``scratch`` runs calls
    in a scratch directory (False: in the directory the process started in, e.g. a backend's data folder).
    ``capture_fds`` also points file descriptors 1 and 2 at files read after each call (for C code and child
    processes); leave it off where those descriptors are already private (a remote server's log).
    """

    def __init__(
        self,
        exempt_modules: Sequence[str] = (),
        *,
        scratch: bool = True,
        capture_fds: bool = True,
        text_limit: int = MAX_TEXT_CHARS,
    ) -> None:
        self.exempt = set(exempt_modules)
        self.text_limit = text_limit
        self.root: str | None = None
        self._lock = -1
        if scratch:
            self.root, self._lock = _make_scratch()
            self.home = os.path.join(self.root, "cwd")
            self._rehome()
        else:
            self.home = os.getcwd()
        self._sinks: list[tuple[int, int]] = []  # (captured fd, file it points at)
        if capture_fds and self.root is not None:
            for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
                try:
                    stream.flush()
                except (AttributeError, OSError, ValueError):
                    pass
                sink = os.open(os.path.join(self.root, f"fd{fd}"), os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o600)
                os.dup2(sink, fd)
                self._sinks.append((fd, sink))
        self._out, self._err = _Capped(text_limit), _Capped(text_limit)
        self._before: tuple[Any, ...] = ()
        self._modules = 0
        self._watch_new_modules()

    def _watch_new_modules(self) -> None:
        """Switch modules imported since the last call to :class:`_WatchedModule` (a no-op when none were)."""
        if len(sys.modules) == self._modules:
            return
        for name, module in list(sys.modules.items()):
            if name in self.exempt:
                continue
            if type(module) is types.ModuleType:
                try:
                    module.__class__ = _WatchedModule
                except TypeError:
                    continue
            if type(module) is _WatchedModule:
                _WATCHED.add(module)
        self._modules = len(sys.modules)

    def begin(self) -> None:
        """Start a call: note what it may change, swap the standard streams, open the journal."""
        global _JOURNAL
        self._watch_new_modules()
        env = getattr(os.environ, "_data", None)  # the encoded mapping: a copy is one C call, not a decode per name
        self._before = (env, dict(os.environ) if env is None else env.copy(), list(sys.path), sys.stdout, sys.stderr)
        self._out.reset()
        self._err.reset()
        sys.stdout, sys.stderr = self._out, self._err
        _JOURNAL = {}

    def end(self) -> dict[str, Any]:
        """End the call: undo what it changed; its diagnostics (empty for a clean, silent call)."""
        global _JOURNAL
        journal, _JOURNAL = _JOURNAL, None
        env, env_before, path_before, sys.stdout, sys.stderr = self._before
        restored = self._restore(journal or {})
        if (env if env is not None else dict(os.environ)) != env_before:
            restored.append(
                _restore_environ(
                    env_before if env is None else {os.fsdecode(k): os.fsdecode(v) for k, v in env_before.items()}
                )
            )
        if sys.path != path_before:
            sys.path[:] = path_before
            restored.append("sys.path")
        if self._tidy():
            restored.append("working directory")
        report: dict[str, Any] = {}
        for name, cut, fd in (("stdout", self._out, 1), ("stderr", self._err, 2)):
            text = cut.text() + self._drain(fd)
            if text:
                report[name] = clip_text(text, self.text_limit + 100)
        if restored:
            report["restored"] = restored
        return report

    @contextmanager
    def call(self) -> Iterator[dict[str, Any]]:
        """:meth:`begin` and :meth:`end` around a block; yields the diagnostics dict, filled in when it ends."""
        report: dict[str, Any] = {}
        self.begin()
        try:
            yield report
        finally:
            report.update(self.end())

    def _restore(self, journal: Mapping[tuple[types.ModuleType, str], Any]) -> list[str]:
        """Put back what a call changed in watched modules; names of what was put back."""
        restored = []
        for (module, name), old in journal.items():
            now = module.__dict__.get(name, _ABSENT)
            if now is old or (old is _ABSENT and isinstance(now, types.ModuleType)):
                continue  # unchanged, or a submodule the import system bound
            try:
                if old is _ABSENT:
                    types.ModuleType.__delattr__(module, name)
                else:
                    types.ModuleType.__setattr__(module, name, old)
            except AttributeError:
                continue
            restored.append(f"{module.__name__}.{name}")
        return restored

    def _tidy(self) -> bool:
        """Back to the home directory, emptied if it is a scratch one; whether the call had moved away."""
        try:
            moved = os.getcwd() != self.home
        except OSError:  # the directory was removed under us
            moved = True
        if moved:
            self._rehome()
        elif self.root is not None and os.stat(self.home).st_mtime_ns:
            # The scratch directory's mtime is set to 0 whenever it is emptied, so any entry a call creates or
            # removes shows as a non-zero mtime: one stat instead of a listing per call.
            _empty(self.home)
            os.utime(self.home, ns=(0, 0))
        return moved

    def _rehome(self) -> None:
        """Recreate (if scratch) and enter the home directory."""
        if self.root is not None:
            shutil.rmtree(self.home, ignore_errors=True)
            os.makedirs(self.home, exist_ok=True)
            os.utime(self.home, ns=(0, 0))
        os.chdir(self.home)

    def _drain(self, fd: int) -> str:
        """What C code or child processes wrote to ``fd`` during the call (cut), then empty its file."""
        sink = next((s for f, s in self._sinks if f == fd), None)
        if sink is None:
            return ""
        size = os.fstat(sink).st_size
        if not size:
            return ""
        data = os.pread(sink, min(size, self.text_limit * 4), 0)
        os.ftruncate(sink, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        text = data.decode("utf-8", "replace")
        return text + (f"... [{size - len(data):,} more bytes cut]" if size > len(data) else "")

    def close(self) -> None:
        """Remove the scratch directory (the next guard's sweep removes it if this process dies first) and stop
        watching."""
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            os.close(self._lock)
            self.root = None
        for module in list(_WATCHED):  # plain modules again, for a process that goes on without a guard
            if type(module) is _WatchedModule:
                module.__class__ = types.ModuleType
        _WATCHED.clear()


def guarded(guard: CallGuard, max_record_bytes: int, fn: Any, *args: Any) -> tuple[Any, dict[str, Any]]:
    """``fn(*args)`` as one call under ``guard``, with :func:`to_jsonable` capped at ``max_record_bytes``; its
    result and the call's diagnostics (an exception propagates once the call is undone)."""
    token = _LIMIT.set(max_record_bytes)
    guard.begin()
    try:
        result = fn(*args)
    finally:
        diagnostics = guard.end()
        _LIMIT.reset(token)
    return result, diagnostics


def invoke_backend(
    guard: CallGuard, backend: Any, parts: Any, tool: str, args: Any, max_record_bytes: int
) -> dict[str, Any]:
    """A remote server's backend call (:mod:`libra.runtime.workers.remote_server`) under ``guard``: its result dict with
    output, state changes and error bounded, and ``diagnostics`` added. An oversized or unconvertible result
    becomes an ``error`` result without ``parts``, so the server keeps the state it was given."""
    result, diagnostics = guarded(guard, max_record_bytes, backend.invoke, parts, tool, args)
    result = dict(result)
    output, changes, error, problem = bound_record(
        result.get("output"), result.get("state_changes") or {}, result.get("error"), max_record_bytes
    )
    if problem is not None:
        result = {"status": "error", "output": None, "state_changes": {}, "error": problem}
    else:
        result.update(output=output, state_changes=changes, error=error)
    result["diagnostics"] = diagnostics
    return result
