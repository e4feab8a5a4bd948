"""Figure 2 / Figure 17 style plot: Recall and NDCG@K of an agent's candidate set after each iteration.

Why a plot of its own: the paper reports agentic retrieval after a fixed number of iterations; the curve shows
how much each extra search adds and where an agent stops gaining, which a single number hides. Only measured
iterations are drawn (``by_iteration`` of a result, recorded by the runner); nothing is interpolated.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from libra.eval.analysis import pyplot, save_png


def plot_iterations(path: str | Path, bench: str, k: int, results: Sequence[Any]) -> None:
    """One line per agentic result (label: method and its base), Recall and NDCG side by side."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for r in results:
        points = r.extra.get("by_iteration") if hasattr(r, "extra") else r.get("by_iteration")
        if not points:
            continue
        extra = r.extra if hasattr(r, "extra") else r
        label = f"{getattr(r, 'method', extra.get('method', ''))} ({extra.get('base', '?')})"
        xs = [p["iteration"] for p in points]
        for ax, metric in zip(axes, ("recall", "ndcg")):
            ax.plot(xs, [p[metric] for p in points], marker="o", label=label)
    for ax, metric in zip(axes, ("Recall", "NDCG")):
        ax.set_xlabel("iteration")
        ax.set_ylabel(f"{metric}@{k} (%)")
        ax.set_title(f"{bench}: {metric}@{k} per iteration")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    save_png(fig, path)
