"""Tools and catalogs.

A :class:`Tool` is what a retriever ranks and what a runtime executes: a fully qualified name (``Class.method``,
``app.api``), a description, parameters as a JSON Schema object and an optional response schema. A
:class:`Catalog` is an ordered collection of tools; order matters because rankings break ties by catalog
position, which keeps every result reproducible.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from libra._util.io import atomic_write_json
from libra.errors import CatalogError
from libra.schema import dereference

_EMPTY_PARAMS: dict[str, Any] = {"type": "object", "properties": {}, "required": []}


def _check_schema(tool: str, field_name: str, schema: Any) -> None:
    if not isinstance(schema, dict):
        raise CatalogError(
            f"tool {tool!r}: field {field_name!r} must be a JSON Schema object, got {type(schema).__name__}"
        )
    import jsonschema  # on first use: commands that only read a library's index (libra serve) never need it
    from jsonschema.validators import validator_for

    try:
        validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "<root>"
        raise CatalogError(
            f"tool {tool!r}: field {field_name!r} is not a valid JSON Schema at {where}: {exc.message}"
        ) from None


@dataclass
class Tool:
    """One executable tool, described only by public metadata."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: dict(_EMPTY_PARAMS))
    response: dict[str, Any] | None = None
    group: str = ""
    executable: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise CatalogError("a tool has no name: every tool needs a non-empty fully qualified 'name'")
        if not isinstance(self.description, str):
            raise CatalogError(f"tool {self.name!r}: field 'description' must be a string")
        _check_schema(self.name, "parameters", self.parameters)
        if self.parameters.get("type", "object") != "object":
            raise CatalogError(f"tool {self.name!r}: field 'parameters' must be a JSON Schema of type 'object'")
        if self.response is not None:
            _check_schema(self.name, "response", self.response)

    # -- parameters --------------------------------------------------------------------------------------
    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def param_names(self) -> list[str]:
        return list(self.parameters.get("properties", {}))

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    def param_schema(self, name: str) -> dict[str, Any]:
        """The schema of one parameter, self-contained: references into the tool's ``$defs`` are inlined.

        Every consumer (fit checks, literal construction, retrieval text) takes a parameter's schema out of
        ``parameters``; a ``$ref`` left in it would point nowhere once it is out (see :func:`libra.schema.dereference`).
        """
        return dict(self._resolved_parameters.get("properties", {}).get(name, {}))

    @property
    def response_schema(self) -> dict[str, Any] | None:
        """The response schema with its references inlined (None when the response is opaque)."""
        return self._resolved_response

    @cached_property
    def _resolved_parameters(self) -> dict[str, Any]:
        # Cached per tool: tools are never mutated after construction (their schemas are checked once, here too).
        return dereference(self.parameters)

    @cached_property
    def _resolved_response(self) -> dict[str, Any] | None:
        return None if self.response is None else dereference(self.response)

    # -- serialization -----------------------------------------------------------------------------------
    def document(self) -> dict[str, Any]:
        """The public metadata a retriever indexes and a contract proposer reads (nothing else)."""
        doc: dict[str, Any] = {"name": self.name, "description": self.description, "parameters": self.parameters}
        if self.response is not None:
            doc["response"] = self.response
        return doc

    def text(self) -> str:
        """Serialized public metadata: the retrieval document of the tool."""
        return json.dumps(self.document(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "description": self.description, "parameters": self.parameters}
        if self.response is not None:
            d["response"] = self.response
        if self.group:
            d["group"] = self.group
        if not self.executable:
            d["executable"] = False
        if self.metadata:
            d["metadata"] = self.metadata
        return d

    @classmethod
    def from_dict(cls, d: Any, index: int | None = None) -> Tool:
        where = f"tool #{index}" if index is not None else "tool"
        if not isinstance(d, dict):
            raise CatalogError(f"{where}: expected a JSON object, got {type(d).__name__}")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise CatalogError(f"{where}: field 'name' is missing or not a string")
        unknown = set(d) - {"name", "description", "parameters", "response", "group", "executable", "metadata"}
        if unknown:
            raise CatalogError(f"tool {name!r}: unknown field(s) {sorted(unknown)}")
        return cls(
            name=name,
            description=d.get("description", ""),
            parameters=d.get("parameters", dict(_EMPTY_PARAMS)),
            response=d.get("response"),
            group=d.get("group", ""),
            executable=bool(d.get("executable", True)),
            metadata=d.get("metadata", {}) or {},
        )


class Catalog:
    """An ordered, name-indexed set of tools."""

    def __init__(self, tools: Iterable[Tool], name: str = "catalog") -> None:
        self.name = name
        self._tools: list[Tool] = []
        self._index: dict[str, int] = {}
        for tool in tools:
            if tool.name in self._index:
                raise CatalogError(f"tool {tool.name!r} appears twice: tool names must be unique")
            self._index[tool.name] = len(self._tools)
            self._tools.append(tool)

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __getitem__(self, key: int | str) -> Tool:
        if isinstance(key, int):
            return self._tools[key]
        try:
            return self._tools[self._index[key]]
        except KeyError:
            raise KeyError(f"no tool named {key!r} in catalog {self.name!r}") from None

    def get(self, name: str) -> Tool | None:
        i = self._index.get(name)
        return None if i is None else self._tools[i]

    def index(self, name: str) -> int:
        return self._index[name]

    @property
    def names(self) -> list[str]:
        return [t.name for t in self._tools]

    def fingerprint(self) -> str:
        """Content hash of the public metadata; a library records it to refuse another catalog."""
        h = hashlib.sha256()
        for t in self._tools:
            h.update(json.dumps(t.to_dict(), sort_keys=True).encode())
        return h.hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tools": [t.to_dict() for t in self._tools]}

    @classmethod
    def from_dict(cls, d: Any) -> Catalog:
        if isinstance(d, list):
            d = {"tools": d}
        if not isinstance(d, dict) or not isinstance(d.get("tools"), list):
            raise CatalogError("a catalog must be a JSON list of tools or an object with a 'tools' list")
        return cls([Tool.from_dict(t, i) for i, t in enumerate(d["tools"])], name=d.get("name", "catalog"))

    def save(self, path: str | Path) -> None:
        atomic_write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CatalogError(f"catalog file {str(p)!r} does not exist: check the path") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CatalogError(
                f"catalog file {str(p)!r} cannot be read ({exc.__class__.__name__}): check its permissions and encoding"
            ) from None
        except json.JSONDecodeError as exc:
            raise CatalogError(
                f"catalog file {str(p)!r} is not valid JSON (line {exc.lineno}, column {exc.colno}): fix or "
                "regenerate it"
            ) from None
        return cls.from_dict(data)
