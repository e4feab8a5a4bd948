"""The fingerprints of a build's inputs (:class:`~libra.library.fingerprints.BuildFingerprints`), from its source.

- **Tools**: each tool's public metadata, plus the source text of the Python function behind it (a body can
  change what a tool does while its signature and docstring stay) or the version its MCP server reports (an
  upgraded server can answer differently under the same ``tools/list`` entry).
- **Starting state**: the fixtures (with the sandbox's path written as ``{sandbox}``, since each build has its
  own), the MCP sandbox template's files, and the parts of the fresh state a Python runtime is made of (one per
  class instance or module), so that adding or removing a class leaves the other classes' parts as they were.
- **Options**: what decides what a build finds: the build configuration (less its bookkeeping), the proposer,
  the embedder, the exploration's version and the library format. Worker counts and progress display do not.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from libra.catalog import Catalog
from libra.library.fingerprints import BuildFingerprints, digest, tool_digest
from libra.runtime.base import State, StatePart

__all__ = ["build_fingerprints", "option_values", "tool_fingerprints"]


def _python_side(source: Any) -> Any:
    """The Python tool source of ``source`` (itself, or the Python half of a mixed source), or None."""
    if hasattr(source, "sources") and hasattr(source, "specs"):
        return source
    return getattr(source, "python", None)


def _mcp_side(source: Any) -> Any:
    """The MCP source of ``source`` (itself, or the MCP half of a mixed source), or None."""
    if hasattr(source, "server_versions"):
        return source
    mcp = getattr(source, "mcp", None)
    return mcp if hasattr(mcp, "server_versions") else None


def python_code(source: Any) -> dict[str, str]:
    """Published tool name -> the source text of the function behind it, for a source of Python tools."""
    python = _python_side(source)
    if python is None:
        return {}
    from libra.sources.python import published_names

    names = published_names(python.sources)
    out: dict[str, str] = {}
    for resolved in python.sources:
        for default, (_bare, func) in resolved.tools.items():
            try:
                out[names.get(default, default)] = inspect.getsource(func)
            except (OSError, TypeError):  # defined where no source file is kept: its metadata stands for it
                continue
    return out


def tool_fingerprints(source: Any, catalog: Catalog | None = None) -> dict[str, str]:
    """Tool name -> its fingerprint (:func:`~libra.library.fingerprints.tool_digest`), for ``source``'s catalog."""
    catalog = catalog if catalog is not None else source.catalog()
    code = python_code(source)
    mcp = _mcp_side(source)
    versions = mcp.server_versions() if mcp is not None else {}
    out = {}
    for tool in catalog:
        server = tool.metadata.get("server") if isinstance(tool.metadata, dict) else None
        out[tool.name] = tool_digest(tool.to_dict(), code.get(tool.name), versions.get(server) if server else None)
    return out


def _sandbox_paths(source: Any) -> list[str]:
    mcp = _mcp_side(source)
    path = getattr(mcp, "sandbox_path", None) if mcp is not None else None
    return [str(path)] if path is not None else []


def _template_digest(template: Path | None) -> str:
    """A hash of a sandbox template's files (relative paths and contents), or ``none``."""
    if template is None:
        return "none"
    h = hashlib.sha256()
    for path in sorted(p for p in Path(template).rglob("*") if p.is_file()):
        h.update(path.relative_to(template).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _state_parts(state: State, out: dict[str, str], where: str = "") -> None:
    """The named parts of a fresh state, recursively through a composite's states (an MCP state is described by
    its template instead: its fingerprint names every server, so a server added would change it)."""
    payload = state.payload
    if isinstance(payload, tuple) and payload and all(isinstance(p, StatePart) for p in payload):
        for part in payload:
            if part.name:  # (the unnamed part is the runtime's signature: it names every class, so skipped)
                out[f"state {where}{part.name}"] = part.key
    elif isinstance(payload, tuple) and payload and all(isinstance(p, State) for p in payload):
        for i, inner in enumerate(payload):
            _state_parts(inner, out, f"{where}{i}.")
    elif type(payload).__name__ != "McpPath":
        out[f"state {where}fresh".rstrip()] = state.fingerprint


def starting_state(source: Any, fresh: State) -> dict[str, str]:
    """Part of the state a build of ``source`` starts from -> its hash (see the module docstring)."""
    text = json.dumps(source.fixtures(), sort_keys=True, ensure_ascii=False, default=repr)
    for path in _sandbox_paths(source):
        text = text.replace(json.dumps(path)[1:-1], "{sandbox}")
    start = {"fixtures": hashlib.sha256(text.encode()).hexdigest()}
    mcp = _mcp_side(source)
    if mcp is not None:
        start["sandbox template"] = _template_digest(getattr(mcp, "template", None))
    _state_parts(fresh, start)
    return start


def option_values(options: Any) -> dict[str, Any]:
    """The build options that decide what a build finds, as JSON data (see the module docstring)."""
    from libra.embeddings.embedders import get_embedder
    from libra.induction.explore.checkpoint import CHECKPOINT_VERSION
    from libra.induction.identity import BOOKKEEPING_FIELDS, proposer_identity
    from libra.library.artifact import FORMAT_VERSION

    values = {f"config.{k}": v for k, v in options.config.to_dict().items() if k not in BOOKKEEPING_FIELDS}
    values["proposer"] = proposer_identity(options.proposer)
    values["embedder"] = get_embedder(options.embedder).model_id
    values["engine"] = CHECKPOINT_VERSION
    values["format"] = FORMAT_VERSION
    return json.loads(json.dumps(values, sort_keys=True, default=repr))


def build_fingerprints(source: Any, catalog: Catalog, options: Any, fresh: State) -> BuildFingerprints:
    """Everything :class:`BuildFingerprints` records for a build of ``source`` starting from ``fresh``."""
    values = option_values(options)
    return BuildFingerprints(
        tools=tool_fingerprints(source, catalog),
        start=starting_state(source, fresh),
        options=digest(values),
        option_values=values,
        built_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
