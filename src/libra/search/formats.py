"""Search results, and the tool definitions they point to, in the shapes agent clients that run tool search on
their side expect.

- ``anthropic``: the content of the ``tool_result`` a client returns for its own tool-search tool, a list of
  ``{"type": "tool_reference", "tool_name": ...}`` blocks; Claude then loads those tools, which the request
  declares with ``defer_loading`` (:func:`definitions` gives those declarations, with the same names).
- ``openai``: a Responses API ``tool_search_output`` input item with ``execution: "client"`` and the ``call_id``
  of the model's ``tool_search_call`` it answers, whose ``tools`` are the found tools as function tools (``name``,
  ``description``, ``parameters``) grouped in a ``namespace`` per app (``spotify.login`` is function ``login`` of
  namespace ``spotify``), ready to append to the input.
- ``json``: libra's own :class:`~libra.search.searcher.Result` records, with prerequisites and evidence.

Names: Anthropic's tool names must match ``^[a-zA-Z0-9_-]{1,64}$``, and MCP catalogs name tools ``server.tool``.
:class:`ClientNames` maps a catalog's names to names that fit, reversibly over that catalog (``memory.read_graph``
-> ``memory__read_graph``), so a client's ``tool_use`` of a mapped name finds its tool again, and ``libra serve``'s
``call_tool`` accepts both.

The client formats carry no prerequisites (their shapes have no place for them); prerequisites that propagation
promoted are among the tools themselves.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy-free at import: the gateway maps names before anything heavy loads
    from libra.search.searcher import Result

#: The tool names Anthropic's API accepts (OpenAI's function names follow the same rule).
CLIENT_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
CLIENT_NAME_LIMIT = 64
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]+")
FORMATS = ("json", "anthropic", "openai")
DEFINITION_FORMATS = ("anthropic", "openai")


def _hashed(name: str, stem: str) -> str:
    """``stem`` cut to fit, then ``_`` and 8 hex digits of ``name``: unique for the original name."""
    tag = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{stem[: CLIENT_NAME_LIMIT - 9].rstrip('_') or 'tool'}_{tag}"


@dataclass
class ClientNames:
    """A catalog's tool names and the names clients see, both ways (see the module docstring).

    A name that fits is kept; in others a dot becomes ``__`` and any other character ``_``. When that changes
    more than the dots, makes a name longer than 64 characters, or gives two tools one name (or a tool another
    tool's own name), the name ends in ``_`` and 8 hex digits of the original instead, so no two tools share a
    client name."""

    names: Sequence[str]
    to_client: dict[str, str] = field(init=False)
    from_client: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        originals = set(self.names)
        simple: dict[str, str] = {}
        for name in self.names:
            simple[name] = name if CLIENT_NAME.match(name) else _NOT_NAME.sub("_", name.replace(".", "__"))
        taken: dict[str, int] = {}
        for client in simple.values():
            taken[client] = taken.get(client, 0) + 1
        self.to_client = {}
        for name, client in simple.items():
            if client != name:  # a name that fits is kept; a mapped one must not be lossy, clash or overflow
                lossy = _NOT_NAME.search(name.replace(".", "")) is not None
                clash = taken[client] > 1 or client in originals
                if lossy or clash or len(client) > CLIENT_NAME_LIMIT:
                    client = _hashed(name, client)
            self.to_client[name] = client
        self.from_client = {c: n for n, c in self.to_client.items()}

    def client(self, name: str) -> str:
        return self.to_client.get(name) or _hashed(name, _NOT_NAME.sub("_", name.replace(".", "__")))

    def original(self, name: str) -> str | None:
        """The catalog's name of a client's name (a catalog name is its own), None for neither."""
        if name in self.to_client:
            return name
        return self.from_client.get(name)


def anthropic_blocks(results: list[Result], names: ClientNames | None = None) -> list[dict[str, Any]]:
    """``tool_reference`` blocks for a ``tool_result``'s content, named as :func:`definitions` names them."""
    names = names or ClientNames([r.tool for r in results])
    return [{"type": "tool_reference", "tool_name": names.client(r.tool)} for r in results]


def _function(name: str, description: str, parameters: dict[str, Any], defer: bool = False) -> dict[str, Any]:
    out = {"type": "function", "name": name, "description": description, "parameters": parameters, "strict": False}
    if defer:
        out["defer_loading"] = True
    return out


def _openai_tools(tools: Iterable[tuple[str, str, dict[str, Any]]], defer: bool) -> list[dict[str, Any]]:
    """Function tools grouped in a namespace per app: function names allow only letters, digits, ``_`` and ``-``,
    so a qualified name ``app.tool`` becomes function ``tool`` in namespace ``app`` (namespaces in the order of
    their first tool)."""
    out: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for name, description, parameters in tools:
        prefix, _, short = name.rpartition(".")
        if not prefix:
            out.append(_function(_NOT_NAME.sub("_", name), description, parameters, defer))
            continue
        space = _NOT_NAME.sub("_", prefix)
        if space not in spaces:
            spaces[space] = {"type": "namespace", "name": space, "description": f"tools of {prefix}", "tools": []}
            out.append(spaces[space])
        spaces[space]["tools"].append(_function(_NOT_NAME.sub("_", short), description, parameters, defer))
    return out


def openai_item(results: list[Result], call_id: str | None = None) -> dict[str, Any]:
    """The ``tool_search_output`` item answering the model's ``tool_search_call`` ``call_id``."""
    return {
        "type": "tool_search_output",
        "execution": "client",
        "call_id": call_id,
        "status": "completed",
        "tools": _openai_tools(((r.tool, r.description, r.input_schema) for r in results), defer=False),
    }


def definitions(
    fmt: str, names: Sequence[str], descriptions: Sequence[str], schemas: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every tool's definition for a request's ``tools``, with ``defer_loading``: the tools a search's results
    point to, loaded only when a search returns them. ``anthropic``: tool definitions named as
    :func:`anthropic_blocks` names them; ``openai``: function tools in a namespace per app."""
    if fmt == "anthropic":
        client = ClientNames(names)
        return [
            {"name": client.client(n), "description": d, "input_schema": s, "defer_loading": True}
            for n, d, s in zip(names, descriptions, schemas)
        ]
    if fmt == "openai":
        return _openai_tools(zip(names, descriptions, schemas), defer=True)
    raise ValueError(f"unknown definitions format {fmt!r}: choose one of {', '.join(DEFINITION_FORMATS)}")


def json_record(query: str, results: list[Result]) -> dict[str, Any]:
    return {"query": query, "tools": [r.to_dict() for r in results]}


def formatted(
    fmt: str, query: str, results: list[Result], names: ClientNames | None = None, call_id: str | None = None
) -> Any:
    """One request's results in format ``fmt`` (``json``, ``anthropic`` or ``openai``); ``names`` maps the whole
    catalog's names for ``anthropic`` (so the blocks name what :func:`definitions` declares), ``call_id`` is the
    ``tool_search_call`` an ``openai`` item answers."""
    if fmt == "anthropic":
        return anthropic_blocks(results, names)
    if fmt == "openai":
        return openai_item(results, call_id)
    return json_record(query, results)
