"""Run retrieval methods over a benchmark's tasks and score them."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from libra._util.io import atomic_write_json, atomic_write_text
from libra.benchmarks.base import Benchmark, Task
from libra.catalog import Catalog
from libra.eval.methods import EvalOptions, get_method
from libra.eval.metrics import Scores, evaluate
from libra.retrieval.base import retrieve_names


@dataclass
class MethodResult:
    method: str
    scores: Scores
    rankings: list[list[str]]
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


def retrieve(retriever: Any, catalog: Catalog, queries: Sequence[str], depth: int) -> list[list[str]]:
    """Top-``depth`` tool names per query (see :func:`libra.retrieval.base.retrieve_names`)."""
    return retrieve_names(retriever, catalog, queries, depth)


#: How many tools a method returns per task unless it has its own candidate set size: the paper's default Kc.
DEFAULT_DEPTH = 20


def candidate_depth(retriever: Any, opts: EvalOptions) -> int:
    """How many tools ``retriever`` returns per task: its candidate set size Kc (``--kc``) when it has one and
    one was given, else max(K, :data:`DEFAULT_DEPTH`). The returned tools are what the agent would see, so metrics
    at K count only those: a Kc below K caps what can be retrieved, a Kc above K changes nothing at K."""
    kc = opts.extra.get("kc")
    if kc is not None and hasattr(retriever, "kc"):
        return int(kc)
    return max(opts.k, DEFAULT_DEPTH)


def run_method(
    method: str, bench: Benchmark, catalog: Catalog, tasks: Sequence[Task], opts: EvalOptions
) -> MethodResult:
    t0 = time.perf_counter()
    retriever = get_method(method)(bench, catalog, opts)
    depth = candidate_depth(retriever, opts)
    rankings = retrieve(retriever, catalog, [t.query for t in tasks], depth)
    seconds = time.perf_counter() - t0
    golds = [t.gold for t in tasks]
    scores = evaluate([r[: opts.k] for r in rankings], golds, opts.k)
    extra = {"score_space": retriever.used_score_space} if getattr(retriever, "used_score_space", None) else {}
    if callable(getattr(retriever, "report", None)):
        extra.update(retriever.report())  # LLM methods: calls, cache hits, recorded fallbacks
    by_iteration = getattr(retriever, "by_iteration", None)
    if by_iteration:
        extra["by_iteration"] = iteration_scores(by_iteration, golds, opts.k)
    return MethodResult(method, scores, rankings, seconds, extra)


def iteration_scores(
    by_iteration: Sequence[Sequence[Sequence[str]]], golds: Sequence[Any], k: int
) -> list[dict[str, Any]]:
    """P/R/NDCG@k of an agent's candidate sets after each iteration (Figure 2's curve), one entry per iteration."""
    n = max((len(sets) for sets in by_iteration), default=0)
    out = []
    for i in range(n):
        ranked = [list(sets[min(i, len(sets) - 1)])[:k] if sets else [] for sets in by_iteration]
        out.append({"iteration": i + 1, **evaluate(ranked, golds, k).as_dict()})
    return out


def results_json(
    bench: Benchmark, k: int, n_tasks: int, results: Sequence[MethodResult], split: str = "all"
) -> dict[str, Any]:
    return {
        "benchmark": bench.name,
        "k": k,
        **({"split": split} if split != "all" else {}),
        "n_tasks": n_tasks,
        "results": [{"method": r.method, **r.scores.as_dict(), **r.extra} for r in results],
    }


def write_runs(path: str | Path, tasks: Sequence[Task], results: Sequence[MethodResult], k: int) -> None:
    """Per-task rankings: TREC run format for ``.trec``/``.run`` files, JSON lines otherwise."""
    path = Path(path)
    lines: list[str] = []
    trec = path.suffix in (".trec", ".run")
    for res in results:
        for task, ranking in zip(tasks, res.rankings):
            if trec:
                for pos, name in enumerate(ranking[:k]):
                    lines.append(f"{task.id} Q0 {name} {pos + 1} {k - pos} {res.method}")
            else:
                lines.append(
                    json.dumps({"method": res.method, "task": task.id, "ranking": ranking[:k], "gold": list(task.gold)})
                )
    atomic_write_text(path, "\n".join(lines) + ("\n" if lines else ""))


def write_json(path: str | Path, payload: dict[str, Any]) -> None:
    atomic_write_json(path, payload)
