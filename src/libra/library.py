"""The executable tool library L = (T, C, E), with the evidence behind every relation.

One versioned JSON file (gzip-compressed when the name ends in ``.gz``) holds the catalog, the contracts, the
relations with their evidence (provider call, consumer call and control call with their invocation records), the
schema-compatible candidate compositions (needed by the schema-only ablation; stored as columns and read lazily,
since there can be millions) and the build statistics (the paper's Table 5 columns). Loading checks the format version and, when the caller supplies its catalog, that the library was
built from that same catalog: a library silently applied to another catalog would propagate over wrong edges.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Sequence, overload

from ._io import atomic_write_bytes
from .catalog import Catalog
from .errors import LibraryFormatError

FORMAT = "libra-library"
FORMAT_VERSION = 2  # 2: candidates stored as columns (version 1's row lists are still read)
READABLE_VERSIONS = (1, 2)

RelationKind = Literal["provenance", "compatibility", "state"]
KINDS: tuple[str, ...] = ("provenance", "compatibility", "state")


@dataclass(frozen=True)
class Relation:
    """One retained relation t_p -> t_c.

    Value relations (provenance, compatibility) name the provider's output field and the consumer's input;
    state relations name neither. ``similarity`` is cos(h_f(f_out), h_f(f_in)), computed once at build time so
    that retrieval's field-best selection costs nothing per query.
    """

    provider: str
    consumer: str
    kind: RelationKind
    provider_field: str | None = None
    consumer_input: str | None = None
    similarity: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> tuple[str, str, str, str | None, str | None]:
        return (self.provider, self.consumer, self.kind, self.provider_field, self.consumer_input)

    def edge_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "consumer": self.consumer,
            "kind": self.kind,
            "provider_field": self.provider_field,
            "consumer_input": self.consumer_input,
        }

    def to_dict(self) -> dict[str, Any]:
        d = self.edge_json()
        d["similarity"] = self.similarity
        d["evidence"] = self.evidence
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Relation":
        if d.get("kind") not in KINDS:
            raise LibraryFormatError(f"relation {d.get('provider')!r} -> {d.get('consumer')!r} has unknown kind {d.get('kind')!r}: rebuild the library")
        return cls(d["provider"], d["consumer"], d["kind"], d.get("provider_field"), d.get("consumer_input"), d.get("similarity"), d.get("evidence") or {})


@dataclass(frozen=True)
class Candidate:
    """A schema-compatible composition (provider export -> consumer input), before any execution."""

    provider: str
    provider_field: str
    consumer: str
    consumer_input: str
    similarity: float | None = None


class CandidateColumns(Sequence[Candidate]):
    """Candidates as parallel columns, turned into :class:`Candidate` objects only when read.

    A large catalog has millions of candidates (AppWorld: 2.1 M). Only the schema-only ablation and Table 5's
    count need them, so loading a library for retrieval must not pay for building millions of objects.
    """

    def __init__(self, names: Sequence[str], columns: dict[str, Any]) -> None:
        self.names = list(names)
        self.fields: list[str] = columns["fields"]
        self.inputs: list[str] = columns["inputs"]
        self.provider: list[int] = columns["provider"]
        self.field: list[int] = columns["field"]
        self.consumer: list[int] = columns["consumer"]
        self.input: list[int] = columns["input"]
        self.similarity: list[float | None] = columns["similarity"]
        n = len(self.provider)
        if not all(len(col) == n for col in (self.field, self.consumer, self.input, self.similarity)):
            raise LibraryFormatError("the library's candidate columns differ in length: rebuild it with `libra build`")

    def __len__(self) -> int:
        return len(self.provider)

    def _at(self, i: int) -> Candidate:
        return Candidate(self.names[self.provider[i]], self.fields[self.field[i]], self.names[self.consumer[i]], self.inputs[self.input[i]], self.similarity[i])

    @overload
    def __getitem__(self, i: int) -> Candidate: ...
    @overload
    def __getitem__(self, i: slice) -> list[Candidate]: ...
    def __getitem__(self, i: int | slice) -> Candidate | list[Candidate]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        return self._at(range(len(self))[i])

    def __iter__(self) -> Iterator[Candidate]:
        return (self._at(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other))


def candidate_columns(candidates: Sequence[Candidate], index: dict[str, int]) -> dict[str, Any]:
    """The stored form: tool indices, interned field and input names, similarities rounded to 5 places."""
    if isinstance(candidates, CandidateColumns) and [index.get(n) for n in candidates.names] == list(range(len(candidates.names))):
        return {"fields": candidates.fields, "inputs": candidates.inputs, "provider": candidates.provider, "field": candidates.field,
                "consumer": candidates.consumer, "input": candidates.input, "similarity": candidates.similarity}
    fields: dict[str, int] = {}
    inputs: dict[str, int] = {}
    cols: dict[str, list[Any]] = {"provider": [], "field": [], "consumer": [], "input": [], "similarity": []}
    for c in candidates:
        cols["provider"].append(index[c.provider])
        cols["field"].append(fields.setdefault(c.provider_field, len(fields)))
        cols["consumer"].append(index[c.consumer])
        cols["input"].append(inputs.setdefault(c.consumer_input, len(inputs)))
        cols["similarity"].append(None if c.similarity is None else round(c.similarity, 5))
    return {"fields": list(fields), "inputs": list(inputs), **cols}


@dataclass
class Library:
    catalog: Catalog
    contracts: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    candidates: Sequence[Candidate] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    # -- queries -----------------------------------------------------------------------------------------
    def by_kind(self, kind: str) -> list[Relation]:
        return [r for r in self.relations if r.kind == kind]

    def providers_of(self, tool: str) -> list[Relation]:
        return [r for r in self.relations if r.consumer == tool]

    def consumers_of(self, tool: str) -> list[Relation]:
        return [r for r in self.relations if r.provider == tool]

    def edges_json(self) -> list[dict[str, Any]]:
        return [r.edge_json() for r in self.relations]

    def relation_counts(self) -> dict[str, int]:
        counts = {k: 0 for k in KINDS}
        for r in self.relations:
            counts[r.kind] += 1
        return counts

    # -- storage -----------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        names = self.catalog.names
        index = {n: i for i, n in enumerate(names)}
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "catalog_fingerprint": self.catalog.fingerprint(),
            "meta": self.meta,
            "stats": self.stats,
            "catalog": self.catalog.to_dict(),
            "contracts": self.contracts,
            "relations": [r.to_dict() for r in self.relations],
            # Candidates can number in the millions: columns of small integers parse several times faster than rows.
            "candidates": candidate_columns(self.candidates, index),
        }

    def save(self, path: str | Path) -> None:
        path = Path(path)
        data = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if path.suffix == ".gz":
            data = gzip.compress(data, compresslevel=6, mtime=0)
        atomic_write_bytes(path, data)

    @classmethod
    def from_dict(cls, d: Any, catalog: Catalog | None = None, source: str = "library") -> "Library":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise LibraryFormatError(f"{source} is not a libra library file: build one with `libra build BENCHMARK --out PATH`")
        version = d.get("format_version")
        if version not in READABLE_VERSIONS:
            raise LibraryFormatError(f"{source} has library format version {version}, this libra reads versions {', '.join(map(str, READABLE_VERSIONS))}: rebuild it with `libra build`")
        stored = Catalog.from_dict(d["catalog"])
        if catalog is not None and d.get("catalog_fingerprint") != catalog.fingerprint():
            raise LibraryFormatError(
                f"{source} was built from another catalog ({stored.name!r}, {len(stored)} tools) than the one given "
                f"({catalog.name!r}, {len(catalog)} tools): rebuild it for this catalog with `libra build`"
            )
        names = stored.names
        raw = d.get("candidates", [])
        cands: Sequence[Candidate]
        if isinstance(raw, dict):
            try:
                cands = CandidateColumns(names, raw)
            except KeyError as exc:
                raise LibraryFormatError(f"{source} lacks the candidate column {exc.args[0]!r}: rebuild it with `libra build`") from None
        else:  # format version 1: one row per candidate
            cands = [Candidate(names[p], pf, names[c], ci, sim) for p, pf, c, ci, sim in raw]
        return cls(
            catalog=catalog or stored,
            contracts=d.get("contracts", {}),
            relations=[Relation.from_dict(r) for r in d.get("relations", [])],
            candidates=cands,
            stats=d.get("stats", {}),
            meta=d.get("meta", {}),
        )

    @classmethod
    def load(cls, path: str | Path, catalog: Catalog | None = None) -> "Library":
        path = Path(path)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise LibraryFormatError(f"library file {str(path)!r} does not exist: build it with `libra build BENCHMARK --out {path}`") from None
        except OSError as exc:
            raise LibraryFormatError(f"library file {str(path)!r} cannot be read ({exc.__class__.__name__}): check its permissions") from None
        try:
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            d = json.loads(raw.decode("utf-8"))
        except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError):
            raise LibraryFormatError(f"library file {str(path)!r} is corrupt or not JSON: rebuild it with `libra build`") from None
        return cls.from_dict(d, catalog=catalog, source=f"library file {str(path)!r}")


def dedupe(relations: Iterable[Relation]) -> list[Relation]:
    """Keep the first relation per (provider, consumer, kind, field, input) key, in a stable order."""
    seen: dict[tuple, Relation] = {}
    for r in relations:
        seen.setdefault(r.key, r)
    return sorted(seen.values(), key=lambda r: (r.provider, r.consumer, KINDS.index(r.kind), r.provider_field or "", r.consumer_input or ""))


def adjacency(relations: Iterable[Relation]) -> dict[str, list[Relation]]:
    """Incoming relations per consumer."""
    out: dict[str, list[Relation]] = defaultdict(list)
    for r in relations:
        out[r.consumer].append(r)
    return dict(out)
