import math
import random

import ir_measures
import pytest
from ir_measures import P, R, nDCG

from libra.eval.metrics import evaluate, ndcg_at_k, precision_at_k, recall_at_k


def test_hand_computed():
    ranking = ["x", "a", "b", "y"]
    gold = ["a", "b", "c"]
    assert precision_at_k(ranking, gold, 2) == 0.5
    assert recall_at_k(ranking, gold, 2) == pytest.approx(1 / 3)
    # DCG = 1/log2(3); IDCG over min(2, 3) = 2 positions = 1 + 1/log2(3)
    assert ndcg_at_k(ranking, gold, 2) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    # gold smaller than K: IDCG only over |G| positions, so a perfect ranking scores 1
    assert ndcg_at_k(["a", "z", "q"], ["a"], 3) == pytest.approx(1.0)
    s = evaluate([["a", "z"], ["q", "z"]], [["a"], ["z", "w"]], 2)
    assert s.precision == pytest.approx(50.0)
    assert s.recall == pytest.approx(75.0)  # (1 + 0.5) / 2


def test_matches_ir_measures_on_random_runs():
    rng = random.Random(7)
    tools = [f"t{i}" for i in range(40)]
    rankings, golds, qrels, run = [], [], [], []
    for q in range(60):
        ranking = rng.sample(tools, 20)
        gold = rng.sample(tools, rng.randint(1, 12))
        rankings.append(ranking)
        golds.append(gold)
        qrels += [ir_measures.Qrel(f"q{q}", g, 1) for g in gold]
        run += [ir_measures.ScoredDoc(f"q{q}", t, float(100 - j)) for j, t in enumerate(ranking)]
    for k in (5, 10, 15):
        ours = evaluate(rankings, golds, k)
        ref = ir_measures.calc_aggregate([P @ k, R @ k, nDCG @ k], qrels, run)
        assert ours.precision == pytest.approx(100 * ref[P @ k])
        assert ours.recall == pytest.approx(100 * ref[R @ k])
        assert ours.ndcg == pytest.approx(100 * ref[nDCG @ k])
