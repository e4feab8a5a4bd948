import statistics

from libra.benchmarks.bfcl.adapter import called_functions

from .conftest import needs_bfcl


def test_called_functions_counts_nested_calls_inner_first():
    assert called_functions("mean(numbers=[add(a=1, b=2), 3])") == ["add", "mean"]
    assert called_functions("cd(folder='x')") == ["cd"]


@needs_bfcl
def test_bfcl_counts_match_the_issue():
    from libra.benchmarks.registry import get_benchmark

    bench = get_benchmark("bfcl")
    catalog, tasks = bench.catalog(), bench.tasks()
    assert len(catalog) == 128
    assert len(tasks) == 200
    assert round(statistics.mean(len(t.gold) for t in tasks), 2) == 5.41
    assert len({g for t in tasks for g in t.gold}) == 81
    assert all(g in catalog for t in tasks for g in t.gold)
    t0 = tasks[0]
    assert t0.gold[:3] == ("GorillaFileSystem.cd", "GorillaFileSystem.mkdir", "GorillaFileSystem.mv")
    assert "budget analysis" in t0.query and "\n" in t0.query
    # BFCL's "dict"/"float" types are translated to JSON Schema
    assert catalog["MathAPI.add"].parameters["properties"]["a"]["type"] == "number"
