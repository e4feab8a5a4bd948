"""The packed worklist (libra.induction.worklist): same pop order as heaps of tuples, round trips, checkpoints."""

from __future__ import annotations

import gzip
import heapq
import pickle
import random
from pathlib import Path

import pytest

from libra.contracts.check import check_contracts
from libra.induction.candidates import candidate_compositions
from libra.induction.engine import BuildConfig, Engine
from libra.induction.worklist import Item, ItemCodec, PackedHeap, PackedQueue, order_key

from .induction_toys import ShopBenchmark


def _random_item(rng: random.Random) -> Item:
    fixed = () if rng.random() < 0.3 else ((rng.choice(["id", "name", "path", "x"]), rng.randrange(1 << 40)),)
    return Item(rng.randrange(1 << 40), rng.choice(["A.get", "B.put", "C.rm"]), rng.randrange(50), fixed,
                rng.random() < 0.5, rng.random() < 0.5, rng.choice(["", "folder", "leaf"]))


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
    xs = sorted([0.0, 1.0, -1.0, 2.0, -2.0, 1e-300, -1e-300, 1e300, -1e300, float("inf"), float("-inf"), 0.123456, -0.123457])
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
    return Engine(catalog, runtime, contracts, candidate_compositions(catalog, contracts), lambda a, b: float(a == b), BuildConfig(batch_size=4), memo_path=path)


def _drain(engine: Engine) -> list[Item]:
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
