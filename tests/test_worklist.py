"""The packed worklist (libra.induction.explore.worklist): same pop order as heaps of tuples, round trips,
checkpoints."""

from __future__ import annotations

import gzip
import heapq
import pickle
import random
from pathlib import Path

import pytest

from libra.contracts.check import check_contracts
from libra.induction.candidates import candidate_compositions
from libra.induction.config import BuildConfig
from libra.induction.explore.engine import Engine
from libra.induction.explore.worklist import Item, ItemCodec, PackedHeap, PackedQueue, order_key

from .conftest import needs_bfcl
from .induction_toys import ShopBenchmark


def _random_item(rng: random.Random) -> Item:
    fixed = () if rng.random() < 0.3 else ((rng.choice(["id", "name", "path", "x"]), rng.randrange(1 << 40)),)
    return Item(
        rng.randrange(1 << 40),
        rng.choice(["A.get", "B.put", "C.rm"]),
        rng.randrange(50),
        fixed,
        rng.random() < 0.5,
        rng.random() < 0.5,
        rng.choice(["", "folder", "leaf"]),
    )


def test_items_round_trip_through_the_codec() -> None:
    rng = random.Random(1)
    codec = ItemCodec()
    items = [_random_item(rng) for _ in range(2000)] + [Item(0, "A.get", 0), Item(3, "", 0, (("", 0),))]
    assert [codec.unpack(codec.pack(it)) for it in items] == items


def test_heap_pops_in_the_order_of_a_heap_of_tuples() -> None:
    """Priorities as the engine makes them (rounded similarities, ties, signed zeros, the state tests' 2.0), pushed
    and popped interleaved: the packed heap returns exactly what ``heapq`` over (priority, seq, item) returns."""
    rng = random.Random(7)
    codec = ItemCodec()
    packed = PackedHeap(codec)
    reference: list[tuple[float, int, Item]] = []
    choices = [0.0, -0.0, -2.0, 1.0, -1.0, 0.5, -0.5, 3e-7, -3e-7, float("inf"), float("-inf")]
    got, want = [], []
    for seq in range(1, 5000):
        sim = rng.choice(choices) if rng.random() < 0.3 else rng.uniform(-1.0, 1.0)
        prio = -round(float(sim), 6)
        item = _random_item(rng)
        packed.push(prio, seq, item)
        heapq.heappush(reference, (prio, seq, item))
        if rng.random() < 0.4:
            got.append(packed.pop())
            want.append(heapq.heappop(reference)[2])
    assert len(packed) == len(reference) and bool(packed)
    while reference:
        got.append(packed.pop())
        want.append(heapq.heappop(reference)[2])
    assert got == want and not packed


def test_queue_is_first_in_first_out_and_peeks_without_popping() -> None:
    rng = random.Random(3)
    queue = PackedQueue(ItemCodec())
    items = [_random_item(rng) for _ in range(100)]
    for it in items:
        queue.append(it)
    assert queue.peek() == items[0] and len(queue) == 100
    assert [queue.popleft() for _ in range(100)] == items and not queue


def test_order_key_orders_floats_like_floats() -> None:
    xs = sorted(
        [0.0, 1.0, -1.0, 2.0, -2.0, 1e-300, -1e-300, 1e300, -1e300, float("inf"), float("-inf"), 0.123456, -0.123457]
    )
    keys = [order_key(x) for x in xs]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert order_key(-0.0) == order_key(0.0)


@pytest.mark.parametrize(
    "item, message",
    [
        (Item(0, "A", 0, (("a", 1), ("b", 2))), "at most one input"),
        (Item(1 << 40, "A", 0), "node"),
        (Item(0, "A", -1), "template"),
        (Item(0, "A", 0, (("a", 1 << 40),)), "vid"),
    ],
)
def test_items_that_do_not_fit_are_refused(item: Item, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ItemCodec().pack(item)


def test_nan_priorities_and_oversized_sequences_are_refused() -> None:
    heap = PackedHeap(ItemCodec())
    with pytest.raises(ValueError, match="NaN"):
        heap.push(float("nan"), 1, Item(0, "A", 0))
    with pytest.raises(ValueError, match="sequence"):
        heap.push(0.0, 1 << 64, Item(0, "A", 0))
    assert not heap


def _engine(path: Path) -> Engine:
    bench = ShopBenchmark()
    catalog, runtime = bench.catalog(), bench.runtime()
    contracts = check_contracts(catalog, runtime).contracts
    return Engine(
        catalog,
        runtime,
        contracts,
        candidate_compositions(catalog, contracts),
        lambda a, b: float(a == b),
        BuildConfig(batch_size=4),
        memo_path=path,
    )


def _drain(engine: Engine) -> list[Item | None]:
    out = []
    while engine._pending():
        out.append(engine._pop())
    return out


def test_a_checkpoint_keeps_the_worklist_and_its_order(tmp_path: Path) -> None:
    """A checkpoint taken mid-build restores a worklist that pops the same items in the same order (the codec's
    interned names travel with it); a checkpoint of another layout is refused rather than misread."""
    first = _engine(tmp_path / "a.sqlite")
    first.start()
    for _ in range(3):
        assert first.step()
    assert len(first.queue) + len(first.far) > 0 and len(first.probes) + len(first.near_probes) > 0
    first.checkpoint(tmp_path / "run.ckpt", "id", 1.0)
    again = _engine(tmp_path / "a.sqlite")
    assert again.restore(tmp_path / "run.ckpt", "id")
    assert again.queue.codec is again.far.codec is again.probes.codec is again.near_probes.codec
    assert again.enqueued == first.enqueued
    assert _drain(again) == _drain(first)

    with gzip.open(tmp_path / "run.ckpt", "rb") as fh:
        payload = pickle.load(fh)
    payload.pop("format")
    with gzip.open(tmp_path / "old.ckpt", "wb") as fh:
        pickle.dump(payload, fh)
    assert not _engine(tmp_path / "a.sqlite").restore(tmp_path / "old.ckpt", "id")
    first.close(remove=True)
    again.close(remove=True)


class _FullHeap(PackedHeap):
    """The heap before spent items were left out: it holds every item pushed (the reference to compare with)."""

    def push(self, priority: float, seq: int, item: Item, spent: bool = False) -> None:
        super().push(priority, seq, item)

    def discard(self, dead) -> int:  # type: ignore[no-untyped-def]
        return 0


def _take(heap: PackedHeap, dead: set[str], want: int) -> list[Item]:
    """What the engine's wave selection takes: pop until ``want`` live items or the heap is empty, dropping
    spent items (and the None of a heap that left them out)."""
    out: list[Item] = []
    while heap and len(out) < want:
        item = heap.pop()
        if item is not None and item.tool not in dead:
            out.append(item)
    return out


def test_a_heap_that_leaves_spent_items_out_selects_as_if_it_held_them() -> None:
    """Waves of selections with interleaved pushes, tools whose budget is spent one after another (pushed
    spent, or discarded later): the same live items in the same order, and the heap is true exactly when the
    full heap still holds something, after every wave."""
    rng = random.Random(11)
    codec = ItemCodec()
    lean, full = PackedHeap(codec), _FullHeap(codec)
    tools = [f"T{i}.run" for i in range(12)]
    dead: set[str] = set()
    seq = left_out = fewer = 0
    for wave in range(300):
        for _ in range(rng.randrange(0, 40)):
            seq += 1
            item = Item(
                rng.randrange(100),
                rng.choice(tools),
                rng.randrange(3),
                (("x", rng.randrange(1000)),),
                rng.random() < 0.1,
            )
            prio = -round(rng.choice([0.5, 1.0, rng.random()]), 6)
            spent = item.tool in dead
            left_out += spent
            lean.push(prio, seq, item, spent=spent)
            full.push(prio, seq, item)
        if rng.random() < 0.15 and len(dead) < len(tools) - 1:
            dead.add(rng.choice(tools))
        if rng.random() < 0.3:
            left_out += lean.discard(lambda it: it.tool in dead)
        want = rng.randrange(1, 30)
        assert _take(lean, dead, want) == _take(full, dead, want)
        assert bool(lean) == bool(full), wave
        fewer = max(fewer, len(full) - len(lean))
    assert left_out > 100 and fewer > 20
    while full:
        assert _take(lean, dead, 50) == _take(full, dead, 50)
        assert bool(lean) == bool(full)


def test_discard_asks_once_per_kind_of_item_and_keeps_the_rest_in_order() -> None:
    codec = ItemCodec()
    heap = PackedHeap(codec)
    items = [Item(n, tool, 0, (("x", n),)) for n in range(200) for tool in ("A.get", "B.put")]
    for seq, item in enumerate(items, 1):
        heap.push(-(seq % 7) / 7, seq, item)
    asked: list[Item] = []
    assert heap.discard(lambda it: asked.append(it) or it.tool == "B.put") == 200
    assert sorted(it.tool for it in asked) == ["A.get", "B.put"]  # one question per (tool, template, flags)
    reference = sorted((-(seq % 7) / 7, seq) for seq, it in enumerate(items, 1) if it.tool == "A.get")
    assert [heap.pop() for _ in range(200)] == [items[seq - 1] for _p, seq in reference]
    assert heap.pop() is None and not heap  # the left-out items come last here: the full heap would pop them now


def _build(full: bool, tmp: Path) -> tuple[Engine, list[int]]:
    """A build of BFCL's file system whose budgets run out early (so offers queue behind spent ones), swept for
    spent items after every wave; with ``full`` the heaps hold every item instead."""
    from libra.benchmarks.bfcl.adapter import load_catalog
    from libra.benchmarks.bfcl.runtime import make_bfcl_runtime
    from libra.catalog import Catalog

    catalog = Catalog([t for t in load_catalog() if t.group == "GorillaFileSystem"], name="bfcl-files")
    runtime = make_bfcl_runtime(catalog=catalog, isolated=False)
    contracts = check_contracts(catalog, runtime).contracts
    config = BuildConfig(batch_size=8, max_calls_per_tool=3, number_offers_per_tool=1, max_calls=400)
    engine = Engine(
        catalog,
        runtime,
        contracts,
        candidate_compositions(catalog, contracts),
        lambda a, b: float(a == b),
        config,
        memo_path=tmp / ("full" if full else "lean"),
    )
    engine.DISCARD_AT = 1  # type: ignore[misc]
    if full:
        engine.queue, engine.far = _FullHeap(engine.queue.codec), _FullHeap(engine.far.codec)
    engine.start()
    held = []
    while engine.step():
        held.append(len(engine.queue) + len(engine.far))
    runtime.close()
    return engine, held


@needs_bfcl
def test_leaving_spent_offers_out_changes_nothing_a_build_does(tmp_path: Path) -> None:
    """A real build with and without the spent offers held: the same calls, counters (waves included: a worklist
    of spent items only still takes a wave to drain) and relations."""
    (lean, lean_held), (full, full_held) = _build(False, tmp_path), _build(True, tmp_path)
    assert lean.counters == full.counters
    assert [(c.node, c.tool, c.args) for c in lean.calls] == [(c.node, c.tool, c.args) for c in full.calls]
    assert sorted(map(repr, lean.relations)) == sorted(map(repr, full.relations)) and lean.relations
    # the lean build did leave items out, wave after wave
    assert len(lean_held) == len(full_held) and sum(f - h for h, f in zip(lean_held, full_held)) > 100
    assert all(h <= f for h, f in zip(lean_held, full_held))
    lean.close(remove=True)
    full.close(remove=True)
