"""Graph-propagation retrieval (paper §3.2, Algorithm 2).

Dense scores s_q pick the top-Ks tools as consumer *seeds*. Each seed pulls, per input, at most two providers
from the value relations (E_prov ∪ E_comp): the one whose output field best matches the input name
(*field-best*) and the one the query scores highest (*dense-best*); plus all its state providers. A seed
contributes at most once to a provider. A reached provider u gets

    g_q(u) = (s_q(u) + Σ_{t ∈ C_q(u)} s_q(t)) / (1 + |C_q(u)|),   s'_q(u) = max(s_q(u), g_q(u)),

where C_q(u) is the set of seeds that selected u; tools off the graph keep s_q. Averaging, not summing, keeps a
tool with many neighbours from winning on degree alone.

What s_q is (``score_space``): the paper averages the dense retriever's similarities. By default we average its
*probabilities* instead, softmax(cos / T) with the temperature T the encoder was trained at, whenever the base
retriever declares one (all-MiniLM-L6-v2 does: T = 0.05). Both are strictly increasing in the similarity, so seeds,
dense-best choices and every tool off the graph rank exactly as before; only the average changes, and on the
probability scale a prerequisite of a confidently retrieved consumer lands near that consumer instead of halfway
down to its own, often tiny, similarity. ``score_space="similarity"`` is the paper's choice; base retrievers
without a temperature (BM25, the hash embedder) always use it.

All structure is precomputed by :class:`PropagationGraph` (per consumer: its state providers and, per input, the
provider indices with their field similarities), so a query costs a few array look-ups per seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from libra.catalog import Catalog
from libra.retrieval.base import rank
from libra.retrieval.defaults import DEFAULT_DECAY, DEFAULT_HOPS, DEFAULT_KS, DEFAULT_SCORE_SPACE, DEFAULT_SELECTION

Selection = Literal["both", "field", "dense", "all"]
SELECTIONS: tuple[str, ...] = ("both", "field", "dense", "all")
ScoreSpace = Literal["probability", "similarity"]
SCORE_SPACES: tuple[str, ...] = ("probability", "similarity")


def propagation_scores(
    base_retriever: Any, scores: np.ndarray, score_space: str = "probability", temperature: float | None = None
) -> tuple[np.ndarray, str]:
    """The scores propagation averages, and the space they are in (see the module docstring).

    ``probability`` falls back to ``similarity`` when neither ``temperature`` nor the base retriever gives one.
    """
    if score_space not in SCORE_SPACES:
        raise ValueError(f"score_space must be one of {SCORE_SPACES}")
    to_prob = getattr(base_retriever, "probabilities", None)
    t = temperature if temperature is not None else getattr(base_retriever, "temperature", None)
    if score_space == "similarity" or to_prob is None or t is None:
        return np.atleast_2d(scores), "similarity"
    return to_prob(scores, t), "probability"


@dataclass(frozen=True)
class Edge:
    """A propagation edge: ``input`` and ``similarity`` are None for state edges."""

    provider: str
    consumer: str
    input: str | None = None
    similarity: float | None = None


def library_edges(library: Any) -> list[Edge]:
    """The edges of a library's retained relations (``input`` None for state relations); only its
    ``relations`` are read, so this module needs nothing of the library's own."""
    return [
        Edge(r.provider, r.consumer, r.consumer_input if r.kind != "state" else None, r.similarity)
        for r in library.relations
    ]


@dataclass
class _Input:
    providers: np.ndarray  # provider indices
    similarity: np.ndarray  # field similarity per provider (max over its fields)


@dataclass
class PropagationGraph:
    """Incoming edges per consumer, in index form."""

    n: int
    state: dict[int, np.ndarray] = field(default_factory=dict)
    inputs: dict[int, list[_Input]] = field(default_factory=dict)
    n_edges: int = 0

    @classmethod
    def build(cls, catalog: Catalog, edges: Iterable[Edge]) -> PropagationGraph:
        index = {name: i for i, name in enumerate(catalog.names)}
        state: dict[int, set[int]] = {}
        value: dict[int, dict[str, dict[int, float]]] = {}
        n_edges = 0
        for e in edges:
            p, c = index.get(e.provider), index.get(e.consumer)
            if p is None or c is None or p == c:
                continue  # a tool is not its own prerequisite
            n_edges += 1
            if e.input is None:
                state.setdefault(c, set()).add(p)
            else:
                per = value.setdefault(c, {}).setdefault(e.input, {})
                sim = -1.0 if e.similarity is None else float(e.similarity)
                per[p] = max(per.get(p, -np.inf), sim)
        g = cls(n=len(catalog), n_edges=n_edges)
        g.state = {c: np.array(sorted(ps), dtype=np.int64) for c, ps in state.items()}
        for c, per_input in value.items():
            items = []
            for name in sorted(per_input):
                provs = sorted(per_input[name])
                items.append(
                    _Input(
                        np.array(provs, dtype=np.int64), np.array([per_input[name][p] for p in provs], dtype=np.float64)
                    )
                )
            g.inputs[c] = items
        return g

    def has_outgoing(self) -> np.ndarray:
        """Boolean mask of tools that provide to at least one consumer."""
        mask = np.zeros(self.n, dtype=bool)
        for ps in self.state.values():
            mask[ps] = True
        for items in self.inputs.values():
            for it in items:
                mask[it.providers] = True
        return mask

    def consumers_of(self) -> dict[int, set[int]]:
        out: dict[int, set[int]] = {}
        for c, ps in self.state.items():
            for p in ps:
                out.setdefault(int(p), set()).add(c)
        for c, items in self.inputs.items():
            for it in items:
                for p in it.providers:
                    out.setdefault(int(p), set()).add(c)
        return out


def _best(primary: np.ndarray, secondary: np.ndarray, indices: np.ndarray) -> int:
    """Index with the highest primary key; ties go to the higher secondary key, then the lower tool index."""
    order = np.lexsort((indices, -secondary, -primary))
    return int(indices[order[0]])


def select_providers(
    graph: PropagationGraph, consumer: int, scores: np.ndarray, selection: Selection = "both"
) -> set[int]:
    """The providers one seed pulls in (Algorithm 2, lines 6-13)."""
    chosen: set[int] = set(int(p) for p in graph.state.get(consumer, ()))
    for it in graph.inputs.get(consumer, ()):
        provs = it.providers
        if selection == "all":
            chosen.update(int(p) for p in provs)
            continue
        dense = scores[provs]
        if selection in ("both", "field"):
            chosen.add(_best(it.similarity, dense, provs))
        if selection in ("both", "dense"):
            chosen.add(_best(dense, it.similarity, provs))
    chosen.discard(consumer)
    return chosen


@dataclass
class PropagationTrace:
    """Per-query detail for analyses: seeds, what each seed selected, and the final scores."""

    seeds: list[int]
    selected: dict[int, set[int]]  # seed -> providers it selected (hop 1)
    contributors: dict[int, set[int]]  # provider -> seeds that selected it
    scores: np.ndarray


def propagate(
    graph: PropagationGraph,
    scores: np.ndarray,
    ks: int = 15,
    selection: Selection = "both",
    hops: int = 1,
    trace: bool = False,
    decay: float = 1.0,
) -> np.ndarray | tuple[np.ndarray, PropagationTrace]:
    """s'_q for one query's base scores ``scores`` (shape (n,)).

    ``decay`` scales what a provider gains at each hop past the first: one reached at hop h (h = 1 for the
    seeds' own providers) gets s_q(u) + decay^(h-1) (g_q(u) - s_q(u)) when that is more than it has. A provider of a
    provider is evidence once removed from the request, so it inherits less of its consumer's confidence; 1
    keeps every hop's average whole, 0 is one hop whatever ``hops`` says.
    """
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}")
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"decay must be between 0 and 1, got {decay}")
    base = np.asarray(scores, dtype=np.float64)
    out = base.copy()
    seeds = [int(i) for i in rank(base, ks)[0]]
    frontier = seeds
    current = base  # scores consumers pass on: s_q at hop 1, s'_q of the newly reached tools at hop 2
    selected_first: dict[int, set[int]] = {}
    contributors_first: dict[int, set[int]] = {}
    reached: set[int] = set(seeds)
    for hop in range(max(1, hops)):
        contributors: dict[int, set[int]] = {}
        for t in frontier:
            chosen = select_providers(graph, t, base, selection)
            if hop == 0:
                selected_first[t] = chosen
            for u in chosen:
                contributors.setdefault(u, set()).add(t)
        if hop == 0:
            contributors_first = contributors
        new_scores = out.copy()
        weight = decay**hop
        for u, cons in contributors.items():
            g = (base[u] + sum(current[t] for t in cons)) / (1 + len(cons))
            if hop:
                g = base[u] + weight * (g - base[u])
            if g > new_scores[u]:
                new_scores[u] = g
        out = new_scores
        current = out
        frontier = [u for u in sorted(contributors) if u not in reached]
        reached.update(frontier)
        if not frontier:
            break
    if trace:
        return out, PropagationTrace(seeds, selected_first, contributors_first, out)
    return out


class GraphRetriever:
    """A base retriever plus one-hop (or h-hop) propagation over a library's relations; the options default to
    :mod:`libra.retrieval.defaults`, as ``libra retrieve`` and ``libra serve`` do."""

    def __init__(
        self,
        base: Any,
        edges: Sequence[Edge],
        name: str = "libra",
        ks: int = DEFAULT_KS,
        kc: int = 20,
        selection: Selection = DEFAULT_SELECTION,  # type: ignore[assignment]
        hops: int = DEFAULT_HOPS,
        score_space: ScoreSpace = DEFAULT_SCORE_SPACE,  # type: ignore[assignment]
        temperature: float | None = None,
        decay: float = DEFAULT_DECAY,
    ) -> None:
        if score_space not in SCORE_SPACES:
            raise ValueError(f"score_space must be one of {SCORE_SPACES}")
        self.base = base
        self.edges = list(edges)
        self.name = name
        self.ks, self.kc, self.selection, self.hops, self.decay = ks, kc, selection, hops, decay
        self.score_space, self.temperature = score_space, temperature
        self.used_score_space: str | None = None  # what the last score() averaged (after any fallback)
        self.graph: PropagationGraph | None = None
        self.catalog: Catalog | None = None

    def fit(self, catalog: Catalog) -> GraphRetriever:
        self.base.fit(catalog)
        self.catalog = catalog
        self.graph = PropagationGraph.build(catalog, self.edges)
        return self

    def base_scores(self, queries: Sequence[str]) -> np.ndarray:
        return np.atleast_2d(self.base.score(list(queries)))

    def score(self, queries: Sequence[str]) -> np.ndarray:
        assert self.graph is not None, "call fit(catalog) first"
        base, self.used_score_space = propagation_scores(
            self.base, self.base_scores(queries), self.score_space, self.temperature
        )
        return np.vstack(
            [propagate(self.graph, row, self.ks, self.selection, self.hops, decay=self.decay) for row in base]
        )

    def retrieve(self, queries: Sequence[str], depth: int | None = None) -> list[list[str]]:
        """Top-``kc`` tools per query (the paper's candidate set), or ``depth`` when given."""
        assert self.catalog is not None, "call fit(catalog) first"
        names = self.catalog.names
        return [[names[i] for i in row] for row in rank(self.score(queries), depth or self.kc)]
