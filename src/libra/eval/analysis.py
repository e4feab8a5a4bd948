"""The paper's retrieval analyses over one benchmark and one library.

- :func:`recovery_breakdown` (Table 3): every gold tool ranked outside the dense top-K is exactly one of
  *no graph edge* / *consumer not seeded* / *provider not selected* / *below cutoff* / *recovered*.
- :func:`sensitivity` (Table 6): provider selection, seed size and hop depth, with the library fixed; and, beyond
  the paper, which scores propagation averages (the encoder's probabilities or its similarities).

``base`` is always what propagation averages (see :func:`libra.retrieval.graph.propagation_scores`); any such map is
strictly increasing, so the dense ranks read from it are the dense retriever's own.
- :func:`recovered_cases` (Figure 3): providers LIBRA moved into the top K, with their and their consumer's ranks.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from libra._util.io import atomic_write_bytes
from libra.benchmarks.base import Task
from libra.catalog import Catalog
from libra.eval.metrics import evaluate
from libra.retrieval.base import rank, ranks
from libra.retrieval.graph import PropagationGraph, propagate

OUTCOMES = ("no_edge", "consumer_not_seeded", "provider_not_selected", "below_cutoff", "recovered")


@dataclass
class Breakdown:
    occurrences: int
    counts: dict[str, int]
    #: the "no edge" occurrences split by why their tool provides no relation (the library's
    #: ``stats.health.no_relation``, see :mod:`libra.induction.providers`); empty when the library does not record it
    no_edge_causes: dict[str, int] = field(default_factory=dict)
    #: the "no edge" occurrences per gold tool, most first: ``[{"tool", "occurrences", "cause"}]`` (``cause`` only
    #: when the library records causes). Why: the share is a handful of tools, and whether it can fall depends on
    #: what each of them is -- a tool whose values some consumer needs (a miss) or one whose output no other tool
    #: takes (an action that ends a task) -- which only the per-tool list lets a reader check against the tools.
    no_edge_tools: list[dict[str, Any]] = field(default_factory=list)

    def percent(self) -> dict[str, float]:
        n = max(1, self.occurrences)
        return {k: 100.0 * v / n for k, v in self.counts.items()}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"occurrences": self.occurrences, "counts": self.counts, "percent": self.percent()}
        if self.no_edge_causes:
            out["no_edge_causes"] = self.no_edge_causes
        if self.no_edge_tools:
            out["no_edge_tools"] = self.no_edge_tools
        return out


#: A "no edge" tool the library's cause report does not list (a relation the graph does not use, or an older build).
UNRECORDED = "unrecorded"


def tool_causes(no_relation: Any) -> dict[str, str]:
    """tool -> cause, from a library's ``stats.health.no_relation`` (empty when it has none)."""
    causes = no_relation.get("causes") if isinstance(no_relation, dict) else None
    return {str(t): str(c) for c, tools in (causes or {}).items() for t in tools}


def _positions(scores: np.ndarray) -> np.ndarray:
    """0-based rank of every tool under ``scores`` (ties by catalog order)."""
    return ranks(scores)[0] - 1


def recovery_breakdown(
    graph: PropagationGraph,
    catalog: Catalog,
    tasks: Sequence[Task],
    base: np.ndarray,
    k: int,
    ks: int = 15,
    selection: str = "both",
    hops: int = 1,
    causes: dict[str, str] | None = None,
) -> Breakdown:
    """Table 3; with ``causes`` (tool -> why it provides no relation, :func:`tool_causes`) the "no edge"
    occurrences are also counted by cause, so the largest reason a gold provider has no edge can be read off; the
    "no edge" occurrences are also listed per tool (:attr:`Breakdown.no_edge_tools`)."""
    has_out = graph.has_outgoing()
    by_cause: dict[str, int] = {}
    by_tool: dict[str, int] = {}
    consumers = graph.consumers_of()
    counts = {o: 0 for o in OUTCOMES}
    n = 0
    for qi, task in enumerate(tasks):
        s = base[qi]
        dense_pos = _positions(s)
        new, tr = propagate(graph, s, ks=ks, selection=selection, hops=hops, trace=True)  # type: ignore[misc]
        new_pos = _positions(new)
        seeds = set(tr.seeds)
        for g in task.gold:
            u = catalog.index(g)
            if dense_pos[u] < k:
                continue
            n += 1
            if new_pos[u] < k:
                counts["recovered"] += 1
            elif not has_out[u]:
                counts["no_edge"] += 1
                by_tool[g] = by_tool.get(g, 0) + 1
                if causes is not None:
                    cause = causes.get(g, UNRECORDED)
                    by_cause[cause] = by_cause.get(cause, 0) + 1
            elif not (consumers.get(u, set()) & seeds):
                counts["consumer_not_seeded"] += 1
            elif u not in tr.contributors:
                counts["provider_not_selected"] += 1
            else:
                counts["below_cutoff"] += 1
    tools = []
    for tool, m in sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0])):
        row: dict[str, Any] = {"tool": tool, "occurrences": m}
        if causes is not None:
            row["cause"] = causes.get(tool, UNRECORDED)
        tools.append(row)
    return Breakdown(n, counts, dict(sorted(by_cause.items(), key=lambda kv: (-kv[1], kv[0]))), tools)


def score_variant(
    graph: PropagationGraph, tasks: Sequence[Task], catalog: Catalog, base: np.ndarray, k: int, **kw: Any
) -> dict[str, float]:
    names = catalog.names
    rankings = []
    for qi in range(len(tasks)):
        out = propagate(graph, base[qi], **kw)
        rankings.append([names[i] for i in rank(out, k)[0]])
    s = evaluate(rankings, [t.gold for t in tasks], k)
    return {"recall": s.recall, "ndcg": s.ndcg, "precision": s.precision}


def sensitivity(
    graph: PropagationGraph,
    tasks: Sequence[Task],
    catalog: Catalog,
    base: np.ndarray,
    k: int,
    score_spaces: dict[str, np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """Table 6 rows; ``score_spaces`` (name -> the same queries' scores in that space) adds one row per space."""
    rows = []
    for sel in ("field", "dense", "both", "all"):
        rows.append(
            {
                "setting": "provider selection",
                "variant": sel,
                **score_variant(graph, tasks, catalog, base, k, ks=15, selection=sel, hops=1),
            }
        )
    for ks in (10, 15, 20):
        rows.append(
            {
                "setting": "seed size",
                "variant": ks,
                **score_variant(graph, tasks, catalog, base, k, ks=ks, selection="both", hops=1),
            }
        )
    for h in (1, 2):
        rows.append(
            {
                "setting": "hop depth",
                "variant": h,
                **score_variant(graph, tasks, catalog, base, k, ks=15, selection="both", hops=h),
            }
        )
    for name, scores in (score_spaces or {}).items():
        rows.append(
            {
                "setting": "score space",
                "variant": name,
                **score_variant(graph, tasks, catalog, scores, k, ks=15, selection="both", hops=1),
            }
        )
    return rows


def recovered_cases(
    graph: PropagationGraph, catalog: Catalog, tasks: Sequence[Task], base: np.ndarray, k: int, limit: int = 10
) -> list[dict[str, Any]]:
    """Gold providers outside the dense top-K that propagation moved into it, largest rank gain first."""
    names = catalog.names
    cases = []
    for qi, task in enumerate(tasks):
        s = base[qi]
        dense_pos = _positions(s)
        new, tr = propagate(graph, s, ks=15, trace=True)  # type: ignore[misc]
        new_pos = _positions(new)
        gold = {catalog.index(g) for g in task.gold}
        for u in gold:
            if dense_pos[u] >= k and new_pos[u] < k:
                cons = sorted(tr.contributors.get(u, ()), key=lambda t: dense_pos[t])
                if not cons:
                    continue
                t = cons[0]
                cases.append(
                    {
                        "task": task.id,
                        "provider": names[u],
                        "consumer": names[t],
                        "provider_dense_rank": int(dense_pos[u]) + 1,
                        "consumer_dense_rank": int(dense_pos[t]) + 1,
                        "provider_rank_after": int(new_pos[u]) + 1,
                        "consumer_is_gold": t in gold,
                    }
                )
    cases.sort(key=lambda c: (-(c["provider_dense_rank"] - c["provider_rank_after"]), c["task"]))
    seen, out = set(), []
    for c in cases:
        key = (c["provider"], c["consumer"])
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out[:limit]


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, or the install hint."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        from libra.errors import MissingDependencyError

        raise MissingDependencyError("--plot needs matplotlib: pip install 'libra-tools[plot]'") from None
    return plt


def save_png(fig: Any, path: str | Any) -> None:
    """Write a figure as PNG atomically (a failure is one line naming the path) and close it."""
    plt = pyplot()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def plot_methods(results: Sequence[dict[str, Any]], title: str, path: str) -> None:
    """A grouped bar chart of P/R/NDCG per method (matplotlib, PNG)."""
    plt = pyplot()
    metrics = ("precision", "recall", "ndcg")
    x = np.arange(len(metrics))
    width = 0.8 / max(1, len(results))
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, r in enumerate(results):
        vals = [r[m] for m in metrics]
        bars = ax.bar(x + i * width - 0.4 + width / 2, vals, width, label=r["method"])
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    ax.set_xticks(x, ["Precision", "Recall", "NDCG"])
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)
