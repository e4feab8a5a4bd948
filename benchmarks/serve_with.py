"""``libra serve`` (or any ``libra`` command) with other retrieval defaults, for benchmarks only.

Why: ``bench_serve.py`` measures the retrieval default and the previous one in the same run, on the same
machine load, and ``libra serve`` takes no ranking options (it serves :mod:`libra.retrieval.defaults`). The
defaults named in the environment variable ``LIBRA_BENCH_DEFAULTS`` (JSON, e.g. ``{"DEFAULT_BASE": "dense"}``)
are set before anything reads them, then the command runs as usual.

    LIBRA_BENCH_DEFAULTS='{"DEFAULT_BASE": "dense"}' python benchmarks/serve_with.py serve LIBRARY
"""

from __future__ import annotations

import json
import os
import sys

from libra.retrieval import defaults

for name, value in json.loads(os.environ.get("LIBRA_BENCH_DEFAULTS") or "{}").items():
    if not hasattr(defaults, name):
        raise SystemExit(f"libra.retrieval.defaults has no {name}")
    setattr(defaults, name, value)

from libra.cli.main import main  # noqa: E402 - the defaults above must be set before the CLI reads them

main(sys.argv[1:])
