"""The retrieval default and the options the search for it covers: the second hop's decay, normalised-score
fusion, bases that open from a search index, one default for eval, retrieve and serve, and the hidden-prerequisite
view."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

from libra import Catalog, Searcher, Tool
from libra.benchmarks.base import Task
from libra.errors import ConfigError
from libra.eval.hidden import hidden_gold, hidden_view, names_tool
from libra.induction.build import BuildOptions, build_library
from libra.library.artifact import Library
from libra.retrieval import defaults
from libra.retrieval.bm25 import BM25Retriever
from libra.retrieval.dense import DenseRetriever
from libra.retrieval.graph import Edge, GraphRetriever, PropagationGraph, propagate
from libra.retrieval.hybrid import ScoreFusion, minmax, normalised_fusion
from libra.search.options import SearchOptions

from .induction_toys import ShopBenchmark

# a <- b <- c: c needs b, b needs a
CHAIN = Catalog([Tool(name="a"), Tool(name="b"), Tool(name="c")])
CHAIN_EDGES = [Edge("b", "c", "x", 1.0), Edge("a", "b", "y", 1.0)]


def test_the_second_hop_keeps_a_share_of_its_gain_set_by_the_decay():
    g = PropagationGraph.build(CHAIN, CHAIN_EDGES)
    s = np.array([0.1, 0.2, 0.9])
    one = propagate(g, s, ks=1, hops=1)
    assert one[0] == pytest.approx(0.1)  # a is two hops from the seed c
    full = propagate(g, s, ks=1, hops=2)
    b = (0.2 + 0.9) / 2
    assert full[1] == pytest.approx(b) and full[0] == pytest.approx((0.1 + b) / 2)
    half = propagate(g, s, ks=1, hops=2, decay=0.5)
    assert half[1] == pytest.approx(b)  # the first hop is never decayed
    assert half[0] == pytest.approx(0.1 + 0.5 * ((0.1 + b) / 2 - 0.1))
    np.testing.assert_allclose(propagate(g, s, ks=1, hops=2, decay=0.0), one)
    with pytest.raises(ValueError, match="decay"):
        propagate(g, s, ks=1, hops=2, decay=1.5)


def test_normalised_fusion_averages_min_max_maps_and_keeps_the_gaps_rrf_drops():
    dense = np.array([[0.50, 0.60, 0.70]])
    bm25 = np.array([[9.0, 1.0, 0.0]])
    np.testing.assert_allclose(minmax(dense), [[0.0, 0.5, 1.0]])
    np.testing.assert_allclose(normalised_fusion([dense, bm25]), [[0.5, (0.5 + 1 / 9) / 2, 0.5]])
    np.testing.assert_allclose(normalised_fusion([dense, bm25], [0.8, 0.2]), [[0.2, 0.4 + 0.2 / 9, 0.8]])
    # a query that shares no word with any tool: BM25 says nothing, the dense part alone ranks
    np.testing.assert_allclose(minmax(np.zeros((1, 3))), [[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="weight"):
        normalised_fusion([dense, bm25], [0.7, 0.7])


def test_a_fusion_base_fits_both_parts_and_ranks_by_their_mix():
    catalog = Catalog(
        [
            Tool(name="tail", description="Show the last lines of a file."),
            Tool(name="touch", description="Create an empty file with the given name."),
        ]
    )
    fusion = ScoreFusion([BM25Retriever(), DenseRetriever("hash", cache=False)]).fit(catalog)
    q = ["show the last lines"]
    expected = normalised_fusion([fusion.parts[0].score(q), fusion.parts[1].score(q)])
    np.testing.assert_allclose(fusion.score(q), expected)
    assert int(np.argmax(fusion.score(q)[0])) == 0


def test_eval_retrieve_and_serve_share_one_default():
    from libra.cli.retrieve import retrieve_cmd

    opts = SearchOptions()
    assert (opts.base, opts.ks, opts.hops, opts.decay, opts.score_space, opts.selection) == (
        defaults.DEFAULT_BASE,
        defaults.DEFAULT_KS,
        defaults.DEFAULT_HOPS,
        defaults.DEFAULT_DECAY,
        defaults.DEFAULT_SCORE_SPACE,
        defaults.DEFAULT_SELECTION,
    )
    graph = inspect.signature(GraphRetriever).parameters
    assert (graph["ks"].default, graph["hops"].default, graph["decay"].default) == (opts.ks, opts.hops, opts.decay)
    assert graph["score_space"].default == opts.score_space and graph["selection"].default == opts.selection
    cli = inspect.signature(retrieve_cmd).parameters
    for name in ("base", "ks", "hops", "decay", "score_space", "selection"):
        assert cli[name].default.default == getattr(opts, name), name
    with pytest.raises(ConfigError, match="decay"):
        SearchOptions(decay=2.0).check()


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("defaults") / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    return path


@pytest.mark.parametrize("base", ["hybrid", "fusion"])
def test_a_fused_base_opens_from_the_cached_index_without_loading_the_library(shop, tmp_path, monkeypatch, base):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    query = "put a new item titled lamp in the shop"
    full = [r.to_dict() for r in Searcher.from_library(Library.load(shop), base=base).search(query, 4)]
    Searcher.open(shop, base=base)  # writes the index

    def refuse(*args, **kwargs):
        raise AssertionError("the cached index must be enough")

    monkeypatch.setattr(Library, "load", refuse)
    again = Searcher.open(shop, base=base)
    assert [r.to_dict() for r in again.search(query, 4)] == full


def test_a_request_names_a_tool_when_it_says_every_word_of_its_name():
    assert names_tool("please add the items to my cart", "shop.add_item")
    assert names_tool("Get stock info for NVDA", "TradingBot.getStockInfo")
    assert not names_tool("cancel my order", "shop.login")
    assert hidden_gold("cancel my order", ["shop.cancel_order", "shop.login"]) == ["shop.login"]


def test_the_hidden_view_counts_whole_gold_sets_among_tasks_with_an_unnamed_tool():
    tasks = [
        Task("1", "cancel my order", ("shop.cancel_order", "shop.login")),
        Task("2", "cancel my order", ("shop.cancel_order", "shop.login")),
        Task("3", "cancel the order", ("shop.cancel_order",)),  # names its only tool: not counted
    ]
    rankings = [["shop.login", "shop.cancel_order"], ["shop.cancel_order", "x", "shop.login"], []]
    view = hidden_view(rankings, tasks, k=2)
    assert (view.tasks, view.complete, view.fits, view.found) == (2, 50.0, 2, 50.0)
    # a gold set larger than K can never be complete; its unnamed tools found still count
    wide = Task("4", "cancel my order", ("shop.cancel_order", "shop.login", "shop.audit"))
    view = hidden_view([["shop.login", "shop.cancel_order"]], [wide], k=2)
    assert (view.tasks, view.complete, view.fits, view.found) == (1, 0.0, 0, 50.0)
