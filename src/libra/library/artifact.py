"""The executable tool library L = (T, C, E), with the evidence behind every relation.

One versioned JSON file (gzip-compressed when the name ends in ``.gz``) holds the catalog, the contracts, the
relations with their evidence (provider call, consumer call and control call with their invocation records), the
schema-compatible candidate compositions (needed by the schema-only ablation; stored as columns and read lazily,
since there can be millions) and the build statistics (the paper's Table 5 columns). The format is described by
the JSON Schema ``library.schema.json`` shipped with the package. Loading checks the whole document against it
before using any of it (:mod:`libra.library.check`: a hand-edited file is refused with the path of its first bad
field, never a traceback) and, when the caller supplies its catalog, that the library was built from that same
catalog: a library silently applied to another catalog would propagate over wrong edges.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from libra._util.io import atomic_open
from libra.catalog import Catalog
from libra.errors import CatalogError, LibraryFormatError
from libra.library.check import (
    FORMAT,
    FORMAT_VERSION,
    READABLE_VERSIONS,
    check_library,
    check_library_file,
)

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "KINDS",
    "READABLE_VERSIONS",
    "Candidate",
    "CandidateColumns",
    "Library",
    "Relation",
    "RelationKind",
    "adjacency",
    "candidate_columns",
    "dedupe",
    "read_library_bytes",
]

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
    def from_dict(cls, d: dict[str, Any]) -> Relation:
        if d.get("kind") not in KINDS:
            raise LibraryFormatError(
                f"relation {d.get('provider')!r} -> {d.get('consumer')!r} has unknown kind "
                f"{d.get('kind')!r}: rebuild the library"
            )
        return cls(
            d["provider"],
            d["consumer"],
            d["kind"],
            d.get("provider_field"),
            d.get("consumer_input"),
            d.get("similarity"),
            d.get("evidence") or {},
        )


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
        return Candidate(
            self.names[self.provider[i]],
            self.fields[self.field[i]],
            self.names[self.consumer[i]],
            self.inputs[self.input[i]],
            self.similarity[i],
        )

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
    if isinstance(candidates, CandidateColumns) and [index.get(n) for n in candidates.names] == list(
        range(len(candidates.names))
    ):
        return {
            "fields": candidates.fields,
            "inputs": candidates.inputs,
            "provider": candidates.provider,
            "field": candidates.field,
            "consumer": candidates.consumer,
            "input": candidates.input,
            "similarity": candidates.similarity,
        }
    fields: dict[str, int] = {}
    inputs: dict[str, int] = {}
    cols: dict[str, list[Any]] = {"provider": [], "field": [], "consumer": [], "input": [], "similarity": []}
    # (millions of candidates in a large catalog: the loop's lookups are bound once)
    provider, field_, consumer, input_, similarity = (
        cols[k].append for k in ("provider", "field", "consumer", "input", "similarity")
    )
    for c in candidates:
        provider(index[c.provider])
        field_(fields.setdefault(c.provider_field, len(fields)))
        consumer(index[c.consumer])
        input_(inputs.setdefault(c.consumer_input, len(inputs)))
        similarity(None if c.similarity is None else round(c.similarity, 5))
    return {"fields": list(fields), "inputs": list(inputs), **cols}


#: list elements encoded together at most by :func:`write_json`
JSON_CHUNK = 4096


def write_json(write: Any, value: Any, depth: int = 3) -> None:
    """Write ``value`` as compact JSON (what ``json.dump(value, fh, ensure_ascii=False, separators=(",", ":"))``
    writes, character for character) through ``write``, in pieces.

    Why not ``json.dump``: it always takes the pure-Python encoder (only ``json.dumps`` takes the C one), and a
    large library's document (millions of candidate columns) took seconds of the build's own time to encode.
    Why not one ``json.dumps``: the whole text would sit in memory at the end of a build. Here the document's
    upper ``depth`` levels are walked, a long list is encoded :data:`JSON_CHUNK` elements at a time, and anything
    deeper is one ``json.dumps`` each, so the largest piece held is one column or one chunk of a list. A mapping
    with a key that is not a string is encoded whole (JSON's conversion of such keys stays the encoder's).
    """
    if depth > 0 and type(value) is dict and all(type(k) is str for k in value):
        write("{")
        for i, (k, v) in enumerate(value.items()):
            write(("," if i else "") + _dumps(k) + ":")
            write_json(write, v, depth - 1)
        write("}")
    elif depth > 0 and type(value) in (list, tuple) and len(value) > JSON_CHUNK:
        write("[")
        for start in range(0, len(value), JSON_CHUNK):
            write(("," if start else "") + _dumps(list(value[start : start + JSON_CHUNK]))[1:-1])
        write("]")
    else:
        write(_dumps(value))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Library:
    catalog: Catalog
    contracts: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    candidates: Sequence[Candidate] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    #: what the build started from (:class:`~libra.library.fingerprints.BuildFingerprints` as a dict); None for a
    #: library written before libraries recorded it
    fingerprints: dict[str, Any] | None = None

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
        doc = {
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
        if self.fingerprints is not None:
            doc["fingerprints"] = self.fingerprints
        return doc

    def save(self, path: str | Path) -> None:
        # Streamed into the file (through gzip for .gz): the document of a large build (millions of candidate
        # columns, relations' evidence) would otherwise sit in memory three times at the end of the build, as text,
        # as UTF-8 bytes and compressed, on top of everything the build still holds.
        path = Path(path)
        with atomic_open(path) as fh:
            raw = (
                gzip.GzipFile(filename="", fileobj=fh, mode="wb", compresslevel=6, mtime=0)
                if path.suffix == ".gz"
                else None
            )
            text = io.TextIOWrapper(raw if raw is not None else fh, encoding="utf-8", newline="")
            write_json(text.write, self.to_dict())
            text.flush()
            text.detach()  # the file itself is closed by atomic_open
            if raw is not None:
                raw.close()

    @classmethod
    def from_dict(cls, d: Any, catalog: Catalog | None = None, source: str = "library") -> Library:
        """The library stored in document ``d``, checked whole first (see :func:`libra.library.check.check_library`);
        ``source`` names the document in error messages."""
        check_library(d, source)
        return cls._from_checked(d, catalog, source)

    @classmethod
    def _from_checked(cls, d: dict[str, Any], catalog: Catalog | None, source: str) -> Library:
        """The library in a document that passed :func:`~libra.library.check.check_library`."""
        try:
            stored = Catalog.from_dict(d["catalog"])
        except CatalogError as exc:  # what only the catalog can check: duplicate names, malformed parameter schemas
            raise LibraryFormatError(f"{source}: catalog: {exc}") from None
        if catalog is not None and d.get("catalog_fingerprint") != catalog.fingerprint():
            raise LibraryFormatError(
                f"{source} was built from another catalog ({stored.name!r}, {len(stored)} tools) than the one given "
                f"({catalog.name!r}, {len(catalog)} tools): rebuild it for this catalog with `libra build`"
            )
        names = stored.names
        raw = d["candidates"]
        cands: Sequence[Candidate]
        if isinstance(raw, dict):
            cands = CandidateColumns(names, raw)
        else:  # format version 1: one row per candidate
            cands = [Candidate(names[p], pf, names[c], ci, sim) for p, pf, c, ci, sim in raw]
        return cls(
            catalog=catalog or stored,
            contracts=d["contracts"],
            relations=[Relation.from_dict(r) for r in d["relations"]],
            candidates=cands,
            stats=d["stats"],
            meta=d["meta"],
            fingerprints=d.get("fingerprints"),
        )

    @classmethod
    def load(cls, path: str | Path, catalog: Catalog | None = None, raw: bytes | None = None) -> Library:
        """The library in file ``path`` (``raw``: its bytes, when the caller has read them already)."""
        path = Path(path)
        raw = read_library_bytes(path) if raw is None else raw
        d = _parse(raw, path)
        check_library_file(raw, d, str(path))
        return cls._from_checked(d, catalog, str(path))


def read_library_bytes(path: Path) -> bytes:
    """A library file's bytes, or one line saying why they cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise LibraryFormatError(
            f"library file {str(path)!r} does not exist: build it with `libra build BENCHMARK --out {path}`"
        ) from None
    except OSError as exc:
        raise LibraryFormatError(
            f"library file {str(path)!r} cannot be read ({exc.__class__.__name__}): check its permissions"
        ) from None


def _parse(raw: bytes, path: Path) -> Any:
    """The JSON document in a library file's bytes (gzip-compressed or not), or one line saying why there is none."""
    where = f"library file {str(path)!r}"
    rebuild = "rebuild it with `libra build`"
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
    except (OSError, EOFError):  # gzip.BadGzipFile is an OSError
        raise LibraryFormatError(f"{where} is a corrupt or truncated gzip file: {rebuild}") from None
    if not raw.strip():
        raise LibraryFormatError(f"{where} is empty: {rebuild}")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise LibraryFormatError(f"{where} is not UTF-8 text, so not a library: {rebuild}") from None
    except json.JSONDecodeError as exc:
        raise LibraryFormatError(
            f"{where} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}): {rebuild}"
        ) from None
    except (ValueError, RecursionError) as exc:  # integers beyond Python's digit limit, nesting beyond the parser's
        raise LibraryFormatError(
            f"{where} cannot be parsed ({exc.__class__.__name__}: {' '.join(str(exc).split())[:120]}): {rebuild}"
        ) from None


def dedupe(relations: Iterable[Relation]) -> list[Relation]:
    """Keep the first relation per (provider, consumer, kind, field, input) key, in a stable order."""
    seen: dict[tuple, Relation] = {}
    for r in relations:
        seen.setdefault(r.key, r)
    return sorted(
        seen.values(),
        key=lambda r: (r.provider, r.consumer, KINDS.index(r.kind), r.provider_field or "", r.consumer_input or ""),
    )


def adjacency(relations: Iterable[Relation]) -> dict[str, list[Relation]]:
    """Incoming relations per consumer."""
    out: dict[str, list[Relation]] = defaultdict(list)
    for r in relations:
        out[r.consumer].append(r)
    return dict(out)
