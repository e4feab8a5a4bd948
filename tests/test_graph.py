"""Algorithm 2 on small hand-built graphs, every score checked by hand."""

import numpy as np
import pytest

from libra import Catalog, Tool
from libra.retrieval.dense import DenseRetriever
from libra.retrieval.graph import (
    Edge,
    GraphRetriever,
    PropagationGraph,
    propagate,
    propagation_scores,
    select_providers,
)


def catalog(*names):
    return Catalog([Tool(name=n) for n in names])


def test_formula_by_hand():
    cat = catalog("c1", "c2", "p1", "p2", "p3", "x")
    s = np.array([0.9, 0.8, 0.3, 0.5, 0.2, 0.6])
    g = PropagationGraph.build(
        cat,
        [
            Edge("p1", "c1", "token", 0.9),  # field-best for c1.token
            Edge("p2", "c1", "token", 0.4),  # dense-best for c1.token
            Edge("p3", "c1", "token", 0.1),  # neither: not selected
            Edge("p1", "c2"),  # state edge
        ],
    )
    out, tr = propagate(g, s, ks=2, trace=True)
    assert tr.seeds == [0, 1]
    assert tr.selected[0] == {2, 3} and tr.selected[1] == {2}
    assert out[2] == pytest.approx((0.3 + 0.9 + 0.8) / 3)  # p1 reached from both seeds
    assert out[3] == pytest.approx((0.5 + 0.9) / 2)  # p2 from c1 only
    assert out[4] == pytest.approx(0.2)  # p3 not selected
    assert out[5] == pytest.approx(0.6)  # off the graph
    assert out[0] == pytest.approx(0.9) and out[1] == pytest.approx(0.8)
    order = list(np.argsort(-out, kind="stable"))
    assert order == [0, 1, 3, 2, 5, 4]


def test_score_never_decreases():
    cat = catalog("c", "p")
    g = PropagationGraph.build(cat, [Edge("p", "c")])
    out = propagate(g, np.array([0.5, 0.9]), ks=1)  # seed is p (0.9); c is not seeded
    np.testing.assert_allclose(out, [0.5, 0.9])
    out = propagate(g, np.array([0.9, 0.95]), ks=2)  # p already above its average with c
    assert out[1] == pytest.approx(0.95)


def test_seed_contributes_once_through_two_inputs():
    cat = catalog("c", "p")
    g = PropagationGraph.build(cat, [Edge("p", "c", "a", 0.5), Edge("p", "c", "b", 0.7), Edge("p", "c")])
    out = propagate(g, np.array([0.8, 0.2]), ks=1)
    assert out[1] == pytest.approx((0.2 + 0.8) / 2)  # not (0.2 + 0.8 + 0.8) / 3


def test_selection_ties():
    cat = catalog("c", "p1", "p2", "p3")
    # field-best tie (0.7 vs 0.7): the provider the query scores higher wins
    g = PropagationGraph.build(cat, [Edge("p1", "c", "x", 0.7), Edge("p2", "c", "x", 0.7), Edge("p3", "c", "x", 0.1)])
    s = np.array([0.9, 0.3, 0.4, 0.2])
    assert select_providers(g, 0, s, "field") == {2}
    # dense-best tie (0.4 vs 0.4): the better field match wins
    s = np.array([0.9, 0.4, 0.4, 0.2])
    g2 = PropagationGraph.build(cat, [Edge("p1", "c", "x", 0.2), Edge("p2", "c", "x", 0.6), Edge("p3", "c", "x", 0.1)])
    assert select_providers(g2, 0, s, "dense") == {2}
    # full tie on both keys: the earlier catalog position wins, deterministically
    g3 = PropagationGraph.build(cat, [Edge("p2", "c", "x", 0.5), Edge("p1", "c", "x", 0.5)])
    assert select_providers(g3, 0, s, "both") == {1}
    # 'both' keeps the two winners once each; 'all' keeps every provider
    g4 = PropagationGraph.build(cat, [Edge("p1", "c", "x", 0.9), Edge("p2", "c", "x", 0.1), Edge("p3", "c", "x", 0.2)])
    s = np.array([0.9, 0.1, 0.8, 0.3])
    assert select_providers(g4, 0, s, "both") == {1, 2}
    assert select_providers(g4, 0, s, "field") == {1}
    assert select_providers(g4, 0, s, "dense") == {2}
    assert select_providers(g4, 0, s, "all") == {1, 2, 3}


def test_two_hops():
    cat = catalog("c", "p", "q")
    g = PropagationGraph.build(cat, [Edge("p", "c"), Edge("q", "p")])
    s = np.array([0.9, 0.3, 0.1])
    one = propagate(g, s, ks=1, hops=1)
    assert one[1] == pytest.approx(0.6) and one[2] == pytest.approx(0.1)
    two = propagate(g, s, ks=1, hops=2)
    assert two[1] == pytest.approx(0.6)
    assert two[2] == pytest.approx((0.1 + 0.6) / 2)  # q reached through p's propagated score


def test_self_loops_ignored():
    cat = catalog("c", "p")
    g = PropagationGraph.build(cat, [Edge("c", "c", "x", 1.0)])
    assert g.n_edges == 0


def test_probabilities_by_hand():
    # s = (1 + cos) / 2, so s = 0.9, 0.8, 0.3 are cosines 0.8, 0.6, -0.4, i.e. logits 16, 12, -8 at T = 0.05
    p = DenseRetriever("hash").probabilities(np.array([[0.9, 0.8, 0.3]]), temperature=0.05)
    z = np.exp([16.0, 12.0, -8.0])
    np.testing.assert_allclose(p, [z / z.sum()])
    assert p.sum() == pytest.approx(1.0)


def test_averaging_probabilities_lifts_a_prerequisite_past_a_distractor():
    # c is the query's clear match, p its prerequisite, x an unrelated tool between them
    cat = catalog("c", "p", "x")
    g = PropagationGraph.build(cat, [Edge("p", "c")])
    s = np.array([[0.8, 0.4, 0.61]])
    dense = DenseRetriever("hash")  # declares no temperature: the paper's similarity average
    sim, space = propagation_scores(dense, s)
    assert space == "similarity"
    out = propagate(g, sim[0], ks=1)
    assert out[1] == pytest.approx((0.4 + 0.8) / 2) and out[1] < out[2]  # 0.60 < 0.61: p stays below x
    prob, space = propagation_scores(dense, s, temperature=0.05)
    assert space == "probability"
    out = propagate(g, prob[0], ks=1)
    z = np.exp([12.0, -4.0, 4.4])  # logits (2s - 1) / T
    z /= z.sum()
    assert out[1] == pytest.approx((z[1] + z[0]) / 2) and out[1] > out[2]  # half of c's probability beats x's
    assert list(np.argsort(-prob[0])) == list(np.argsort(-s[0]))  # the dense order itself is unchanged
    assert propagation_scores(dense, s, "similarity", temperature=0.05)[1] == "similarity"


def test_the_default_encoder_propagates_its_probabilities():
    cat = Catalog(
        [
            Tool(name="update_alarm", description="Change the time of an existing alarm on the phone."),
            Tool(name="login", description="Sign in to the phone app with a username and password."),
            Tool(name="play_song", description="Play a song from the music library."),
        ]
    )
    dense = DenseRetriever("minilm", cache=False)
    assert dense.temperature == 0.05
    query = ["move my 7am alarm to 8am"]
    libra = GraphRetriever(dense, [Edge("login", "update_alarm")]).fit(cat)
    out = libra.score(query)[0]
    assert libra.used_score_space == "probability"
    p = dense.probabilities(dense.score(query))[0]
    assert out[1] == pytest.approx(max(p[1], (p[1] + p[0]) / 2))
    paper = GraphRetriever(dense, [Edge("login", "update_alarm")], score_space="similarity").fit(cat)
    s = dense.score(query)[0]
    assert paper.score(query)[0][1] == pytest.approx(max(s[1], (s[1] + s[0]) / 2))
    assert paper.used_score_space == "similarity"
    with pytest.raises(ValueError):
        GraphRetriever(dense, [], score_space="cosine")
