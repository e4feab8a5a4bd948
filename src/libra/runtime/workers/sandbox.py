"""The sandbox every process libra starts for tools enters: no network, bounded memory, no process left behind.

Why one standard-library-only module: tool workers run under our interpreter, but environment servers
(:mod:`libra.runtime.workers.remote_server`) run under a *foreign* one that cannot import libra. Both apply the same
policy, so the server loads this file by path; it must therefore import nothing outside the standard library
and stay valid on older Pythons (3.8+).

What a sandboxed process gets (:func:`enter`):

- **Network.** Its own network namespace (``unshare(CLONE_NEWNET)``; when that is refused, a user namespace
  with it, ``CLONE_NEWUSER | CLONE_NEWNET``, which unprivileged users may create on most Linux systems). A fresh
  namespace has only a loopback interface, and it is down, so no socket reaches any address, not even the host's
  127.0.0.1, whatever module or subprocess opens it. On top of it ``socket`` is patched (:func:`block_network`)
  so the ordinary way to connect fails with one clear ``PermissionError`` message, the same record whether or not
  the OS layer is there. Where the OS refuses both namespaces the patch alone remains: :func:`enter` says which
  (``"namespace"``, ``"python-patch"``, or ``"allowed"`` when network is allowed).
- **Processes.** Its own session and process group (``setsid``), and it becomes a *child subreaper*
  (``PR_SET_CHILD_SUBREAPER``): anything a tool starts stays its descendant even after double forks, so
  :func:`end_call` can kill all of it after each call, and the parent can kill what is left with
  :func:`kill_process_tree`. The check after a call is one ``waitpid`` when the tool started nothing.
- **Memory.** :func:`limit_memory` caps the address space at its size after start-up plus a budget.

Linux only for the OS parts; elsewhere they are skipped and the Python patch is reported.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Iterable
from typing import Any

NETWORK_DISABLED = "network disabled during library construction"

#: network isolation modes, strongest first
NAMESPACE, PYTHON_PATCH, ALLOWED = "namespace", "python-patch", "allowed"
ISOLATION_MODES = (NAMESPACE, PYTHON_PATCH, ALLOWED)

_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_PR_SET_CHILD_SUBREAPER = 36

# children this process had once its runtime was built (and their descendants): its own helpers, never killed
_KEEP: set[int] = set()


def _libc() -> Any:
    """The C library, through the symbols already loaded into this process (no lookup subprocess)."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


# ---------------------------------------------------------------------------------------------------------------
# network
# ---------------------------------------------------------------------------------------------------------------
def _deny_network(*_args: Any, **_kwargs: Any) -> Any:
    raise PermissionError(NETWORK_DISABLED)


def block_network() -> None:
    """Make every outbound connection attempt through ``socket`` raise ``PermissionError`` (the Python layer)."""
    import socket

    for name in ("connect", "connect_ex", "sendto", "sendmsg"):
        setattr(socket.socket, name, _deny_network)
    socket.create_connection = _deny_network  # type: ignore[assignment]
    socket.getaddrinfo = _deny_network  # type: ignore[assignment]


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)


def unshare_network() -> bool:
    """Move this process into a new, empty network namespace; False when the OS refuses.

    Must run before the process starts threads (a user namespace can only be entered single-threaded, and a
    network namespace applies to the calling thread and the threads it starts afterwards).
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "unshare"):
        return False
    if libc.unshare(_CLONE_NEWNET) == 0:
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    # Map our own ids into the new user namespace, so files keep their owners as seen from inside.
    try:
        _write("/proc/self/setgroups", "deny")
    except OSError:
        pass
    for path, ident in (("/proc/self/uid_map", uid), ("/proc/self/gid_map", gid)):
        try:
            _write(path, f"{ident} {ident} 1")
        except OSError:
            pass
    return True


# ---------------------------------------------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------------------------------------------
def _address_space_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def limit_memory(memory_mb: float | None) -> None:
    """Cap this process's address space at its current size plus ``memory_mb`` (allocations beyond fail)."""
    if not memory_mb:
        return
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space_bytes() + int(memory_mb * 2**20)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


# ---------------------------------------------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------------------------------------------
def _process_table() -> dict[int, tuple[int, int, int, str]]:
    """pid -> (ppid, process group, session, state letter) of every process we can see."""
    table: dict[int, tuple[int, int, int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses
        fields = raw[raw.rfind(b")") + 2 :].split()
        try:
            table[int(name)] = (int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode("ascii", "replace"))
        except (IndexError, ValueError):
            continue
    return table


def descendants(root: int, table: dict[int, tuple[int, int, int, str]] | None = None) -> list[int]:
    """Every live (non-zombie) descendant of ``root``, parents before children."""
    table = _process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _pgrp, _sid, _state) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if table[pid][3] not in ("Z", "X"):
            out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _kill(pids: Iterable[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _reap(keep: set[int]) -> None:
    """Collect every finished child except ``keep`` (our own helpers, whose status belongs to their owner)."""
    if not keep:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
    me = os.getpid()
    for pid, (ppid, _pgrp, _sid, state) in _process_table().items():
        if ppid == me and pid not in keep and state in ("Z", "X"):
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _kill_descendants(root: int, keep: set[int], rounds: int = 50) -> int:
    """SIGKILL every descendant of ``root`` outside ``keep`` until none is left; the number killed.

    Repeated because a process may fork while we look; orphans come back to ``root`` when it is a subreaper.
    """
    killed = 0
    for _ in range(rounds):
        table = _process_table()
        spared: set[int] = set()
        for pid in keep:
            if pid in table:
                spared.add(pid)
                spared.update(descendants(pid, table))
        victims = [p for p in descendants(root, table) if p not in spared]
        if not victims:
            break
        _kill(victims)
        killed += len(victims)
        if root == os.getpid():
            for pid in victims:
                if table[pid][0] == root:
                    try:
                        os.waitpid(pid, 0)
                    except ChildProcessError:
                        pass
    return killed


def end_call() -> int:
    """Kill and reap every process started since :func:`keep_children` (after each call); the number killed.

    One ``waitpid`` when nothing was started: a subreaper with no child at all has no descendant either.
    """
    if not _KEEP:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return 0
            if pid == 0:
                break  # something still runs
    killed = _kill_descendants(os.getpid(), _KEEP)
    _reap(_KEEP)
    return killed


def kill_process_tree(pid: int, alive: bool = True) -> None:
    """From the parent: kill a sandboxed process ``pid`` and everything it started.

    While ``pid`` lives, its descendants go first (as a subreaper it collects orphans, so they stay findable),
    then ``pid`` itself. Whether alive or not, its process group and what is left of its session go too (``pid``
    led both; a group or session with members keeps its number from being reused, so this never hits a stranger).
    """
    if alive:
        _kill_descendants(pid, set())
        _kill([pid])
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _kill(
        p
        for p, (_ppid, pgrp, sid, state) in _process_table().items()
        if (sid == pid or pgrp == pid) and p != pid and state not in ("Z", "X")
    )


_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> bool:
    """Have the kernel SIGKILL this process when the thread that started it ends (Linux ``PR_SET_PDEATHSIG``).

    Why: a server outlives a build killed with SIGKILL (no ``finally`` runs), holding its sandbox and ports; the
    death signal needs no cooperation from the dying process. It survives ``exec``, so a launcher sets it and then
    becomes the server. ``parent`` is the pid that started us: if it is already gone (it died before the signal
    was armed), exit now. Returns False where the call is not available (the server then relies on the build's
    own cleanup).
    """
    libc = _libc()
    if libc is None or not hasattr(libc, "prctl") or libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:
        os._exit(1)
    return True


def _become_subreaper() -> bool:
    libc = _libc()
    if libc is None or not hasattr(libc, "prctl"):
        return False
    return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def enter(allow_network: bool) -> str:
    """Put this process in the sandbox (see the module docstring); returns its network isolation mode.

    Call it first thing in a fresh process, before the tools' runtime is built.
    """
    try:
        os.setsid()
    except OSError:
        pass  # already a session leader
    _become_subreaper()
    _KEEP.clear()
    if allow_network:
        return ALLOWED
    block_network()
    return NAMESPACE if unshare_network() else PYTHON_PATCH


def keep_children() -> None:
    """Spare the children this process has now (helpers its runtime started while being built) in :func:`end_call`."""
    _KEEP.clear()
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return  # no child at all: nothing to look up
    me = os.getpid()
    _KEEP.update(p for p, row in _process_table().items() if row[0] == me and row[3] not in ("Z", "X"))


def weakest(modes: Iterable[str]) -> str:
    """The weakest of several processes' isolation modes (what a pool as a whole guarantees)."""
    ranked = [m for m in modes if m in ISOLATION_MODES]
    return max(ranked, key=ISOLATION_MODES.index) if ranked else ALLOWED
