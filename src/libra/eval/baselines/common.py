"""What the LLM retrieval methods share: the client, the per-catalog artifact file, tool cards, fallback records.

Why: every method asks a model about items (a tool, a pair of tools, a task), must survive any reply (each
unusable one is recorded as a fallback, never raised) and must cost nothing the second time. Replies are cached
per call by :class:`~libra.llm.client.ChatClient`; on top of that the finished per-catalog result (profiles,
labels, triples) is written once to ``<cache>/artifacts/`` under a key of the method, its prompts and settings,
the catalog fingerprint, the model and the base URL, so a rerun reads one file and makes no call at all.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from libra._util.io import atomic_write_json
from libra.catalog import Catalog, Tool
from libra.embeddings.embedders import cache_dir
from libra.llm.client import ChatClient, ChatConfig, ChatStats, LLMEndpointError

T = TypeVar("T")
R = TypeVar("R")
#: How many fallback records a report shows (the count is always complete).
SHOWN_FALLBACKS = 20


class LLMMethodError(LLMEndpointError):
    """The endpoint a retrieval method needs cannot be used."""


def default_cache() -> Path:
    """Where replies and artifacts go without ``--llm-cache``: every call is cached, always."""
    return cache_dir() / "llm"


@dataclass
class Fallback:
    """One item (tool, pair, task) whose LLM answer could not be used, and what was used instead."""

    item: str
    stage: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"item": self.item, "stage": self.stage, "reason": self.reason}


@dataclass
class LLMRun:
    """A client plus the fallbacks recorded while one method was built and queried."""

    config: ChatConfig
    stats: ChatStats = field(default_factory=ChatStats)
    fallbacks: list[Fallback] = field(default_factory=list)
    chat: ChatClient | None = None

    def __post_init__(self) -> None:
        if not self.config.cache_path:
            self.config.cache_path = str(default_cache())
        if self.chat is None:
            self.chat = ChatClient(self.config, self.stats, error=LLMMethodError)
        self._lock = threading.Lock()

    @property
    def cache_root(self) -> Path:
        return Path(str(self.config.cache_path))

    def ask(self, messages: list[dict[str, str]]) -> tuple[str | None, str | None]:
        """(reply, None), or (None, why) when the call could not be made; endpoint-level errors raise."""
        from libra.llm.client import BadRequest, TransportExhausted

        assert self.chat is not None
        try:
            return self.chat.ask(messages).content, None
        except (TransportExhausted, BadRequest) as exc:
            self.chat.bump(failures=1)
            return None, f"transport: {exc}"

    def unusable(self) -> None:
        """Count a reply that came back but could not be used (it stays cached: a rerun takes the same path)."""
        assert self.chat is not None
        self.chat.bump(failures=1)

    def fallback(self, item: str, stage: str, reason: str) -> None:
        assert self.chat is not None
        self.chat.bump(fallbacks=1)
        with self._lock:
            self.fallbacks.append(Fallback(item, stage, reason))

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn`` over ``items`` with at most ``concurrency`` calls in flight, results in input order."""
        items = list(items)
        if self.config.concurrency <= 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="libra-llm-method") as pool:
            futures = [pool.submit(fn, x) for x in items]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def report(self) -> dict[str, Any]:
        return {
            "llm": self.stats.to_dict(),
            "fallbacks": len(self.fallbacks),
            "fallback_examples": [f.to_dict() for f in self.fallbacks[:SHOWN_FALLBACKS]],
        }

    # -- per-catalog artifacts ------------------------------------------------------------------------------
    def artifact_path(self, method: str, catalog: Catalog, identity: dict[str, Any]) -> Path:
        ident = {
            "method": method,
            "catalog": catalog.fingerprint(),
            "model": self.config.model,
            "base_url": self.config.base_url.rstrip("/"),
            **identity,
        }
        key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:24]
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{method}-{catalog.name}")
        return self.cache_root / "artifacts" / f"{safe}-{key}.json"

    def load_artifact(self, path: Path) -> dict[str, Any] | None:
        """A stored artifact (its recorded fallbacks come back with it), or None."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or "items" not in data:
            return None
        self.fallbacks.extend(Fallback(**f) for f in data.get("fallbacks", []) if isinstance(f, dict))
        return data

    def save_artifact(self, path: Path, items: Any, **extra: Any) -> None:
        atomic_write_json(
            path,
            {
                "model": self.config.model,
                "base_url": self.config.base_url,
                "items": items,
                "fallbacks": [f.to_dict() for f in self.fallbacks],
                "build_llm": self.stats.to_dict(),
                **extra,
            },
        )


def prompt_version(*texts: str) -> str:
    """A short hash of a method's prompt texts: editing a prompt never reuses artifacts built with the old one."""
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]


# -- how a tool is shown to a model ------------------------------------------------------------------------------
def _type(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        return "|".join(str(x) for x in t)
    return str(t) if t else ("enum" if "enum" in schema else "any")


def signature(tool: Tool) -> str:
    """``name(a: string, b?: integer)``: optional inputs carry a ``?`` (dependencies concern required ones)."""
    required = set(tool.required)
    args = [f"{p}{'' if p in required else '?'}: {_type(tool.param_schema(p))}" for p in tool.param_names]
    return f"{tool.name}({', '.join(args)})"


def outputs(tool: Tool) -> str:
    """What the tool returns, as field names and types (or 'not documented')."""
    schema = tool.response_schema
    if not isinstance(schema, dict):
        return "not documented"
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and items.get("properties"):
        schema = items
        prefix = "a list of records with "
    else:
        prefix = ""
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return prefix + ", ".join(f"{k}: {_type(v if isinstance(v, dict) else {})}" for k, v in props.items())
    about = str(schema.get("description") or "").strip()
    return _type(schema) + (f" ({about})" if about else "")


def tool_card(tool: Tool) -> str:
    """The public metadata of one tool as the prompts show it: name, signature, description, inputs, outputs."""
    lines = [
        f"Tool: {tool.name}",
        f"Signature: {signature(tool)}",
        f"Description: {tool.description.strip() or '(none)'}",
    ]
    for p in tool.param_names:
        s = tool.param_schema(p)
        about = str(s.get("description") or "").strip()
        lines.append(
            f"Input {p} ({_type(s)}{', required' if p in tool.required else ''})" + (f": {about}" if about else "")
        )
    lines.append(f"Returns: {outputs(tool)}")
    return "\n".join(lines)


def category(tool: Tool) -> str:
    """The tool's group, else the prefix of its qualified name (``Shop`` for ``Shop.add_item``), else 'general'."""
    if tool.group:
        return tool.group
    return tool.name.rsplit(".", 1)[0] if "." in tool.name else "general"


def strip_reasoning(text: str | None) -> str:
    from libra.llm.client import THINK

    return THINK.sub("", text or "").strip()
