"""Candidate compositions: which provider exports could feed which consumer inputs (paper Table 5).

A candidate pairs a provider export with ``propagate=true`` and a consumer input whose JSON types are compatible.
This is the schema-level graph *before* execution; it is what the schema-only ablation propagates over, and it
bounds what the engine ever tries to bind (a value is only offered to inputs it is a candidate for).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from libra.catalog import Catalog
from libra.contracts.model import Contract
from libra.library.artifact import Candidate, CandidateColumns, candidate_columns
from libra.schema import schema_type

# Which value types an input of a given type accepts. An integer is a valid number; the reverse is not true.
_ACCEPTS: dict[str, frozenset[str]] = {
    "string": frozenset({"string"}),
    "integer": frozenset({"integer"}),
    "number": frozenset({"number", "integer"}),
    "boolean": frozenset({"boolean"}),
    "array": frozenset({"array"}),
    "object": frozenset({"object"}),
}
_SCALARS = frozenset({"string", "integer", "number", "boolean"})


def input_accepts(input_schema: dict[str, Any], value_type: str | None) -> bool:
    """Whether an input of this schema can take a value of ``value_type`` (None = untyped)."""
    it = schema_type(input_schema)
    if value_type is None:
        return it is None or it in _SCALARS
    if it is None:
        return value_type in _SCALARS
    if it == "array" and value_type in _SCALARS:
        # a scalar can fill an array input as a one-element list: e.g. an id into a list of ids
        items = input_schema.get("items") if isinstance(input_schema.get("items"), dict) else {}
        return input_accepts(items, value_type) if items else True
    return value_type in _ACCEPTS.get(it, frozenset())


@dataclass(frozen=True)
class ExportRef:
    tool: str
    export: str
    value_type: str | None


def propagating_exports(contracts: dict[str, Contract]) -> list[ExportRef]:
    out = []
    for name, c in contracts.items():
        for e in c.exports:
            if e.propagate:
                out.append(ExportRef(name, e.name, schema_type(e.schema)))
    return out


def candidate_compositions(
    catalog: Catalog, contracts: dict[str, Contract], executable_only: bool = False
) -> list[Candidate]:
    """Every (provider export, consumer input) pair with compatible JSON types, provider != consumer."""
    tools = [t for t in catalog if (t.executable or not executable_only)]
    # An input whose structured literal holds a reference (Contract.nested_references) takes a string there.
    nested = {(name, p) for name, c in contracts.items() for p in c.nested_references()}
    inputs = [
        (t.name, p, {"type": "string"} if (t.name, p) in nested else t.param_schema(p))
        for t in tools
        for p in t.param_names
    ]
    out: list[Candidate] = []
    exports = [
        e
        for e in propagating_exports(contracts)
        if e.tool in catalog and (catalog[e.tool].executable or not executable_only)
    ]
    # The inputs that accept each value type, in input order, taken once per type: an export of that type pairs
    # with those of them its own tool does not have (a large catalog pairs millions; most pairs of types fail).
    accepting: dict[str | None, list[tuple[str, str]]] = {}
    for e in exports:
        fit = accepting.get(e.value_type)
        if fit is None:
            fit = accepting[e.value_type] = [
                (consumer, param) for consumer, param, schema in inputs if input_accepts(schema, e.value_type)
            ]
        tool, export = e.tool, e.export
        out.extend([Candidate(tool, export, consumer, param) for consumer, param in fit if consumer != tool])
    return out


def index_by_provider(cands: Iterable[Candidate]) -> dict[tuple[str, str], list[Candidate]]:
    idx: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for c in cands:
        idx[(c.provider, c.provider_field)].append(c)
    return dict(idx)


def candidate_table(
    candidates: Sequence[Candidate], names: Sequence[str], similarity: Callable[[str, str], float]
) -> CandidateColumns:
    """The candidates as a library stores them: columns of tool, field and input indices (``names`` numbers the
    tools) with each pair's field similarity rounded as the library file keeps it.

    Why: a large catalog has millions of candidates (AppWorld: 2.1 M), and as :class:`Candidate` objects they took
    about half a gigabyte for the whole build, and as much again when the library was assembled with their
    similarities. A build turns them into this table as soon as the engine has indexed them and drops the
    objects; the library file is the same. Each distinct (field, input) pair's similarity is computed once.
    """
    cols = candidate_columns(candidates, {n: i for i, n in enumerate(names)})
    sims: dict[tuple[int, int], float] = {}
    column: list[float | None] = []
    for f, i in zip(cols["field"], cols["input"]):
        sim = sims.get((f, i))
        if sim is None:
            sim = sims[(f, i)] = round(similarity(cols["fields"][f], cols["inputs"][i]), 5)
        column.append(sim)
    cols["similarity"] = column
    return CandidateColumns(names, cols)
