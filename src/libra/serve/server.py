"""``libra serve``: a library as an MCP server whose ``search_tools`` answers with tools and their prerequisites.

Built on the official MCP SDK's low-level :class:`mcp.server.lowlevel.Server`, so the tool's input and output
schemas are written here once and every refusal is ours: bad input (``k`` missing, 0 or beyond the limit, an
empty or oversized query, an unknown tool) comes back as a tool result with ``isError`` true and a message that
says what to change. A protocol error would make most clients raise instead of showing the model the message,
and the model is who can fix the call. The server keeps serving the next request either way.

Each ``search_tools`` result is returned twice, as the MCP spec recommends for structured output: as
``structuredContent`` matching the advertised output schema, and as a compact text form for clients that only
read text. Both carry every result's prerequisites with their line of evidence.

The searcher may still be opening when the server starts (:class:`SearcherLoading`): the handshake and
``tools/list`` are answered at once, and a search waits for what is left of the load. Nothing here imports numpy
or the model at import time, so a server whose library opens from its cached index answers the handshake
after importing the SDK alone.

Extension point: :class:`ToolForwarder`. A gateway that fronts the MCP servers a library was built from passes
one to :func:`build_server`; its tools are listed beside ``search_tools`` and calls to them are forwarded.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from libra.errors import LibraError
from libra.serve.loading import SearcherLoading
from libra.serve.reload import LibraryVersion

if TYPE_CHECKING:
    from libra.search.searcher import Result, Searcher
    from libra.serve.reload import LiveLibrary

#: The most tools one search returns: every result carries its schema and prerequisites, and an agent's context
#: is the budget. A client that needs more tools asks again with another query.
MAX_K = 50
#: The longest query accepted. The default embedder reads 256 word pieces (about 1,000 characters); the rest
#: of a longer query is ignored, so a query this long is a mistake (a pasted file, a runaway prompt).
MAX_QUERY_CHARS = 4000
SEARCH_TOOL = "search_tools"


class ToolForwarder(Protocol):
    """Tools served beside ``search_tools`` and forwarded elsewhere (the gateway's ``call_tool``).

    ``tools()`` lists them as MCP ``Tool`` objects; ``call(name, arguments)`` runs one and returns an MCP
    ``CallToolResult`` (with ``is_error`` true for any failure the caller can act on)."""

    def tools(self) -> list[Any]: ...

    def call(self, name: str, arguments: dict[str, Any]) -> Awaitable[Any]: ...


@dataclass
class SearchResponse:
    """The structured output of ``search_tools``."""

    query: str
    k: int
    results: list[Result]
    #: the library that answered (a served library is swapped when its file is replaced: :mod:`.reload`)
    library: LibraryVersion | None = None


@lru_cache(maxsize=1)
def _response_adapter() -> Any:
    from pydantic import TypeAdapter

    from libra.search.searcher import Result  # noqa: F401 - resolves SearchResponse's annotation (imported late: numpy)

    return TypeAdapter(SearchResponse)


def output_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`SearchResponse`, derived by pydantic from the dataclasses themselves, with its
    references inlined and each optional field's ``anyOf`` of one type and null written as a type list (same
    meaning): clients validate every result against it, and a validator following ``$ref`` or trying
    ``anyOf`` branches for each of dozens of nested records spends more time on that than the server spends
    searching."""
    from libra.schema import dereference

    return _flat_optionals(dereference(_response_adapter().json_schema()))


def _flat_optionals(node: Any) -> Any:
    """``{"anyOf": [{"type": T}, {"type": "null"}], ...}`` as ``{"type": [T, "null"], ...}``, everywhere."""
    if isinstance(node, list):
        return [_flat_optionals(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _flat_optionals(v) for k, v in node.items()}
    branches = out.get("anyOf")
    if (
        isinstance(branches, list)
        and "type" not in out
        and all(isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in branches)
    ):
        del out["anyOf"]
        out["type"] = [b["type"] for b in branches]
    return out


def structured(response: SearchResponse) -> dict[str, Any]:
    """``response`` as JSON data matching :func:`output_schema`. Built shallowly rather than with ``asdict``,
    which deep-copies every result's input schema on every request: nothing here mutates the schemas, and the
    copy was most of the cost of answering a repeated query."""
    return {
        "query": response.query,
        "k": response.k,
        "results": [
            {**vars(r), "promoted_by": list(r.promoted_by), "prerequisites": [dict(vars(p)) for p in r.prerequisites]}
            for r in response.results
        ],
        "library": None if response.library is None else dict(vars(response.library)),
    }


def input_schema(max_k: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY_CHARS,
                "description": "what the agent wants to do, in words (e.g. 'add a lamp to my cart')",
            },
            "k": {
                "type": "integer",
                "minimum": 1,
                "maximum": max_k,
                "description": f"how many tools to return, 1 to {max_k}",
            },
        },
        "required": ["query", "k"],
    }


DESCRIPTION = (
    "Find the tools for a task in this tool library. Each result gives the tool's name, description and input "
    "schema, whether it was retrieved for the query or promoted as a prerequisite of a retrieved tool, and the "
    "prerequisites the library verified by running the tools, each with one line of evidence (for example "
    "\"x failed with 'not logged in' until login ran\"). Call a tool's prerequisites first when you lack the "
    "values they provide."
)


class SearchInputError(ValueError):
    """Arguments to ``search_tools`` that a caller must change; the message says how."""


def check_arguments(arguments: dict[str, Any], max_k: int) -> tuple[str, int]:
    """``(query, k)`` from a call's arguments, or :class:`SearchInputError` saying what to change."""
    unknown = sorted(set(arguments) - {"query", "k"})
    if unknown:
        raise SearchInputError(
            f"unknown argument(s) {', '.join(unknown)}: search_tools takes query (text) and k (1 to {max_k})"
        )
    query, k = arguments.get("query"), arguments.get("k")
    if query is None:
        raise SearchInputError(
            'query is missing: pass the task in words, e.g. {"query": "add a lamp to my cart", "k": 5}'
        )
    if not isinstance(query, str):
        raise SearchInputError(f"query must be text, got {type(query).__name__}: pass the task in words")
    if not query.strip():
        raise SearchInputError("query is empty: describe the task in words, e.g. 'add a lamp to my cart'")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchInputError(
            f"query is {len(query):,} characters long; send at most {MAX_QUERY_CHARS:,}: describe the task "
            "in a sentence or two"
        )
    if k is None:
        raise SearchInputError(f"k is missing: pass how many tools to return, 1 to {max_k}")
    if isinstance(k, float) and k.is_integer():
        k = int(k)
    if isinstance(k, bool) or not isinstance(k, int):
        raise SearchInputError(f"k must be a whole number from 1 to {max_k}, got {k!r}")
    if k < 1:
        raise SearchInputError(f"k must be at least 1, got {k}: pass how many tools to return, 1 to {max_k}")
    if k > max_k:
        raise SearchInputError(
            f"k must be at most {max_k}, got {k}: ask for fewer tools, and search again with another query for more"
        )
    return query, k


def schema_line(schema: dict[str, Any]) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    parts = []
    for name, s in props.items():
        t = s.get("type", "any") if isinstance(s, dict) else "any"
        parts.append(f"{name}{'*' if name in required else ''}: {'|'.join(t) if isinstance(t, list) else t}")
    return ", ".join(parts) if parts else "no arguments"


def text_form(query: str, results: list[Result], library: LibraryVersion | None = None) -> str:
    """The results as compact text: one block per tool, its inputs (``*`` = required), the prerequisites the library
    found with their line of evidence, and the library version that answered."""
    lines = [f"{len(results)} tools for {query[:200]!r}:"]
    for r in results:
        how = f"promoted by {', '.join(r.promoted_by[:3])}" if r.via == "promoted" else "retrieved"
        about = " ".join(r.description.split())
        lines.append(f"{r.rank}. {r.tool} [{how}] {about[:300]}")
        lines.append(f"   inputs: {schema_line(r.input_schema)}")
        for p in r.prerequisites:
            feeds = f" ({p.provider_field} -> {p.consumer_input})" if p.consumer_input else ""
            # "may need": the evidence shows calls like one call, not every call of the tool
            lines.append(f"   may need {p.tool}{feeds}: {p.evidence}")
        if r.more_prerequisites:
            lines.append(f"   (+{r.more_prerequisites} more prerequisites)")
    if library is not None:
        lines.append(f"(library version {library.sha256}, written {library.written_at})")
    return "\n".join(lines)


def build_server(
    searcher: Searcher | SearcherLoading,
    forwarder: ToolForwarder | None = None,
    max_k: int = MAX_K,
    name: str = "libra",
    live: LiveLibrary | None = None,
) -> Any:
    """The MCP server over ``searcher`` (and ``forwarder``'s tools, when given). A :class:`SearcherLoading` is
    started by the caller (the server never waits for it before a search needs it). With ``live``, each search
    is answered by the library ``live`` serves when it starts (it follows the file: :mod:`.reload`)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from libra import __version__

    loading = searcher if isinstance(searcher, SearcherLoading) else SearcherLoading.opened(searcher)
    max_k = max(1, min(max_k, loading.size))

    @lru_cache(maxsize=1)
    def search_tool() -> Any:
        """Built on first use: its output schema comes from the result types, which import numpy."""
        return types.Tool(
            name=SEARCH_TOOL, description=DESCRIPTION, input_schema=input_schema(max_k), output_schema=output_schema()
        )

    def error(message: str) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[search_tool(), *(forwarder.tools() if forwarder else [])])

    async def call_tool(ctx: Any, params: Any) -> Any:
        arguments = params.arguments or {}
        if params.name != SEARCH_TOOL:
            if forwarder is not None:
                served = [t.name for t in forwarder.tools()]
                if params.name in served:
                    return await forwarder.call(params.name, arguments)
                return error(
                    f"unknown tool {params.name[:100]!r}: this server has {SEARCH_TOOL}(query, k) and "
                    f"{', '.join(served)}; run a tool search_tools found through {served[0]}"
                )
            return error(f"unknown tool {params.name[:100]!r}: this server has {SEARCH_TOOL}(query, k)")
        try:
            query, k = check_arguments(arguments, max_k)
        except SearchInputError as exc:
            return error(str(exc))
        serving, version = live.current() if live is not None else (loading, None)
        try:
            searcher = await serving.get()
            if searcher.is_cached(query):  # a millisecond of numpy: a hop to a worker thread would cost more
                results = searcher.search(query, k)
            else:  # the embedding model runs off the event loop, which keeps serving other requests
                results = await anyio.to_thread.run_sync(searcher.search, query, k)
        except LibraError as exc:  # e.g. the embedding model cannot load: the client shows why
            return error(f"search failed: {exc}")
        data = structured(SearchResponse(query, k, results, version))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text_form(query, results, version))],
            structured_content=data,
        )

    return Server(name, version=__version__, instructions=DESCRIPTION, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(server: Any) -> None:
    """Serve over stdin and stdout (see :mod:`libra.serve.stdio`: pipes are read and written on the event
    loop, without the SDK's thread per line)."""
    from libra.serve.stdio import serve_stdio as serve

    await serve(server)


async def serve_http(server: Any, sock: Any, host: str) -> None:
    """Streamable HTTP at ``/mcp`` on an already bound socket (bound before the library loads, so a busy port
    is refused before any work)."""
    import uvicorn

    # Plain JSON responses rather than an SSE stream per request: search_tools sends no progress or server
    # requests, so a stream only adds framing and a round of buffering to every call.
    app = server.streamable_http_app(host=host, json_response=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
