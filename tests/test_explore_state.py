"""The engine's one state (libra.induction.explore.state): every explored field is declared where the phases read
it, a checkpoint saves exactly the explored state and restores it whole, and a checkpoint of the older layout
(the explored state as loose names, format 4) starts afresh rather than being misread."""

from __future__ import annotations

import gzip
import pickle
from dataclasses import fields
from pathlib import Path

from libra.contracts.check import check_contracts
from libra.induction.candidates import candidate_compositions
from libra.induction.config import BuildConfig
from libra.induction.explore.checkpoint import CHECKPOINT_FORMAT
from libra.induction.explore.engine import Engine
from libra.induction.explore.state import EngineState, Explored

from .induction_toys import ShopBenchmark


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


def _digest(engine: Engine) -> tuple:
    return (
        [(c.node, c.tool, sorted(c.args.items())) for c in engine.calls],
        [(v.tool, v.export, repr(v.value), v.node, v.call) for v in engine.values],
        sorted(engine.relations, key=repr),
        dict(engine.counters),
        dict(engine.pair_tests),
        engine.enqueued,
        len(engine.seen_items),
    )


def test_every_explored_field_is_declared_on_the_engines_state() -> None:
    declared = EngineState.__annotations__
    assert {f.name for f in fields(Explored)} <= set(declared)
    engine = Engine.__new__(Engine)
    engine.adopt(Explored.fresh())
    assert engine.explored() == Explored(**{f.name: getattr(engine, f.name) for f in fields(Explored)})
    assert engine.queue.codec is engine.far.codec is engine.probes.codec is engine.near_probes.codec


def test_a_checkpoint_restores_the_explored_state_whole(tmp_path: Path) -> None:
    whole = _engine(tmp_path / "whole.sqlite")
    whole.start()
    while whole.step():
        pass
    first = _engine(tmp_path / "a.sqlite")
    first.start()
    for _ in range(3):
        assert first.step()
    first.checkpoint(tmp_path / "run.ckpt", "id", 1.0)
    again = _engine(tmp_path / "a.sqlite")
    assert again.restore(tmp_path / "run.ckpt", "id")
    assert _digest(again) == _digest(first)
    assert again.elapsed_before_resume == 1.0
    while again.step():
        pass
    assert _digest(again) == _digest(whole)  # and it goes on exactly as a build that was never stopped
    for engine in (whole, first, again):
        engine.close(remove=True)


def test_a_checkpoint_of_the_older_layout_is_refused(tmp_path: Path) -> None:
    first = _engine(tmp_path / "a.sqlite")
    first.start()
    assert first.step()
    first.checkpoint(tmp_path / "run.ckpt", "id", 1.0)
    with gzip.open(tmp_path / "run.ckpt", "rb") as fh:
        payload = pickle.load(fh)
    assert payload["format"] == CHECKPOINT_FORMAT
    old = dict(payload)
    old.update(vars(old.pop("explored")))  # the explored state as loose names, as format 4 kept it
    old["format"] = 4
    with gzip.open(tmp_path / "old.ckpt", "wb") as fh:
        pickle.dump(old, fh)
    again = _engine(tmp_path / "a.sqlite")
    assert not again.restore(tmp_path / "old.ckpt", "id")
    assert not again.restore(tmp_path / "run.ckpt", "other build")
    assert again.nodes == [] and not again.started  # nothing was loaded
    first.close(remove=True)
    again.close(remove=True)
