"""``libra serve``: a library as an MCP server (``search_tools``), and the gateway that forwards ``call_tool`` to the
MCP servers a library was built from.

:mod:`.server` builds the MCP server, :mod:`.stdio` is its stdio transport, :mod:`.gateway` the forwarding side,
:mod:`.opening` how a library file becomes a searcher quickly enough to answer a client's handshake at once, and
:mod:`.run` serves a library from start to shutdown (what ``libra serve`` calls).
"""

from libra._util.lazy import exports

__all__ = ["build_server"]
__getattr__, __dir__ = exports(__name__, {"build_server": ".server"})
