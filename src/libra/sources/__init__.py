"""What a build takes as input: a set of tools with their runtime and starting state.

Python modules and classes (:mod:`.python`), MCP servers (:mod:`.mcp`), both at once, or a project file naming
them (:mod:`.project`). A benchmark is one of these plus tasks.
"""

from libra._util.lazy import exports

__all__ = [
    "McpSource",
    "MixedSource",
    "PythonSource",
    "ToolSource",
    "ToolSpec",
    "ToolsBenchmark",
    "load_project",
    "parse_spec",
]
__getattr__, __dir__ = exports(
    __name__,
    {
        "McpSource": ".mcp",
        "ToolSpec": ".python",
        "parse_spec": ".python",
        "ToolsBenchmark": ".python",
        "PythonSource": ".python",
        "MixedSource": ".mixed",
        "ToolSource": ".base",
        "load_project": ".project",
    },
)
