"""One ``libra eval`` run: check the options, score each method on the benchmark's tasks, report.

Why apart from the command line: the run (which library to build first, which options reach which method, what
the report holds) is the same whoever asks for it; the command only parses its options, calls :func:`run_eval`,
prints the :class:`EvalReport` and then has :func:`write_eval_outputs` write the files it was asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from libra.errors import ConfigError
from libra.retrieval.documents import DEFAULT_DOCUMENT


def _ignore(message: str) -> None:
    return None


@dataclass
class Progress:
    """How a run says what it does: ``log`` a line (a library is built first), ``status`` while a method runs."""

    log: Callable[[str], None] = _ignore
    status: Callable[[str], AbstractContextManager[Any]] = nullcontext


@dataclass
class EvalRequest:
    """Everything ``libra eval`` was given, by its option names (None: not given)."""

    benchmark: str | None
    methods: list[str] = field(default_factory=lambda: ["bm25", "dense"])
    tasks_path: Path | None = None
    k: int | None = None
    #: which tasks: all, or the benchmark's development or test half (:mod:`libra.benchmarks.splits`)
    split: str = "all"
    embedder: str = "minilm"
    document: str = DEFAULT_DOCUMENT
    library: Path | None = None
    workers: int | None = None
    #: graph methods' options, by :data:`libra.eval.libraries.OPTION_KEYS` (ks, kc, selection, hops, ...)
    graph: dict[str, Any] = field(default_factory=dict)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_cache: Path | None = None
    llm_concurrency: int = 4
    agent_base: str | None = None
    iterations: int | None = None
    tgr_neighbours: int | None = None
    json_path: Path | None = None
    runs: Path | None = None
    plot: Path | None = None

    def chosen(self) -> list[str]:
        return [m.strip().lower() for m in self.methods]


@dataclass
class EvalReport:
    """The scores of a run and what to print beside them (the paper's figures, notes, LLM usage)."""

    bench: Any
    k: int
    tasks: list[Any]
    n_tools: int
    results: list[Any]  # libra.eval.runner.MethodResult, in the order the methods were asked for
    split: str = "all"

    @property
    def title(self) -> str:
        half = f" ({self.split} half)" if self.split != "all" else ""
        return f"{self.bench.name}@{self.k}: {len(self.tasks)} tasks{half}, {self.n_tools} tools"

    @property
    def with_paper(self) -> bool:
        """Your own tasks have no published figures to stand beside."""
        return bool(self.bench.paper)

    def paper(self, method: str) -> tuple[float, float, float] | None:
        """The paper's P/R/NDCG of ``method``, when it published them at this K."""
        return self.bench.paper.get(method) if self.k == self.bench.default_k else None

    def notes(self) -> list[str]:
        """The benchmark's notes on the paper's figures of the methods run."""
        notes = getattr(self.bench, "paper_notes", {})
        return [
            f"{r.method}: {notes[r.method]}"
            for r in self.results
            if r.method in notes and self.k == self.bench.default_k
        ]

    def llm_usage(self) -> list[str]:
        """The LLM methods' calls, cache hits and recorded fallbacks."""
        return [
            f"{r.method}: {r.extra['llm']['calls']} LLM calls, {r.extra['llm']['cache_hits']} from the cache, "
            f"{r.extra['fallbacks']} fallback(s) recorded"
            for r in self.results
            if "llm" in r.extra
        ]


def llm_settings(request: EvalRequest) -> Any:
    """The endpoint of the LLM methods, checked before any work: they need one, the other methods take none."""
    from libra.eval.baselines import AGENTIC_METHODS, ENABLE_HINT, LLM_METHODS
    from libra.llm.client import ChatConfig

    chosen = request.chosen()
    llm_chosen = [m for m in chosen if m in LLM_METHODS]
    agentic = any(m in AGENTIC_METHODS for m in chosen)
    for flag, value, applies in (
        ("--base", request.agent_base, agentic),
        ("--iterations", request.iterations, agentic),
        ("--plot", request.plot, agentic),
        ("--tgr-neighbours", request.tgr_neighbours, "tgr-adapt" in chosen),
    ):
        if value is not None and not applies:
            raise ConfigError(
                f"{flag} only applies with --method {'tgr-adapt' if flag == '--tgr-neighbours' else 'toolreagt'}"
            )
    base_url, model, cache = request.llm_base_url, request.llm_model, request.llm_cache
    if not llm_chosen:
        if base_url or model or cache:
            raise ConfigError(
                f"--llm-base-url/--llm-model/--llm-cache only apply to the LLM methods ({', '.join(LLM_METHODS)})"
            )
        return None
    if not base_url or not model:
        raise ConfigError(f"method {llm_chosen[0]} {ENABLE_HINT}")
    return ChatConfig(
        base_url=base_url, model=model, cache_path=str(cache) if cache else None, concurrency=request.llm_concurrency
    )


def eval_options(request: EvalRequest, k: int, llm: Any) -> Any:
    """The options every method of the run receives."""
    from libra.eval.methods import EvalOptions

    extra = {
        key: v
        for key, v in (
            *request.graph.items(),
            ("agent_base", request.agent_base),
            ("iterations", request.iterations),
            ("tgr_neighbours", request.tgr_neighbours),
        )
        if v is not None
    }
    return EvalOptions(
        k=k,
        embedder=request.embedder,
        document=request.document,
        library=str(request.library) if request.library else None,
        workers=request.workers,
        extra=extra,
        llm=llm,
    )


def _prepare_library(request: EvalRequest, bench: Any, catalog: Any, options: Any, progress: Progress) -> None:
    """The library the graph methods share, before any method runs: built once when none is given (before a
    method's status shows, so the build's own progress shows alone), and a bad ``--library`` refused."""
    from libra.eval.libraries import GRAPH_METHODS, build_options_for, default_library_path, obtain_library

    chosen = request.chosen()
    needs_library = chosen + ([(request.agent_base or "libra")] if "toolreagt" in chosen else [])
    if not any(m in GRAPH_METHODS for m in needs_library):
        return
    if request.library is None:
        path = default_library_path(bench, catalog, options=build_options_for(options))
        if not path.exists():
            progress.log(f"building {bench.name}'s library once; later runs reuse {path}")
            obtain_library(bench, catalog, options)
    else:
        obtain_library(bench, catalog, options)  # the methods reuse it


def run_eval(request: EvalRequest, progress: Progress | None = None) -> EvalReport:
    """Score every method of ``request`` on its benchmark's tasks (see the module docstring)."""
    from libra.benchmarks.splits import check_split, split_tasks
    from libra.eval.runner import run_method
    from libra.eval.targets import eval_target

    progress = progress or Progress()
    check_split(request.split)
    llm = llm_settings(request)
    bench = eval_target(request.benchmark, request.tasks_path, request.library)
    k = bench.default_k if request.k is None else request.k
    catalog = bench.catalog()
    tasks = split_tasks(bench, bench.tasks(), request.split)
    options = eval_options(request, k, llm)
    _prepare_library(request, bench, catalog, options, progress)
    results = []
    for m in request.methods:
        with progress.status(f"running {m} on {bench.name} ({len(tasks)} tasks)..."):
            results.append(run_method(m, bench, catalog, tasks, options))
    return EvalReport(bench, k, tasks, len(catalog), results, request.split)


def write_eval_outputs(report: EvalReport, request: EvalRequest) -> None:
    """The files ``request`` asked for: results as JSON, per-task rankings, the agent's per-iteration plot."""
    from libra.eval.runner import results_json, write_json, write_runs

    if request.json_path:
        write_json(
            request.json_path, results_json(report.bench, report.k, len(report.tasks), report.results, report.split)
        )
    if request.runs:
        write_runs(request.runs, report.tasks, report.results, report.k)
    if request.plot:
        from libra.eval.plots import plot_iterations

        plot_iterations(request.plot, report.bench.name, report.k, report.results)
