"""SciToolEval adapter: catalog, tasks, frozen subset, offline tools, isolation and the SciToolKG retriever."""

from __future__ import annotations

import inspect
import sys

import pytest

from libra.benchmarks.registry import get_benchmark
from libra.benchmarks.scitooleval.adapter import (
    GOLD_FIXES,
    SciToolEvalBenchmark,
    SciToolKGRetriever,
    build_scitooleval_python_runtime,
    load_all_tasks,
    load_catalog,
    load_frozen,
    make_scitooleval_runtime,
    run_chain,
    starting_input,
)
from libra.errors import MissingDependencyError

ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"


def _has_rdkit() -> bool:
    try:
        import rdkit  # noqa: F401
        import selfies  # noqa: F401
    except ImportError:
        return False
    return True


needs_rdkit = pytest.mark.skipif(not _has_rdkit(), reason="needs the scitooleval extra (rdkit, selfies)")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def tasks():
    return load_all_tasks()


@pytest.fixture(scope="module")
def rt():
    runtime = build_scitooleval_python_runtime()
    yield runtime
    runtime.close()


def _call(rt, tool, value):
    param = rt.catalog[tool].param_names[0]
    record, _ = rt.invoke(rt.fresh(), tool, {param: value})
    return record


# -- data, catalog, tasks (no RDKit needed) ----------------------------------------------------------------------
def test_catalog_shape(catalog):
    assert len(catalog) == 477
    assert "GetNPR2" in catalog and "SELFIEStoSMILES" in catalog
    for tool in catalog:
        assert len(tool.param_names) == 1 and tool.required == tool.param_names
        assert tool.param_schema(tool.param_names[0])["type"] == "string"
        assert tool.group in {"ChemicalTools", "BiologyTools", "MaterialTools", "GeneralTools"}
        assert set(tool.metadata) == {"inputs", "outputs", "source"}
    assert catalog["GetNPR2"].param_names == ["smiles"]
    assert catalog["ExplainAtomPairScore"].param_names == ["input"]  # several upstream arguments, packed
    assert not catalog["NameToSMILES"].executable and not catalog["InChIKeyToSMILES"].executable


def test_tasks_and_gold_fixes(tasks, catalog):
    assert len(tasks) == 531
    assert sum(t.metadata["split"] == "level1" for t in tasks) == 152
    assert tasks[7].id == "level1-0007" and tasks[152].id == "level2-0000"
    assert all(g in catalog for t in tasks for g in t.gold)
    fixed = {bad: sum(bad in t.metadata["released_tool_path"] for t in tasks) for bad in GOLD_FIXES}
    assert fixed == {"GetFrtool_pathCSP3": 4, "LengthSELFIES": 2}
    for t in tasks:
        if "LengthSELFIES" in t.metadata["released_tool_path"]:
            assert "Length_SELFIES" in t.gold and "LengthSELFIES" not in t.gold
        assert len(t.gold) == len(set(t.gold))


def test_frozen_subset(catalog, tasks):
    frozen = load_frozen()
    assert frozen["version"] == 1
    ids = frozen["task_ids"]
    assert len(ids) == len(set(ids)) and not set(ids) & set(frozen["excluded"])
    assert len(ids) + len(frozen["excluded"]) == 531
    by_id = {t.id: t for t in tasks}
    for tid in ids:
        assert all(catalog[g].executable for g in by_id[tid].gold), tid
    bench = SciToolEvalBenchmark()
    assert [t.id for t in bench.tasks()] == ids
    assert len(SciToolEvalBenchmark(subset="all").tasks()) == 531


def test_registry_and_paper():
    bench = get_benchmark("scitooleval")
    assert isinstance(bench, SciToolEvalBenchmark) and bench.default_k == 10
    assert bench.paper["scitoolkg"] == (12.6, 89.7, 82.5)


def test_runtime_without_rdkit_is_one_actionable_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "rdkit", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'libra-tools\[scitooleval\]'"):
        SciToolEvalBenchmark().runtime()


def test_scitoolkg_retriever_returns_at_most_ten(catalog):
    retriever = SciToolKGRetriever(embedder="hash").fit(catalog)
    rankings = retriever.retrieve(
        ["Calculate the NPR2 descriptor of the molecule [C][C][O] given as SELFIES", "molecular formula"], depth=20
    )
    assert len(rankings) == 2
    for ranking in rankings:
        assert 0 < len(ranking) <= 10 and len(set(ranking)) == len(ranking)
        assert all(name in catalog for name in ranking)


# -- tools (RDKit) -----------------------------------------------------------------------------------------------
@needs_rdkit
def test_tool_signatures_match_catalog(catalog):
    from libra.benchmarks.scitooleval import tools as scitooleval_tools

    executable = [t for t in catalog if t.executable]
    assert len(executable) >= 150
    for tool in executable:
        assert list(inspect.signature(getattr(scitooleval_tools, tool.name)).parameters) == tool.param_names, tool.name


@needs_rdkit
def test_aspirin_values(rt):
    assert _call(rt, "GetMolFormula", ASPIRIN).output == {"formula": "C9H8O4"}
    assert round(_call(rt, "CalculateTPSA", ASPIRIN).output["tpsa"], 1) == 63.6
    assert _call(rt, "SMILESToWeight", ASPIRIN).output["molecular_weight"] == pytest.approx(180.16, abs=0.01)
    assert _call(rt, "GetHBDNum", ASPIRIN).output == {"num_hbd": 1}
    assert _call(rt, "SMILESToInChI", ASPIRIN).output["inchi"].startswith("InChI=1S/C9H8O4/")
    inchi = _call(rt, "SMILESToInChI", ASPIRIN).output["inchi"]
    assert _call(rt, "InChIToInChIKey", inchi).output == {"inchikey": "BSYNRYMUTXBXSQ-UHFFFAOYSA-N"}


@needs_rdkit
def test_selfies_round_trip_and_3d_determinism(rt):
    selfies = _call(rt, "SMILEStoSELFIES", ASPIRIN).output["selfies"]
    assert selfies.startswith("[C]")
    assert _call(rt, "SELFIEStoSMILES", selfies).output == {"smiles": ASPIRIN}
    first, second = _call(rt, "GetNPR2", ASPIRIN).output, _call(rt, "GetNPR2", ASPIRIN).output
    assert first == second and 0.5 < first["npr2"] <= 1.0


@needs_rdkit
def test_bad_input_is_rejected_not_raised(rt):
    for tool, value in [
        ("GetMolFormula", "C1CC(("),
        ("SELFIEStoSMILES", "arginine"),
        ("InChIToSMILES", "not an inchi"),
        ("MolSimilarity", "CCO"),
    ]:
        record = _call(rt, tool, value)
        assert record.status == "rejected" and record.error, (tool, record)


@needs_rdkit
def test_run_chain_follows_named_outputs(rt, catalog, tasks):
    task = next(t for t in tasks if t.metadata.get("tool_path") == ["SMILESToInChI", "InChIToInChIKey"])
    assert starting_input(task, "smiles") == task.metadata["parameter"]
    result = run_chain(rt, task, catalog)
    assert result.ok and [c["tool"] for c in result.calls] == ["SMILESToInChI", "InChIToInChIKey"]
    assert run_chain(rt, next(t for t in tasks if "NameToSMILES" in t.gold), catalog).reason.startswith(
        "non-executable"
    )


@needs_rdkit
def test_isolated_worker_pool():
    runtime = make_scitooleval_runtime(n_workers=2, timeout_s=20)
    try:
        state = runtime.fresh()
        calls = [
            (state, "GetMolFormula", {"smiles": ASPIRIN}),
            (state, "GetMolFormula", {"smiles": "C1CC(("}),
            (state, "GetNPR1", {"smiles": "CCO"}),
        ]
        (ok, _), (bad, _), (npr, _) = runtime.invoke_many(calls)
        assert ok.status == "success" and ok.output == {"formula": "C9H8O4"}
        assert bad.status == "rejected"
        assert npr.status == "success" and "npr1" in npr.output
        assert "NameToSMILES" not in runtime.catalog
    finally:
        runtime.close()
