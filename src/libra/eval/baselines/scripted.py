"""Deterministic answers to the LLM retrieval methods' prompts, for the local stub endpoint (tests, benchmarks).

Why: the methods' control flow (iterations, fallbacks, caching, call counts) must run over real HTTP through the
real ``openai`` SDK without a model. :class:`MethodResponder` recognises each prompt by its system message and
answers from the tool metadata it can look up in the catalog -- a profile that restates the description, a
dependency label from matching output and input names, triples from the metadata, and an agent that searches
for the whole task and then for each of its lines before answering. ``scripts`` replace answers per (kind,
subject) for tests that need broken replies, HTTP errors or slow ones; anything unrecognised goes to the
contract responder of :mod:`libra.contracts.llm.stub_server`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from libra.catalog import Catalog, Tool
from libra.contracts.llm.stub_server import OfflineResponder, Reply
from libra.eval.baselines import egotrip, tgr, toolreagt, toolrex

KINDS = {
    toolrex.GENERATE_SYSTEM: "profile",
    toolrex.JUDGE_SYSTEM: "judge",
    toolrex.REWRITE_SYSTEM: "rewrite",
    tgr.LABEL_SYSTEM: "label",
    egotrip.TRIPLES_SYSTEM: "triples",
}
_AGENT_PREFIX = toolreagt.SYSTEM.split("{", 1)[0]
_TOOL_LINE = re.compile(r"^Tool: (\S+)$", re.M)
_TASK = re.compile(r'complex task: "(.*)"\. Choose', re.S)
_NAME = re.compile(r"exact name is (\S+?)\. ")


def prompt_kind(body: dict[str, Any]) -> str:
    msgs = body.get("messages") or []
    system = msgs[0].get("content", "") if msgs else ""
    if system in KINDS:
        return KINDS[system]
    return "agent" if isinstance(system, str) and system.startswith(_AGENT_PREFIX) else "other"


def _user(body: dict[str, Any]) -> str:
    msgs = body.get("messages") or []
    return str(msgs[1].get("content", "")) if len(msgs) > 1 else ""


def prompt_subject(body: dict[str, Any], kind: str) -> str:
    """What a prompt is about: a tool name, ``A | B`` for a pair, or the task text for the agent."""
    user = _user(body)
    if kind in ("profile", "judge", "rewrite"):
        m = _TOOL_LINE.search(user)
        return m.group(1) if m else ""
    if kind == "label":
        names = _TOOL_LINE.findall(user.split("Now the pair to classify.", 1)[-1])
        return " | ".join(names[:2])
    if kind == "triples":
        m = _NAME.search(user)
        return m.group(1) if m else ""
    if kind == "agent":
        m = _TASK.search(user)
        return m.group(1) if m else ""
    return ""


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w]


def _outputs(tool: Tool) -> set[str]:
    schema = tool.response_schema or {}
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        schema = schema["items"]
    return set((schema.get("properties") or {}).keys())


def offline_profile(tool: Tool) -> dict[str, Any]:
    return {
        "purpose": tool.description.strip() or tool.name,
        "when_to_use": f"a request that needs {tool.short_name.replace('_', ' ')}",
        "limitations": "",
        "tags": sorted(set(_words(tool.short_name)))[:5],
    }


def offline_label(a: Tool, b: Tool) -> str:
    if _outputs(a) & set(b.required):
        return "b_depends_on_a"
    if _outputs(b) & set(a.required):
        return "a_depends_on_b"
    return "no_dependency"


def offline_triples(tool: Tool) -> list[dict[str, str]]:
    group = tool.group or (tool.name.rsplit(".", 1)[0] if "." in tool.name else "general")
    out = [{"head": tool.name, "relationship": "has_line_of_business", "tail": group}]
    out += [{"head": tool.name, "relationship": "has_parameter", "tail": p} for p in tool.param_names]
    out += [{"head": tool.name, "relationship": "produces", "tail": f} for f in sorted(_outputs(tool))]
    return out


def agent_turn(task: str, turn: int, searches: int) -> str:
    """Search for the whole task, then for each of its first lines (up to ``searches`` in all), then answer."""
    parts = [task] + [p.strip() for p in re.split(r"\n|(?<=[.?!])\s+", task) if p.strip() and p.strip() != task.strip()]
    parts = parts[:searches]
    if turn < len(parts):
        return (
            f"Thought: I need tools for this part.\nAction: {toolreagt.TOOL_NAME}\nAction Input: "
            f"{json.dumps({'input': parts[turn]})}"
        )
    return "Thought: I have what I need.\nAnswer: done."


class MethodResponder:
    """Deterministic replies for the four methods' prompts; ``scripts[(kind, subject)]`` override them in order."""

    def __init__(
        self,
        catalog: Catalog,
        scripts: dict[tuple[str, str], Iterable[Reply | str]] | None = None,
        searches: int = 3,
        fallback: Callable[[dict[str, Any], int], Reply] | None = None,
    ) -> None:
        self.catalog = catalog
        self.searches = searches
        self._scripts = {k: [r if isinstance(r, Reply) else Reply(r) for r in v] for k, v in (scripts or {}).items()}
        self._lock = threading.Lock()
        self.fallback = fallback or OfflineResponder()
        self.seen: list[tuple[str, str]] = []

    def __call__(self, body: dict[str, Any], index: int) -> Reply:
        kind = prompt_kind(body)
        subject = prompt_subject(body, kind)
        with self._lock:
            self.seen.append((kind, subject))
            script = self._scripts.get((kind, subject))
            scripted = script.pop(0) if script else None
        if scripted is not None:
            return scripted
        tool = self.catalog.get(subject)
        if kind in ("profile", "rewrite") and tool is not None:
            profile = offline_profile(tool)
            return Reply(json.dumps({"tool_profile": profile} if kind == "rewrite" else profile))
        if kind == "judge":
            return Reply("true")
        if kind == "label":
            a, b = (self.catalog.get(n) for n in (subject.split(" | ") + ["", ""])[:2])
            return Reply(json.dumps({"label": offline_label(a, b) if a and b else "no_dependency"}))
        if kind == "triples" and tool is not None:
            return Reply(json.dumps({"relationships": offline_triples(tool)}))
        if kind == "agent":
            turn = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
            return Reply(agent_turn(subject, turn, self.searches))
        return self.fallback(body, index)
