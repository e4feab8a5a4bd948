"""Precision, Recall and NDCG at K exactly as the paper defines them (Appendix D).

Binary relevance; the gold set is the distinct gold tools; IDCG sums over min(K, |G|) positions; every figure is
an unweighted mean over tasks, in percent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    ndcg: float

    def as_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "ndcg": self.ndcg}


def _discount(rank0: int) -> float:
    return 1.0 / math.log2(rank0 + 2)


def precision_at_k(ranking: Sequence[str], gold: Iterable[str], k: int) -> float:
    g = set(gold)
    return sum(1 for t in ranking[:k] if t in g) / k


def recall_at_k(ranking: Sequence[str], gold: Iterable[str], k: int) -> float:
    g = set(gold)
    if not g:
        return 0.0
    return sum(1 for t in ranking[:k] if t in g) / len(g)


def ndcg_at_k(ranking: Sequence[str], gold: Iterable[str], k: int) -> float:
    g = set(gold)
    if not g:
        return 0.0
    dcg = sum(_discount(j) for j, t in enumerate(ranking[:k]) if t in g)
    idcg = sum(_discount(j) for j in range(min(k, len(g))))
    return dcg / idcg


def evaluate(rankings: Sequence[Sequence[str]], golds: Sequence[Iterable[str]], k: int) -> Scores:
    """Mean P/R/NDCG@k in percent over tasks; ``rankings[i]`` is the ranked list for ``golds[i]``."""
    if len(rankings) != len(golds):
        raise ValueError(f"{len(rankings)} rankings for {len(golds)} tasks")
    if k < 1:
        raise ValueError("k must be >= 1")
    n = len(rankings)
    if n == 0:
        return Scores(0.0, 0.0, 0.0)
    golds = [list(g) for g in golds]
    p = sum(precision_at_k(r, g, k) for r, g in zip(rankings, golds)) / n
    r = sum(recall_at_k(r_, g, k) for r_, g in zip(rankings, golds)) / n
    d = sum(ndcg_at_k(r_, g, k) for r_, g in zip(rankings, golds)) / n
    return Scores(100 * p, 100 * r, 100 * d)
