"""State handling of the generic Python runtime: fixed entropy (a call drawing on uuid4, the clock or secrets
gives the same result from the same state), module globals and declared holders as state, states split into
sub-parts so big states stay cheap, content views of array-like values, and the rejection hook."""

from __future__ import annotations

import os
import pickle
import random
import threading
import time
from typing import Any

import pytest

from libra.benchmarks.base import Benchmark
from libra.catalog import Catalog
from libra.runtime.diff import content_hash, diff_views, object_view
from libra.runtime.python.runtime import PythonRuntime, status_of
from tests.conftest import needs_bfcl
from tests.fixtures import module_shop, notes_app
from tests.state_toys import Folders, Ledger, Warehouse

LOGIN = {"username": "ann", "password": "pw1"}


def _notes() -> PythonRuntime:
    return PythonRuntime(modules=[notes_app], trusted=True, name="notes")


def _same(a: Any, b: Any) -> bool:
    return a.to_dict() | {"duration_ms": 0} == b.to_dict() | {"duration_ms": 0}


# -- entropy is fixed: identical calls give identical results -------------------------------------------------
def test_clock_uuid_and_secrets_are_fixed_per_call_and_restored() -> None:
    rt = _notes()
    s0 = rt.fresh()
    before_random = random.getstate()
    a, sa = rt.invoke(s0, "notes_app.stamp", {})
    b, sb = rt.invoke(s0, "notes_app.stamp", {})
    assert a.ok and _same(a, b) and sa == sb == s0 and a.state_changes == {}
    assert a.output["now"] == "2025-01-01T12:00:00" and a.output["t"] == 1735732800.0
    # nothing leaks into the caller: real clock, real OS randomness, the caller's random state
    assert abs(time.time() - 1735732800.0) > 86400
    assert os.urandom(16) != os.urandom(16)
    assert random.getstate() == before_random
    # a different call (other arguments or another state) draws other values
    rec, s1 = rt.invoke(s0, "notes_app.sign_in", LOGIN)
    again, s1_again = rt.invoke(s0, "notes_app.sign_in", LOGIN)
    assert rec.ok and _same(rec, again) and s1 == s1_again
    n1, t1 = rt.invoke(s1, "notes_app.add_note", {"token": rec.output["token"], "text": "x"})
    n2, t2 = rt.invoke(s1, "notes_app.add_note", {"token": rec.output["token"], "text": "x"})
    n3, _ = rt.invoke(s1, "notes_app.add_note", {"token": rec.output["token"], "text": "y"})
    assert n1.ok and _same(n1, n2) and t1 == t2
    assert n3.output["note_id"] != n1.output["note_id"]


def test_instance_state_with_uuid_ids_has_a_stable_fingerprint() -> None:
    rt = PythonRuntime(classes=[Warehouse], init_kwargs={"Warehouse": {"n_products": 50}}, trusted=True)
    _, signed = rt.invoke(rt.fresh(), "Warehouse.sign_in", {"user": "ann"})
    r1, s1 = rt.invoke(signed, "Warehouse.order", {"product_id": "P00003"})
    r2, s2 = rt.invoke(signed, "Warehouse.order", {"product_id": "P00003"})
    assert r1.ok and r1.output == r2.output and s1 == s2 != signed


def test_clock_can_be_moved_or_left_real() -> None:
    import datetime as dt

    moved = PythonRuntime(modules=[notes_app], clock=dt.datetime(2030, 5, 6, 7, 8, 9, tzinfo=dt.UTC))
    assert moved.invoke(moved.fresh(), "notes_app.stamp", {})[0].output["now"] == "2030-05-06T07:08:09"
    real = PythonRuntime(modules=[notes_app], clock=None)
    assert real.invoke(real.fresh(), "notes_app.stamp", {})[0].output["now"] != "2025-01-01T12:00:00"


# -- module globals and holders are state ----------------------------------------------------------------------
def test_module_globals_are_state() -> None:
    rt = _notes()
    s0 = rt.fresh()
    rec, s1 = rt.invoke(s0, "notes_app.sign_in", LOGIN)
    assert rec.ok and s1 != s0
    assert rec.state_changes == {
        "notes_app": {"changed": {"_token": {"before": None, "after": rec.output["token"]}}, "added": {}, "removed": {}}
    }
    token = rec.output["token"]
    assert rt.invoke(s0, "notes_app.add_note", {"token": token, "text": "x"})[0].status == "rejected"
    note, s2 = rt.invoke(s1, "notes_app.add_note", {"token": token, "text": "x"})
    assert note.ok and list(note.state_changes["notes_app"]["added"]) == [f'NOTES["{note.output["note_id"]}"]']
    assert rt.invoke(s2, "notes_app.count_notes", {})[0].output == 1
    # the given states are values: the fresh state is still empty and signed out, in this runtime and a new one
    assert rt.invoke(s0, "notes_app.count_notes", {})[0].output == 0
    assert rt.invoke(s0, "notes_app.add_note", {"token": token, "text": "x"})[0].status == "rejected"
    other = _notes()
    assert other.invoke(other.fresh(), "notes_app.count_notes", {})[0].output == 0
    assert other.fresh() == s0
    assert rt.view(s2)["notes_app"]["_token"] == token and "USERS" in rt.view(s2)["notes_app"]


def test_globals_a_call_creates_are_state_and_machinery_is_not() -> None:
    rt = _notes()
    s0 = rt.fresh()
    assert not {"_LOCK", "log", "annotations", "secrets"} & set(rt.view(s0)["notes_app"])
    rec, s1 = rt.invoke(s0, "notes_app.remember", {"word": "hi"})
    assert rec.state_changes == {"notes_app": {"changed": {}, "added": {"LAST_WORD": "hi"}, "removed": {}}}
    assert rt.invoke(s0, "notes_app.last_word", {})[0].output == {"word": None}
    assert rt.invoke(s1, "notes_app.last_word", {})[0].output == {"word": "hi"}
    assert rt.invoke(s1, "notes_app.remember", {"word": "hi"})[1] == s1


class _ModuleShop(Benchmark):
    name = "module-shop"

    def catalog(self) -> Catalog:
        return PythonRuntime(modules=[module_shop]).catalog

    def tasks(self):
        return []

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw: Any):
        return PythonRuntime(modules=[module_shop], trusted=True, name=self.name)


def test_module_level_store_with_a_sign_in_gate_yields_relations() -> None:
    from libra.induction.build import BuildOptions, build_library

    lib = build_library(_ModuleShop(), None, BuildOptions(workers=0, progress=False))
    edges = {(r.provider, r.consumer, r.kind) for r in lib.relations}
    assert ("module_shop.login", "module_shop.add_item", "provenance") in edges
    assert ("module_shop.add_item", "module_shop.get_item", "provenance") in edges
    assert ("module_shop.login", "module_shop.add_item", "state") in edges


class _Context:
    """A process-global context that does not pickle (it holds a lock): state only a declared holder can keep."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows: dict[str, int] = {}


CONTEXT = _Context()


class Counter:
    def bump(self, name: str) -> int:
        """Count one more ``name`` in the shared context."""
        with CONTEXT.lock:
            CONTEXT.rows[name] = CONTEXT.rows.get(name, 0) + 1
            return CONTEXT.rows[name]


def _set_rows(rows: dict[str, int]) -> None:
    CONTEXT.rows = dict(rows)


def test_declared_holder_keeps_unpicklable_context_state() -> None:
    rt = PythonRuntime(classes=[Counter], state_holders={"context": (lambda: dict(CONTEXT.rows), _set_rows)})
    s0 = rt.fresh()
    r1, s1 = rt.invoke(s0, "Counter.bump", {"name": "a"})
    assert (
        r1.output == 1
        and s1 != s0
        and r1.state_changes == {"context": {"changed": {}, "added": {"a": 1}, "removed": {}}}
    )
    assert rt.invoke(s1, "Counter.bump", {"name": "a"})[0].output == 2
    assert rt.invoke(s0, "Counter.bump", {"name": "a"})[0].output == 1  # restored before the call
    assert rt.view(s1)["context"] == {"a": 1}


def test_module_state_travels_to_isolated_workers() -> None:
    from libra.runtime.workers.isolation import IsolatedRuntime

    local = notes_app.make_runtime()
    with IsolatedRuntime(notes_app.make_runtime, n_workers=1, timeout_s=20, context="fork") as iso:
        s0 = iso.fresh()
        rec, s1 = iso.invoke(s0, "notes_app.sign_in", LOGIN)
        note, s2 = iso.invoke(s1, "notes_app.add_note", {"token": rec.output["token"], "text": "x"})
        assert note.ok and iso.invoke(s2, "notes_app.count_notes", {})[0].output == 1
        assert iso.invoke(s0, "notes_app.count_notes", {})[0].output == 0
    l0 = local.fresh()
    lrec, l1 = local.invoke(l0, "notes_app.sign_in", LOGIN)
    assert (l0, l1) == (s0, s1) and lrec.output == rec.output


# -- large states stay cheap -----------------------------------------------------------------------------------
def test_big_state_calls_cost_what_they_touch() -> None:
    n = 8000
    rt = PythonRuntime(classes=[Warehouse], init_kwargs={"Warehouse": {"n_products": n}}, trusted=True)
    size_mb = len(pickle.dumps(Warehouse(n), pickle.HIGHEST_PROTOCOL)) / 2**20
    assert size_mb > 2.5
    _, signed = rt.invoke(rt.fresh(), "Warehouse.sign_in", {"user": "ann"})
    _, ordered = rt.invoke(signed, "Warehouse.order", {"product_id": "P00001"})
    # the state is split into sub-parts, and a write replaces only the ones it touched
    assert len(signed.payload) > 20
    changed = {p.name for p in ordered.payload} ^ {p.name for p in signed.payload} | {
        p.name for p, q in zip(ordered.payload, signed.payload) if p.key != q.key
    }
    assert changed == {"Warehouse:products#0", "Warehouse:orders#9"}
    t0 = time.perf_counter()
    for i in range(8):
        assert rt.invoke(signed, "Warehouse.order", {"product_id": f"P{i * 700:05d}"})[0].ok
    write_s = (time.perf_counter() - t0) / 8
    t0 = time.perf_counter()
    for i in range(8):
        rt.invoke(ordered, "Warehouse.get_product", {"product_id": f"P{i:05d}"})
    read_s = (time.perf_counter() - t0) / 8
    print(f"\n{size_mb:.1f} MB state: {write_s * 1000:.1f} ms per write, {read_s * 1000:.1f} ms per read")
    # generous: the whole-state runtime took ~0.4 s per write on this toy; measurements are in benchmarks/
    assert write_s < 0.25


def test_chunked_views_and_diffs_equal_whole_ones() -> None:
    rt = PythonRuntime(classes=[Warehouse], init_kwargs={"Warehouse": {"n_products": 700}}, trusted=True)
    s0 = rt.fresh()
    assert rt.view(s0)["Warehouse"] == object_view(Warehouse(700))
    _, s1 = rt.invoke(s0, "Warehouse.sign_in", {"user": "ann"})
    steps = [
        ("Warehouse.order", {"product_id": "P00300"}),
        ("Warehouse.discontinue", {"product_id": "P00100"}),
        ("Warehouse.order", {"product_id": "P00699"}),
    ]
    state = s1
    for tool, args in steps:
        rec, new = rt.invoke(state, tool, args)
        assert rec.ok
        assert rec.state_changes == {"Warehouse": diff_views(rt.view(state)["Warehouse"], rt.view(new)["Warehouse"])}
        state = new
    removed = rt.invoke(s1, "Warehouse.discontinue", {"product_id": "P00100"})[0].state_changes["Warehouse"]
    assert list(removed["removed"]) == ["products.P00100"] and not removed["changed"] and not removed["added"]
    # going back and forth between states rebuilds the live object correctly
    assert rt.invoke(s0, "Warehouse.get_product", {"product_id": "P00100"})[0].ok
    assert rt.invoke(state, "Warehouse.get_product", {"product_id": "P00100"})[0].status == "rejected"
    assert (
        rt.invoke(s1, "Warehouse.get_product", {"product_id": "P00300"})[0].output == Warehouse(700).products["P00300"]
    )


def test_attributes_that_share_objects_stay_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    from libra.runtime.python import snapshot

    monkeypatch.setattr(snapshot, "SPLIT_BYTES", 0)  # split even this small object
    rt = PythonRuntime(classes=[Folders], trusted=True)
    s0 = rt.fresh()
    assert [p.name for p in s0.payload[1:]] == ["Folders:root,here", "Folders:history"]
    _, s1 = rt.invoke(s0, "Folders.make", {"name": "a"})
    _, s2 = rt.invoke(s1, "Folders.enter", {"name": "a"})
    rt.invoke(s0, "Folders.make", {"name": "b"})  # the live object now holds another state
    rt2 = PythonRuntime(classes=[Folders], trusted=True)  # and this one starts from bytes
    for runtime in (rt, rt2):
        rec, s3 = runtime.invoke(s2, "Folders.write", {"file_name": "f", "text": "hi"})
        assert rec.state_changes == {
            "Folders": {"changed": {}, "added": {"root.children.a.files.f": "hi"}, "removed": {}}
        }
        assert runtime.invoke(s3, "Folders.tree", {})[0].output == {"/a/f": "hi"}


class _Loop:
    """Big enough to be split, but reachable from its own attribute."""

    def __init__(self) -> None:
        self.me = self
        self.data = list(range(30000))

    def grow(self) -> int:
        self.data.append(len(self.data))
        return len(self.data)


class _Small:
    def __init__(self) -> None:
        self.a, self.b = [1], {"x": 2}

    def put(self, v: int) -> None:
        self.a.append(v)


def test_self_referencing_and_small_instances_stay_whole() -> None:
    rt = PythonRuntime(classes=[_Loop, _Small])
    s0 = rt.fresh()
    assert [p.name for p in s0.payload[1:]] == ["_Loop", "_Small"]
    rec, s1 = rt.invoke(s0, "_Loop.grow", {})
    assert rec.output == 30001 and rec.state_changes == {
        "_Loop": {"changed": {}, "added": {"data[30000]": 30000}, "removed": {}}
    }
    assert rt.invoke(s1, "_Loop.grow", {})[0].output == 30002 and rt.invoke(s0, "_Loop.grow", {})[0].output == 30001
    rec, _ = rt.invoke(s0, "_Small.put", {"v": 5})
    assert rec.state_changes == {"_Small": {"changed": {}, "added": {"a[1]": 5}, "removed": {}}}


# -- views of array-like and slotted values ---------------------------------------------------------------------
class _Frame:
    """Stands in for a DataFrame: a ``shape``, a truncated repr, and its content through ``to_dict()``."""

    def __init__(self, rows: list[int]) -> None:
        self._rows = list(rows)
        self.shape = (len(rows), 1)

    def __repr__(self) -> str:
        return f"<frame {self.shape[0]} rows: {self._rows[:3]} ...>"

    def to_dict(self) -> dict[str, dict[int, int]]:
        return {"value": dict(enumerate(self._rows))}


class _Point:
    __slots__ = ("x", "y")

    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


def test_array_like_and_slotted_values_are_viewed_by_content() -> None:
    class Holder:
        def __init__(self, frame: _Frame, point: _Point) -> None:
            self.frame, self.point = frame, point

    a = object_view(Holder(_Frame(list(range(600))), _Point(1, 2)))
    b = object_view(Holder(_Frame([*range(500), -1, *range(501, 600)]), _Point(1, 3)))
    assert a["frame"] == {"value": {str(i): i for i in range(600)}} and a["point"] == {"x": 1, "y": 2}
    assert content_hash(a["frame"]) != content_hash(b["frame"]) and a["point"] != b["point"]
    assert diff_views(a, b)["changed"] == {
        'frame.value["500"]': {"before": 500, "after": -1},
        "point.y": {"before": 2, "after": 3},
    }


# -- design item: the rejection rule is a hook ------------------------------------------------------------------
class _Api:
    def refuse(self) -> dict:
        return {"error": "no"}

    def flag(self) -> dict:
        return {"ok": False, "message": "quota exceeded"}


def test_rejection_is_a_replaceable_hook() -> None:
    from libra.runtime.python.runtime import error_key_rejection

    assert status_of({"error": "x"}) == ("rejected", "x") and error_key_rejection({"a": 1}) is None
    default = PythonRuntime(classes=[_Api])
    assert default.invoke(default.fresh(), "_Api.refuse", {})[0].status == "rejected"
    assert default.invoke(default.fresh(), "_Api.flag", {})[0].status == "success"
    off = PythonRuntime(classes=[_Api], rejection=None)
    assert off.invoke(off.fresh(), "_Api.refuse", {})[0].status == "success"

    def flagged(out: Any) -> str | None:
        return out.get("message") if isinstance(out, dict) and out.get("ok") is False else None

    own = PythonRuntime(classes=[_Api], rejection=flagged)
    rec = own.invoke(own.fresh(), "_Api.flag", {})[0]
    assert (rec.status, rec.error) == ("rejected", "quota exceeded")
    assert own.invoke(own.fresh(), "_Api.refuse", {})[0].status == "success"


def test_state_holder_must_be_a_pair() -> None:
    from libra.runtime.base import ToolRuntimeError

    with pytest.raises(ToolRuntimeError, match="state holder"):
        PythonRuntime(classes=[_Api], state_holders={"ctx": (lambda: 1,)})  # type: ignore[dict-item]


def _random_walk(split: bool, seed: int, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    from libra.runtime.python import snapshot

    monkeypatch.setattr(snapshot, "SPLIT_BYTES", 0 if split else 10**12)
    rt = PythonRuntime(classes=[Warehouse, Folders], init_kwargs={"Warehouse": {"n_products": 300}})
    rng = random.Random(seed)
    ops = [
        ("Warehouse.sign_in", lambda: {"user": rng.choice(["a", "b"])}),
        ("Warehouse.order", lambda: {"product_id": f"P{rng.randrange(310):05d}", "quantity": rng.randint(1, 3)}),
        ("Warehouse.discontinue", lambda: {"product_id": f"P{rng.randrange(310):05d}"}),
        ("Warehouse.get_product", lambda: {"product_id": f"P{rng.randrange(310):05d}"}),
        ("Folders.make", lambda: {"name": rng.choice("abc")}),
        ("Folders.enter", lambda: {"name": rng.choice("abc")}),
        ("Folders.write", lambda: {"file_name": rng.choice("xy"), "text": rng.choice(["1", "2"])}),
        ("Folders.tree", dict),
    ]
    states, log, ids = [rt.fresh()], [], {}
    for _ in range(250):
        state = rng.choice(states[-6:] + states[:2])  # revisit old states, so live objects are patched back
        tool, make_args = rng.choice(ops)
        rec, new = rt.invoke(state, tool, make_args())
        log.append(
            (
                ids.setdefault(state.fingerprint, len(ids)),
                tool,
                rec.to_dict() | {"duration_ms": 0},
                ids.setdefault(new.fingerprint, len(ids)),
            )
        )
        if new != state:
            states.append(new)
    return log, [rt.view(s) for s in states[-5:]]


def test_split_states_behave_exactly_like_whole_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Differential check: the same random walk (with revisits, deletions that shift chunks, shared folders) gives
    the same records, views and state identities whether states are split or pickled whole (uuids aside: their
    seed includes the part keys, which differ between the two layouts)."""
    import json
    import re

    uuid_re = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

    def norm(x: Any) -> str:
        return uuid_re.sub("U", json.dumps(x, sort_keys=True, default=str))

    split = _random_walk(True, 3, monkeypatch)
    whole = _random_walk(False, 3, monkeypatch)
    assert len({entry[3] for entry in split[0]}) > 50  # the walk reaches many distinct states
    assert norm(split) == norm(whole)


def _ledger_walk(
    mode: str, seed: int, rare: bool, monkeypatch: pytest.MonkeyPatch, moves: bool = True
) -> tuple[list[Any], list[Any]]:
    """A random walk over :class:`Ledger` with revisits; ``mode``: ``watch`` (split, writes watched), ``compare``
    (split, chunks compared with copies) or ``whole`` (one pickle per call: the reference). ``moves``: include
    re-inserting a record at the end, which a split state counts as a change (its chunks' order changed) and a
    whole one does not (views compare dicts regardless of order)."""
    from libra.runtime.python import snapshot

    monkeypatch.setattr(snapshot, "SPLIT_BYTES", 10**12 if mode == "whole" else 0)
    monkeypatch.setattr(snapshot, "WATCH", mode == "watch")
    rt = PythonRuntime(classes=[Ledger])
    rng = random.Random(seed)

    def acct():
        return f"A{rng.randrange(720):04d}"

    ops = [
        ("Ledger.balance", lambda: {"account": acct()}),
        ("Ledger.deposit", lambda: {"account": acct(), "amount": rng.randint(1, 3)}),
        ("Ledger.note", lambda: {"account": acct(), "value": rng.randint(1, 3)}),
        ("Ledger.open_account", dict),
        ("Ledger.close_account", lambda: {"account": acct()}),
        ("Ledger.move_to_end" if moves else "Ledger.balance", lambda: {"account": acct()}),
        ("Ledger.sort_history", lambda: {"account": acct()}),
        ("Ledger.push_job", lambda: {"priority": rng.randrange(100)}),
        ("Ledger.replace_job", lambda: {"priority": rng.randrange(100)}),
        ("Ledger.rebuild_queue", dict),
        ("Ledger.total", dict),
    ]
    # these end the watch of the accounts (for a while, or for good), so they come late, each followed by writes
    # through the records they touched: two records of one chunk share a list, then two of different chunks, then
    # a set is stored
    late = [
        ("Ledger.share_history", {"account": "A0005", "other": "A0006"}),
        ("Ledger.note", {"account": "A0006", "value": 7}),
        ("Ledger.note", {"account": "A0005", "value": 6}),
        ("Ledger.share_history", {"account": "A0003", "other": "A0400"}),
        ("Ledger.note", {"account": "A0400", "value": 9}),
        ("Ledger.note", {"account": "A0003", "value": 8}),
        ("Ledger.tag", {"account": "A0500", "label": "x"}),
        ("Ledger.deposit", {"account": "A0500", "amount": 2}),
    ]
    states, log, ids = [rt.fresh()], [], {}
    for step in range(160):
        state = rng.choice(states[-6:] + states[:2])
        tool, make_args = rng.choice(ops)
        args = make_args()
        if rare and 100 <= step < 100 + len(late):
            state, (tool, args) = states[-1], late[step - 100]
        rec, new = rt.invoke(state, tool, args)
        log.append(
            (
                ids.setdefault(state.fingerprint, len(ids)),
                tool,
                rec.to_dict() | {"duration_ms": 0},
                ids.setdefault(new.fingerprint, len(ids)),
            )
        )
        if new != state:
            states.append(new)
    return log, [rt.view(s) for s in states[-5:]]


@pytest.mark.parametrize("rare", [False, True])
def test_watched_writes_give_the_states_whole_pickles_give(rare: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Differential check of the write watch: nested writes, inserts, deletions that shift chunks, moves, in-place
    sorts, ``heapq`` writing a list from C, rebinding; then (``rare``) sharing across chunks and an unwatchable
    set. Records, views and state identities equal those of whole pickles and of the copy-and-compare check."""
    import json

    def dump(x):
        return json.dumps(x, sort_keys=True, default=str)

    watched = _ledger_walk("watch", 5, rare, monkeypatch)
    assert len({entry[3] for entry in watched[0]}) > 60  # the walk reaches many distinct states
    assert dump(watched) == dump(_ledger_walk("compare", 5, rare, monkeypatch))
    still = _ledger_walk("watch", 6, rare, monkeypatch, moves=False)
    assert dump(still) == dump(_ledger_walk("whole", 6, rare, monkeypatch, moves=False))


def test_watched_containers_act_as_plain_ones() -> None:
    """A watched dict/list is a dict/list for its users and pickles, copies and serialises as a plain one."""
    import copy
    import json

    from libra.runtime.python import watch

    w = watch.watch({f"k{i}": {"n": [i]} for i in range(300)}, 128)
    d = w.container
    assert (
        isinstance(d, dict)
        and d == {f"k{i}": {"n": [i]} for i in range(300)}
        and json.loads(json.dumps(d))["k3"] == {"n": [3]}
    )
    for made in (pickle.loads(pickle.dumps(d)), copy.deepcopy(d), copy.copy(d), dict(d)):
        assert type(made) is dict and made == d
    assert type(pickle.loads(pickle.dumps(d))["k1"]["n"]) is list
    watch.drain()
    assert not w.dirty and not w.top
    _ = d["k5"]["n"][0], list(d.values()), d.get("k200")  # reads report nothing
    watch.drain()
    assert not w.dirty and not w.top
    d["k200"]["n"].append(1)  # chunk 1
    d["k7"].update(x=1)  # chunk 0
    watch.drain()
    assert w.dirty == {0, 1} and not w.top
    d.pop("k0")
    watch.drain()
    assert w.top and w.written(d) == {0, 1, 2}  # the deletion shifted every chunk
    with pytest.raises(watch.Unwatchable):
        watch.watch({"a": {1, 2}}, 128)


# -- BFCL behaves as before -------------------------------------------------------------------------------------
BFCL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("GorillaFileSystem.ls", {}),
    ("GorillaFileSystem.pwd", {}),
    ("GorillaFileSystem.touch", {"file_name": "a.txt"}),
    ("GorillaFileSystem.mkdir", {"dir_name": "d"}),
    ("GorillaFileSystem.cd", {"folder": "d"}),
    ("GorillaFileSystem.echo", {"content": "hi", "file_name": "a.txt"}),
    ("GorillaFileSystem.cat", {"file_name": "a.txt"}),
    ("GorillaFileSystem.rm", {"file_name": "a.txt"}),
    ("MathAPI.add", {"a": 3, "b": 4}),
    ("VehicleControlAPI.lockDoors", {"unlock": False, "door": ["driver"]}),
    ("VehicleControlAPI.startEngine", {"ignitionMode": "START"}),
    ("VehicleControlAPI.pressBrakePedal", {"pedalPosition": 1.0}),
    ("TradingBot.get_watchlist", {}),
    ("TradingBot.add_to_watchlist", {"stock": "AAPL"}),
    ("TradingBot.get_current_time", {}),
    ("TwitterAPI.authenticate_twitter", {"username": "john", "password": "john123"}),
    ("TwitterAPI.post_tweet", {"content": "x"}),
    ("TicketAPI.create_ticket", {"title": "t", "description": "d"}),
    ("TicketAPI.get_ticket", {"ticket_id": 1}),
    ("MessageAPI.list_users", {}),
    ("MessageAPI.message_login", {"user_id": "USR001"}),
    ("MessageAPI.send_message", {"receiver_id": "USR002", "message": "m"}),
    ("TravelAPI.list_all_airports", {}),
    (
        "TravelAPI.authenticate_travel",
        {
            "client_id": "c",
            "client_secret": "s",
            "refresh_token": "r",
            "grant_type": "read_write",
            "user_first_name": "A",
            "user_last_name": "B",
        },
    ),
]


def bfcl_walk(rt: Any) -> list[Any]:
    """Every call above from the fresh state, then from the first 8 states those calls changed: (state number,
    tool, record without its duration, next state number), state numbers in order of first appearance."""
    ids: dict[str, int] = {}
    out: list[Any] = []
    frontier = [rt.fresh()]
    ids[frontier[0].fingerprint] = 0
    for depth in range(2):
        nxt = []
        for s in frontier:
            for tool, args in BFCL_CALLS:
                rec, s2 = rt.invoke(s, tool, args)
                d = rec.to_dict()
                d.pop("duration_ms")
                out.append([ids.setdefault(s.fingerprint, len(ids)), tool, d, ids.setdefault(s2.fingerprint, len(ids))])
                if depth == 0 and s2 != s:
                    nxt.append(s2)
        frontier = nxt[:8]
    return out


@needs_bfcl
def test_bfcl_records_and_states_are_as_before() -> None:
    import json
    from pathlib import Path

    from libra.benchmarks.bfcl.runtime import make_bfcl_runtime

    golden = json.loads((Path(__file__).parent / "fixtures" / "bfcl_walk_before.json").read_text())["records"]
    now = json.loads(json.dumps(bfcl_walk(make_bfcl_runtime()), sort_keys=True, default=str))
    assert len(now) == len(golden) == 216
    assert now == golden


def test_path_keys_reads_back_what_key_path_and_index_path_wrote():
    from libra.runtime.diff import index_path, key_path, path_keys

    keys = ["orders", "12446", 'a b"c', "new.txt", "price"]
    path = ""
    for k in keys:
        path = key_path(path, k)
    path = index_path(path, 3)
    assert path_keys(path) == keys + ["3"]
    assert path_keys('root.contents["new.txt"].content') == ["root", "contents", "new.txt", "content"]
