"""The cached library of ``libra eval``/``analyze`` is keyed by everything its build depends on.

Real builds of the toy shop into ``$LIBRA_CACHE_DIR/libraries``: a changed embedder or build option must give
another file (a rebuild), the same options must reuse the file that is there.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from libra.eval.libraries import (
    cached_library,
    default_library_path,
    obtain_library,
)
from libra.eval.methods import EvalOptions
from libra.induction.build import BuildOptions, library_key
from libra.induction.config import BuildConfig

from .induction_toys import ShopBenchmark


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path))
    return tmp_path / "libraries"


def _files(cache: Path) -> dict[str, int]:
    """Cached library files -> modification time (a rebuild rewrites the file)."""
    return {p.name: p.stat().st_mtime_ns for p in cache.glob("*.json.gz")} if cache.exists() else {}


def test_embedder_change_rebuilds_and_same_options_reuse(cache):
    bench = ShopBenchmark()
    catalog = bench.catalog()
    old_name = cache / f"shop-offline-{catalog.fingerprint()[:16]}-e12.json.gz"
    cache.mkdir(parents=True)
    old_name.write_bytes(b"a library cached under the old naming, unreadable on purpose")

    first = obtain_library(bench, catalog, EvalOptions(embedder="hash", workers=0))
    built = _files(cache)
    assert len(built) == 2 and first.meta["embedder"] == "hash-256"  # the old file is still there, unread

    again = obtain_library(bench, catalog, EvalOptions(embedder="hash", workers=0))
    assert _files(cache) == built  # reused: no new file, the cached one not rewritten
    assert again.stats["wall_seconds"] == first.stats["wall_seconds"]

    other = obtain_library(bench, catalog, EvalOptions(embedder="hash-64", workers=0))
    assert other.meta["embedder"] == "hash-64"
    assert len(_files(cache)) == 3 and all(_files(cache)[n] == t for n, t in built.items())


def test_build_option_change_rebuilds(cache):
    bench = ShopBenchmark()
    catalog = bench.catalog()
    base = BuildOptions(workers=0, embedder="hash", progress=False)
    cached_library(bench, catalog, base)
    assert len(_files(cache)) == 1

    shallow = dataclasses.replace(base, config=BuildConfig(max_depth=1))
    lib = cached_library(bench, catalog, shallow)
    assert lib.meta["config"]["max_depth"] == 1 and len(_files(cache)) == 2

    # How a build runs (workers, checkpoint pace, progress) is not what it finds: the cached file is reused.
    same = dataclasses.replace(base, workers=2, progress=True, config=BuildConfig(checkpoint_every_s=5.0))
    assert default_library_path(bench, catalog, options=same) == default_library_path(bench, catalog, options=base)
    before = _files(cache)
    cached_library(bench, catalog, same)
    assert _files(cache) == before


def test_key_covers_proposer_model_and_budgets_but_not_secrets(cache):
    from libra.contracts.llm.proposer import LLMConfig, LLMProposer

    bench = ShopBenchmark()

    def key(**kw):
        return library_key(bench, BuildOptions(embedder="hash", **kw))

    def llm(**kw):
        return LLMProposer(LLMConfig(base_url="http://127.0.0.1:9/v1", model=kw.pop("model", "m1"), **kw))

    assert key() == key(proposer="offline")
    assert key() != key(config=BuildConfig(max_calls=50)) != key(config=BuildConfig(credit="export"))
    assert key(proposer=llm()) != key()
    assert key(proposer=llm()) != key(proposer=llm(model="m2"))
    assert key(proposer=llm()) == key(proposer=llm(api_key="another", concurrency=9, cache_path="/tmp/x"))


def test_fresh_state_is_in_the_key(cache):
    """A sandbox that starts elsewhere (here: the shop with an existing account) is another build."""
    from libra.runtime.python.runtime import PythonRuntime

    from .induction_toys import Shop

    class SeededShop(ShopBenchmark):
        def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw):
            return PythonRuntime(
                classes=[Shop], trusted=True, name="shop", load=lambda inst, config: inst.accounts.update(ann="pw")
            )

    opts = BuildOptions(embedder="hash")
    assert library_key(ShopBenchmark(), opts) != library_key(SeededShop(), opts)
    assert library_key(ShopBenchmark(), opts) == library_key(ShopBenchmark(), opts)
