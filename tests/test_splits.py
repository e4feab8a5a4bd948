"""Development and test halves: fixed, disjoint, stratified, variants kept together, and chosen without the gold."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from libra.benchmarks.base import Task
from libra.benchmarks.registry import get_benchmark
from libra.benchmarks.splits import halves, split_tasks
from libra.errors import ConfigError

from .conftest import needs_bfcl
from .test_cli import run


def _tasks(n: int, groups: int = 3, variants: int = 1) -> list[Task]:
    return [
        Task(id=f"s{i // variants}_{i % variants}", query=f"q{i}", gold=(f"t{i}",), metadata={"g": str(i % groups)})
        for i in range(n)
    ]


def test_halves_are_disjoint_cover_everything_and_keep_each_group_half_and_half():
    tasks = _tasks(61, groups=3)
    dev, test = halves(tasks, lambda t: t.id, lambda t: t.metadata["g"])
    assert {t.id for t in dev} | {t.id for t in test} == {t.id for t in tasks}
    assert not {t.id for t in dev} & {t.id for t in test}
    assert abs(len(dev) - len(test)) <= 1
    per_dev, per_test = Counter(t.metadata["g"] for t in dev), Counter(t.metadata["g"] for t in test)
    assert all(abs(per_dev[g] - per_test[g]) <= 1 for g in "012")
    # each half keeps the tasks' own order
    assert [t.id for t in dev] == [t.id for t in tasks if t in dev]


def test_variants_of_one_task_stay_in_one_half_and_the_rule_ignores_gold_and_order():
    tasks = _tasks(30, groups=1, variants=3)

    def unit(t: Task) -> str:
        return t.id.split("_")[0]

    dev, test = halves(tasks, unit, lambda t: "")
    assert not {unit(t) for t in dev} & {unit(t) for t in test}
    regolded = [Task(t.id, t.query, ("other",), t.metadata) for t in reversed(tasks)]
    dev2, _ = halves(regolded, unit, lambda t: "")
    assert {t.id for t in dev2} == {t.id for t in dev}


def test_a_unit_whose_variants_disagree_on_their_group_is_placed_once():
    tasks = [Task("a_1", "q", ("t",), {"g": "x"}), Task("a_2", "q", ("t",), {"g": ""})]
    dev, test = halves(tasks, lambda t: t.id.split("_")[0], lambda t: t.metadata["g"])
    assert len(dev) + len(test) == 2 and (not dev or not test)


def test_an_unknown_split_is_refused():
    with pytest.raises(ConfigError, match="unknown split"):
        split_tasks(None, [], "train")


@needs_bfcl
def test_bfcl_halves_are_fixed_and_stratified_by_api_classes():
    bench = get_benchmark("bfcl")
    tasks = bench.tasks()
    dev, test = split_tasks(bench, tasks, "dev"), split_tasks(bench, tasks, "test")
    assert (len(dev), len(test)) == (100, 100)
    for stratum, n in Counter(bench.split_stratum(t) for t in tasks).items():
        assert abs(sum(bench.split_stratum(t) == stratum for t in dev) - n / 2) <= 0.5
    # fixed: the first development tasks, as committed
    assert [t.id for t in dev[:3]] == FIRST_BFCL_DEV


FIRST_BFCL_DEV = ["multi_turn_base_0", "multi_turn_base_3", "multi_turn_base_6"]


def test_scitooleval_halves_are_stratified_by_level():
    bench = get_benchmark("scitooleval")
    tasks = bench.tasks()
    dev, test = split_tasks(bench, tasks, "dev"), split_tasks(bench, tasks, "test")
    assert (len(dev), len(test)) == (126, 125)
    assert Counter(t.metadata["split"] for t in dev) == {"level1": 63, "level2": 63}


def test_appworld_keeps_a_scenarios_three_tasks_in_one_half():
    bench = get_benchmark("appworld")
    try:
        tasks = bench.tasks()
    except Exception as exc:  # noqa: BLE001 - the task bundle needs the AppWorld environment
        pytest.skip(f"AppWorld tasks unavailable: {exc}")
    dev, test = split_tasks(bench, tasks, "dev"), split_tasks(bench, tasks, "test")
    assert (len(dev), len(test)) == (75, 72)
    assert not {bench.split_unit(t) for t in dev} & {bench.split_unit(t) for t in test}


@needs_bfcl
def test_eval_scores_one_half_and_says_which(tmp_path):
    j = tmp_path / "res.json"
    out = run("eval", "bfcl", "--method", "bm25", "--split", "dev", "--json", str(j))
    assert out.returncode == 0, out.stderr
    got = json.loads(j.read_text())
    assert got["split"] == "dev" and got["n_tasks"] == 100 and "dev half" in out.stdout
    bad = run("eval", "bfcl", "--split", "train")
    assert bad.returncode == 2 and "unknown split" in bad.stderr
