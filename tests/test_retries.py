"""The exploration's retries of failed calls (:mod:`libra.induction.explore.retries`): on their own budget and books, so
the exploration runs exactly the calls it runs without them and retries only add relations.

The catalog is the generalization suite's ``folders`` (a listing's ``path`` holds folders and files alike, and
an editor refuses the folder): two of its designed relations are found only when a failed edit is retried with
the file listed beside the folder.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from libra.contracts.check import check_contracts
from libra.induction.candidates import candidate_compositions
from libra.induction.config import DEFAULT_RETRY_SHARE, BuildConfig
from libra.induction.explore.engine import Engine
from libra.induction.explore.retries import retry_budget
from libra.probing.memo import MemoStore
from tests import generalization as gen

from .induction_toys import Counted

#: What the exploration itself did: the calls per part, its tests, its waves and items.
EXPLORATION = (
    "executed_calls",
    "calls_offers",
    "calls_probes",
    "calls_controls",
    "calls_sweeps",
    "calls_from_checking",
    "provenance_tests",
    "state_tests",
    "work_items",
    "waves",
    "memo_hits",
    "skipped_implied",
    "skipped_unfit",
)
#: Found only by retrying a failed edit with the file listed beside the folder (tests/generalization/folders.py).
#: (provider, consumer, consumer input), whatever field of the reader's reply the edit's text came from.
RETRY_ONLY = {
    ("folders.list_entries", "folders.edit_file", "path"),
    ("folders.read_file", "folders.edit_file", "edits"),
    # ...and by the usual control of the path beside an edit's placed text, on the same side books
    ("folders.write_file", "folders.edit_file", "path"),
}


def _similarity(a: str, b: str) -> float:  # fixed, so explorations are comparable
    return 1.0 if a == b else 0.5


def _engine(tmp: Path, max_retry_calls: int | None) -> tuple[Engine, Counted]:
    importlib.reload(gen.load("folders"))
    runtime = Counted(gen.make_runtime("tests.generalization.folders"))
    catalog = runtime.runtime.catalog
    memo = MemoStore(tmp / f"memo-{max_retry_calls}.sqlite")
    summary = check_contracts(catalog, runtime, None, memo=memo)
    contracts = summary.contracts
    config = BuildConfig(batch_size=8, max_retry_calls=max_retry_calls)
    engine = Engine(
        catalog, runtime, contracts, candidate_compositions(catalog, contracts), _similarity, config, memo=memo
    )
    engine.start(reuse=summary.memo_keys)
    return engine, runtime


def _explore(tmp: Path, max_retry_calls: int | None) -> Engine:
    engine, _runtime = _engine(tmp, max_retry_calls)
    while engine.step():
        pass
    return engine


def _calls(engine: Engine) -> list[tuple]:
    return [(c.node, c.tool, sorted(c.args.items(), key=repr)) for c in engine.calls]


def _edges(engine: Engine) -> set[tuple]:
    return {(r.provider, r.consumer, r.provider_field, r.consumer_input) for r in engine.result()}


def test_retry_budget_is_a_share_of_max_calls_unless_given():
    assert retry_budget(400_000, None) == int(400_000 * DEFAULT_RETRY_SHARE)
    assert retry_budget(400_000, 123) == 123
    assert retry_budget(400_000, 0) == 0


def test_retries_only_add_relations_to_the_same_exploration(tmp_path):
    alone = _explore(tmp_path, 0)
    retried = _explore(tmp_path, None)
    # the exploration is the same, call for call, counter for counter
    assert _calls(alone) == _calls(retried)
    assert {k: alone.counters.get(k, 0) for k in EXPLORATION} == {k: retried.counters.get(k, 0) for k in EXPLORATION}
    assert alone.per_tool == retried.per_tool and alone.pair_tests == retried.pair_tests
    assert alone.counters["calls_retries"] == alone.counters["retries"] == 0
    # the retries add relations, and only add
    assert _edges(alone) < _edges(retried)
    assert RETRY_ONLY <= {(p, c, i) for p, c, _f, i in _edges(retried) - _edges(alone)}
    assert retried.counters["retry_successes"] >= 1
    assert retried.counters["retry_relations"] == len(_edges(retried) - _edges(alone))
    assert 0 < retried.counters["calls_retries"] <= retry_budget(retried.config.max_calls, None)


@pytest.mark.parametrize("budget", [1, 2, 5])
def test_the_retry_budget_is_respected(tmp_path, budget):
    alone = _explore(tmp_path, 0)
    capped = _explore(tmp_path, budget)
    assert capped.counters["calls_retries"] <= budget
    assert capped.counters["retries"] >= 1
    assert _calls(alone) == _calls(capped)
    assert {k: alone.counters.get(k, 0) for k in EXPLORATION} == {k: capped.counters.get(k, 0) for k in EXPLORATION}
    assert _edges(alone) <= _edges(capped)


def test_a_call_a_retry_made_first_is_still_the_explorations_own(tmp_path):
    engine, runtime = _engine(tmp_path, None)
    state = engine.nodes[0].state
    call = (state, "folders.make_folder", {"path": "retried"})
    before = dict(engine.counters)
    ran = runtime.invoked
    with engine._aside():
        engine.run_many([call], "retries")
    assert runtime.invoked == ran + 1
    ran = runtime.invoked
    assert engine.counters == before  # the retry's call is on the retries' books only
    assert engine.retry.counters["executed_calls"] == 1
    engine.run_many([call], "offers")
    assert runtime.invoked == ran  # taken from the memo, not run again ...
    assert engine.counters["executed_calls"] == before["executed_calls"] + 1  # ... yet the exploration's own first call
    assert engine.counters["calls_offers"] == before.get("calls_offers", 0) + 1
    assert engine.counters["memo_hits"] == before["memo_hits"]
    assert engine.counters["calls_from_retries"] == 1
    engine.run_many([call], "offers")
    assert engine.counters["memo_hits"] == before["memo_hits"] + 1  # from then on, a repeat like any
