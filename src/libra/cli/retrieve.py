"""``libra retrieve``: the tools a built library retrieves for a request, and why each promoted one is there."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from libra._util.io import atomic_write_json
from libra.cli import options as opts
from libra.cli.console import console


def _seeds(names: list[str], shown: int = 2) -> str:
    """The best-ranked seeds first; the JSON output keeps them all."""
    more = f" (+{len(names) - shown})" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def retrieve_cmd(
    library: Path = opts.library_arg("library file (from libra build)"),
    query: list[str] = opts.queries_arg(),
    k: int = opts.k_option(10, "how many tools to return per request"),
    base: str = opts.base_option(),
    embedder: str = opts.embedder_option(),
    document: str = opts.document_option(),
    ks: int = opts.ks_option(15),
    selection: str = opts.selection_option("both"),
    hops: int = opts.hops_option(1),
    score_space: str = opts.score_space_option(
        "probability", "average the encoder's probabilities (default) or its similarities (the paper's)"
    ),
    temperature: float | None = opts.temperature_option(),
    output_format: str = opts.retrieve_format_option(),
    json_path: Path | None = opts.json_option("write the rankings as JSON"),
) -> None:
    """Retrieve tools for requests with a built library; promoted prerequisites name the seeds that pulled them in."""
    from libra.search.formats import formatted, json_record
    from libra.search.searcher import Searcher, SearchOptions

    searcher = Searcher.open(
        library, SearchOptions(base, embedder, document, ks, selection, hops, score_space, temperature)
    )
    found = searcher.search_many(list(query), k)
    if output_format == "table":
        for q, rows in zip(query, found):
            table = Table(title=q)
            table.add_column("rank", no_wrap=True)
            table.add_column("tool", overflow="fold")
            table.add_column(f"{base} rank")
            # Seed names are long (app.tool) and have no spaces: in a narrow terminal the column keeps a quarter of
            # the width and names fold onto more lines, rather than the column shrinking to nothing.
            table.add_column("promoted by", overflow="fold", min_width=min(16, console.width // 4))
            for r in rows:
                table.add_row(str(r.rank), r.tool, str(r.base_rank), _seeds(r.promoted_by))
            console.print(table)
    else:
        for q, rows in zip(query, found):
            print(json.dumps(formatted(output_format, q, rows), ensure_ascii=False), flush=True)
    if json_path:
        atomic_write_json(
            json_path,
            {"library": str(library), "base": base, "results": [json_record(q, rows) for q, rows in zip(query, found)]},
        )
