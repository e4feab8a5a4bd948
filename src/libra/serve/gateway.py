"""The gateway: ``call_tool(name, arguments)`` beside ``search_tools``, forwarded to the MCP servers a library was
built from, so one MCP endpoint fronts many servers with dependency-aware search.

Why this shape:

- **The same servers, the user's directory.** A library built from ``[[mcp]]`` servers records their tables
  (``meta.mcp_servers``); the gateway starts those servers again with ``{sandbox}`` replaced by the directory the
  user names (``libra serve LIB --workdir DIR``), never a sandbox copy: the agent works on the real files. A
  project file (``--config``) may stand in for the recorded tables (a library built before they were recorded,
  or a server that moved). Each server keeps the build's network rule: no network unless its table says
  ``allow_network``.
- **The user's environment, not the build's pins.** A build pins clock, locale and git identity so identical
  calls write identical files; the gateway's calls are the user's own work, so servers get the user's safe
  variables (:func:`~libra.runtime.mcp.client.inherited_environment`) and their table's ``env``.
- **Lazy and bounded.** A server starts on the first call to one of its tools, one call at a time per server; a
  server that died while idle is started again before the next call, one that crashed during a call is reported
  and started again on the next call. :meth:`Gateway.close` ends every process it started.
- **Either name.** A tool is called by its library name (``git.git_status``) or by the name agent clients that
  allow no dots in tool names give it (``git__git_status``, :class:`~libra.search.formats.ClientNames`), so an
  agent that found it through ``libra retrieve --format anthropic`` can run it.
- **Refusals the agent can act on.** Unknown tools, arguments that fail the tool's input schema (checked with
  ``jsonschema`` before any server starts), a server that cannot start or that crashed: each is a tool result
  with ``isError`` and a message saying what to change, never a protocol error, and the gateway keeps serving.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from libra.errors import ConfigError

CALL_TOOL = "call_tool"
#: longest refusal text: a message quotes the offending value, and a huge argument must not come back whole
MAX_MESSAGE = 600

DESCRIPTION = (
    "Run one of this library's tools: name as search_tools gives it (e.g. 'git.git_status'; the name clients "
    "without dots in tool names use, 'git__git_status', works too), arguments matching the tool's input_schema. "
    "The call goes to the tool's MCP server, working in the user's directory; the result is the tool's own."
)


class GatewayInputError(ValueError):
    """A ``call_tool`` request the caller must change; the message says how."""


@dataclass(frozen=True)
class Target:
    """Where one library tool is served: its server and its name there, and its input schema."""

    server: str
    tool: str
    input_schema: dict[str, Any]


def call_tool_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "minLength": 1,
                "description": "the tool's name as search_tools gives it, e.g. 'git.git_status'",
            },
            "arguments": {"type": "object", "description": "the tool's arguments, matching its input_schema"},
        },
        "required": ["name"],
    }


def targets_of(servers: Sequence[str], tools: Mapping[str, dict[str, Any]]) -> dict[str, Target]:
    """The library's tools served by ``servers``: an MCP catalog names each tool ``SERVER.tool``, and a server
    name holds no dot, so the name alone says where the tool lives."""
    out = {}
    for name, schema in tools.items():
        server, dot, tool = name.partition(".")
        if dot and server in servers:
            out[name] = Target(server, tool, schema)
    return out


class Gateway:
    """Forwards ``call_tool`` to MCP servers (a :class:`libra.serve.server.ToolForwarder`); see the module docstring.

    ``servers`` are :class:`~libra.runtime.mcp.client.ServerSpec` s or ``[[mcp]]`` tables, ``tools`` the
    library's tool names with their input schemas, ``workdir`` the directory ``{sandbox}`` stands for. Every
    problem with them is a :class:`ConfigError` here, before anything starts."""

    def __init__(self, servers: Sequence[Any], tools: Mapping[str, dict[str, Any]], workdir: str | Path) -> None:
        from libra.runtime.mcp.client import (
            ServerSpec,
            find_command,
            missing_command_message,
        )

        specs = [s if isinstance(s, ServerSpec) else ServerSpec.from_config(s) for s in servers]
        if not specs:
            raise ConfigError(
                "no MCP servers to forward to: the library records none; give --config with its [[mcp]] servers"
            )
        workdir = Path(workdir).expanduser()
        if not workdir.is_dir():
            raise ConfigError(f"--workdir {workdir} is not a directory: name the folder the servers should work in")
        self.workdir = workdir.resolve()
        self.specs = {s.name: s for s in specs}
        served = sorted({name.partition(".")[0] for name in tools if "." in name})
        missing = [s for s in served if s not in self.specs]
        if missing:
            raise ConfigError(
                f"the library's tools come from MCP server(s) {', '.join(served)}, but no [[mcp]] table "
                f"names {', '.join(missing)}: add them to the project file"
            )
        for spec in specs:
            if spec.command and "{" not in spec.command and find_command(spec.command) is None:
                raise ConfigError(f"MCP server {spec.name!r}: {missing_command_message(spec.command)}")
        self.targets = targets_of(list(self.specs), tools)
        # the names agent clients that cannot take dots see (``memory__read_graph``): accepted as the tools' own
        from libra.search.formats import ClientNames

        self.client_names = ClientNames(list(tools))
        if not self.targets:
            raise ConfigError(
                f"none of the library's tools come from the MCP server(s) {', '.join(self.specs)}: is this "
                "the project file the library was built from?"
            )
        self._conns: dict[str, Any] = {}
        self._started: list[Any] = []  # every connection made (their pids outlive close() for checks)
        self._locks = {name: threading.Lock() for name in self.specs}
        self._guard = threading.Lock()
        self._loop: Any = None
        self._logdir: Path | None = None
        self._validators: dict[str, Any] = {}
        self._tools: list[Any] | None = None
        self.closed = False

    # -- the ToolForwarder interface ---------------------------------------------------------------------------
    def tools(self) -> list[Any]:
        if self._tools is None:
            import mcp_types as types

            self._tools = [types.Tool(name=CALL_TOOL, description=DESCRIPTION, input_schema=call_tool_schema())]
        return self._tools

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        import anyio
        import mcp_types as types

        try:
            target, args = self.prepare(arguments)
            result = await anyio.to_thread.run_sync(self.forward, target, args)
        except GatewayInputError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=_short(str(exc)))], is_error=True)
        return types.CallToolResult(
            content=list(result.content or []),
            structured_content=result.structured_content,
            is_error=bool(result.is_error),
        )

    # -- checks before any server starts -----------------------------------------------------------------------
    def prepare(self, arguments: Mapping[str, Any]) -> tuple[Target, dict[str, Any]]:
        """The tool a ``call_tool`` request names and its arguments, or :class:`GatewayInputError` saying what
        to change (unknown keys, an unknown tool, arguments that fail its input schema)."""
        example = next(iter(self.targets))
        unknown = sorted(set(arguments) - {"name", "arguments"})
        if unknown:
            raise GatewayInputError(
                f"unknown argument(s) {', '.join(unknown)}: call_tool takes name (a tool from search_tools) "
                "and arguments (an object of its inputs)"
            )
        name, args = arguments.get("name"), arguments.get("arguments", {})
        if not isinstance(name, str) or not name.strip():
            raise GatewayInputError(
                "name is missing: pass the tool's name as search_tools gives it, e.g. "
                f'{{"name": "{example}", "arguments": {{...}}}}'
            )
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise GatewayInputError(f"arguments must be an object of {name}'s inputs, got {type(args).__name__}")
        target = self.targets.get(name)
        if target is None and (original := self.client_names.original(name)) in self.targets:
            name, target = original, self.targets[original]  # type: ignore[index]
        if target is None:
            close = difflib.get_close_matches(name, list(self.targets), n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
            raise GatewayInputError(
                f"unknown tool {name[:100]!r}: {hint}find tools with search_tools(query, k) and pass a name it returns"
            )
        problem = self._schema_problem(name, target.input_schema, args)
        if problem:
            from libra.serve.server import schema_line

            raise GatewayInputError(
                f"arguments do not fit {name}'s input schema: {problem}. It takes "
                f"{schema_line(target.input_schema)} (* = required)"
            )
        return target, args

    def _schema_problem(self, name: str, schema: dict[str, Any], args: dict[str, Any]) -> str | None:
        from jsonschema.exceptions import best_match

        validator = self._validator(name, schema)
        if validator is None:
            return None
        try:
            error = best_match(validator.iter_errors(args))
        except Exception:  # noqa: BLE001 - a reference the schema cannot resolve: the server judges the call
            return None
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return (f"at {where}: " if where else "") + _short(error.message, 200)

    def _validator(self, name: str, schema: dict[str, Any]) -> Any:
        """A validator per tool, built once. A schema that is itself invalid gets none: the server judges the
        call (refusing every call for the server author's mistake would help nobody)."""
        if name not in self._validators:
            from jsonschema.exceptions import SchemaError
            from jsonschema.validators import Draft202012Validator, validator_for

            cls = validator_for(schema, default=Draft202012Validator)
            try:
                cls.check_schema(schema)
                self._validators[name] = cls(schema)
            except SchemaError:
                self._validators[name] = None
        return self._validators[name]

    # -- forwarding --------------------------------------------------------------------------------------------
    def forward(self, target: Target, args: dict[str, Any]) -> Any:
        """The server's result for one call (blocking; one call at a time per server), or
        :class:`GatewayInputError` when there is none (the server cannot start, crashed, hung)."""
        from libra.runtime.mcp.client import CallFailed, McpServerError

        name = f"{target.server}.{target.tool}"
        with self._locks[target.server]:
            conn = self._connection(target.server)
            if conn.alive and not conn.running:  # died while idle: start afresh rather than fail this call
                conn.stop()
            try:
                if not conn.alive:
                    conn.start()
                if target.tool not in {t.name for t in conn.tools}:
                    raise GatewayInputError(
                        f"MCP server {target.server!r} no longer offers {target.tool!r} (the library was "
                        "built from another version of it): rebuild the library, or use another tool"
                    )
                return conn.call(target.tool, args)
            except McpServerError as exc:
                raise GatewayInputError(
                    f"{name} cannot run: {exc}. The server's [[mcp]] configuration needs fixing; other "
                    "servers' tools still work"
                ) from None
            except CallFailed as exc:
                again = (
                    " Call again: the server starts afresh (what it held in memory, such as a session, is gone)."
                    if exc.fatal
                    else ""
                )
                raise GatewayInputError(f"{name} failed: {exc}.{again}") from None

    def _connection(self, server: str) -> Any:
        from libra.runtime.mcp.client import Connection, _LoopThread, inherited_environment

        with self._guard:
            if self.closed:
                raise GatewayInputError("the gateway is shutting down")
            conn = self._conns.get(server)
            if conn is None:
                if self._loop is None:
                    self._loop = _LoopThread()
                    self._logdir = Path(tempfile.mkdtemp(prefix="libra-gateway-"))
                assert self._logdir is not None
                conn = self._conns[server] = Connection(
                    self.specs[server], self.workdir, self._logdir, self._loop, environment=inherited_environment
                )
                self._started.append(conn)
            return conn

    @property
    def pids(self) -> list[int]:
        """Every server process started so far (for checks that none outlives :meth:`close`)."""
        return [pid for c in self._started for pid in c.pids]

    def close(self) -> None:
        """End every server process group, the event loop and the log folder; idempotent."""
        import contextlib

        with self._guard:
            self.closed = True
            conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            with contextlib.suppress(Exception):  # keep ending the others
                conn.stop()
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        if self._logdir is not None:
            shutil.rmtree(self._logdir, ignore_errors=True)
            self._logdir = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _short(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
