"""``libra retrieve``: the tools a built library retrieves for a request, and why each promoted one is there."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from ._io import atomic_write_json
from .cli import app, check_graph_options, console
from .errors import ConfigError
from .retrieval.documents import DEFAULT_DOCUMENT


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
    score_space: str = typer.Option("probability", "--score-space", help="average the encoder's probabilities (default) or its similarities (the paper's)"),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="softmax temperature over cosines (default: the embedder's own)"),
    json_path: Optional[Path] = typer.Option(None, "--json", help="write the rankings as JSON"),
) -> None:
    """Retrieve tools for requests with a built library; promoted prerequisites name the seeds that pulled them in."""
    from .library import Library
    from .retrieval.documents import check_style
    from .retrieval.explain import check_base, explained_retrieval

    check_style(document)
    if k < 1 or ks < 1 or hops < 1:
        raise ConfigError("--k, --ks and --hops must be positive integers")
    check_graph_options(selection, score_space, temperature)
    check_base(base)  # fail fast, before loading anything large
    lib = Library.load(library)
    results = [[t.to_dict() for t in tools] for tools in explained_retrieval(lib, list(query), k, base, embedder, document, ks, selection, hops, score_space, temperature)]
    for q, rows in zip(query, results):
        table = Table(title=q)
        for col in ("rank", "tool", f"{base} rank", "promoted by"):
            table.add_column(col, no_wrap=col != "promoted by")
        for r in rows:
            table.add_row(str(r["rank"]), r["tool"], str(r["base_rank"]), _seeds(r["promoted_by"]))
        console.print(table)
    if json_path:
        atomic_write_json(json_path, {"library": str(library), "base": base, "results": [{"query": q, "tools": rows} for q, rows in zip(query, results)]})
