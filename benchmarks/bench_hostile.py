"""A build over hostile tools: it must finish, find the normal tools' relation, and keep the caller small.

The catalog is tests/fixtures/hostile_tools.py: tools that return 50 MB, an int of 5,000 digits, lone surrogates,
cyclic and shared structures and odd objects, print, change the environment, the working directory and another
module, beside two normal tools (``create_item`` returns the ``item_id`` that ``get_item`` reads). It is built
through the normal path (``libra.induction.build.build_library``) in isolated workers, and the caller's peak
resident memory (``getrusage(RUSAGE_SELF).ru_maxrss``, the high-water mark of this process only) is reported
beside the peak before the build (imports and the embedder). Writes results/hostile.json.

    python benchmarks/bench_hostile.py [--workers 2] [--embedder minilm]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

from _common import ROOT, save

sys.path.insert(0, str(ROOT))

#: the relation the build must find between the two normal tools
EXPECTED = ("hostile_tools.create_item", "hostile_tools.get_item")
#: the caller's peak resident memory allowed during this build: hostile tools must not make the caller grow
LIMIT_MB = 300


def peak_mb() -> float:
    """This process's peak resident set so far, in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from libra.embeddings.embedders import DEFAULT_EMBEDDER, get_embedder
    from libra.induction.build import BuildOptions, build_library

    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--embedder", default=DEFAULT_EMBEDDER, help="the build's embedder (loading it is most of the caller's memory)"
    )
    opts = ap.parse_args(argv)

    from tests.fixtures import hostile_tools
    from tests.generalization import CatalogBenchmark

    get_embedder(opts.embedder).embed(["warm up"])  # load the model before the baseline is read
    before = peak_mb()
    t0 = time.perf_counter()
    lib = build_library(
        CatalogBenchmark(hostile_tools),
        None,
        BuildOptions(workers=opts.workers, embedder=opts.embedder, progress=False),
    )
    build_s = time.perf_counter() - t0
    after = peak_mb()
    relations = sorted({(r.provider, r.consumer, r.kind) for r in lib.relations})
    found = any((p, c) == EXPECTED for p, c, _ in relations)
    result = {
        "benchmark": "build over hostile tools",
        "settings": {
            "workers": opts.workers,
            "embedder": opts.embedder,
            "catalog": "tests/fixtures/hostile_tools.py",
            "tools": len(lib.catalog),
        },
        "build_s": round(build_s, 2),
        "relation_found": found,
        "relations": [list(r) for r in relations],
        "caller_peak_rss_mb_before_build": round(before, 1),
        "caller_peak_rss_mb": round(after, 1),
        "caller_peak_limit_mb": LIMIT_MB,
        "engine": {k: lib.stats["engine"][k] for k in ("executed_calls",) if k in lib.stats.get("engine", {})},
    }
    path = save("hostile", result)
    print(
        f"build of {len(lib.catalog)} tools finished in {build_s:.1f}s; {len(relations)} relations; "
        f"{EXPECTED[0]} -> {EXPECTED[1]}: {'found' if found else 'MISSING'}"
    )
    print(f"caller peak RSS {after:.0f} MB (before the build {before:.0f} MB; limit {LIMIT_MB} MB); wrote {path}")
    return 0 if found and after < LIMIT_MB else 1


if __name__ == "__main__":
    sys.exit(main())
