"""Isolated workers: crashes, hangs, memory blow-ups and network access become error records; the run goes on."""

from __future__ import annotations

import functools
import socket
import threading
import time

import pytest

from libra.errors import LibraError
from libra.runtime import IsolatedRuntime, PythonRuntime, Runtime, ToolRuntimeError, UnknownToolError, WorkerPool
from tests.toy_tools import make_blog_runtime, make_leaky_runtime

TIMEOUT_S = 3.0  # generous enough that a memory blow-up hits the cap before the clock, even on a busy machine
LOGIN = {"username": "alice", "password": "secret"}


@pytest.fixture(scope="module")
def iso():
    rt = IsolatedRuntime(make_blog_runtime, n_workers=2, timeout_s=TIMEOUT_S, memory_mb=128)
    yield rt
    rt.close()


def _next_call_works(rt: IsolatedRuntime) -> None:
    rec, _ = rt.invoke(rt.fresh(), "toy_hazards.add", {"a": 40})
    assert (rec.status, rec.output) == ("success", 42)


@pytest.mark.parametrize(
    ("tool", "expected", "limit_s"),
    [
        ("toy_hazards.segfault", "worker crashed (signal SIGSEGV)", 5.0),
        ("toy_hazards.abort", "worker crashed (signal SIGABRT)", 5.0),
        ("toy_hazards.hang", f"timeout after {TIMEOUT_S!r}s", TIMEOUT_S + 3.0),
        ("toy_hazards.spin", f"timeout after {TIMEOUT_S!r}s", TIMEOUT_S + 3.0),
        ("toy_hazards.hog_memory", "MemoryError", 10.0),
        ("toy_hazards.connect", "PermissionError: network disabled during library construction", 2.0),
        ("toy_hazards.raw_connect", "PermissionError: network disabled during library construction", 2.0),
    ],
)
def test_misbehaving_tools_become_error_records(iso: IsolatedRuntime, tool: str, expected: str, limit_s: float) -> None:
    t0 = time.monotonic()
    rec, state = iso.invoke(iso.fresh(), tool, {})
    elapsed = time.monotonic() - t0
    assert rec.status == "error" and rec.output is None
    assert rec.error is not None and rec.error.startswith(expected), rec.error
    assert elapsed < limit_s
    assert state == iso.fresh()
    _next_call_works(iso)


def test_memory_error_names_the_cap(iso: IsolatedRuntime) -> None:
    rec, _ = iso.invoke(iso.fresh(), "toy_hazards.hog_memory", {})
    assert "memory cap of 128 MB" in rec.error


def test_isolated_matches_in_process(iso: IsolatedRuntime) -> None:
    assert isinstance(iso, Runtime) and iso.trusted is False
    local = make_blog_runtime()
    assert iso.catalog.names == local.catalog.names
    s_iso, s_loc = iso.fresh(), local.fresh()
    assert s_iso == s_loc
    calls = [("Blog.login", LOGIN), ("Blog.post", {"token": "tok-alice", "text": "x"}), ("Blog.count", {})]
    for tool, args in calls:
        (r_iso, s_iso), (r_loc, s_loc) = iso.invoke(s_iso, tool, args), local.invoke(s_loc, tool, args)
        assert r_iso.to_dict() | {"duration_ms": 0} == r_loc.to_dict() | {"duration_ms": 0}
        assert s_iso == s_loc
    assert r_iso.output == 1
    # the states the caller holds keep their payload, so an in-process runtime can continue from them
    assert local.invoke(s_iso, "Blog.count", {})[0].output == 1


def test_invoke_many_keeps_order_and_survives_crashes(iso: IsolatedRuntime) -> None:
    s0 = iso.fresh()
    _, s1 = iso.invoke(s0, "Blog.login", LOGIN)
    calls = []
    for i in range(40):
        calls.append((s1, "Blog.post", {"token": "tok-alice", "text": f"t{i}"}))
        if i == 13:
            calls.append((s0, "toy_hazards.segfault", {}))
    results = iso.invoke_many(calls)
    assert len(results) == 41
    assert results[14][0].error == "worker crashed (signal SIGSEGV)"
    oks = [r for i, (r, _) in enumerate(results) if i != 14]
    assert all(r.status == "success" and r.output == {"id": 0} for r in oks)
    # identical calls from one state give one state
    assert len({s for i, (_, s) in enumerate(results) if i != 14 and calls[i][2]["text"] == "t0"}) == 1


def test_a_stream_hands_results_back_in_the_order_submitted(iso: IsolatedRuntime) -> None:
    s0 = iso.fresh()
    _, s1 = iso.invoke(s0, "Blog.login", LOGIN)
    texts = [f"t{i}" for i in range(30)]
    with iso.stream() as stream:
        got = []
        for i, text in enumerate(texts):
            stream.submit((s1 if i % 3 else s0, "Blog.post", {"token": "tok-alice", "text": text}))
            if i % 4 == 3:  # take some results while later calls are still being submitted
                got.append(stream.next())
        stream.submit((s0, "toy_hazards.segfault", {}))
        stream.submit((s1, "Blog.count", {}))
        while len(stream):
            got.append(stream.next())
    expected = iso.invoke_many(
        [(s1 if i % 3 else s0, "Blog.post", {"token": "tok-alice", "text": t}) for i, t in enumerate(texts)]
    )
    assert [r.to_dict() | {"duration_ms": 0} for r, _ in got[:30]] == [
        r.to_dict() | {"duration_ms": 0} for r, _ in expected
    ]
    assert [s for _, s in got[:30]] == [s for _, s in expected]
    assert got[30][0].error == "worker crashed (signal SIGSEGV)"
    assert (got[31][0].status, got[31][0].output) == ("success", 0)
    # a stream closed with calls in flight leaves the pool ready for the next batch
    stream = iso.stream()
    for text in texts[:6]:
        stream.submit((s1, "Blog.post", {"token": "tok-alice", "text": text}))
    stream.close()
    _next_call_works(iso)


def test_polling_a_stream_lets_the_workers_run_ahead_of_the_caller(iso: IsolatedRuntime) -> None:
    # Without a poll a worker waits after one call until the caller next asks for a result; polling reads the
    # replies and sends the next calls, and the results still come back in the order submitted.
    s0 = iso.fresh()
    _, s1 = iso.invoke(s0, "Blog.login", LOGIN)
    calls = [(s1 if i % 2 else s0, "Blog.post", {"token": "tok-alice", "text": f"p{i}"}) for i in range(12)]
    with iso.stream() as stream:
        for call in calls:
            stream.submit(call)
        for _ in range(2000):  # a generous bound on the polls, not a timing
            if len(stream.results) == len(calls):
                break
            time.sleep(0.01)
            stream.poll()
        assert len(stream.results) == len(calls)  # every call ran while the caller only polled
        got = [stream.next() for _ in calls]
    expected = iso.invoke_many(calls)
    assert [r.to_dict() | {"duration_ms": 0} for r, _ in got] == [r.to_dict() | {"duration_ms": 0} for r, _ in expected]
    assert [s for _, s in got] == [s for _, s in expected]


def test_bad_requests_raise(iso: IsolatedRuntime) -> None:
    with pytest.raises(UnknownToolError):
        iso.invoke(iso.fresh(), "Blog.nope", {})
    with pytest.raises(ToolRuntimeError, match="JSON object"):
        iso.invoke(iso.fresh(), "Blog.count", "x")  # type: ignore[arg-type]
    foreign = PythonRuntime(classes=[]).fresh()
    with pytest.raises(LibraError, match="not made by this runtime"):
        iso.invoke(foreign, "Blog.count", {})
    _next_call_works(iso)


def test_small_worker_cache_resends_parts() -> None:
    """Workers that evicted a state ask for it again ("miss") and results stay right."""
    with WorkerPool(make_blog_runtime, n_workers=1, timeout_s=5, cache_size=1) as pool:
        s0 = pool.load_state()
        _, s1 = pool.invoke(s0, "Blog.login", LOGIN)
        _, s2 = pool.invoke(s1, "Blog.post", {"token": "tok-alice", "text": "a"})
        _, s3 = pool.invoke(s2, "Blog.post", {"token": "tok-alice", "text": "b"})
        counts = [pool.invoke(s, "Blog.count", {})[0].output for s in (s3, s0, s2, s1, s3)]
        assert counts == [2, 0, 1, 0, 2]


def _unpicklable_factory():
    return make_blog_runtime()


def test_pool_errors() -> None:
    with pytest.raises(ToolRuntimeError, match="cannot be sent to a worker"):
        WorkerPool(lambda: make_blog_runtime(), n_workers=1)
    with pytest.raises(ToolRuntimeError, match="runtime factory failed in a worker"):
        WorkerPool(functools.partial(PythonRuntime, classes=[1]), n_workers=1)
    pool = WorkerPool(_unpicklable_factory, n_workers=1)
    pool.close()
    with pytest.raises(ToolRuntimeError, match="closed"):
        pool.invoke(None, "Blog.count", {})  # type: ignore[arg-type]


def test_network_can_be_allowed() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepter = threading.Thread(target=lambda: server.accept()[0].close(), daemon=True)
    accepter.start()
    try:
        with IsolatedRuntime(make_blog_runtime, n_workers=1, allow_network=True) as rt:
            rec, _ = rt.invoke(rt.fresh(), "toy_hazards.connect", {"port": port})
            assert (rec.status, rec.output) == ("success", "connected")
    finally:
        server.close()


def test_unsplit_payloads_are_cached_by_fingerprint() -> None:
    from tests.toy_tools import CounterRuntime

    with IsolatedRuntime(CounterRuntime, n_workers=2, cache_size=1) as rt:
        states = [rt.fresh()]
        for _ in range(4):
            rec, s = rt.invoke(states[-1], "counter.inc", {})
            assert rec.state_changes["counter"]["changed"]["$"]["after"] == s.payload
            states.append(s)
        assert [s.payload for s in states] == [0, 1, 2, 3, 4]
        got = rt.invoke_many([(s, "counter.get", {}) for s in reversed(states)])
        assert [r.output for r, _ in got] == [4, 3, 2, 1, 0]
        assert [s for _, s in got] == list(reversed(states))


def test_affinity_hands_a_worker_the_states_it_holds() -> None:
    from libra.runtime.base import State
    from libra.runtime.workers.lru import PartStore
    from libra.runtime.workers.stream import _Affinity

    a, b, c = State("n=0", 0), State("n=1", 1), State("n=2", 2)
    calls = [
        (a, "counter.get", {}),
        (b, "counter.get", {}),
        (a, "counter.inc", {}),
        (c, "counter.get", {}),
        (b, "counter.inc", {}),
    ]
    queue = _Affinity(calls)
    holds_c = PartStore(8)
    holds_c.put("n=2", True)
    assert queue.take(None, PartStore(8)) == 0  # nothing held: the first call waiting
    assert queue.take("n=0", PartStore(8)) == 2  # the state it ran last comes first
    assert queue.take(None, holds_c) == 3  # then a state whose parts it holds
    assert queue.take("n=2", holds_c) == 1  # then the first call waiting, in order
    assert queue.take("n=1", PartStore(8)) == 4
    assert not queue


def test_a_mixed_batch_gives_the_results_of_calls_made_one_by_one() -> None:
    from tests.toy_tools import PidCounterRuntime

    with IsolatedRuntime(PidCounterRuntime, n_workers=2, cache_size=2) as rt:
        states = [rt.fresh()]
        for _ in range(3):
            states.append(rt.invoke(states[-1], "counter.inc", {})[1])
        calls = [
            (states[i % 4 if i % 3 else 3 - i % 4], tool, {})
            for i in range(40)
            for tool in ("counter.get", "counter.inc", "counter.pid")
        ]
        got = rt.invoke_many(calls)
        alone = PidCounterRuntime()
        for (state, tool, args), (rec, new) in zip(calls, got):
            want, want_state = alone.invoke(state, tool, args)
            if tool == "counter.pid":
                assert rec.output in rt.pids and new is state
            else:
                assert (rec.status, rec.output, rec.state_changes) == (want.status, want.output, want.state_changes)
                assert new == want_state


def _checksums(recycle_mb: float | None) -> tuple[list[int], int, int, set[int]]:
    with WorkerPool(make_leaky_runtime, n_workers=1, timeout_s=20, memory_mb=2048, recycle_mb=recycle_mb) as pool:
        pool.recycle_check_every = 1
        s0 = pool.load_state()
        pids = set(pool.pids)
        out = []
        for page in range(12):
            out.append(pool.invoke(s0, "leaky_tools.page_checksum", {"page": page})[0].output)
            pids.update(pool.pids)
        return out, pool.recycled, pool.restarts, pids


def test_a_worker_whose_memory_grows_is_replaced_between_calls() -> None:
    """A tool that caches 8 MB per distinct call: with a 40 MB bound the worker is replaced between calls (a new
    process, counted as recycled, not as a crash) and every answer is what a worker that kept growing gives."""
    kept, recycled_never, restarts_never, pids_never = _checksums(None)
    bounded, recycled, restarts, pids = _checksums(40)
    assert kept == bounded == [(8 << 20) + page % 251 for page in range(12)]
    assert recycled_never == 0 and len(pids_never) == 1
    assert recycled >= 1 and len(pids) == recycled + 1 and restarts == restarts_never == 0


def test_recycle_mb_must_be_positive() -> None:
    with pytest.raises(ToolRuntimeError, match="recycle_mb"):
        WorkerPool(make_leaky_runtime, n_workers=1, recycle_mb=0)
