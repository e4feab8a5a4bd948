"""``libra retrieve``: the tools a built library retrieves for a request, and why each promoted one is there."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

from rich.table import Table

from . import cli_options as opts
from ._io import atomic_write_json
from .cli import app, console


def _seeds(names: list[str], shown: int = 2) -> str:
    """The best-ranked seeds first; the JSON output keeps them all."""
    more = f" (+{len(names) - shown})" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


@app.command("retrieve")
def retrieve_cmd(
    library: Path = opts.library_arg("library file (from libra build)"),
    query: List[str] = opts.queries_arg(),
    k: int = opts.k_option(10, "how many tools to return per request"),
    base: str = opts.base_option(),
    embedder: str = opts.embedder_option(),
    document: str = opts.document_option(),
    ks: int = opts.ks_option(15),
    selection: str = opts.selection_option("both"),
    hops: int = opts.hops_option(1),
    score_space: str = opts.score_space_option("probability", "average the encoder's probabilities (default) or its similarities (the paper's)"),
    temperature: Optional[float] = opts.temperature_option(),
    json_path: Optional[Path] = opts.json_option("write the rankings as JSON"),
) -> None:
    """Retrieve tools for requests with a built library; promoted prerequisites name the seeds that pulled them in."""
    from .library import Library
    from .retrieval.explain import explained_retrieval

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
