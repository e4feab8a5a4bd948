"""Files written the way a user expects, whatever happens to the writer.

- **Atomic**: data goes to a temporary file beside the target and replaces it in one rename, so a crash never
  leaves a half-written artifact. A symlink keeps pointing at its (replaced) file; a device or stream
  (``--json /dev/stdout``) is written in place instead.
- **Nothing left behind**: a temporary name carries its writer's PID. A writer killed mid-write (SIGKILL gives it
  no chance to clean up) leaves its temporary file; the next write to the same path removes the temporary files
  of writers that no longer run (PIDs are per host: a directory shared between hosts keeps its strays).
- **Ordinary permissions**: a new file gets ``0666`` less the umask, as ``open()`` would give it, and a replaced
  file keeps its mode (the temporary file API would otherwise make every artifact private, ``0600``).
- **One-line failures**: an ``OSError`` while writing becomes :class:`~libra.errors.OutputError` naming the path
  (still an ``OSError``, so callers that tolerate a read-only cache keep working).
- **Writers take turns**: :func:`path_lock` serialises processes that write the same artifact (two builds of one
  cached library) through a lock file it removes when done, and :func:`write_problem` checks that a path can be
  written before any work is spent on it.
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from libra.errors import OutputError


def _umask() -> int:
    """The process umask, read without changing it where the OS shows it (``os.umask`` both sets and returns)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _file_mode(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def remove_stale_temps(path: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary files that writers of ``path`` left when they were killed; returns what it removed.

    Only files named by :func:`atomic_open` with the PID of a process that no longer runs are touched: a write in
    progress in another process is never disturbed.
    """
    path = Path(path)
    prefix = _temp_prefix(path)
    removed = []
    for name in glob.glob(glob.escape(str(path.parent / prefix)) + "*.tmp"):
        pid_text = Path(name).name[len(prefix) :].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            os.unlink(name)
            removed.append(Path(name))
        except OSError:
            pass
    return removed


#: Directories whose entries are devices, or aliases of a process's open streams (``/dev/stdout`` links to
#: ``/proc/self/fd/1``): a path there is written in place, never replaced.
_STREAM_DIRS = (Path("/dev"), Path("/proc"))


def _in_place(path: Path) -> bool:
    """Whether ``path`` must be written in place: it names a stream or device (``/dev/stdout``, ``/dev/null``, a
    pipe), where a rename would swap the device or the link for a regular file."""
    for candidate in (path.absolute(), Path(os.path.realpath(path))):
        if any(candidate == d or d in candidate.parents for d in _STREAM_DIRS):
            return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_in_place(path: Path) -> Iterator[IO[bytes]]:
    """Devices and pipes are written directly: replacing one would swap it for a regular file."""
    try:
        with open(path, "wb") as fh:
            yield fh
    except OSError as exc:
        raise OutputError.of(path, exc) from None


@contextmanager
def atomic_open(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` only once the block has written it in full (streamed, so a large
    artifact never has to sit in memory as one bytes object)."""
    path = Path(path)
    if _in_place(path):
        yield from _write_in_place(path)
        return
    path = Path(os.path.realpath(path))  # through a symlink to its file, as open() would: the link stays a link
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(path)
        mode = _file_mode(path)
        fd, tmp = tempfile.mkstemp(prefix=f"{_temp_prefix(path)}{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise OutputError.of(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError.of(path, exc) from None
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path) as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (``/`` at worst)."""
    current = path
    while True:
        try:
            if current.exists() or current == current.parent:
                return current
        except OSError:  # an ancestor we may not look into: let the probe below report it
            return current
        current = current.parent


def write_problem(path: str | os.PathLike[str], *, directory: bool = False) -> str | None:
    """Why a file (or, with ``directory``, a directory of files) could not be written at ``path``; None when it can.

    Checked by creating and removing a probe file in the nearest existing directory, because permission bits do
    not tell: root passes ``access(2)`` almost everywhere yet cannot create files in ``/proc``. Missing parent
    directories are fine (writers create them).
    """
    path = Path(path)
    if not directory and _in_place(path) and path.exists():
        return None if os.access(path, os.W_OK) else f"{path} is not writable"
    if directory:
        if path.exists() and not path.is_dir():
            return f"{path} is a file, not a directory"
        base = _nearest_existing(path)
    else:
        if path.is_dir():
            return f"{path} is a directory"
        base = _nearest_existing(path.parent)
    if not base.is_dir():
        return f"{base} is not a directory"
    try:
        fd, probe = tempfile.mkstemp(prefix=".libra-write-check.", dir=base)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"cannot create files in {base} ({exc.strerror or type(exc).__name__})"
    return None


_held: dict[tuple[str, int], int] = {}
_held_guard = threading.Lock()


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The hidden lock file :func:`path_lock` uses for ``path``."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


@contextmanager
def path_lock(path: str | os.PathLike[str], on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock for writing ``path`` during the block, waiting for any other holder first.

    An advisory ``flock`` on a hidden file beside ``path`` (:func:`lock_path`): the kernel releases it when its
    holder dies, so a killed writer never leaves a stale lock. The holder removes the file when the block ends
    (whether it succeeded or failed), so no lock file stays beside an output; a waiter that then finds its locked
    file gone from the folder locks the current one instead, so two writers never hold different files at once.
    ``on_wait`` is called once when another holder makes us wait. Re-entrant within a thread (a build inside a
    cached-library lookup takes the same lock). Where the lock file cannot be created the block runs unlocked: the
    write itself will report why it fails.
    """
    key = (str(lock_path(path).resolve()), threading.get_ident())
    with _held_guard:
        if key in _held:
            _held[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    lock = lock_path(path)
    fd = _acquire(lock, on_wait)
    if fd is None:
        yield
        return
    try:
        with _held_guard:
            _held[key] = 1
        try:
            yield
        finally:
            with _held_guard:
                del _held[key]
    finally:
        try:
            os.unlink(lock)  # while still holding it: see the docstring
        except OSError:
            pass
        os.close(fd)  # closing the last descriptor releases the lock


def _acquire(lock: Path, on_wait: Callable[[], None] | None) -> int | None:
    """A descriptor holding the exclusive lock on the file now at ``lock`` (None: it cannot be created)."""
    waited = False
    while True:
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)  # the umask applies, as to any new file
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None and not waited:
                on_wait()
            waited = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            here = os.stat(lock)
            held = os.fstat(fd)
            if (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino):
                return fd
        except OSError:
            pass
        os.close(fd)  # the previous holder removed the file we waited on: lock the one there now
