"""The sandbox holds against hostile tools: no network at the OS level, no process outliving its call or close().

The hostile tools below are real Python tools run through the real isolated runtime; the listener is a real TCP
server on 127.0.0.1 and process checks use real PIDs.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from libra.induction.build import BuildOptions, build_library
from libra.runtime import IsolatedRuntime, PythonRuntime
from libra.runtime.workers import sandbox
from libra.runtime.workers.executor import Executor, InProcessTransport
from libra.runtime.workers.remote import RemoteRuntime

from .induction_toys import ShopBenchmark

TIMEOUT_S = 3.0
SANDBOX_FILE = Path(sandbox.__file__)


class Hostile:
    """Tools that try to reach the network or leave processes behind."""

    def raw_socket(self, port: int) -> str:
        """Connect with the C-level socket module, past any patch of ``socket``."""
        import _socket

        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        try:
            s.settimeout(2)
            s.connect(("127.0.0.1", port))
            return "connected"
        finally:
            s.close()

    def reloaded_socket(self, port: int) -> str:
        """Undo a patch of ``socket`` by reloading it, then connect."""
        import importlib

        fresh = importlib.reload(socket)
        with fresh.create_connection(("127.0.0.1", port), timeout=2):
            return "connected"

    def subprocess_connect(self, port: int) -> int:
        """Connect from a child interpreter, which has no patch at all; its exit status is the output."""
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
        return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, timeout=20).returncode

    def popen_sleep(self) -> int:
        """Start a long sleep and return its PID without waiting."""
        return subprocess.Popen(["sleep", "1000"]).pid

    def fork_child(self) -> int:
        """Fork a child that sleeps, return its PID."""
        pid = os.fork()
        if pid == 0:
            time.sleep(1000)
            os._exit(0)
        return pid

    def daemon(self) -> int:
        """Double fork into a new session (a classic daemon), return the grandchild's PID."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                os.write(w, str(os.getpid()).encode())
                time.sleep(1000)
            os._exit(0)
        os.waitpid(pid, 0)
        os.close(w)
        return int(os.read(r, 32))

    def spawn_later(self, path: str) -> str:
        """Start a process from a thread after the call has returned, writing its PID to ``path``."""

        def later() -> None:
            time.sleep(0.3)
            Path(path).write_text(str(subprocess.Popen(["sleep", "1000"], start_new_session=True).pid))

        threading.Thread(target=later, daemon=True).start()
        return "started"

    def spawn_and_hang(self, path: str) -> None:
        """Start a process in its own session, write its PID to ``path``, then hang past the timeout."""
        Path(path).write_text(str(subprocess.Popen(["sleep", "1000"], start_new_session=True).pid))
        time.sleep(1000)

    def spawn_and_crash(self, path: str) -> None:
        """Start a process, write its PID to ``path``, then kill the worker."""
        Path(path).write_text(str(subprocess.Popen(["sleep", "1000"]).pid))
        os.abort()

    def add(self, a: int, b: int) -> int:
        """A well-behaved tool."""
        return a + b


def make_hostile_runtime() -> PythonRuntime:
    return PythonRuntime(classes=[Hostile], name="hostile")


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has finished and counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return False
    return raw[raw.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _wait_for_pid(path: Path, limit_s: float = 20.0) -> int:
    """The PID a tool writes to ``path`` (from a thread or before dying), once it is there."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"no PID was written to {path}")


def _os_grants_namespace() -> bool:
    """Whether a fresh process of ours may enter a new network namespace here (probed, not assumed)."""
    code = (
        f"import importlib.util as u, sys; s = u.spec_from_file_location('sb', {str(SANDBOX_FILE)!r}); m = "
        "u.module_from_spec(s); s.loader.exec_module(m); sys.exit(0 if m.unshare_network() else 1)"
    )
    return subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


class Listener:
    """A real TCP server on the host's 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join()
        self.sock.close()


@pytest.fixture(scope="module")
def iso():
    rt = IsolatedRuntime(make_hostile_runtime, n_workers=2, timeout_s=TIMEOUT_S)
    yield rt
    rt.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def _next_call_works(rt) -> None:
    rec, _ = rt.invoke(rt.fresh(), "Hostile.add", {"a": 40, "b": 2})
    assert (rec.status, rec.output) == ("success", 42)


# ---------------------------------------------------------------------------------------------------------------
# network
# ---------------------------------------------------------------------------------------------------------------
def test_the_network_isolation_is_reported_as_granted(iso) -> None:
    expected = sandbox.NAMESPACE if _os_grants_namespace() else sandbox.PYTHON_PATCH
    assert iso.network_isolation == expected
    with IsolatedRuntime(make_hostile_runtime, n_workers=1, allow_network=True) as open_rt:
        assert open_rt.network_isolation == sandbox.ALLOWED
    with Executor(InProcessTransport(make_hostile_runtime), n_workers=1) as local:
        assert local.network_isolation == sandbox.ALLOWED


@pytest.mark.parametrize("tool", ["Hostile.raw_socket", "Hostile.reloaded_socket"])
def test_no_socket_reaches_the_host(iso, listener, tool: str) -> None:
    if iso.network_isolation != sandbox.NAMESPACE:
        pytest.fail("this machine grants network namespaces (see the probe): the workers must be in one")
    rec, _ = iso.invoke(iso.fresh(), tool, {"port": listener.port})
    assert rec.status == "error" and rec.output is None
    assert rec.error is not None and ("unreachable" in rec.error or "PermissionError" in rec.error), rec.error
    assert listener.accepted == 0
    _next_call_works(iso)


def test_a_child_interpreter_has_no_network_either(iso, listener) -> None:
    rec, _ = iso.invoke(iso.fresh(), "Hostile.subprocess_connect", {"port": listener.port})
    assert rec.status == "success" and rec.output != 0
    assert listener.accepted == 0
    _next_call_works(iso)


def test_allowed_network_reaches_the_listener(listener) -> None:
    with IsolatedRuntime(make_hostile_runtime, n_workers=1, allow_network=True) as rt:
        rec, _ = rt.invoke(rt.fresh(), "Hostile.raw_socket", {"port": listener.port})
    assert (rec.status, rec.output) == ("success", "connected")


def test_an_unprivileged_process_gets_a_namespace_too(listener) -> None:
    """Without root, a user namespace carries the network namespace (when the kernel allows unprivileged ones)."""
    code = textwrap.dedent(
        f"""
        import importlib.util as u, json, sys, _socket
        spec = u.spec_from_file_location("sb", {str(SANDBOX_FILE)!r})
        sb = u.module_from_spec(spec); spec.loader.exec_module(sb)
        mode = sb.enter(False)
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", {listener.port}))
            result = "connected"
        except OSError as exc:
            result = exc.errno
        print(json.dumps([mode, result, __import__("os").getuid()]))
        """
    )
    kw = {"user": 65534, "group": 65534, "extra_groups": []} if os.geteuid() == 0 else {}
    # the system interpreter: a virtual environment under root's home may be closed to other users
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    out = subprocess.run([python, "-c", code], check=False, capture_output=True, text=True, timeout=60, cwd="/", **kw)
    assert out.returncode == 0, out.stderr
    import json

    mode, result, uid = json.loads(out.stdout)
    assert uid != 0
    assert mode == sandbox.NAMESPACE, "unprivileged user namespaces are refused here"
    assert result == errno.ENETUNREACH
    assert listener.accepted == 0


# ---------------------------------------------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("tool", ["Hostile.popen_sleep", "Hostile.fork_child", "Hostile.daemon"])
def test_processes_a_tool_starts_die_with_the_call(iso, tool: str) -> None:
    rec, _ = iso.invoke(iso.fresh(), tool, {})
    assert rec.status == "success", rec.error
    pid = rec.output
    assert isinstance(pid, int) and pid > 0
    assert not _alive(pid)
    _next_call_works(iso)


def test_a_hung_call_takes_its_processes_down(iso, tmp_path: Path) -> None:
    path = tmp_path / "pid"
    rec, _ = iso.invoke(iso.fresh(), "Hostile.spawn_and_hang", {"path": str(path)})
    assert rec.status == "error" and rec.error == f"timeout after {TIMEOUT_S!r}s"
    assert not _alive(_wait_for_pid(path))
    _next_call_works(iso)


def test_a_crashed_worker_takes_its_processes_down(iso, tmp_path: Path) -> None:
    path = tmp_path / "pid"
    rec, _ = iso.invoke(iso.fresh(), "Hostile.spawn_and_crash", {"path": str(path)})
    assert rec.status == "error" and rec.error == "worker crashed (signal SIGABRT)"
    assert not _alive(_wait_for_pid(path))
    _next_call_works(iso)


def test_close_leaves_nothing_running(tmp_path: Path) -> None:
    rt = IsolatedRuntime(make_hostile_runtime, n_workers=2, timeout_s=TIMEOUT_S)
    path = tmp_path / "pid"
    workers = list(rt.pids)
    rec, _ = rt.invoke(rt.fresh(), "Hostile.spawn_later", {"path": str(path)})
    assert (rec.status, rec.output) == ("success", "started")
    late = _wait_for_pid(path)
    assert _alive(late)  # started after its call ended: only close() can take it down
    direct = [rt.invoke(rt.fresh(), "Hostile.popen_sleep", {})[0].output for _ in range(2)]
    rt.close()
    assert not any(_alive(pid) for pid in [late, *direct, *workers])


def test_environment_servers_are_sandboxed_too(tmp_path: Path, listener) -> None:
    """The same sandbox for a server in another Python environment (the transport AppWorld uses)."""
    backend = tmp_path / "backend.py"
    backend.write_text(
        textwrap.dedent(
            """
            import hashlib, subprocess, _socket

            class Backend:
                def catalog(self):
                    return [{"name": "x.spawn"}, {"name": "x.connect"}]

                def fresh(self):
                    return [("p", hashlib.sha256(b"").hexdigest(), b"")]

                def invoke(self, parts, tool, args):
                    if tool == "x.spawn":
                        return {"status": "success", "output": subprocess.Popen(["sleep", "1000"]).pid, "parts": parts}
                    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
                    s.settimeout(2)
                    s.connect(("127.0.0.1", args["port"]))
                    return {"status": "success", "output": "connected", "parts": parts}

            def make_backend(options):
                return Backend()
            """
        ),
        encoding="utf-8",
    )
    with RemoteRuntime(sys.executable, backend, n_servers=1, timeout_s=10, name="toy") as rt:
        expected = sandbox.NAMESPACE if _os_grants_namespace() else sandbox.PYTHON_PATCH
        assert rt.network_isolation == expected == rt.server_info["network_isolation"]
        rec, _ = rt.invoke(rt.fresh(), "x.spawn", {})
        assert rec.status == "success" and not _alive(rec.output)
        rec, _ = rt.invoke(rt.fresh(), "x.connect", {"port": listener.port})
        assert rec.status == "error" and listener.accepted == 0
        server = rt.pids[0]
    assert not _alive(server)


# ---------------------------------------------------------------------------------------------------------------
# the executor and its transports
# ---------------------------------------------------------------------------------------------------------------
def test_in_process_transport_gives_the_isolated_records(iso) -> None:
    with Executor(InProcessTransport(make_hostile_runtime), n_workers=2) as local:
        calls = [(local.fresh(), "Hostile.add", {"a": i, "b": 1}) for i in range(6)]
        got = [(r.to_dict() | {"duration_ms": 0}, s) for r, s in local.invoke_many(calls)]
    want = [
        (r.to_dict() | {"duration_ms": 0}, s) for r, s in iso.invoke_many([(iso.fresh(), t, a) for _, t, a in calls])
    ]
    assert got == want
    assert [r["output"] for r, _ in got] == [1, 2, 3, 4, 5, 6]


def test_builds_report_the_isolation_in_their_stats() -> None:
    isolated = build_library(ShopBenchmark(), None, BuildOptions(workers=1, progress=False))
    expected = sandbox.NAMESPACE if _os_grants_namespace() else sandbox.PYTHON_PATCH
    assert isolated.stats["network_isolation"] == expected
    in_process = build_library(ShopBenchmark(), None, BuildOptions(workers=0, progress=False))
    assert in_process.stats["network_isolation"] == sandbox.ALLOWED
    assert {(r.provider, r.consumer, r.kind) for r in isolated.relations} == {
        (r.provider, r.consumer, r.kind) for r in in_process.relations
    }
