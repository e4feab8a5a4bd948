"""``tgr-adapt``: LLM-labelled tool dependencies plus TGR's parameter-free graph convolution (paper Table 2).

Why it looks like this (paper Appendix D and Figure 13, prompt rewritten in libra's words): TGR's trained
dependency discriminator is not public, so, as in the paper, a model labels each pair from the two tools' public
metadata as ``a_depends_on_b``, ``b_depends_on_a`` or ``no_dependency``. The labelled edges then update the frozen
tool embeddings with one parameter-free graph convolution, ``E' = D^-1/2 (A + I) D^-1/2 E`` over the undirected
dependency graph (rows re-normalised), and queries are scored against ``E'`` exactly as ``dense`` scores ``E``:
a prerequisite takes on part of its consumers' embedding and so rises for the requests they match.

Which pairs are labelled. Labelling every unordered pair costs n(n-1)/2 calls: 8,128 for BFCL's 128 tools,
104,196 for AppWorld's 457. A dependency links tools that work on the same objects, and those are close in the
dense embedding space, so by default each tool is paired with its ``neighbours`` (10) nearest tools by cosine of
their dense documents, and the union of those pairs is labelled: at most 10 n calls (at most 4,570 for AppWorld,
typically fewer because neighbourhoods overlap), linear in the catalog like LIBRA's own construction. A pair of
distant tools is never asked about and counts as ``no_dependency``; ``neighbours=0`` labels every pair (the
paper's setting, quadratic). An unreadable or unknown label is recorded as a fallback and counts as
``no_dependency``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from libra.catalog import Catalog, Tool
from libra.eval.baselines.common import LLMRun, prompt_version, tool_card
from libra.llm.client import ReplyError, parse_json_object
from libra.retrieval.dense import DenseRetriever

LABELS: tuple[str, ...] = ("a_depends_on_b", "b_depends_on_a", "no_dependency")
DEFAULT_NEIGHBOURS = 10
LABEL_SYSTEM = (
    "You decide whether two tools depend on each other through their data. Tool X depends on tool Y when a value "
    "that Y returns is exactly what X needs for one of its required inputs: the same kind of value with the same "
    "meaning. Judge only from the inputs and outputs in the metadata; belonging to the same app, sharing a topic or "
    'having similar names is not a dependency. Reply with one JSON object with the single key "label", whose value '
    "is one of a_depends_on_b, b_depends_on_a or no_dependency. Do not explain."
)
EXAMPLE = (
    "Example.\nTool A: Geo.find_city(name: string) returns city_id: string.\n"
    "Tool B: Weather.forecast(city_id: string) returns summary: string.\n"
    'B\'s required input city_id is what A returns, so B depends on A: {"label": "b_depends_on_a"}.\n'
    'When neither tool\'s output feeds a required input of the other: {"label": "no_dependency"}.'
)
VERSION = prompt_version(LABEL_SYSTEM, EXAMPLE, "v1")


def label_messages(a: Tool, b: Tool) -> list[dict[str, str]]:
    body = (
        f"{EXAMPLE}\n\nNow the pair to classify.\n\nTool A\n{tool_card(a)}\n\nTool B\n{tool_card(b)}\n\nAnswer "
        "with one JSON object."
    )
    return [{"role": "system", "content": LABEL_SYSTEM}, {"role": "user", "content": body}]


def parse_label(text: str | None) -> str:
    obj = parse_json_object(text)
    label = obj.get("label")
    if label not in LABELS:
        raise ReplyError(f"unknown label {label!r}: use one of {', '.join(LABELS)}")
    return str(label)


def candidate_pairs(vectors: np.ndarray, neighbours: int = DEFAULT_NEIGHBOURS) -> list[tuple[int, int]]:
    """Unordered pairs (i < j) to label: each tool with its ``neighbours`` nearest by cosine, or all when 0."""
    n = vectors.shape[0]
    if neighbours <= 0 or neighbours >= n - 1:
        return [(i, j) for i in range(n) for j in range(i + 1, n)]
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    near = np.argsort(-sims, axis=1, kind="stable")[:, :neighbours]
    return sorted({(min(i, int(j)), max(i, int(j))) for i in range(n) for j in near[i]})


def expected_pairs(n: int, neighbours: int = DEFAULT_NEIGHBOURS) -> int:
    """The most pairs (calls) a catalog of ``n`` tools can cost: n(n-1)/2 for all pairs, else n x neighbours."""
    if neighbours <= 0 or neighbours >= n - 1:
        return n * (n - 1) // 2
    return n * neighbours


def propagate(vectors: np.ndarray, edges: Sequence[tuple[int, int]], layers: int = 1) -> np.ndarray:
    """``layers`` rounds of E <- D^-1/2 (A + I) D^-1/2 E over the undirected edges, rows re-normalised."""
    n = vectors.shape[0]
    adj = np.eye(n)
    for i, j in edges:
        adj[i, j] = adj[j, i] = 1.0
    d = 1.0 / np.sqrt(adj.sum(axis=1))
    norm = adj * d[:, None] * d[None, :]
    out = vectors
    for _ in range(layers):
        out = norm @ out
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class TGRRetriever:
    """Dense scores against convolved tool embeddings; pair labels are built once per catalog and model."""

    name = "tgr-adapt"

    def __init__(
        self, run: LLMRun, embedder: Any = "minilm", document: str = "text", neighbours: int = DEFAULT_NEIGHBOURS
    ) -> None:
        self.run = run
        self.dense = DenseRetriever(embedder, document=document)
        self.neighbours = neighbours
        self.labels: dict[str, str] = {}
        self.edges: list[tuple[int, int]] = []
        self.pairs = 0

    def _label(self, catalog: Catalog, pair: tuple[int, int]) -> str:
        a, b = catalog[pair[0]], catalog[pair[1]]
        reply, err = self.run.ask(label_messages(a, b))
        if err is None:
            try:
                return parse_label(reply)
            except ReplyError as exc:
                self.run.unusable()
                err = str(exc)
        self.run.fallback(f"{a.name} | {b.name}", "label", f"{err}; counted as no_dependency")
        return "no_dependency"

    def fit(self, catalog: Catalog) -> TGRRetriever:
        self.dense.fit(catalog)
        assert self.dense.tool_vectors is not None
        pairs = candidate_pairs(self.dense.tool_vectors, self.neighbours)
        self.pairs = len(pairs)
        path = self.run.artifact_path(
            self.name,
            catalog,
            {
                "prompts": VERSION,
                "neighbours": self.neighbours,
                "document": self.dense.document,
                "embedder": self.dense.embedder.model_id,
            },
        )
        stored = self.run.load_artifact(path)
        if stored is not None:
            self.labels = stored["items"]
        else:
            labels = self.run.map(lambda p: self._label(catalog, p), pairs)
            self.labels = {json.dumps([catalog[i].name, catalog[j].name]): lab for (i, j), lab in zip(pairs, labels)}
            self.run.save_artifact(path, self.labels, pairs=len(pairs))
        index = {name: i for i, name in enumerate(catalog.names)}
        self.edges = []
        for key, lab in self.labels.items():
            a, b = json.loads(key)
            if lab != "no_dependency" and a in index and b in index:
                self.edges.append((index[a], index[b]))
        self.dense.tool_vectors = propagate(self.dense.tool_vectors, self.edges)
        return self

    def score(self, queries: Sequence[str]) -> np.ndarray:
        return self.dense.score(queries)

    def report(self) -> dict[str, Any]:
        return {**self.run.report(), "pairs_labelled": self.pairs, "dependency_edges": len(self.edges)}
