"""MCP servers as a catalog source for the build path: what ``[sandbox]`` + ``[[mcp]]`` in a project file become.

:class:`McpSource` is a :class:`~libra.sources.base.ToolSource`, so ``build_library`` builds a library over MCP
servers exactly as over any other source. Why these choices:

- Every runtime it opens uses **one work directory** (so one sandbox path): fixtures may name paths inside the
  sandbox (``{sandbox}`` is replaced in fixture strings), and those must stay valid in every runtime a command
  opens. Runtimes therefore open one at a time.
- Listing the catalog starts the servers; the runtime that did it is kept and handed to the next
  :meth:`runtime` call, so a build starts each server once, not twice. A runtime nobody asked for is closed
  when the source is garbage collected or the process exits.
- The servers run out of process already, so the runtime is the same whatever isolation the caller asks for;
  calls run one at a time because the servers share one sandbox.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from libra.catalog import Catalog
from libra.errors import ConfigError
from libra.runtime.base import ToolRuntimeError
from libra.runtime.mcp.runtime import McpRuntime
from libra.runtime.mcp.spec import ServerSpec
from libra.sources.base import ToolSource

_SANDBOX_KEYS = {"template"}


class McpSource(ToolSource):
    """A catalog of MCP servers sharing one sandbox (see the module docstring)."""

    contract_rules = "stateful"
    calling_convention = "json_object"  # MCP tools take one JSON object of arguments

    def __init__(
        self,
        servers: Sequence[ServerSpec | Mapping[str, Any]],
        template: str | Path | None = None,
        *,
        name: str = "mcp",
        fixtures: Mapping[str, Any] | None = None,
        workdir: str | Path | None = None,
        allow_network: bool = False,
    ) -> None:
        self.specs = [s if isinstance(s, ServerSpec) else ServerSpec.from_config(s) for s in servers]
        if not self.specs:
            raise ConfigError("no MCP servers given: name at least one [[mcp]] server")
        if template is not None and not Path(template).is_dir():
            raise ConfigError(f"sandbox template {str(template)!r} is not a directory")
        self.name = name
        self.template = Path(template).absolute() if template is not None else None
        self.workdir = Path(workdir).absolute() if workdir is not None else Path(tempfile.mkdtemp(prefix="libra-mcp-"))
        if workdir is None:
            weakref.finalize(self, shutil.rmtree, str(self.workdir), True)
        self._fixtures = dict(fixtures or {})
        self.allow_network = allow_network
        self._catalog: Catalog | None = None
        self._parked: McpRuntime | None = None
        self._versions: dict[str, str | None] = {}
        self.opened: list[McpRuntime] = []  # every runtime opened (their ``pids`` tell what was started)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], base_dir: str | Path = ".", **kwargs: Any) -> McpSource:
        """A source from a parsed project file (``[sandbox] template``, ``[[mcp]]`` tables, ``[fixtures]``); a
        relative template path is taken from ``base_dir`` (the project file's folder). Other sections (build
        options, ``[[python]]`` sources) are the project-file reader's to check; keys inside these are checked
        here."""
        sandbox = config.get("sandbox", {}) or {}
        if not isinstance(sandbox, Mapping) or set(sandbox) - _SANDBOX_KEYS:
            unknown = sorted(set(sandbox) - _SANDBOX_KEYS) if isinstance(sandbox, Mapping) else []
            raise ConfigError(f"[sandbox]: unknown key(s) {unknown}; it takes only {sorted(_SANDBOX_KEYS)}")
        fixtures = config.get("fixtures", {}) or {}
        if not isinstance(fixtures, Mapping):
            raise ConfigError("[fixtures] must be a table of names and values")
        template = sandbox.get("template")
        if template is not None:
            template = Path(base_dir) / template
        servers = config.get("mcp", [])
        if not isinstance(servers, list):
            raise ConfigError("[[mcp]] must be an array of tables")
        return cls(servers, template, fixtures=fixtures, **kwargs)

    def server_configs(self) -> list[dict[str, Any]]:
        """The servers as ``[[mcp]]`` tables, ``{sandbox}`` unexpanded: what the built library records (its
        ``meta.mcp_servers``) so a gateway can start them again against another directory."""
        return [s.to_config() for s in self.specs]

    @property
    def sandbox_path(self) -> Path:
        return self.workdir / "sandbox"

    def fixtures(self) -> dict[str, Any]:
        """The given fixtures, with ``{sandbox}`` in strings replaced by the sandbox path."""

        def sub(value: Any) -> Any:
            if isinstance(value, str):
                return value.replace("{sandbox}", str(self.sandbox_path))
            if isinstance(value, list):
                return [sub(v) for v in value]
            if isinstance(value, dict):
                return {k: sub(v) for k, v in value.items()}
            return value

        return {k: sub(v) for k, v in self._fixtures.items()}

    def catalog(self) -> Catalog:
        if self._catalog is None:
            rt = self._new_runtime()
            self._catalog = rt.catalog
            self._versions = rt.server_versions()
            self._parked = rt
            weakref.finalize(self, rt.close)
        return self._catalog

    def server_versions(self) -> dict[str, str | None]:
        """Each server's version as it reported it when the catalog was listed (by server name)."""
        self.catalog()
        return dict(self._versions)

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kwargs: Any) -> McpRuntime:
        """A runtime over the servers (the one that listed the catalog, if it is still unused)."""
        rt, self._parked = self._parked, None
        if rt is not None:
            return rt
        return self._new_runtime()

    def _new_runtime(self) -> McpRuntime:
        if any(not rt.closed for rt in self.opened if rt is not self._parked):
            raise ToolRuntimeError(
                f"a runtime of {self.name!r} is still open: its servers share one sandbox, close it first"
            )
        rt = McpRuntime(
            self.specs, self.template, workdir=self.workdir, name=self.name, allow_network=self.allow_network
        )
        self.opened.append(rt)
        return rt
