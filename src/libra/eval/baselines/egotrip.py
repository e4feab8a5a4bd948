"""``ego-trip``: a knowledge graph of the tools from LLM-extracted triples, searched through ego graphs (Table 2).

Why it looks like this (paper Appendix D and Figure 14, prompt rewritten in libra's words; Bansal et al. 2025):

- Construction: one call per tool extracts head-relation-tail triples from its public metadata. The tool's exact
  name is the node that links it to its category (``has_line_of_business``), its inputs (``has_parameter``) and its
  other salient concepts (``has_entity``); entities that several tools mention join those tools in one graph.
  Triples that are not three non-empty strings, repeat, or relate a node to itself are dropped; a tool whose
  reply yields no triple keeps only its own node and is recorded as a fallback.
- Retrieval: the query is matched densely (same encoder as ``dense``) against the graph's searchable items -- each
  tool's document and each triple written as ``head relation tail`` -- and the ``entries`` best items are the entry
  points. Every tool in the one-hop ego graph of an entry point's nodes is returned with the entry's similarity
  (the best one when several entries reach it); tools reached by no entry keep their own dense score, so they
  follow. The paper's deployment has no reranker here either ("use the dense retrieval tool").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from libra.catalog import Catalog, Tool
from libra.embeddings.embedders import embed_cached
from libra.eval.baselines.common import LLMRun, category, outputs, prompt_version
from libra.llm.client import ReplyError, parse_json_object
from libra.retrieval.dense import DenseRetriever

RELATIONS: tuple[str, ...] = (
    "has_line_of_business",
    "has_parameter",
    "has_entity",
    "contains",
    "related_to",
    "used_for",
    "has_attribute",
    "associated_with",
    "managed_by",
    "part_of",
    "required_for",
    "depends_on",
    "produces",
    "receives_from",
    "involved_in",
    "reports_to",
    "responsible_for",
    "affects",
    "includes",
)
DEFAULT_ENTRIES = 10
TRIPLES_SYSTEM = (
    "You turn the description of one tool into a small knowledge graph. Reply with one JSON object holding a "
    '"relationships" list; every item has the string fields "head", "relationship" and "tail". Keep entity '
    "names short and use the same name for the same thing, split statements that say two things into two triples, "
    "and never repeat a triple or relate an entity to itself."
)
VERSION = prompt_version(TRIPLES_SYSTEM, ",".join(RELATIONS), "v1")

Triple = tuple[str, str, str]


def triples_messages(tool: Tool) -> list[dict[str, str]]:
    params = ", ".join(tool.param_names) or "(none)"
    body = (
        f"The tool's exact name is {tool.name}. Extract head-relationship-tail triples from the metadata below. "
        f"Prefer these relationships whenever one fits: {', '.join(RELATIONS)}. Connect the exact name to its "
        "category with has_line_of_business, to each input with has_parameter, and to the other important concepts "
        "with has_entity; use the exact name only in those three relationships, always spelled exactly as given.\n\n"
        f"Name: {tool.name}\nCategory: {category(tool)}\nDescription: {tool.description.strip() or '(none)'}\n"
        f"Inputs: {params}\nOutputs: {outputs(tool)}\n\n"
        'Answer format: {"relationships": [{"head": "...", "relationship": "...", "tail": "..."}]}'
    )
    return [{"role": "system", "content": TRIPLES_SYSTEM}, {"role": "user", "content": body}]


def parse_triples(text: str | None, tool: Tool) -> list[Triple]:
    """Clean triples from a reply; the tool's short name is read as its exact name. Raises when none is usable."""
    obj = parse_json_object(text)
    items = obj.get("relationships")
    if not isinstance(items, list):
        raise ReplyError('no "relationships" list in the reply')
    out: list[Triple] = []
    seen: set[Triple] = set()
    for it in items:
        if not isinstance(it, dict):
            continue
        parts = [it.get("head"), it.get("relationship"), it.get("tail")]
        if not all(isinstance(p, str) and p.strip() for p in parts):
            continue
        h, r, t = (str(p).strip() for p in parts)
        h = tool.name if h == tool.short_name else h
        t = tool.name if t == tool.short_name else t
        if h == t or (h, r, t) in seen:
            continue
        seen.add((h, r, t))
        out.append((h, r, t))
    if not out:
        raise ReplyError("the reply holds no usable head-relationship-tail triple")
    return out


class EgoTripRetriever:
    """Entry points by dense search over tools and triples, then the tools of their one-hop ego graphs."""

    name = "ego-trip"

    def __init__(
        self, run: LLMRun, embedder: Any = "minilm", document: str = "text", entries: int = DEFAULT_ENTRIES
    ) -> None:
        self.run = run
        self.dense = DenseRetriever(embedder, document=document)
        self.entries = entries
        self.triples: dict[str, list[Triple]] = {}
        self.item_vectors: np.ndarray | None = None
        self.item_tools: list[np.ndarray] = []  # per searchable item: the catalog indices in its ego graph

    def _extract(self, tool: Tool) -> list[Triple]:
        reply, err = self.run.ask(triples_messages(tool))
        if err is None:
            try:
                return parse_triples(reply, tool)
            except ReplyError as exc:
                self.run.unusable()
                err = str(exc)
        self.run.fallback(tool.name, "triples", f"{err}; the tool keeps only its own node")
        return []

    def fit(self, catalog: Catalog) -> EgoTripRetriever:
        self.dense.fit(catalog)
        path = self.run.artifact_path(self.name, catalog, {"prompts": VERSION})
        stored = self.run.load_artifact(path)
        if stored is not None:
            self.triples = {k: [tuple(t) for t in v] for k, v in stored["items"].items()}  # type: ignore[misc]
        else:
            found = self.run.map(self._extract, list(catalog))
            self.triples = {t.name: tr for t, tr in zip(catalog, found)}
            self.run.save_artifact(path, self.triples)
        self._index(catalog)
        return self

    def _index(self, catalog: Catalog) -> None:
        index = {name: i for i, name in enumerate(catalog.names)}
        neighbours: dict[str, set[str]] = defaultdict(set)
        all_triples = sorted({t for tr in self.triples.values() for t in tr})
        for h, _, t in all_triples:
            neighbours[h].add(t)
            neighbours[t].add(h)

        def ego_tools(nodes: Sequence[str]) -> np.ndarray:
            reach = set(nodes)
            for n in nodes:
                reach |= neighbours.get(n, set())
            return np.array(sorted(index[n] for n in reach if n in index), dtype=int)

        self.item_tools = [ego_tools([name]) for name in catalog.names]
        self.item_tools += [ego_tools([h, t]) for h, _, t in all_triples]
        assert self.dense.tool_vectors is not None
        texts = [f"{h} {r.replace('_', ' ')} {t}" for h, r, t in all_triples]
        extra = embed_cached(self.dense.embedder, texts) if texts else np.zeros((0, self.dense.tool_vectors.shape[1]))
        self.item_vectors = np.vstack([self.dense.tool_vectors, extra])

    def score(self, queries: Sequence[str]) -> np.ndarray:
        assert self.item_vectors is not None and self.dense.tool_vectors is not None
        q = embed_cached(self.dense.embedder, list(queries))
        item_sims = (1.0 + q @ self.item_vectors.T) / 2.0
        n_tools = self.dense.tool_vectors.shape[0]
        out = item_sims[:, :n_tools].copy()
        for row, sims in enumerate(item_sims):
            for e in np.argsort(-sims, kind="stable")[: self.entries]:
                tools = self.item_tools[e]
                if tools.size:
                    out[row, tools] = np.maximum(out[row, tools], sims[e])
        return out

    def report(self) -> dict[str, Any]:
        return {**self.run.report(), "triples": sum(len(v) for v in self.triples.values())}
