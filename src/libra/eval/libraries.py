"""The executable library behind the graph retrieval methods, and the edges they propagate over.

The methods themselves (``libra``, ``libra-hybrid``, ``schema-only``) are registered in :mod:`libra.eval.methods`;
this module only depends on the library and retrieval layers, so evaluation imports retrieval and never the
reverse.

When no ``--library`` is given the benchmark's library is built once and cached under
``$LIBRA_CACHE_DIR/libraries``, in a file named by a content hash of everything the build depends on
(:func:`libra.induction.build.library_key`): another catalog, starting state, fixture, budget, proposer, embedder
or engine version gives another file, so a cached library is only ever reused for the build that made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from libra._util.io import path_lock
from libra.benchmarks.base import Benchmark
from libra.catalog import Catalog
from libra.embeddings.embedders import cache_dir
from libra.library.artifact import Library
from libra.retrieval.graph import Edge, library_edges

if TYPE_CHECKING:
    from libra.induction.build import BuildOptions

__all__ = [
    "GRAPH_METHODS",
    "OPTION_KEYS",
    "build_options_for",
    "cached_library",
    "candidate_edges",
    "default_library_path",
    "graph_options",
    "library_edges",
    "load_library",
    "obtain_library",
]

OPTION_KEYS = ("ks", "kc", "selection", "hops", "score_space", "temperature", "decay")
GRAPH_METHODS = ("libra", "libra-dense", "libra-hybrid", "schema-only")  # the methods that need a library


class LibraryRequest(Protocol):
    """What :func:`obtain_library` reads from the evaluation options (an ``EvalOptions`` has all of it)."""

    library: str | None
    workers: int | None
    embedder: str


_last_loaded: tuple[tuple[Any, ...], Catalog, Library] | None = None


def load_library(path: Path, catalog: Catalog) -> Library:
    """``Library.load(path, catalog=catalog)``, remembering the last library loaded.

    One evaluation asks for the same file several times (``eval`` checks ``--library`` before any method runs,
    then each graph method reads it; ``analyze`` reads it for every table), and a large library costs seconds to
    read and check. The file is read again when it changed on disk (path, size, modification time and inode).
    """
    global _last_loaded
    try:
        st = path.stat()
    except OSError:
        return Library.load(path, catalog=catalog)  # says why it cannot be read
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    if _last_loaded is not None and _last_loaded[0] == key and _last_loaded[1] is catalog:
        return _last_loaded[2]
    library = Library.load(path, catalog=catalog)
    _last_loaded = (key, catalog, library)
    return library


def _proposer_name(proposer: Any) -> str:
    return proposer if isinstance(proposer, str) else str(getattr(proposer, "name", "custom"))


def default_library_path(
    bench: Benchmark, catalog: Catalog, proposer: str = "offline", options: BuildOptions | None = None
) -> Path:
    """Where the build of ``bench`` with ``options`` (default: the default build with ``proposer``) is cached.

    The name ends in the build's content key, so a build with any other input never reuses this file. Files
    cached by older versions (named ``...-e<engine version>.json.gz``) never match a key and are left alone.
    """
    from libra.induction.build import BuildOptions, library_key

    opts = options if options is not None else BuildOptions(proposer=proposer)
    key = library_key(bench, opts, catalog)
    return cache_dir() / "libraries" / f"{bench.name}-{_proposer_name(opts.proposer)}-{key[:32]}.json.gz"


def cached_library(bench: Benchmark, catalog: Catalog, options: BuildOptions) -> Library:
    """The library of ``bench`` built with ``options``: loaded from the cache when that exact build is there,
    else built now and cached (once, however many processes ask for it at the same time)."""
    from libra.induction.build import build_library

    path = default_library_path(bench, catalog, options=options)
    if path.exists():
        return load_library(path, catalog)
    # Another process may be building this very library: wait for it and reuse its result rather than build
    # it a second time beside it.
    with path_lock(path):
        if path.exists():
            return load_library(path, catalog)
        return build_library(bench, path, options)


def build_options_for(opts: LibraryRequest) -> BuildOptions:
    """The build an evaluation asks for when it gives no library: the default build with its embedder."""
    from libra.induction.build import BuildOptions

    return BuildOptions(workers=opts.workers, embedder=opts.embedder)


def obtain_library(bench: Benchmark, catalog: Catalog, opts: LibraryRequest) -> Library:
    """The library given by ``--library``, else the cached build for these options (built now if missing)."""
    if opts.library:
        return load_library(Path(opts.library), catalog)
    return cached_library(bench, catalog, build_options_for(opts))


def candidate_edges(library: Library) -> list[Edge]:
    return [Edge(c.provider, c.consumer, c.consumer_input, c.similarity) for c in library.candidates]


def graph_options(extra: Mapping[str, Any]) -> dict[str, Any]:
    """The propagation options (``--ks``, ``--kc``...) among an evaluation's extra options."""
    return {k: extra[k] for k in OPTION_KEYS if k in extra}
