"""Search results in the shapes agent clients that run tool search on their side expect.

- ``anthropic``: the content of the ``tool_result`` a client returns for its own tool-search tool, a list of
  ``{"type": "tool_reference", "tool_name": ...}`` blocks; Claude then loads those tools, which the request
  declares with ``defer_loading``.
- ``openai``: a Responses API ``tool_search_output`` input item with ``execution: "client"``, whose ``tools`` are
  the found tools as function tools (``name``, ``description``, ``parameters``) grouped in a ``namespace`` per
  app (``spotify.login`` is function ``login`` of namespace ``spotify``), ready to append to the input.
- ``json``: libra's own :class:`~libra.search.searcher.Result` records, with prerequisites and evidence.

The client formats carry no prerequisites (their shapes have no place for them); prerequisites that propagation
promoted are among the tools themselves.
"""

from __future__ import annotations

import re
from typing import Any

from libra.search.searcher import Result


def anthropic_blocks(results: list[Result]) -> list[dict[str, Any]]:
    return [{"type": "tool_reference", "tool_name": r.tool} for r in results]


_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def _function(name: str, r: Result) -> dict[str, Any]:
    return {
        "type": "function",
        "name": name,
        "description": r.description,
        "parameters": r.input_schema,
        "strict": False,
    }


def openai_item(results: list[Result], call_id: str | None = None) -> dict[str, Any]:
    """Function names allow only letters, digits, ``_`` and ``-``, so a qualified name ``app.tool`` becomes
    function ``tool`` in namespace ``app`` (namespaces in the order of their best-ranked tool)."""
    tools: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for r in results:
        prefix, _, short = r.tool.rpartition(".")
        if not prefix:
            tools.append(_function(_NOT_NAME.sub("_", r.tool), r))
            continue
        space = _NOT_NAME.sub("_", prefix)
        if space not in spaces:
            spaces[space] = {"type": "namespace", "name": space, "description": f"tools of {prefix}", "tools": []}
            tools.append(spaces[space])
        spaces[space]["tools"].append(_function(_NOT_NAME.sub("_", short), r))
    return {
        "type": "tool_search_output",
        "execution": "client",
        "call_id": call_id,
        "status": "completed",
        "tools": tools,
    }


def json_record(query: str, results: list[Result]) -> dict[str, Any]:
    return {"query": query, "tools": [r.to_dict() for r in results]}


def formatted(fmt: str, query: str, results: list[Result]) -> Any:
    """One request's results in format ``fmt`` (``json``, ``anthropic`` or ``openai``)."""
    if fmt == "anthropic":
        return anthropic_blocks(results)
    if fmt == "openai":
        return openai_item(results)
    return json_record(query, results)
