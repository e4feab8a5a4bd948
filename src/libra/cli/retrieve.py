"""``libra retrieve``: the tools a built library retrieves for a request, and why each promoted one is there."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from libra._util.io import atomic_write_json
from libra.cli import options as opts
from libra.cli.console import console
from libra.errors import ConfigError
from libra.search.options import SearchOptions

DEFAULT = SearchOptions()  # the retrieval default (libra.retrieval.defaults), as serve and eval use it


def _seeds(names: list[str], shown: int = 2) -> str:
    """The best-ranked seeds first; the JSON output keeps them all."""
    more = f" (+{len(names) - shown})" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _call_ids(given: list[str] | None, output_format: str, n_queries: int) -> list[str | None]:
    """One ``tool_search_call`` id per request (``--call-id``, in the requests' order), checked before any work."""
    if not given:
        return [None] * n_queries
    if output_format != "openai":
        raise ConfigError("--call-id names the model's tool_search_call an openai item answers: add --format openai")
    if len(given) != n_queries:
        raise ConfigError(
            f"--call-id was given {len(given)} time(s) for {n_queries} request(s): give one per request, in order"
        )
    return list(given)


def retrieve_cmd(
    library: Path = opts.library_arg("library file (from libra build)"),
    query: list[str] = opts.queries_arg(),
    k: int = opts.k_option(10, "how many tools to return per request"),
    base: str = opts.base_option(),
    embedder: str = opts.embedder_option(),
    document: str = opts.document_option(),
    ks: int = opts.ks_option(DEFAULT.ks),
    selection: str = opts.selection_option(DEFAULT.selection),
    hops: int = opts.hops_option(DEFAULT.hops),
    score_space: str = opts.score_space_option(
        DEFAULT.score_space, "average the encoder's probabilities (default) or its similarities (the paper's)"
    ),
    temperature: float | None = opts.temperature_option(),
    decay: float = opts.decay_option(DEFAULT.decay),
    output_format: str = opts.retrieve_format_option(),
    call_id: list[str] | None = opts.call_id_option(),
    json_path: Path | None = opts.json_option("write the rankings as JSON"),
) -> None:
    """Retrieve tools for requests with a built library; promoted prerequisites name the seeds that pulled them in."""
    from libra.search.formats import ClientNames, formatted, json_record
    from libra.search.searcher import Searcher, SearchOptions

    call_ids = _call_ids(call_id, output_format, len(query))
    searcher = Searcher.open(
        library, SearchOptions(base, embedder, document, ks, selection, hops, score_space, temperature, decay)
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
        names = ClientNames(searcher.index.names) if output_format == "anthropic" else None
        for q, rows, cid in zip(query, found, call_ids):
            print(json.dumps(formatted(output_format, q, rows, names, cid), ensure_ascii=False), flush=True)
    if json_path:
        atomic_write_json(
            json_path,
            {"library": str(library), "base": base, "results": [json_record(q, rows) for q, rows in zip(query, found)]},
        )
