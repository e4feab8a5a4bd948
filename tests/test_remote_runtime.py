"""The generic out-of-process runtime, driven by a tiny standard-library backend under another interpreter.

The backend is written to a temporary file and run by the system's plain python in isolated mode (``-I``), so the
server process shares nothing with the test's virtual environment: exactly the situation of a catalog whose
dependencies clash with ours.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import textwrap
import time

import pytest

from libra.catalog import Catalog, Tool
from libra.runtime.base import Runtime, State, ToolRuntimeError, UnknownToolError
from libra.runtime.workers.remote import PIPE_BYTES, RemoteRuntime, widen_pipe

TIMEOUT_S = 2.0

BACKEND = textwrap.dedent(
    '''
    """Toy backend: two parts ("counter", "notes"), each JSON bytes. Standard library only."""
    import hashlib, json, os, signal, socket, sys, time

    TOOLS = ["kv.get", "kv.add", "kv.note", "kv.reject", "kv.boom", "kv.crash", "kv.hang", "kv.hog",
             "kv.connect", "kv.chatty", "kv.pid", "kv.frozen"]

    def key(data):
        return hashlib.sha256(data).hexdigest()

    def enc(obj):
        data = json.dumps(obj, sort_keys=True).encode()
        return data

    class Backend:
        def __init__(self, options):
            self.start = options.get("start", 0)

        def catalog(self):
            return [{"name": t, "description": "toy " + t} for t in TOOLS]

        def fresh(self):
            return [("counter", key(enc(self.start)), enc(self.start)), ("notes", key(enc([])), enc([]))]

        def invoke(self, parts, tool, args):
            state = {name: json.loads(data) for name, _, data in parts}
            before = json.loads(json.dumps(state))
            out, status, error = None, "success", None
            if tool == "kv.get":
                out = state["counter"]
            elif tool == "kv.add":
                state["counter"] += int(args.get("n", 1))
                out = state["counter"]
            elif tool == "kv.note":
                state["notes"].append(args["text"])
                out = len(state["notes"])
            elif tool == "kv.reject":
                status, error, out = "rejected", "no such thing", {"message": "no such thing"}
            elif tool == "kv.boom":
                raise ValueError("bad input")
            elif tool == "kv.crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif tool == "kv.hang":
                time.sleep(60)
            elif tool == "kv.hog":
                blocks = []
                while True:
                    blocks.append(bytearray(50 * 2**20))
            elif tool == "kv.connect":
                socket.create_connection(("127.0.0.1", 9))
            elif tool == "kv.chatty":
                print("this goes to stderr, not into the protocol")
                sys.stdout.flush()
                os.write(1, b"raw bytes on fd 1")
                out = "ok"
            elif tool == "kv.pid":
                out = os.getpid()
            elif tool == "kv.frozen":
                import gc
                out = gc.get_freeze_count()
            changes = {k: {"before": before[k], "after": state[k]} for k in state if state[k] != before[k]}
            new = [(name, key(enc(state[name])), enc(state[name])) for name, _, _ in parts]
            return {"status": status, "output": out, "error": error, "state_changes": changes, "parts": new}

    def make_backend(options):
        return Backend(options)
    '''
)


def _foreign_python() -> str:
    """A different interpreter than the test's venv when the machine has one."""
    for candidate in ("/usr/bin/python3", shutil.which("python3") or ""):
        if (
            candidate
            and os.path.realpath(candidate) != os.path.realpath(sys.executable)
            and os.access(candidate, os.X_OK)
        ):
            return candidate
    return sys.executable


@pytest.fixture(scope="module")
def backend_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("remote") / "toy_backend.py"
    path.write_text(BACKEND, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def rt(backend_file):
    runtime = RemoteRuntime(
        _foreign_python(), backend_file, n_servers=2, timeout_s=TIMEOUT_S, memory_mb=256, name="toy"
    )
    yield runtime
    runtime.close()


def test_protocol_and_catalog_from_backend(rt):
    assert isinstance(rt, Runtime)
    assert rt.trusted is False
    assert "kv.add" in rt.catalog and len(rt.catalog) == 12
    assert len(rt.pids) == 2


def test_calls_are_pure_and_states_immutable(rt):
    s0 = rt.fresh()
    rec, s1 = rt.invoke(s0, "kv.add", {"n": 5})
    assert (rec.status, rec.output) == ("success", 5)
    assert rec.state_changes == {"counter": {"before": 0, "after": 5}}
    assert s1 != s0
    # the saved state is a value: calling from it again gives the same result, any number of times
    for _ in range(3):
        again, s1b = rt.invoke(s0, "kv.add", {"n": 5})
        assert again.output == 5 and s1b == s1
    rec, s2 = rt.invoke(s1, "kv.add", {"n": 1})
    assert rec.output == 6
    assert rt.invoke(s0, "kv.get", {})[0].output == 0
    assert rt.invoke(s1, "kv.get", {})[0].output == 5
    # a read call returns the very same state object; unchanged parts are shared
    _, same = rt.invoke(s1, "kv.get", {})
    assert same is s1
    assert s2.payload[1] is s1.payload[1] or s2.payload[1].key == s1.payload[1].key


def test_statuses(rt):
    s0 = rt.fresh()
    rec, s = rt.invoke(s0, "kv.reject", {})
    assert rec.status == "rejected" and rec.error == "no such thing" and s is s0
    rec, s = rt.invoke(s0, "kv.boom", {})
    assert rec.status == "error" and rec.error == "ValueError: bad input" and s is s0


def test_pipes_to_and_from_servers_hold_a_large_message(rt):
    # a message carrying a state part of hundreds of kilobytes is handed over in one write (see widen_pipe)
    fds = [fd for slot in rt._slots for fd in (slot.channel.proc.stdin.fileno(), slot.channel.fd)]
    assert all(fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) == min(PIPE_BYTES, _pipe_max()) for fd in fds)


def test_a_widened_pipe_takes_a_large_write_with_no_reader():
    r, w = os.pipe()
    try:
        os.set_blocking(w, False)
        assert widen_pipe(w) == min(PIPE_BYTES, _pipe_max())
        blob = b"x" * (min(PIPE_BYTES, _pipe_max()) // 2)
        assert os.write(w, blob) == len(blob)  # a default pipe (64 KiB) would take only part of it
        assert os.read(r, len(blob) + 1) == blob
    finally:
        os.close(r)
        os.close(w)


def _pipe_max() -> int:
    with open("/proc/sys/fs/pipe-max-size") as fh:
        return int(fh.read())


def test_invoke_many_keeps_order_and_spreads(rt):
    s0 = rt.fresh()
    calls = [(s0, "kv.add", {"n": i}) for i in range(20)] + [(s0, "kv.pid", {}) for _ in range(6)]
    results = rt.invoke_many(calls)
    assert [r.output for r, _ in results[:20]] == list(range(20))
    assert {r.output for r, _ in results[20:]} <= set(rt.pids)


@pytest.mark.parametrize(
    ("tool", "expected", "limit_s"),
    [
        ("kv.crash", "server crashed (signal SIGSEGV)", 5.0),
        ("kv.hang", f"timeout after {TIMEOUT_S!r}s", TIMEOUT_S + 4.0),
        ("kv.hog", "MemoryError", 10.0),
        ("kv.connect", "PermissionError: network disabled during library construction", 3.0),
    ],
)
def test_hazards_become_error_records_and_the_run_goes_on(rt, tool, expected, limit_s):
    s0 = rt.fresh()
    restarts = rt.restarts
    t0 = time.monotonic()
    rec, s = rt.invoke(s0, tool, {})
    assert time.monotonic() - t0 < limit_s
    assert rec.status == "error" and rec.error.startswith(expected), rec.error
    assert s is s0
    if tool in ("kv.crash", "kv.hang"):
        assert rt.restarts == restarts + 1
    rec, _ = rt.invoke(s0, "kv.add", {"n": 2})
    assert rec.output == 2


def test_hazard_in_a_batch_only_fails_its_own_call(rt):
    s0 = rt.fresh()
    results = rt.invoke_many(
        [
            (s0, "kv.add", {"n": 1}),
            (s0, "kv.crash", {}),
            (s0, "kv.add", {"n": 3}),
            (s0, "kv.hang", {}),
            (s0, "kv.add", {"n": 4}),
        ]
    )
    assert [r.status for r, _ in results] == ["success", "error", "success", "error", "success"]
    assert [results[i][0].output for i in (0, 2, 4)] == [1, 3, 4]


def test_backend_output_cannot_corrupt_the_protocol(rt):
    rec, _ = rt.invoke(rt.fresh(), "kv.chatty", {})
    assert (rec.status, rec.output) == ("success", "ok")


def test_a_server_freezes_what_its_backend_loaded(rt):
    # runtime/heap.py: the backend's start-up objects are out of the collector's reach in every server
    results = rt.invoke_many([(rt.fresh(), "kv.frozen", {}) for _ in range(4)])
    assert all(rec.status == "success" and rec.output > 0 for rec, _ in results)


def test_replaced_server_gets_parts_again(rt):
    # a state the first servers know, then a crash wipes one server: the new one must be sent the data
    s0 = rt.fresh()
    _, s1 = rt.invoke(s0, "kv.note", {"text": "a"})
    rt.invoke_many([(s0, "kv.crash", {}), (s0, "kv.crash", {})])
    results = rt.invoke_many([(s1, "kv.note", {"text": "b"}) for _ in range(4)])
    assert all(r.output == 2 for r, _ in results)


def test_errors_are_actionable(rt, backend_file):
    with pytest.raises(UnknownToolError):
        rt.invoke(rt.fresh(), "kv.nope", {})
    with pytest.raises(ToolRuntimeError):
        rt.invoke(State("x", None), "kv.get", {})
    with pytest.raises(ToolRuntimeError, match="does not exist"):
        RemoteRuntime("/nonexistent/python", backend_file)
    with pytest.raises(ToolRuntimeError, match="failed to start"):
        RemoteRuntime(_foreign_python(), backend_file + ":no_such_factory", n_servers=1)


def test_given_catalog_and_options(backend_file):
    cat = Catalog([Tool("kv.get"), Tool("kv.add")], name="given")
    with RemoteRuntime(_foreign_python(), backend_file, catalog=cat, options={"start": 7}, n_servers=1) as r:
        assert r.catalog is cat
        assert r.invoke(r.fresh(), "kv.get", {})[0].output == 7
        with pytest.raises(UnknownToolError):
            r.invoke(r.fresh(), "kv.note", {"text": "x"})
