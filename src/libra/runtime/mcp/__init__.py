"""MCP servers as a runtime: stdio and Streamable HTTP servers over one shared sandbox directory whose content is
the state; the client that talks to them, the sandbox directory, and the installer of the reference servers."""

from libra.runtime.mcp.runtime import McpPath, McpRuntime, McpServerError, ServerSpec

__all__ = ["McpPath", "McpRuntime", "McpServerError", "ServerSpec"]
