"""What a dense retriever embeds for each tool.

The paper embeds the serialized tool metadata (JSON). That suits a long-context encoder, but the default
embedder reads at most 256 word pieces, and JSON braces, quotes and schema keywords (``"type": "object",
"properties"``) spend many of them on text every tool shares, which pulls all tools toward one another and
cuts long descriptions short. The default ``text`` style renders the same public metadata as prose: the
qualified name, the description, each parameter with its type and description, then each field of the
response (of a listed record, when the response is a list) the same way. What a tool gives back is often
what a request names ("how many followers", "the id of the playlist"). Nothing beyond the public metadata is
added. ``json`` keeps the paper's serialization, for reproducing it or for long-context encoders.

BM25 keeps indexing the JSON serialization (:meth:`libra.catalog.Tool.text`): a lexical scorer loses nothing
to punctuation.
"""

from __future__ import annotations

from typing import Any

from libra.catalog import Tool
from libra.errors import ConfigError

DOCUMENT_STYLES = ("text", "json")
DEFAULT_DOCUMENT = "text"


def _type_label(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        return " or ".join(str(x) for x in t)
    if isinstance(t, str):
        return t
    if "enum" in schema:
        return "one of " + ", ".join(str(v) for v in schema["enum"])
    return "any"


def _field(name: str, schema: dict[str, Any]) -> str:
    about = str(schema.get("description") or "").strip()
    return f"{name} ({_type_label(schema)})" + (f": {about}" if about else "")


def _response_fields(schema: Any) -> list[str]:
    """The response's top-level fields, like the parameters: a list's record fields, else a described scalar."""
    if not isinstance(schema, dict):
        return []
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and items.get("properties"):
        schema = items
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return [_field(n, s if isinstance(s, dict) else {}) for n, s in props.items()]
    about = str(schema.get("description") or "").strip()
    return [f"{_type_label(schema)}: {about}"] if about else []


def text_document(tool: Tool) -> str:
    """``name: description``, ``Parameters: p (type): description; ...``, ``Returns: ...`` (lines only when
    there is something to say)."""
    desc = tool.description.strip()
    lines = [f"{tool.name}: {desc}" if desc else tool.name]
    params = [_field(name, tool.param_schema(name)) for name in tool.param_names]
    if params:
        lines.append("Parameters: " + "; ".join(params))
    returns = _response_fields(tool.response_schema)
    if returns:
        lines.append("Returns: " + "; ".join(returns))
    return "\n".join(lines)


def tool_document(tool: Tool, style: str = DEFAULT_DOCUMENT) -> str:
    return text_document(tool) if check_style(style) == "text" else tool.text()


def check_style(style: str) -> str:
    """Validate early, so a typo fails before any model is loaded."""
    if style not in DOCUMENT_STYLES:
        raise ConfigError(f"unknown document style {style!r}: use {' or '.join(DOCUMENT_STYLES)}")
    return style
