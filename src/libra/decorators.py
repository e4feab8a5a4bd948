"""``@libra.tool(...)``: what the author of a Python tool knows and introspection cannot read.

A signature and a docstring say what a tool takes; they do not say which values make sense for a free-text
parameter, which tools belong together, or that a tool only reads. The decorator carries exactly that:

- ``group``: the tool's group in the catalog (default: its class or module), what retrieval shows beside it.
- ``read_only``: the author's word that the tool changes nothing. It is a *hint*, recorded as MCP records its
  servers' hints (``metadata["annotations"]["readOnlyHint"]``, so one key serves both kinds of tools), that may
  order or prune work; it never decides a relation, because authors' hints are often wrong and a relation is
  only ever found by executing calls.
- ``examples``: per parameter, a list of values a caller would pass. They go into that parameter's JSON Schema
  ``examples``, which the offline contract proposer already tries before inventing a value, so a search
  parameter gets a query that finds something.

The decorator returns the function itself with one attribute set, so calling the function is unchanged (no
wrapper, same signature, same identity).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

F = TypeVar("F")

#: The attribute the decorator sets on the function it marks.
HINTS_ATTR = "__libra_tool__"


@dataclass(frozen=True)
class ToolHints:
    """What ``@tool(...)`` recorded on one function."""

    group: str | None = None
    read_only: bool | None = None
    examples: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        """What a catalog records in ``Tool.metadata`` (only hints that were given), in MCP's annotation names."""
        return {"annotations": {"readOnlyHint": self.read_only}} if self.read_only is not None else {}


def _function_of(obj: Any) -> Callable[..., Any]:
    """The plain function behind a (static/class) method object: where the hints are stored and read."""
    return getattr(obj, "__func__", obj)


def _checked_examples(func: Callable[..., Any], examples: Mapping[str, Any] | None) -> dict[str, tuple[Any, ...]]:
    """Examples as ``{parameter: (value, ...)}``, refused at decoration time when they cannot be right: a name that
    is not a parameter (a typo would otherwise be silently ignored), a value that is not a list, or a value that
    is not JSON data (a schema holds JSON only)."""
    if examples is None:
        return {}
    if not isinstance(examples, Mapping):
        raise TypeError(f"@tool on {func.__qualname__}: examples must map parameter names to lists of values")
    try:
        params = set(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        params = set()
    out: dict[str, tuple[Any, ...]] = {}
    for name, values in examples.items():
        if name not in params:
            raise TypeError(
                f"@tool on {func.__qualname__}: examples name {name!r}, which is not one of its parameters "
                f"{sorted(params - {'self', 'cls'})}"
            )
        if not isinstance(values, (list, tuple)) or not values:
            raise TypeError(f"@tool on {func.__qualname__}: examples[{name!r}] must be a non-empty list of values")
        try:
            json.dumps(list(values), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"@tool on {func.__qualname__}: examples[{name!r}] must be JSON data ({exc})") from None
        out[name] = tuple(values)
    return out


def tool(
    func: F | None = None,
    *,
    group: str | None = None,
    read_only: bool | None = None,
    examples: Mapping[str, list[Any]] | None = None,
) -> Any:
    """Mark a function or method as a tool and record what its author knows; usable as ``@tool`` or ``@tool(...)``.

    ``examples`` maps parameter names to lists of typical values. The marked function is returned unchanged
    except for the :data:`HINTS_ATTR` attribute.
    """
    if group is not None and (not isinstance(group, str) or not group.strip()):
        raise TypeError("@tool: group must be a non-empty string")
    if read_only is not None and not isinstance(read_only, bool):
        raise TypeError("@tool: read_only must be True or False")

    def mark(obj: F) -> F:
        target = _function_of(obj)
        if not callable(target):
            raise TypeError(f"@tool marks functions and methods, not {type(obj).__name__}")
        setattr(
            target,
            HINTS_ATTR,
            ToolHints(group=group, read_only=read_only, examples=_checked_examples(target, examples)),
        )
        return obj

    return mark(func) if func is not None else mark


def hints_of(obj: Any) -> ToolHints | None:
    """The hints ``@tool`` recorded on a function or method (None when it was not marked)."""
    hints = getattr(_function_of(obj), HINTS_ATTR, None)
    return hints if isinstance(hints, ToolHints) else None
