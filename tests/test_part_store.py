"""The LRU of state parts on both sides of a worker pipe, bounded in entries and in bytes.

The caller sends only keys for the parts it predicts a worker holds, so its mirror must evict exactly what the
worker evicts. These tests run real worker processes (a pool of our interpreter and servers of a foreign one) and
compare the mirror with what the worker reports holding after every call.
"""

from __future__ import annotations

import pytest

from libra.runtime.workers.executor import Executor
from libra.runtime.workers.isolation import ProcessTransport, WorkerPool
from libra.runtime.workers.lru import NOMINAL_PART_BYTES, PartStore, part_size
from libra.runtime.workers.remote import InterpreterTransport, RemoteRuntime
from tests.test_remote_runtime import BACKEND, _foreign_python
from tests.toy_tools import make_blog_runtime

LOGIN = {"username": "alice", "password": "secret"}


def test_part_store_bounds_entries_and_bytes() -> None:
    store = PartStore(3, max_bytes=10)
    store.put("a", b"12345")
    store.put("b", b"1234")
    assert list(store.items) == ["a", "b"] and store.bytes == 9
    store.put("a", b"12345")  # stored again: most recent, weighed once
    assert list(store.items) == ["b", "a"] and store.bytes == 9
    store.put("c", b"12")  # 11 bytes: the least recently used goes
    assert list(store.items) == ["a", "c"] and store.bytes == 7 and store.evictions == 1
    store.put("d", b"x" * 25)  # bigger than the bound alone: kept, everything else goes
    assert list(store.items) == ["d"] and store.bytes == 25
    counted = PartStore(2)  # no bound in bytes: the count alone
    for key in "xyz":
        counted.put(key, b"x" * 1000)
    assert list(counted.items) == ["y", "z"]
    mirror = PartStore(3, max_bytes=10)  # the caller's side holds weights, not data
    mirror.put("a", None, 6)
    mirror.put("b", None, 6)
    assert list(mirror.items) == ["b"] and mirror.bytes == 6
    mirror.clear()
    assert not mirror.items and mirror.bytes == 0


def test_part_size_is_the_length_of_serialized_data() -> None:
    assert part_size(b"abc") == 3 and part_size(bytearray(5)) == 5 and part_size("héllo") == 5
    assert part_size({"a": 1}) == part_size(7) == NOMINAL_PART_BYTES


@pytest.fixture(scope="module")
def backend_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("parts") / "toy_backend.py"
    path.write_text(BACKEND, encoding="utf-8")
    return str(path)


def _blog_states(rt, n: int) -> list:
    """A logged-in blog and ``n`` states with one more post each (the Blog part grows by ~150 bytes a post)."""
    _, state = rt.invoke(rt.load_state(), "Blog.login", LOGIN)
    states = [state]
    for i in range(n):
        rec, state = rt.invoke(state, "Blog.post", {"token": "tok-alice", "text": f"{i:03d}" * 40})
        assert rec.status == "success"
        states.append(state)
    return states


def _kv_states(rt, n: int) -> list:
    """``n`` states of the foreign toy backend, each with one more note (its "notes" part grows)."""
    state = rt.fresh()
    states = [state]
    for i in range(n):
        rec, state = rt.invoke(state, "kv.note", {"text": f"{i:03d}" * 40})
        assert rec.status == "success"
        states.append(state)
    return states


def _revisit_in_sync(rt, states: list, tool: str, expected: list) -> None:
    """Call ``tool`` from old states in a scrambled order; after each call the mirror equals the worker."""
    order = [i * 5 % len(states) for i in range(2 * len(states))]
    for i in order:
        rec, _ = rt.invoke(states[i], tool, {})
        assert rec.output == expected[i]
        predicted, held = rt.held_parts()
        assert predicted == held
    assert rt.shipped["misses"] == 0


def test_byte_bound_keeps_a_pool_worker_and_the_mirror_in_sync() -> None:
    with WorkerPool(make_blog_runtime, n_workers=1, timeout_s=10, cache_bytes=2500) as pool:
        states = _blog_states(pool, 9)
        predicted, held = pool.held_parts()
        assert predicted == held
        assert len(held) < 2 + len(states)  # the bound evicted parts (the count alone would keep them all)
        shipped = pool.shipped["parts"]
        _revisit_in_sync(pool, states, "Blog.count", [0, *range(1, 10)])
        assert pool.shipped["parts"] > shipped  # evicted parts were sent again


def test_byte_bound_keeps_a_foreign_server_and_the_mirror_in_sync(backend_file) -> None:
    with RemoteRuntime(
        _foreign_python(), backend_file, n_servers=1, timeout_s=10, memory_mb=256, cache_bytes=2500, name="toy"
    ) as rt:
        states = _kv_states(rt, 9)
        predicted, held = rt.held_parts()
        assert predicted == held and len(held) < 2 + len(states)
        _revisit_in_sync(rt, states, "kv.get", [0] * len(states))
        rec, _ = rt.invoke(states[3], "kv.note", {"text": "x"})
        assert rec.output == 4


def test_a_worker_missing_a_part_asks_for_it(backend_file) -> None:
    """Workers bounded tighter than the caller assumes (as a server of another configuration would be) evict
    parts the mirror still lists; they answer "miss" and the call is sent again with the whole state."""
    transports = [
        ProcessTransport(make_blog_runtime, None, False, 4096, cache_bytes=1),
        InterpreterTransport(
            _foreign_python(), backend_file, {}, 256, False, 4096, None, None, True, "toy", cache_bytes=1
        ),
    ]
    for transport, make_states, tool in zip(transports, (_blog_states, _kv_states), ("Blog.count", "kv.get")):
        with Executor(transport, n_workers=1, timeout_s=10, cache_bytes=None) as rt:
            states = make_states(rt, 3)
            outputs = [rt.invoke(s, tool, {})[0].output for s in (states[0], states[3], states[1], states[0])]
            assert outputs == ([0, 3, 1, 0] if tool == "Blog.count" else [0, 0, 0, 0])
            assert rt.shipped["misses"] >= 1


def test_a_state_larger_than_the_byte_bound_still_works(backend_file) -> None:
    with WorkerPool(make_blog_runtime, n_workers=1, timeout_s=10, cache_bytes=64) as pool:
        states = _blog_states(pool, 4)
        assert [pool.invoke(s, "Blog.count", {})[0].output for s in reversed(states)] == [4, 3, 2, 1, 0]
        predicted, held = pool.held_parts()
        assert predicted == held and len(held) == 1  # only the part stored last is kept
        assert pool.shipped["misses"] == 0
    with RemoteRuntime(
        _foreign_python(), backend_file, n_servers=1, timeout_s=10, memory_mb=256, cache_bytes=16, name="toy"
    ) as rt:
        states = _kv_states(rt, 3)
        assert [rt.invoke(s, "kv.note", {"text": "y"})[0].output for s in states] == [1, 2, 3, 4]
        predicted, held = rt.held_parts()
        assert predicted == held and len(held) == 1
        assert rt.shipped["misses"] == 0
