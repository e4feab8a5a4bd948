"""What a dense retriever embeds for each tool.

The paper embeds the serialized tool metadata (JSON). That suits a long-context encoder, but the default
embedder reads at most 256 word pieces, and JSON braces, quotes and schema keywords (``"type": "object",
"properties"``) spend many of them on text every tool shares, which pulls all tools toward one another and
cuts long descriptions short. The default ``text`` style renders the same public metadata as prose: the
qualified name, the description, then each parameter with its type and description. Nothing beyond the public
metadata is added. ``json`` keeps the paper's serialization, for reproducing it or for long-context encoders.

BM25 keeps indexing the JSON serialization (:meth:`libra.catalog.Tool.text`): a lexical scorer loses nothing
to punctuation.
"""

from __future__ import annotations

from typing import Any

from ..catalog import Tool
from ..errors import ConfigError

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


def text_document(tool: Tool) -> str:
    """``name: description`` then ``Parameters: p (type): description; ...`` (no line when there are none)."""
    desc = tool.description.strip()
    lines = [f"{tool.name}: {desc}" if desc else tool.name]
    params = []
    for name in tool.param_names:
        schema = tool.param_schema(name)
        about = str(schema.get("description") or "").strip()
        params.append(f"{name} ({_type_label(schema)})" + (f": {about}" if about else ""))
    if params:
        lines.append("Parameters: " + "; ".join(params))
    return "\n".join(lines)


def tool_document(tool: Tool, style: str = DEFAULT_DOCUMENT) -> str:
    return text_document(tool) if check_style(style) == "text" else tool.text()


def check_style(style: str) -> str:
    """Validate early, so a typo fails before any model is loaded."""
    if style not in DOCUMENT_STYLES:
        raise ConfigError(f"unknown document style {style!r}: use {' or '.join(DOCUMENT_STYLES)}")
    return style
