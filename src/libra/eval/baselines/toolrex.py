"""``toolrex``: dense retrieval over tool documents enriched with an LLM-written profile (ToolREX, paper Table 2).

Why it looks like this (paper Appendix D and Figures 10-12, prompts rewritten in libra's words):

1. One call per tool writes a profile (purpose, when to use it, limitations, tags) from the tool's public
   metadata only.
2. One more call judges the profile against that metadata (a single ``true``/``false``): the profile is meant to
   add retrieval vocabulary, not invent capabilities.
3. A rejected profile -- or a first answer that could not be read -- gets one rewrite call, which is accepted
   without another check (the paper checks once).

So a tool costs 2 calls, or 3 when its profile is rejected. What is embedded is the tool's usual dense document
(:func:`libra.retrieval.documents.tool_document`) followed by the profile, with the same encoder as ``dense``; a
tool whose profile could not be obtained keeps its plain document and is recorded as a fallback. The paper used a
second model for the judge; here one ``--llm-model`` does all three steps.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from libra.catalog import Catalog, Tool
from libra.embeddings.embedders import embed_cached
from libra.eval.baselines.common import LLMRun, prompt_version, strip_reasoning, tool_card
from libra.llm.client import ReplyError, parse_json_object
from libra.retrieval.dense import DenseRetriever
from libra.retrieval.documents import tool_document

GENERATE_SYSTEM = (
    "You write search profiles for software tools. Read one tool's public metadata and describe the tool so that a "
    "search engine can match it with the requests it serves. Reply with one JSON object and nothing else, with the "
    'keys "purpose" (one or two sentences on what the tool does), "when_to_use" (the kind of request that needs '
    'it), "limitations" (what it cannot do or needs beforehand; an empty string when the metadata says nothing) and '
    '"tags" (three to five short lowercase keywords). Say only what the metadata supports.'
)
JUDGE_SYSTEM = (
    "You check a tool's search profile against the tool's own metadata. The profile is consistent when every "
    "statement in it follows from the metadata: no capability, input, output or restriction that the metadata does "
    "not state, and no topic foreign to the tool. Answer with a single word: true when the profile is consistent, "
    "false otherwise."
)
REWRITE_SYSTEM = (
    "You repair a tool's search profile that did not match the tool's metadata. Write it again from the metadata "
    'alone and keep only what the metadata states. Reply with one JSON object of the form {"tool_profile": {...}} '
    'whose profile has "purpose" (under twenty words) and "tags" (three to five lowercase keywords), plus, only '
    'when the metadata supports them, "when_to_use" (under twenty words), "limitations", and "examples" (at '
    'most two objects {"request": ..., "call": ...} that use the tool\'s real inputs). No comments, no code fences, '
    "no reasoning."
)
VERSION = prompt_version(GENERATE_SYSTEM, JUDGE_SYSTEM, REWRITE_SYSTEM, "v1")
_ALIASES = {
    "function_description": "purpose",
    "function": "purpose",
    "description": "purpose",
    "limitation": "limitations",
    "example_usage": "examples",
}


def generate_messages(tool: Tool) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": GENERATE_SYSTEM},
        {"role": "user", "content": f"{tool_card(tool)}\n\nWrite this tool's profile as one JSON object."},
    ]


def judge_messages(tool: Tool, profile: dict[str, Any]) -> list[dict[str, str]]:
    body = (
        f"Metadata:\n{tool_card(tool)}\n\nProfile:\n{json.dumps(profile, ensure_ascii=False)}\n\nIs the profile "
        "consistent with the metadata? Answer true or false."
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": body}]


def rewrite_messages(tool: Tool, rejected: dict[str, Any] | None) -> list[dict[str, str]]:
    shown = (
        json.dumps(rejected, ensure_ascii=False)
        if rejected is not None
        else "(none: the first answer could not be read)"
    )
    body = f"Metadata:\n{tool_card(tool)}\n\nProfile that did not match:\n{shown}\n\nReturn the corrected profile."
    return [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": body}]


def parse_profile(text: str | None) -> dict[str, Any]:
    """The profile in a reply (flat, or under ``tool_profile``), with known keys only; needs a non-empty purpose."""
    obj = parse_json_object(text)
    if isinstance(obj.get("tool_profile"), dict):
        obj = obj["tool_profile"]
    obj = {_ALIASES.get(k, k): v for k, v in obj.items()}
    purpose = obj.get("purpose")
    if not isinstance(purpose, str) or not purpose.strip():
        raise ReplyError('the profile has no "purpose" text')
    out: dict[str, Any] = {"purpose": purpose.strip()}
    for key in ("when_to_use", "limitations"):
        if isinstance(obj.get(key), str) and obj[key].strip():
            out[key] = obj[key].strip()
    tags = obj.get("tags")
    if isinstance(tags, list):
        out["tags"] = [t.strip() for t in tags if isinstance(t, str) and t.strip()]
    examples = obj.get("examples")
    if isinstance(examples, list):
        out["examples"] = [e for e in examples[:2] if isinstance(e, dict)]
    return out


def parse_verdict(text: str | None) -> bool | None:
    """True/False from a judge reply (first word, quotes and punctuation ignored), None when it says neither."""
    words = strip_reasoning(text).lower().replace('"', " ").replace("'", " ").replace(".", " ").split()
    if not words:
        return None
    return {"true": True, "false": False}.get(words[0])


def profile_text(profile: dict[str, Any]) -> str:
    """The profile as the prose appended to the tool document before embedding."""
    lines = [f"Purpose: {profile['purpose']}"]
    if profile.get("when_to_use"):
        lines.append(f"Use when: {profile['when_to_use']}")
    if profile.get("limitations"):
        lines.append(f"Limitations: {profile['limitations']}")
    if profile.get("tags"):
        lines.append("Tags: " + ", ".join(profile["tags"]))
    for e in profile.get("examples", []):
        if isinstance(e.get("request"), str):
            lines.append(f"Example request: {e['request']}")
    return "\n".join(lines)


def build_profile(run: LLMRun, tool: Tool) -> dict[str, Any] | None:
    """Generate, judge once, rewrite once if rejected; None (recorded) when no usable profile came back."""
    reply, err = run.ask(generate_messages(tool))
    profile: dict[str, Any] | None = None
    if err is None:
        try:
            profile = parse_profile(reply)
        except ReplyError as exc:
            run.unusable()
            err = f"generation unreadable: {exc}"
    if profile is not None:
        verdict_reply, jerr = run.ask(judge_messages(tool, profile))
        verdict = None if jerr else parse_verdict(verdict_reply)
        if verdict is None and jerr is None:
            run.unusable()
        if verdict is True:
            return profile
        if verdict is None:
            run.fallback(
                tool.name,
                "judge",
                jerr or f"judge answer is neither true nor false: {strip_reasoning(verdict_reply)[:80]!r}",
            )
    else:
        run.fallback(tool.name, "generate", err or "no reply")
    reply, err = run.ask(rewrite_messages(tool, profile))
    if err is None:
        try:
            return parse_profile(reply)
        except ReplyError as exc:
            run.unusable()
            err = f"rewrite unreadable: {exc}"
    run.fallback(tool.name, "rewrite", f"{err}; the plain tool document is embedded")
    return None


class ToolRexRetriever:
    """Dense retrieval over document + profile; profiles are built once per catalog and model (artifact file)."""

    name = "toolrex"

    def __init__(self, run: LLMRun, embedder: Any = "minilm", document: str = "text") -> None:
        self.run = run
        self.dense = DenseRetriever(embedder, document=document)
        self.document = document
        self.profiles: dict[str, dict[str, Any] | None] = {}

    def fit(self, catalog: Catalog) -> ToolRexRetriever:
        path = self.run.artifact_path(self.name, catalog, {"prompts": VERSION})
        stored = self.run.load_artifact(path)
        if stored is not None:
            self.profiles = stored["items"]
        else:
            built = self.run.map(lambda t: build_profile(self.run, t), list(catalog))
            self.profiles = {t.name: p for t, p in zip(catalog, built)}
            self.run.save_artifact(path, self.profiles)
        texts = [
            tool_document(t, self.document) + ("\n" + profile_text(p) if (p := self.profiles.get(t.name)) else "")
            for t in catalog
        ]
        self.dense.tool_vectors = embed_cached(self.dense.embedder, texts)
        return self

    def score(self, queries: Sequence[str]) -> np.ndarray:
        return self.dense.score(queries)

    @property
    def temperature(self) -> float | None:
        return self.dense.temperature

    def probabilities(self, scores: np.ndarray, temperature: float | None = None) -> np.ndarray:
        return self.dense.probabilities(scores, temperature)

    def report(self) -> dict[str, Any]:
        return {**self.run.report(), "profiles": sum(1 for p in self.profiles.values() if p)}
