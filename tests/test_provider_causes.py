"""Why a tool provides no relation (``stats.health.no_relation``), and Table 3's "no edge" split by it."""

from __future__ import annotations

import importlib

import numpy as np

from libra.benchmarks.base import Task
from libra.catalog import Catalog, Tool
from libra.eval.analysis import UNRECORDED, recovery_breakdown, tool_causes
from libra.eval.libraries import library_edges
from libra.induction.build import BuildOptions, build_library
from libra.induction.providers import CAUSES, _cause, cause_counts
from libra.library.artifact import Library, Relation
from libra.retrieval.graph import PropagationGraph

from .generalization import CatalogBenchmark
from .test_cli import run


def _build():
    module = importlib.reload(importlib.import_module("tests.provider_toys"))
    return build_library(CatalogBenchmark(module), None, BuildOptions(workers=0, progress=False))


def test_each_tool_without_a_relation_gets_the_step_it_stopped_at():
    lib = _build()
    providers = {r.provider for r in lib.relations}
    assert providers == {"provider_toys.create_note"}
    report = lib.stats["health"]["no_relation"]
    causes = report["causes"]
    assert list(causes) == [c for c in CAUSES if c in causes]  # in the order of Algorithm 1's steps
    assert causes["never_succeeded"] == ["provider_toys.sync_cloud"]
    assert causes["exports_nothing"] == ["provider_toys.has_notes"]  # a flag is no value
    assert causes["reply_empty"] == ["provider_toys.search_archive"]  # a search that never finds anything
    # read_note hands back the id it was given and the text create_note was given: echoes under origin credit
    assert causes["echoes_only"] == ["provider_toys.read_note"]
    listed = [t for tools in causes.values() for t in tools]
    assert sorted(listed) == sorted(
        t.name for t in lib.catalog if t.name not in providers
    )  # each once, none with a relation
    assert report["changed_state"] == []  # no tool without a relation changed the state
    assert cause_counts(report) == {c: len(v) for c, v in causes.items()}
    # the report and the health summary agree on which tools never succeeded
    assert set(causes["never_succeeded"]) <= set(lib.stats["health"]["tools_never_succeeded"])


def test_a_tool_seen_working_only_outside_the_exploration_is_not_called_never_succeeded():
    # no successful call in the exploration's own log: the cause depends on whether checking or a retry saw it work
    assert _cause(None, "t", [], set(), set(), set(), {}, seen_working=False) == "never_succeeded"  # type: ignore[arg-type]
    assert _cause(None, "t", [], set(), set(), set(), {}, seen_working=True) == "succeeded_outside_exploration"  # type: ignore[arg-type]
    assert (
        CAUSES.index("never_succeeded")
        < CAUSES.index("succeeded_outside_exploration")
        < CAUSES.index("exports_nothing")
    )


def test_no_edge_occurrences_are_counted_by_cause():
    catalog = Catalog([Tool(name=n, description=n) for n in ("a", "b", "c", "d")], name="toy")
    graph = PropagationGraph.build(catalog, library_edges(Library(catalog, relations=[Relation("a", "b", "state")])))
    # the query ranks b first, then a; c and d (no outgoing edge) are gold and outside the top 1
    base = np.array([[0.5, 0.9, 0.1, 0.2]])
    tasks = [Task("q", "query", ("c", "d"))]
    bd = recovery_breakdown(
        graph, catalog, tasks, base, k=1, ks=1, causes=tool_causes({"causes": {"reply_empty": ["c"]}})
    )
    assert bd.counts["no_edge"] == 2
    assert bd.no_edge_causes == {"reply_empty": 1, UNRECORDED: 1}
    assert bd.to_dict()["no_edge_causes"] == {"reply_empty": 1, UNRECORDED: 1}
    # ...and listed per tool, most occurrences first (then by name), with the cause when the library records it
    assert bd.no_edge_tools == [
        {"tool": "c", "occurrences": 1, "cause": "reply_empty"},
        {"tool": "d", "occurrences": 1, "cause": UNRECORDED},
    ]
    plain = recovery_breakdown(graph, catalog, tasks, base, k=1, ks=1)
    assert plain.counts == bd.counts and "no_edge_causes" not in plain.to_dict()
    assert plain.to_dict()["no_edge_tools"] == [{"tool": "c", "occurrences": 1}, {"tool": "d", "occurrences": 1}]


def test_no_edge_tools_are_ranked_by_occurrences():
    catalog = Catalog([Tool(name=n, description=n) for n in ("a", "b", "c", "d")], name="toy")
    graph = PropagationGraph.build(catalog, library_edges(Library(catalog, relations=[Relation("a", "b", "state")])))
    base = np.array([[0.5, 0.9, 0.1, 0.2], [0.5, 0.9, 0.1, 0.2]])
    # d is a missed gold tool of both queries, c of one; a (which has an edge) is never counted as "no edge"
    tasks = [Task("q1", "query", ("c", "d")), Task("q2", "query", ("d", "a"))]
    bd = recovery_breakdown(graph, catalog, tasks, base, k=1, ks=1)
    assert [(r["tool"], r["occurrences"]) for r in bd.no_edge_tools] == [("d", 2), ("c", 1)]
    assert sum(r["occurrences"] for r in bd.no_edge_tools) == bd.counts["no_edge"]


def test_show_prints_the_causes(tmp_path):
    catalog = Catalog([Tool(name=n, description="x") for n in ("a", "b", "c")], name="toy")
    health = {
        "tools": 3,
        "tools_never_succeeded": ["c"],
        "no_relation": {"causes": {"never_succeeded": ["c"], "echoes_only": ["b"]}, "changed_state": []},
    }
    path = tmp_path / "toy.json.gz"
    Library(catalog, relations=[Relation("a", "b", "state")], stats={"tools": 3, "health": health}).save(path)
    out = run("show", str(path))
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "tools with no outgoing relation: 2, by cause:" in text
    assert "1 x never succeeded: c" in text and "1 x echoes only: b" in text
