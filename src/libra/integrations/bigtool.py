"""A langgraph-bigtool ``retrieve_tools_function`` backed by a libra :class:`~libra.search.searcher.Searcher`.

langgraph-bigtool (``pip install 'libra-tools[bigtool]'``) starts an agent with one tool, ``retrieve_tools``,
and binds whatever tool ids it returns from the agent's ``tool_registry``. Its default ranks tools one by one
from a vector store; this one returns the tools a libra search finds and, after them, the prerequisites the
library verified for them, so the agent can call ``login`` before the tool that fails without it::

    from langgraph_bigtool import create_agent
    from libra import Searcher
    from libra.integrations.bigtool import retrieve_tools_function

    searcher = Searcher.open("library.json.gz")
    agent = create_agent(llm, registry, retrieve_tools_function=retrieve_tools_function(searcher, registry=registry))

Nothing here imports langgraph: the function is a plain callable with the signature and docstring the package
turns into a tool.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from libra.search.searcher import Searcher


def retrieve_tools_function(
    searcher: Searcher, limit: int = 5, registry: Collection[str] | None = None, prerequisites: bool = True
) -> Callable[[str], list[str]]:
    """``retrieve_tools(query) -> list of tool ids``: the top ``limit`` tools, then their prerequisites.

    ``registry`` (the agent's ``tool_registry`` or its keys) keeps only ids the agent can bind; a library tool
    the registry lacks is skipped rather than crashing the agent's lookup.
    """
    if limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit}")
    known = None if registry is None else set(registry)

    def retrieve_tools(query: str) -> list[str]:
        """Retrieve the tools for a task, described in words, with the tools they need called first."""
        results = searcher.search(query, limit)
        ids = [r.tool for r in results]
        if prerequisites:
            ids += [p.tool for r in results for p in r.prerequisites]
        ids = list(dict.fromkeys(ids))
        return ids if known is None else [i for i in ids if i in known]

    return retrieve_tools
