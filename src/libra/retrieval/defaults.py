"""The retrieval default: one configuration for ``libra eval --method libra``, ``libra retrieve`` and ``libra serve``.

Why one place: the three must rank alike, on every catalog, or a figure measured with ``eval`` says nothing about
what a server answers. The values were chosen by ``benchmarks/bench_defaults.py`` on the development halves of
BFCL, SciToolEval and AppWorld (:mod:`libra.benchmarks.splits`), as the configuration with the best worst case over
the three, among those whose encoder keeps a search within the serving budget; see that script's table in
``benchmarks/results/defaults.md`` and the README.

No module here imports numpy, so ``libra serve`` reads these before anything heavy loads.
"""

from __future__ import annotations

#: The base retriever propagation runs over (:mod:`libra.retrieval.named`): BM25 and the dense encoder fused by
#: reciprocal ranks. BM25 finds the tools whose identifiers a request repeats, the encoder the paraphrases, and rank
#: fusion needs no weight between the two; over the three development halves it had the best worst case.
DEFAULT_BASE = "hybrid"
#: The dense part's weight when the base is ``fusion`` (normalised-score fusion with BM25).
DEFAULT_FUSION_WEIGHT = 0.5
#: Seeds: the base's top-Ks tools pull in their providers.
DEFAULT_KS = 15
#: Provider selection per seed input (:func:`libra.retrieval.graph.select_providers`).
DEFAULT_SELECTION = "both"
#: Hops of propagation, and how much of its gain a hop past the first keeps (a second hop over the fused base
#: scored the same at every decay: one hop is the simpler equal).
DEFAULT_HOPS = 1
DEFAULT_DECAY = 1.0
#: What propagation averages: the encoder's probabilities (when the base declares a temperature, as dense does) or
#: its similarities. The fused base declares none: propagation averages its own fused scores.
DEFAULT_SCORE_SPACE = "probability"
