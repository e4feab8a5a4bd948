"""Retrieval methods by name, so the CLI, the runner and benchmarks share one list.

A method factory receives the benchmark and the evaluation options and returns a fitted retriever. Methods that
need an executable library (``libra``, ``schema-only``) are registered by the retrieval package once it exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..benchmarks.base import Benchmark
from ..catalog import Catalog
from ..errors import ConfigError
from ..retrieval.documents import DEFAULT_DOCUMENT


@dataclass
class EvalOptions:
    k: int = 15
    embedder: str = "minilm"
    document: str = DEFAULT_DOCUMENT  # what dense methods embed per tool: text or json (see retrieval.documents)
    library: str | None = None
    workers: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


MethodFactory = Callable[[Benchmark, Catalog, EvalOptions], Any]
_METHODS: dict[str, MethodFactory] = {}


def register_method(name: str) -> Callable[[MethodFactory], MethodFactory]:
    def deco(fn: MethodFactory) -> MethodFactory:
        _METHODS[name] = fn
        return fn

    return deco


@register_method("bm25")
def _bm25(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    from ..retrieval.bm25 import BM25Retriever

    return BM25Retriever().fit(catalog)


@register_method("dense")
def _dense(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    from ..retrieval.dense import DenseRetriever

    return DenseRetriever(opts.embedder, document=opts.document).fit(catalog)


@register_method("hybrid")
def _hybrid(bench: Benchmark, catalog: Catalog, opts: EvalOptions) -> Any:
    from ..retrieval.hybrid import bm25_dense

    return bm25_dense(opts.embedder, opts.document).fit(catalog)


def _load_optional_methods() -> None:
    """Graph methods live beside the retrievers; importing the module registers them."""
    import importlib

    importlib.import_module("libra.retrieval.graph_methods")


def available_methods() -> list[str]:
    _load_optional_methods()
    return sorted(_METHODS)


def get_method(name: str) -> MethodFactory:
    _load_optional_methods()
    key = name.strip().lower()
    if key not in _METHODS:
        raise ConfigError(f"unknown method {name!r}: choose from {', '.join(sorted(_METHODS))}")
    return _METHODS[key]
