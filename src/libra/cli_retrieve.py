"""``libra retrieve``: the tools a built library retrieves for a request, and why each promoted one is there."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.table import Table

from ._io import atomic_write_json
from .cli import app, console
from .errors import ConfigError
from .retrieval.documents import DEFAULT_DOCUMENT

BASES = ("dense", "hybrid")


def _base(name: str, embedder: str, document: str) -> Any:
    from .retrieval.dense import DenseRetriever

    dense = DenseRetriever(embedder, document=document)
    if name == "dense":
        return dense
    if name == "hybrid":
        from .retrieval.bm25 import BM25Retriever
        from .retrieval.hybrid import HybridRetriever

        return HybridRetriever([BM25Retriever(), dense])
    raise ConfigError(f"--base must be one of {', '.join(BASES)}; got {name!r}")


def retrieve_with_reasons(library: Any, queries: List[str], k: int = 10, base: str = "dense", embedder: str = "minilm", document: str = DEFAULT_DOCUMENT, **options: Any) -> list[list[dict[str, Any]]]:
    """Top-``k`` tools per query, each with its base rank and the seeds that promoted it (empty when none did)."""
    from .eval.analysis import _positions
    from .retrieval.graph import PropagationGraph, propagate, propagation_scores
    from .retrieval.graph_methods import library_edges

    catalog = library.catalog
    retriever = _base(base, embedder, document).fit(catalog)
    raw = retriever.score(queries)
    scores, _space = propagation_scores(retriever, raw, options.pop("score_space", "probability"), options.pop("temperature", None))
    graph = PropagationGraph.build(catalog, library_edges(library))
    names = catalog.names
    out = []
    for row in scores:
        new, trace = propagate(graph, row, trace=True, **options)  # type: ignore[misc]
        before, after = _positions(row), _positions(new)
        top = sorted(range(len(names)), key=lambda i: after[i])[:k]
        out.append([{
            "rank": int(after[i]) + 1,
            "tool": names[i],
            "base_rank": int(before[i]) + 1,
            "promoted_by": [names[t] for t in sorted(trace.contributors.get(i, ()), key=lambda t: before[t])] if new[i] > row[i] else [],
        } for i in top])
    return out


def _seeds(names: list[str], shown: int = 2) -> str:
    """The best-ranked seeds first; the JSON output keeps them all."""
    more = f" (+{len(names) - shown})" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


@app.command("retrieve")
def retrieve_cmd(
    library: Path = typer.Argument(..., help="library file (from libra build)"),
    query: List[str] = typer.Argument(..., help="one or more requests"),
    k: int = typer.Option(10, "--k", help="how many tools to return per request"),
    base: str = typer.Option("dense", "--base", help="base retriever: dense (default) or hybrid (BM25 + dense)"),
    embedder: str = typer.Option("minilm", "--embedder"),
    document: str = typer.Option(DEFAULT_DOCUMENT, "--document", help="what dense retrieval embeds per tool: text or json"),
    ks: int = typer.Option(15, "--ks", help="seed size Ks"),
    selection: str = typer.Option("both", "--selection", help="provider selection both|field|dense|all"),
    hops: int = typer.Option(1, "--hops", help="hop depth"),
    json_path: Optional[Path] = typer.Option(None, "--json", help="write the rankings as JSON"),
) -> None:
    """Retrieve tools for requests with a built library; promoted prerequisites name the seeds that pulled them in."""
    from .library import Library
    from .retrieval.documents import check_style

    check_style(document)
    if k < 1 or ks < 1 or hops < 1:
        raise ConfigError("--k, --ks and --hops must be positive integers")
    if selection not in ("both", "field", "dense", "all"):
        raise ConfigError(f"--selection must be one of both, field, dense, all; got {selection!r}")
    _base(base, "hash", document)  # fail fast on a bad --base, before loading anything large
    lib = Library.load(library)
    results = retrieve_with_reasons(lib, list(query), k, base, embedder, document, ks=ks, selection=selection, hops=hops)
    for q, rows in zip(query, results):
        table = Table(title=q)
        for col in ("rank", "tool", f"{base} rank", "promoted by"):
            table.add_column(col, no_wrap=col != "promoted by")
        for r in rows:
            table.add_row(str(r["rank"]), r["tool"], str(r["base_rank"]), _seeds(r["promoted_by"]))
        console.print(table)
    if json_path:
        atomic_write_json(json_path, {"library": str(library), "base": base, "results": [{"query": q, "tools": rows} for q, rows in zip(query, results)]})
