"""The project file: one TOML file that says what a build is made of, so the same build can be run again.

``libra build --config libra.toml --out LIB`` reads::

    name = "shop"                       # optional: the catalog's name
    [[python]]                          # any number: Python tool sources (see libra.sources.python)
    tools = "shop_tools:Shop"           # MODULE, MODULE:OBJECT or path/to/file.py[:OBJECT]
    namespace = "shop"                  # optional: publish its tools as shop.<tool>
    [[mcp]]                             # any number: MCP servers
    name = "git"
    command = "mcp-server-git"          # stdio server ...
    args = ["--repository", "{sandbox}/repo"]
    env = { GIT_AUTHOR_NAME = "a" }
    # url = "http://127.0.0.1:8000/mcp" # ... or a Streamable HTTP server instead of command
    [sandbox]
    template = "path/to/template"       # copied fresh for every state
    [fixtures]                          # facts about the fresh state any caller knows
    username = "demo"
    [build]                             # the build options of `libra build`, by their CLI names
    max-calls = 5000
    workers = 2
    executor = "ray"                    # or "ray:HOST:PORT" (an existing Ray cluster), default "local"

``pyproject.toml`` may hold the same under ``[tool.libra]``. Relative paths (Python files, the sandbox template)
are relative to the file that names them. Every key is checked when the file is read, before any work: an
unknown key is refused with the closest known one, and build options go through the very definitions their command
line options have (:mod:`libra.sources.build_options`), so ``max-calls = 0`` is refused exactly as ``--max-calls 0``.

MCP servers are parsed and checked here (as :class:`libra.runtime.mcp.client.ServerSpec`) and handed, as a whole,
to :func:`make_mcp_source`; see docs/mcp.md for the keys a server takes beyond those shown.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from libra.errors import ConfigError
from libra.sources.base import ToolSource
from libra.sources.python import ToolSpec, add_search_path, parse_spec

TOP_KEYS = ("name", "python", "mcp", "sandbox", "fixtures", "build")
PYTHON_KEYS = ("tools", "namespace")
SANDBOX_KEYS = ("template",)
_SERVER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Sandbox:
    """``[sandbox]``: the directory every state of a build starts from a fresh copy of (None: an empty one)."""

    template: Path | None = None


@dataclass
class Project:
    """A parsed, checked project file."""

    path: Path
    name: str | None = None
    python: list[ToolSpec] = field(default_factory=list)
    mcp: list[Any] = field(default_factory=list)  # libra.runtime.mcp.client.ServerSpec
    sandbox: Sandbox = field(default_factory=Sandbox)
    fixtures: dict[str, Any] = field(default_factory=dict)
    #: build options by the build command's parameter names (``max_calls``), already converted and checked
    build: dict[str, Any] = field(default_factory=dict)

    def source(self) -> ToolSource:
        """What the file builds: its Python sources, its MCP servers, or both as one mixed source.

        In a mixed build the file's fixtures go with the MCP side, which fills in ``{sandbox}``; the mixed source
        merges both sides' fixtures."""
        from libra.sources.python import PythonSource

        python_fixtures = None if self.mcp else self.fixtures
        python = (
            PythonSource(self.python, name=self.name, fixtures=python_fixtures, search=[str(self.path.parent)])
            if self.python
            else None
        )
        if not self.mcp:
            if python is None:
                raise ConfigError(f"{self.path}: no tools: add a [[python]] table or an [[mcp]] server")
            return python
        mcp = make_mcp_source(self.mcp, self.sandbox, name=self.name, fixtures=self.fixtures)
        if python is None:
            return mcp
        from libra.sources.mixed import MixedSource

        return MixedSource(python, mcp, name=self.name)


def make_mcp_source(
    servers: Sequence[Any], sandbox: Sandbox, *, name: str | None = None, fixtures: Mapping[str, Any] | None = None
) -> Any:
    """The one place a build turns ``[[mcp]]`` servers and ``[sandbox]`` into something to build: an
    :class:`~libra.sources.mcp.McpSource` (a source whose servers share one sandbox directory)."""
    from libra.sources.mcp import McpSource

    return McpSource(list(servers), sandbox.template, name=name or "mcp", fixtures=fixtures)


# -- reading ------------------------------------------------------------------------------------------------------
def _where(path: Path, section: str) -> str:
    return f"{path.name}: {section}" if section else path.name


def _check_keys(table: Mapping[str, Any], known: Sequence[str], path: Path, section: str) -> None:
    """Refuse keys a table does not know, naming the closest known one (a typo must not be ignored)."""
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
            raise ConfigError(f"{_where(path, section)}: unknown key {key!r}{hint}")


def _table(value: Any, path: Path, section: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{_where(path, section)} must be a table, got {type(value).__name__}")
    return value


def _tables(value: Any, path: Path, section: str) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{_where(path, section)} must be written as [[{section}]] tables")
    return value


def _string(value: Any, path: Path, section: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{_where(path, section)}: {key} must be a non-empty string")
    return value


def _python(entries: Any, path: Path) -> list[ToolSpec]:
    """The ``[[python]]`` sources; dotted modules are looked for in the file's folder too (see :func:`load_project`)."""
    specs = []
    for i, entry in enumerate(_tables(entries, path, "python"), 1):
        section = f"[[python]] #{i}"
        _check_keys(entry, PYTHON_KEYS, path, section)
        if "tools" not in entry:
            raise ConfigError(
                f"{_where(path, section)}: missing key 'tools' (MODULE[:OBJECT] or path/to/file.py[:OBJECT])"
            )
        namespace = entry.get("namespace")
        if namespace is not None:
            _string(namespace, path, section, "namespace")
        try:
            spec = parse_spec(_string(entry["tools"], path, section, "tools"), namespace)
        except ConfigError as exc:
            raise ConfigError(f"{_where(path, section)}: {exc}") from None
        if spec.is_file and not Path(spec.target).expanduser().is_absolute():
            spec = ToolSpec(str(path.parent / spec.target), spec.obj, spec.namespace)
        specs.append(spec)
    return specs


def mcp_keys() -> tuple[str, ...]:
    """The keys an ``[[mcp]]`` table may hold: the fields of the MCP runtime's server spec."""
    from dataclasses import fields

    from libra.runtime.mcp.spec import ServerSpec

    return tuple(f.name for f in fields(ServerSpec))


def _mcp(entries: Any, path: Path) -> list[Any]:
    """The ``[[mcp]]`` servers as the MCP runtime's server specs, checked by that spec (types, ``state``,
    timeouts) after the keys and the ``command``/``url`` rule are checked here with the file's own wording."""
    from libra._util.checks import http_url
    from libra.runtime.mcp.client import find_command, missing_command_message
    from libra.runtime.mcp.spec import ServerSpec

    servers: list[Any] = []
    for i, entry in enumerate(_tables(entries, path, "mcp"), 1):
        section = f"[[mcp]] #{i}"
        _check_keys(entry, mcp_keys(), path, section)
        if "name" not in entry:
            raise ConfigError(
                f"{_where(path, section)}: missing key 'name' (the server's name, which prefixes its tools)"
            )
        name = _string(entry["name"], path, section, "name")
        if not _SERVER_NAME.match(name):
            raise ConfigError(
                f"{_where(path, section)}: name {name!r} must start with a letter and hold only letters, "
                "digits, '_' and '-'"
            )
        if any(s.name == name for s in servers):
            raise ConfigError(f"{_where(path, section)}: a server named {name!r} is already listed")
        section = f"[[mcp]] {name}"
        command, url = entry.get("command"), entry.get("url")
        if command is None and url is None:
            raise ConfigError(
                f"{_where(path, section)}: missing key 'command' (a stdio server) or 'url' (a Streamable HTTP server)"
            )
        if command is not None:
            _string(command, path, section, "command")
            if "{" not in command and find_command(command) is None:
                raise ConfigError(f"{_where(path, section)}: {missing_command_message(command)}")
        if url is not None:
            try:
                http_url(_string(url, path, section, "url").replace("{sandbox}", "sandbox").replace("{port}", "1"))
            except ValueError as exc:
                raise ConfigError(f"{_where(path, section)}: url {exc}") from None
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{_where(path, section)}: args must be a list of strings")
        env = entry.get("env", {})
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ConfigError(
                f'{_where(path, section)}: env must be a table of string values, e.g. env = {{ HOME = "{{sandbox}}" }}'
            )
        try:
            servers.append(ServerSpec.from_config(entry))
        except ConfigError as exc:
            raise ConfigError(f"{_where(path, section)}: {exc}") from None
    return servers


def _sandbox(value: Any, path: Path) -> Sandbox:
    table = _table(value, path, "[sandbox]")
    _check_keys(table, SANDBOX_KEYS, path, "[sandbox]")
    if "template" not in table:
        return Sandbox()
    template = Path(os.path.expanduser(_string(table["template"], path, "[sandbox]", "template")))
    if not template.is_absolute():
        template = path.parent / template
    if not template.is_dir():
        raise ConfigError(f"{_where(path, '[sandbox]')}: template {table['template']!r} is not a directory")
    return Sandbox(template.resolve())


def _build(value: Any, path: Path) -> dict[str, Any]:
    """Build options, converted and checked by the build command's own option definitions."""
    import typer

    from libra.sources.build_options import build_option_params, convert_build_value

    table = _table(value, path, "[build]")
    params = build_option_params()
    _check_keys(table, list(params), path, "[build]")
    out: dict[str, Any] = {}
    for key, raw in table.items():
        param = params[key]
        if getattr(param, "is_flag", False):
            if not isinstance(raw, bool):
                raise ConfigError(f"{_where(path, '[build]')}: {key} must be true or false")
            out[param.name] = raw
            continue
        if isinstance(raw, (dict, list, bool)):
            raise ConfigError(f"{_where(path, '[build]')}: {key} must be a single value, got {type(raw).__name__}")
        try:
            out[param.name] = convert_build_value(param, raw)
        except typer.BadParameter as exc:
            raise ConfigError(f"{_where(path, '[build]')}: {key}: {exc.message}") from None
    return out


def read_toml(path: Path) -> dict[str, Any]:
    """The libra settings of a TOML file: the whole file, or ``[tool.libra]`` of a ``pyproject.toml``."""
    if path.is_dir():
        raise ConfigError(f"{path} is a directory, not a project file (libra.toml or pyproject.toml)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no project file at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        section = data.get("tool", {}).get("libra") if isinstance(data.get("tool"), dict) else None
        if section is None:
            raise ConfigError(f"{path} has no [tool.libra] table")
        return _table(section, path, "[tool.libra]")
    return data


def load_project(path: str | Path) -> Project:
    """Read and check a project file (see the module docstring); every problem is one :class:`ConfigError`."""
    path = Path(path).expanduser().absolute()
    data = read_toml(path)
    _check_keys(data, TOP_KEYS, path, "")
    project = Project(path)
    if "name" in data:
        project.name = _string(data["name"], path, "", "name")
    add_search_path([str(path.parent)])  # a dotted module beside the project file is found, as a relative path is
    project.python = _python(data.get("python", []), path)
    project.mcp = _mcp(data.get("mcp", []), path)
    if "sandbox" in data:
        project.sandbox = _sandbox(data["sandbox"], path)
    if "fixtures" in data:
        project.fixtures = dict(_table(data["fixtures"], path, "[fixtures]"))
    if "build" in data:
        project.build = _build(data["build"], path)
    if not project.python and not project.mcp:
        raise ConfigError(f'{path.name} names no tools: add a [[python]] tools = "..." or an [[mcp]] server')
    return project
