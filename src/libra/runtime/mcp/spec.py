"""One MCP server as a project file's ``[[mcp]]`` table describes it (:class:`ServerSpec`): its keys, their
defaults and their checks, shared by the build's runtime, the project-file reader and the gateway."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from libra.errors import ConfigError

__all__ = ["STATES", "ServerSpec"]

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
#: what ``state`` may say: everything is in the sandbox's files, or the server's memory holds state too
STATES = ("files", "process")
_KEYS = {
    "name",
    "command",
    "args",
    "env",
    "url",
    "cwd",
    "state",
    "restart_on_restore",
    "timeout",
    "start_timeout",
    "allow_network",
}


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server as a project file's ``[[mcp]]`` table describes it.

    ``command``/``args``/``env``/``cwd`` start a stdio server; ``url`` names a Streamable HTTP endpoint (started by
    ``command`` when both are given, else a server someone else runs); a started server's working directory is
    ``cwd``, by default the sandbox, so relative paths in arguments land inside it. ``{sandbox}`` in args, env, cwd and
    url is the sandbox path, ``{port}`` a free local port chosen per start.

    ``state`` says where the server keeps what a later call can see: ``"files"`` (only in the sandbox: a state is
    restored by putting files back) or ``"process"`` (also in its memory, e.g. a session: a state is reached by
    replaying calls). ``restart_on_restore`` true restarts the server whenever the sandbox is restored, false never
    does (for servers that read the sandbox on every call), None (the default) learns which the server needs
    (:mod:`libra.runtime.mcp.learning`): a restart per restore is safe but made builds over a few servers take
    minutes, and never restarting is wrong for a server that reads its files only when it starts or keeps data in
    its memory. An explicit value stays an override. ``timeout`` bounds one call, ``start_timeout`` the start and
    handshake (seconds). A stdio server runs without network (its own empty network namespace,
    :mod:`libra.runtime.workers.sandbox`) unless ``allow_network``; a server reached over HTTP keeps the network,
    since it must accept the runtime's connection.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    cwd: str | None = None
    state: str = "files"
    restart_on_restore: bool | None = None
    timeout: float = 30.0
    start_timeout: float = 30.0
    allow_network: bool = False

    def __post_init__(self) -> None:
        where = f"MCP server {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(
                f"MCP server name {self.name!r} must be letters, digits, '_' or '-' (it prefixes tool names "
                "as NAME.tool)"
            )
        if not self.command and not self.url:
            raise ConfigError(f"{where} has neither 'command' (stdio) nor 'url' (Streamable HTTP): give one")
        if self.command is not None and not isinstance(self.command, str):
            raise ConfigError(f"{where}: 'command' must be a string")
        if not all(isinstance(a, str) for a in self.args):
            raise ConfigError(f"{where}: 'args' must be a list of strings")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in dict(self.env).items()):
            raise ConfigError(f"{where}: 'env' must map names to strings")
        if self.state not in STATES:
            raise ConfigError(f'{where}: \'state\' must be "files" or "process", not {self.state!r}')
        if self.restart_on_restore is not None and not isinstance(self.restart_on_restore, bool):
            raise ConfigError(f"{where}: 'restart_on_restore' must be true or false (leave it out to learn it)")
        if self.state == "process" and not self.command:
            raise ConfigError(
                f"{where}: state = \"process\" needs 'command': the memory of a server someone else runs "
                "cannot be reset"
            )
        if not (
            isinstance(self.timeout, (int, float))
            and self.timeout > 0
            and isinstance(self.start_timeout, (int, float))
            and self.start_timeout > 0
        ):
            raise ConfigError(f"{where}: 'timeout' and 'start_timeout' must be positive numbers of seconds")
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env", dict(self.env))

    @classmethod
    def from_config(cls, table: Mapping[str, Any]) -> ServerSpec:
        """A spec from one ``[[mcp]]`` table (unknown keys are refused, so a typo never goes unnoticed)."""
        if not isinstance(table, Mapping):
            raise ConfigError("each [[mcp]] entry must be a table")
        unknown = sorted(set(table) - _KEYS)
        if unknown:
            raise ConfigError(f"[[mcp]] {table.get('name', '?')!r}: unknown key(s) {unknown}; known: {sorted(_KEYS)}")
        if "name" not in table:
            raise ConfigError("an [[mcp]] entry has no 'name'")
        args = table.get("args", ())
        if isinstance(args, str):
            raise ConfigError(f"MCP server {table['name']!r}: 'args' must be a list of strings")
        return cls(**{k: (tuple(v) if k == "args" else v) for k, v in table.items()})

    def expanded(self, sandbox: Path, port: int | None) -> ServerSpec:
        """This spec with ``{sandbox}`` and ``{port}`` replaced."""

        def sub(text: str | None) -> str | None:
            if text is None:
                return None
            text = text.replace("{sandbox}", str(sandbox))
            return text.replace("{port}", str(port)) if port is not None else text

        return replace(
            self,
            command=sub(self.command),
            args=tuple(sub(a) or "" for a in self.args),
            env={k: sub(v) or "" for k, v in self.env.items()},
            url=sub(self.url),
            cwd=sub(self.cwd),
        )

    def to_config(self) -> dict[str, Any]:
        """This spec as an ``[[mcp]]`` table (the keys that differ from their defaults): what a library records
        so ``libra serve`` can start the same servers again (:meth:`from_config` reads it back)."""
        from dataclasses import fields

        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            default = f.default_factory() if callable(f.default_factory) else f.default  # type: ignore[misc]
            if f.name == "name" or value != default:
                out[f.name] = list(value) if f.name == "args" else dict(value) if f.name == "env" else value
        return out

    @property
    def uses_port(self) -> bool:
        return any("{port}" in (s or "") for s in (self.url, *self.args, *self.env.values()))
