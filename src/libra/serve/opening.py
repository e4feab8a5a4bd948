"""How a library file becomes a searcher (and a gateway) quickly enough to answer a client's handshake at once.

Why its own module: ``libra serve`` is started by MCP clients that time the handshake; what is read before the
server starts, what opens in the background and when the garbage collector may walk the loaded objects decide
how soon the first reply goes out (see :func:`open_searcher` and :func:`settle_garbage_collector`).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from libra.errors import ConfigError


def settle_garbage_collector() -> None:
    """Keep the garbage collector off what a server loads once and holds until it stops, then let it run.

    Startup creates hundreds of thousands of objects that live as long as the server: the MCP SDK's protocol
    models, numpy, the index, the model. Python's cyclic collector would walk them all, during the imports (a
    tenth of the SDK's import time, so of the time before the handshake, is spent there finding nothing) and
    then in every full collection while serving: one walk costs tens of milliseconds, and the request it lands
    on waits for it. Frozen, they are never walked again; requests' own garbage is collected as usual.
    """
    gc.freeze()
    gc.enable()


def searcher_opener(library: Path) -> Any:
    """A function opening a :class:`~libra.search.searcher.Searcher` over the file ``library`` as it is then."""
    from libra.search.options import SearchOptions

    options = SearchOptions()

    def open_() -> Any:
        from libra.search.searcher import Searcher

        return Searcher.open(library, options)

    return open_


def open_searcher(library: Path, defer: bool) -> tuple[Any, list[dict[str, Any]]]:
    """A :class:`~libra.serve.server.SearcherLoading` over ``library`` and the MCP servers its catalog came from.

    When the library's search index is cached (``defer``: and nothing needs it before the server starts), the
    searcher opens in the background and only the index's JSON is read now, without numpy: nothing in a cached
    index can be refused (it was written from a library that loaded and checked whole). Otherwise the library is
    opened now, so a broken one is refused in one line before the server starts."""
    from libra._util.cachedir import cache_dir
    from libra.library.artifact import read_library_bytes
    from libra.search.index_key import index_key, peek_index
    from libra.search.options import SearchOptions
    from libra.serve.loading import SearcherLoading

    open_ = searcher_opener(library)
    options = SearchOptions()
    raw = read_library_bytes(library)
    peeked = peek_index(cache_dir() / "search", index_key(raw, options.embedder, options.document)) if defer else None
    if peeked is not None:
        return SearcherLoading(open_, len(peeked["names"])), list(peeked.get("servers") or [])
    searcher = open_()
    return SearcherLoading.opened(searcher), list(searcher.index.servers)


def open_gateway(library: Path, index: Any, workdir: Path | None, config: Path | None) -> Any:
    """The gateway over the servers the library recorded (or ``config`` names), or None without ``workdir``
    (search only; a library built from servers says on stderr how to get call_tool)."""
    if workdir is None:
        return None
    from libra.serve.gateway import Gateway

    if config is not None:
        from libra.sources.project import load_project

        servers = load_project(config).mcp
        if not servers:
            raise ConfigError(
                f"{config} names no [[mcp]] servers, and call_tool forwards to MCP servers only: serve a library "
                "of Python tools without --workdir and --config (search_tools alone), and run its tools from your "
                "own code"
            )
    elif index.servers:
        servers = index.servers
    else:
        raise ConfigError(
            f"{library} records no MCP servers, and call_tool forwards to MCP servers only: serve a library of "
            "Python tools or of a benchmark without --workdir (search_tools alone); only a library built from "
            "[[mcp]] servers by a libra too old to record them needs --config with the project file it was built from"
        )
    tools = dict(zip(index.names, index.input_schemas))
    return Gateway(servers, tools, workdir)
