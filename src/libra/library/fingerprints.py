"""What a library was built from, tool by tool, and how a catalog differs from it.

A library records (its optional ``fingerprints`` field) one hash per tool, a hash per part of the state its
build started from and a hash of the build's options. Why per tool: a catalog changes a little at a time (a
server gains a tool, a function's signature changes), and only what a change can affect needs building again
(:mod:`libra.induction.update`); ``libra show`` can say which tools changed since the library was built.

Why per part of the starting state: a state made of independent parts (one per Python class instance) gains a
part when a class is added and loses one when it is removed, which changes no other tool's evidence; a part
present in both with other contents (another seed, another scenario) does, so only that refuses reuse.

This module is pure data: how a source's fingerprints are computed lives with the build
(:mod:`libra.induction.fingerprints`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BuildFingerprints", "CatalogChanges", "digest", "tool_digest"]


def digest(value: Any) -> str:
    """A SHA-256 of ``value`` as canonical JSON (keys sorted, anything else by its ``repr``)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def tool_digest(document: dict[str, Any], code: str | None = None, server_version: str | None = None) -> str:
    """One tool's fingerprint: its public metadata (schemas, description, group, hints) plus, when known, the
    source of the Python code behind it or the version of the MCP server that lists it."""
    return digest({"tool": document, "code": code, "server_version": server_version})


@dataclass
class CatalogChanges:
    """How a catalog differs from the one a library was built from, tool by tool (names sorted)."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        """Tools added, removed or changed."""
        return len(self.added) + len(self.removed) + len(self.changed)

    @property
    def touched(self) -> set[str]:
        """Tools of the new catalog whose contracts and pairs must be built again: the added and the changed."""
        return set(self.added) | set(self.changed)

    def summary(self) -> str:
        """One line: how many tools changed since the library was built, and which."""
        if not self.count:
            return "no tools changed since this library was built"
        parts = []
        for label, names in (("added", self.added), ("removed", self.removed), ("changed", self.changed)):
            if names:
                shown = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
                parts.append(f"{label}: {shown}")
        noun = "tool" if self.count == 1 else "tools"
        return f"{self.count} {noun} changed since this library was built ({'; '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "removed": self.removed, "changed": self.changed, "count": self.count}


@dataclass
class BuildFingerprints:
    """What a build started from: ``tools`` (name -> :func:`tool_digest`), ``start`` (part of the starting state
    -> its hash: sandbox template, fixtures, state parts), ``options`` (a hash of the build options that decide
    what it finds, with ``option_values`` the options themselves, so a refusal can name the one that changed) and
    ``built_at`` (UTC, ISO 8601)."""

    tools: dict[str, str]
    start: dict[str, str]
    options: str
    option_values: dict[str, Any] = field(default_factory=dict)
    built_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tools": dict(self.tools),
            "start": dict(self.start),
            "options": self.options,
            "option_values": self.option_values,
            "built_at": self.built_at,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BuildFingerprints:
        return cls(
            dict(d["tools"]), dict(d["start"]), d["options"], dict(d.get("option_values") or {}), d.get("built_at", "")
        )

    def changes(self, tools: dict[str, str]) -> CatalogChanges:
        """How a catalog whose tools have fingerprints ``tools`` differs from this build's."""
        old = self.tools
        return CatalogChanges(
            added=sorted(n for n in tools if n not in old),
            removed=sorted(n for n in old if n not in tools),
            changed=sorted(n for n in tools if n in old and old[n] != tools[n]),
            unchanged=sorted(n for n in tools if old.get(n) == tools[n]),
        )

    def refusal(self, new: BuildFingerprints) -> str | None:
        """Why evidence of this build cannot serve build ``new`` (one line), or None when it can: an option that
        decides what a build finds changed, or a part of the starting state present in both changed. A part only
        one of them has came or went with its tools (a class added or removed) and refuses nothing."""
        if self.options != new.options:
            keys = sorted(set(self.option_values) | set(new.option_values))
            differ = [k for k in keys if self.option_values.get(k) != new.option_values.get(k)]
            which = ", ".join(differ) if differ else "the build options"
            return f"the build options changed since the library was built ({which})"
        differ = sorted(p for p in self.start if p in new.start and self.start[p] != new.start[p])
        if differ:
            return f"the starting state changed since the library was built ({', '.join(differ)})"
        return None
