"""The executable contract of one tool: c_i = (Pi_i, X_i, S+_i, S-_i) (paper Eq. 2).

A contract is plain data so that it can be proposed by a heuristic or an LLM, persisted next to a library and
re-checked later against a runtime. Everything here is catalog-agnostic: a contract only mentions the tool it
describes and that tool's public parameter names.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from libra.contracts.text_values import STRUCTURED_KINDS, TEXT_KINDS
from libra.errors import LibraError

CONTRACT_VERSION = "libra_contract_v1"
#: The paper allows one initial proposal and at most two feedback-based revisions per tool.
MAX_REVISIONS = 2

ArgumentKind = Literal["literal", "observation", "omit"]
Expected = Literal["success", "failure"]
ExportSource = Literal["arguments", "response", "state_changes"]
EXPORT_SOURCES: tuple[str, ...] = ("arguments", "response", "state_changes")


class ContractError(LibraError):
    """A contract (or a contracts file) is malformed or does not fit its tool."""


@dataclass
class Argument:
    """How one parameter is filled in a template.

    Three kinds keep the caller's choice explicit: a frozen ``literal`` the caller can construct from public
    information, an ``observation`` that must be an exact runtime value produced earlier (``refers_to`` says what
    it must identify, ``field`` optionally names the kind of value that fits), or ``omit`` for an optional
    parameter this template intentionally leaves out.
    """

    kind: ArgumentKind
    value: Any = None
    refers_to: str = ""
    field: str | None = None
    #: for a literal, the value generator's layer it came from (:mod:`libra.values.generator`), if known
    origin: str | None = None

    @classmethod
    def literal(cls, value: Any, origin: str | None = None) -> Argument:
        return cls("literal", value=value, origin=origin)

    @classmethod
    def observation(cls, refers_to: str, field: str | None = None) -> Argument:
        return cls("observation", refers_to=refers_to, field=field)

    @classmethod
    def omit(cls) -> Argument:
        return cls("omit")

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "literal":
            out = {"kind": "literal", "value": copy.deepcopy(self.value)}
            if self.origin:
                out["origin"] = self.origin
            return out
        if self.kind == "observation":
            d: dict[str, Any] = {"kind": "observation", "refers_to": self.refers_to}
            if self.field:
                d["field"] = self.field
            return d
        return {"kind": "omit"}

    @classmethod
    def from_dict(cls, d: Any) -> Argument:
        if not isinstance(d, dict) or d.get("kind") not in ("literal", "observation", "omit"):
            raise ContractError(f"an argument must be an object with kind literal|observation|omit, got {d!r}")
        kind = d["kind"]
        if kind == "literal":
            if "value" not in d:
                raise ContractError("a literal argument needs a 'value'")
            return cls.literal(copy.deepcopy(d["value"]), d.get("origin"))
        if kind == "observation":
            return cls.observation(str(d.get("refers_to", "")), d.get("field"))
        return cls.omit()


@dataclass
class Template:
    """One candidate call pi in Pi_i and the outcome the proposer expects from it."""

    name: str
    arguments: dict[str, Argument]
    expected: Expected = "success"

    @property
    def observations(self) -> list[str]:
        return [p for p, a in self.arguments.items() if a.kind == "observation"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expected": self.expected,
            "arguments": {p: a.to_dict() for p, a in self.arguments.items()},
        }

    @classmethod
    def from_dict(cls, d: Any) -> Template:
        if not isinstance(d, dict):
            raise ContractError(f"a template must be a JSON object, got {type(d).__name__}")
        args = d.get("arguments", {})
        if not isinstance(args, dict):
            raise ContractError(f"template {d.get('name')!r}: 'arguments' must be an object")
        expected = d.get("expected", "success")
        if expected not in ("success", "failure"):
            raise ContractError(f"template {d.get('name')!r}: 'expected' must be success or failure, got {expected!r}")
        return cls(str(d.get("name", "")), {str(p): Argument.from_dict(a) for p, a in args.items()}, expected)


@dataclass(frozen=True)
class FromText:
    """How an export reads values out of the text its path selects (see :mod:`.text_values`).

    ``kind`` is an extractor: ``json`` or ``literal`` (a JSON document or Python literal embedded in the text,
    read further with ``path``), ``lines``, or an identifier pattern (``hex_id``, ``uuid``, ``path``, ``url``,
    ``quoted``). Why a separate field rather than a longer JSONPath: the text is data, not structure, and what
    is in it is only known once it is parsed.
    """

    kind: str
    path: str = "$"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path} if self.kind in STRUCTURED_KINDS else {"kind": self.kind}

    @classmethod
    def from_dict(cls, d: Any, export: str = "") -> FromText:
        if not isinstance(d, dict) or d.get("kind") not in TEXT_KINDS:
            raise ContractError(
                f"export {export!r}: from_text must be an object with kind one of {list(TEXT_KINDS)}, got {d!r}"
            )
        return cls(str(d["kind"]), str(d.get("path", "$")) if d["kind"] in STRUCTURED_KINDS else "$")


@dataclass
class Export:
    """One reusable value X_i: where it is read (source + JSONPath), its type, and whether it should propagate.

    ``propagate`` separates values a later call could meaningfully reuse (identifiers, content, attributes) from
    acknowledgements and counters, so relation induction does not wire tools through generic status text.
    ``from_text`` (optional) reads the values inside the text the path selects rather than the text itself.
    """

    name: str
    source: ExportSource
    path: str
    schema: dict[str, Any] = field(default_factory=dict)
    propagate: bool = True
    from_text: FromText | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "name": self.name,
            "source": self.source,
            "path": self.path,
            "schema": copy.deepcopy(self.schema),
            "propagate": self.propagate,
        }
        if self.from_text is not None:
            d["from_text"] = self.from_text.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Export:
        if not isinstance(d, dict):
            raise ContractError(f"an export must be a JSON object, got {type(d).__name__}")
        source = d.get("source")
        if source not in EXPORT_SOURCES:
            raise ContractError(
                f"export {d.get('name')!r}: source must be one of {list(EXPORT_SOURCES)}, got {source!r}"
            )
        text = FromText.from_dict(d["from_text"], str(d.get("name", ""))) if d.get("from_text") is not None else None
        return cls(
            str(d.get("name", "")),
            source,
            str(d.get("path", "")),
            copy.deepcopy(d.get("schema", {})),
            bool(d.get("propagate", True)),
            text,
        )


#: Flag prefix marking an input whose literal the tool's own validation refused and a revision repaired from the
#: rejection message ("use one of mm, cm, m, km"): the input has a form the tool checks, so it is no free choice.
CHECKED_LITERAL = "checked_literal:"
#: Flag prefix marking a leaf inside a structured literal that names an existing record, as
#: ``nested_reference:<input>:<JSON list of keys and indices>``: the tool refused the invented leaf as naming nothing,
#: so values other calls produce are offered to that leaf (the rest of the literal stays the caller's choice).
NESTED_REFERENCE = "nested_reference:"


@dataclass
class Contract:
    """A tool's executable contract plus bookkeeping (revision count, proposer notes and flags)."""

    tool: str
    templates: list[Template]
    exports: list[Export]
    success: dict[str, Any]
    failure: dict[str, Any]
    version: str = CONTRACT_VERSION
    revision: int = 0
    proposer: str = "offline"
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    def export(self, name: str) -> Export | None:
        return next((e for e in self.exports if e.name == name), None)

    def checked_literals(self) -> set[str]:
        """The inputs whose literal the tool refused and a revision repaired from its message (flagged with
        :data:`CHECKED_LITERAL`): inputs whose form the tool checks."""
        return {f[len(CHECKED_LITERAL) :] for f in self.flags if f.startswith(CHECKED_LITERAL)}

    def nested_references(self) -> dict[str, list[str | int]]:
        """Input -> where in its structured literal a reference sits (flagged with :data:`NESTED_REFERENCE`)."""
        out: dict[str, list[str | int]] = {}
        for f in self.flags:
            if f.startswith(NESTED_REFERENCE):
                param, _, pointer = f[len(NESTED_REFERENCE) :].partition(":")
                try:
                    out.setdefault(param, json.loads(pointer))
                except ValueError:
                    continue
        return out

    def copy(self) -> Contract:
        return Contract.from_dict(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "contract_version": self.version,
            "tool": self.tool,
            "revision": self.revision,
            "proposer": self.proposer,
            "templates": [t.to_dict() for t in self.templates],
            "exports": [e.to_dict() for e in self.exports],
            "success": copy.deepcopy(self.success),
            "failure": copy.deepcopy(self.failure),
        }
        if self.notes:
            d["notes"] = list(self.notes)
        if self.flags:
            d["flags"] = list(self.flags)
        return d

    @classmethod
    def from_dict(cls, d: Any) -> Contract:
        if not isinstance(d, dict):
            raise ContractError(f"a contract must be a JSON object, got {type(d).__name__}")
        tool = d.get("tool")
        if not isinstance(tool, str) or not tool:
            raise ContractError("a contract has no 'tool' name")
        version = d.get("contract_version", CONTRACT_VERSION)
        if version != CONTRACT_VERSION:
            raise ContractError(
                f"contract for {tool!r} has version {version!r}; this libra reads {CONTRACT_VERSION!r}: regenerate it"
            )
        for key in ("templates", "exports"):
            if not isinstance(d.get(key, []), list):
                raise ContractError(f"contract for {tool!r}: {key!r} must be a list")
        for key in ("success", "failure"):
            if not isinstance(d.get(key), dict):
                raise ContractError(f"contract for {tool!r}: {key!r} outcome schema is missing or not an object")
        return cls(
            tool=tool,
            templates=[Template.from_dict(t) for t in d.get("templates", [])],
            exports=[Export.from_dict(e) for e in d.get("exports", [])],
            success=copy.deepcopy(d["success"]),
            failure=copy.deepcopy(d["failure"]),
            version=version,
            revision=int(d.get("revision", 0)),
            proposer=str(d.get("proposer", "offline")),
            notes=[str(n) for n in d.get("notes", [])],
            flags=[str(f) for f in d.get("flags", [])],
        )
