"""Reciprocal rank fusion of BM25 and dense, checked against ranks worked out by hand."""

import json

import numpy as np
import pytest

from libra import Catalog, Tool
from libra.eval.methods import available_methods
from libra.retrieval.base import ranks
from libra.retrieval.bm25 import BM25Retriever
from libra.retrieval.dense import DenseRetriever
from libra.retrieval.graph import Edge, GraphRetriever
from libra.retrieval.hybrid import HybridRetriever

from .conftest import needs_bfcl
from .test_cli import run


def test_ranks_by_hand():
    # ties go to the earlier catalog position, as everywhere else in retrieval
    np.testing.assert_array_equal(ranks(np.array([[0.2, 0.9, 0.2, 0.5]])), [[3, 1, 4, 2]])


CATALOG = Catalog(
    [
        Tool(name="tail", description="Show the last lines of a file."),
        Tool(name="touch", description="Create an empty file with the given name."),
        Tool(name="post_tweet", description="Publish a short message on the social network."),
    ]
)


def test_fusion_adds_reciprocal_ranks():
    query = ["show the last lines of notes.txt"]
    bm25, dense = BM25Retriever().fit(CATALOG), DenseRetriever("minilm", cache=False).fit(CATALOG)
    fused = HybridRetriever([BM25Retriever(), DenseRetriever("minilm", cache=False)]).fit(CATALOG).score(query)[0]
    expected = np.zeros(3)
    for part in (bm25, dense):
        order = list(np.argsort(-part.score(query)[0], kind="stable"))
        for pos, tool in enumerate(order, start=1):
            expected[tool] += 1.0 / (60 + pos)
    np.testing.assert_allclose(fused, expected)
    assert int(np.argmax(fused)) == 0  # both parts put tail first: 2 / 61


def test_propagation_over_a_hybrid_averages_fused_scores():
    hybrid = HybridRetriever([BM25Retriever(), DenseRetriever("minilm", cache=False)])
    libra = GraphRetriever(hybrid, [Edge("touch", "tail")], ks=1).fit(CATALOG)
    query = ["show the last lines of notes.txt"]
    out = libra.score(query)[0]
    base = hybrid.score(query)[0]
    assert libra.used_score_space == "similarity"  # RRF declares no temperature: its own scores are averaged
    assert out[1] == pytest.approx(max(base[1], (base[1] + base[0]) / 2))
    with pytest.raises(ValueError):
        HybridRetriever([])


@needs_bfcl
def test_eval_hybrid(tmp_path):
    j = tmp_path / "res.json"
    out = run("eval", "bfcl", "--method", "hybrid", "--json", str(j))
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(j.read_text())["results"]
    assert row["method"] == "hybrid" and "score_space" not in row
    assert {"hybrid", "libra-hybrid"} <= set(available_methods())
