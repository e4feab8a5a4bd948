"""One memo of invocations for contract checking and the exploration, so the two are one exploration.

A build's checking and its exploration walk the same sandbox; they call through one store keyed by (state, tool,
arguments), so the exploration never runs again a call checking made, and concludes exactly what it would have
concluded running it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from libra.contracts.check import check_contracts
from libra.induction.build import BuildOptions, build_library
from libra.induction.candidates import candidate_compositions
from libra.induction.config import BuildConfig
from libra.induction.explore.engine import Engine
from libra.probing.memo import MemoStore, memo_key
from libra.probing.nodes import Node, child, lineage
from libra.runtime.base import State

from .induction_toys import Counted, PortalBenchmark, ShopBenchmark, SplitShopBenchmark


def _edges(relations) -> set[tuple]:
    return {(r.provider, r.consumer, r.kind, r.provider_field, r.consumer_input) for r in relations}


def _similarity(a: str, b: str) -> float:  # fixed, so two explorations are comparable
    return 1.0 if a == b else 0.5


def _explore(bench: Any, tmp: Path, shared: bool) -> tuple[Engine, Counted, Any]:
    """Check contracts and explore, through one store (``shared``) or, as before, through two."""
    catalog = bench.catalog()
    runtime = Counted(bench.runtime())
    fixtures = bench.fixtures() if hasattr(bench, "fixtures") else {}
    memo = MemoStore(tmp / "memo.sqlite")
    summary = check_contracts(catalog, runtime, None, fixtures=fixtures, memo=memo if shared else None)
    contracts = summary.contracts
    engine = Engine(
        catalog,
        runtime,
        contracts,
        candidate_compositions(catalog, contracts),
        _similarity,
        BuildConfig(batch_size=8),
        fixtures=fixtures,
        memo=memo,
    )
    engine.start(reuse=summary.memo_keys if shared else ())
    while engine.step():
        pass
    return engine, runtime, summary


def test_the_exploration_takes_over_the_calls_checking_made(tmp_path: Path) -> None:
    for i, bench in enumerate((ShopBenchmark(), SplitShopBenchmark(), PortalBenchmark())):
        (tmp_path / f"a{i}").mkdir()
        (tmp_path / f"b{i}").mkdir()
        one, rt_one, sum_one = _explore(bench, tmp_path / f"a{i}", shared=True)
        two, rt_two, sum_two = _explore(bench, tmp_path / f"b{i}", shared=False)
        # what each phase concludes is the same: contracts after revision, relations, and every budget count
        assert {k: c.to_dict() for k, c in sum_one.contracts.items()} == {
            k: c.to_dict() for k, c in sum_two.contracts.items()
        }
        assert _edges(one.result()) == _edges(two.result()) and one.result()
        saved = one.counters.pop("calls_from_checking")
        assert two.counters.pop("calls_from_checking") == 0
        assert one.counters == two.counters
        # ...but the calls checking made were not run again: the runtime ran exactly that many fewer
        assert saved > 0
        assert rt_one.invoked == rt_two.invoked - saved
        assert sum_one.calls == len(sum_one.memo_keys)
        # the store holds checking's calls, the exploration's new ones and the retries' (less those the
        # exploration made after a retry made them first), each once
        retried = one.counters["calls_retries"] - one.counters.get("calls_from_retries", 0)
        assert len(one.memo) == sum_one.calls + one.counters["executed_calls"] - saved + retried
        one.close(remove=True)
        two.close(remove=True)


def test_checking_over_a_store_that_saw_its_calls_runs_none_and_concludes_the_same(tmp_path: Path) -> None:
    bench = PortalBenchmark()
    memo = MemoStore(tmp_path / "memo.sqlite")
    first_rt, again_rt = Counted(bench.runtime()), Counted(bench.runtime())
    first = check_contracts(bench.catalog(), first_rt, fixtures=bench.fixtures(), memo=memo)
    again = check_contracts(bench.catalog(), again_rt, fixtures=bench.fixtures(), memo=memo)
    assert first.calls == first_rt.invoked > 0
    assert again.calls == again_rt.invoked == 0
    assert again.memo_hits == first.calls + first.memo_hits
    assert again.memo_keys == first.memo_keys
    assert {k: c.to_dict() for k, c in again.contracts.items()} == {k: c.to_dict() for k, c in first.contracts.items()}
    assert again.to_dict() | {"calls": 0, "memo_hits": 0} == first.to_dict() | {"calls": 0, "memo_hits": 0}
    memo.close(remove=True)


def test_retain_keeps_the_given_rows_in_their_order(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "memo.sqlite")
    keys = [memo_key(State("f0"), "T.op", {"n": i}) for i in range(4)]
    store.put_many((k, {"status": "success", "output": i}, State(f"s{i}")) for i, k in enumerate(keys))
    assert store.retain([keys[3], keys[1], ("nowhere", "T.op", "{}")]) == 2
    assert [rec["output"] for rec, _s in store.values()] == [1, 3]
    assert keys[0] not in store and store.get(keys[3])[0]["output"] == 3
    # the rows are numbered afresh: a checkpoint that saw one row keeps the first of them
    assert store.truncate(1) and [rec["output"] for rec, _s in store.values()] == [1]
    store.close(remove=True)


def test_a_store_claimed_for_another_scope_starts_empty(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "memo.sqlite")
    assert not store.claim("catalog-a")  # a new store has no scope yet
    store.put_many([(memo_key(State("f0"), "T.op", {}), {"status": "success"}, State("s1"))])
    assert store.claim("catalog-a") and len(store) == 1
    store.close()
    store = MemoStore(tmp_path / "memo.sqlite")
    assert not store.claim("catalog-b") and len(store) == 0
    store.close(remove=True)


def test_nodes_record_values_and_their_lineage() -> None:
    class V:
        def __init__(self, id: int, value: Any) -> None:
            self.id, self.tool, self.export, self.value = id, "T.op", "token", value

    nodes: list[Node] = []
    a = child(nodes, None, State("a"), creator=0)
    b = child(nodes, a.id, State("b"), creator=1)
    assert (
        (a.depth, b.depth) == (1, 2)
        and [n.id for n in lineage(nodes, b.id)] == [b.id, a.id]
        and lineage(nodes, None) == []
    )
    b.add(V(0, "t0"))
    b.replace([V(1, "t1")])
    assert b.values == [1] and b.by_key == {("T.op", "token"): [1]} and '"t1"' in b.known and '"t0"' not in b.known


def test_a_build_reports_the_calls_checking_saved() -> None:
    lib = build_library(
        ShopBenchmark(),
        None,
        BuildOptions(workers=0, embedder="minilm", config=BuildConfig(batch_size=4), progress=False),
    )
    engine, contracts = lib.stats["engine"], lib.stats["contracts"]
    assert 0 < engine["calls_from_checking"] <= contracts["calls"] < engine["executed_calls"]
    assert "memo_hits" in contracts
    assert (
        lib.stats["memo_store"]["rows"] == contracts["calls"] + engine["executed_calls"] - engine["calls_from_checking"]
    )
