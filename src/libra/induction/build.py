"""Build an executable tool library from a tool source (a benchmark, your own tools, MCP servers).

Steps, each catalog-agnostic: propose a contract per tool and check it against the runtime (revising it from
same-tool feedback); count the candidate compositions; embed the field names once; run the induction engine
(:mod:`.engine`) with checkpoints; save the library with its statistics (the paper's Table 5 columns).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from libra._util.io import path_lock
from libra._util.version import VERSION
from libra.catalog import Catalog
from libra.contracts.check import check_contracts
from libra.contracts.registry import Proposer, get_proposer
from libra.embeddings.embedders import DEFAULT_EMBEDDER, get_embedder
from libra.embeddings.fields import FieldEncoder
from libra.induction.candidates import candidate_compositions, candidate_table
from libra.induction.config import BuildConfig
from libra.induction.explore.checkpoint import CHECKPOINT_VERSION
from libra.induction.explore.engine import Engine
from libra.induction.fingerprints import build_fingerprints
from libra.induction.health import health_summary, rejection_messages, warn
from libra.induction.identity import BOOKKEEPING_FIELDS, PROPOSER_SETTINGS, proposer_identity  # noqa: F401 - importable from here as before
from libra.induction.peak import PeakMemory
from libra.induction.providers import no_relation_causes
from libra.induction.update import UpdatePlan, plan_update
from libra.library.artifact import FORMAT_VERSION, Library
from libra.library.fingerprints import digest
from libra.probing.memo import MemoStore
from libra.runtime.workers.heap import freeze_loaded, long_lived
from libra.sources.base import ToolSource


@dataclass
class BuildOptions:
    proposer: str | Proposer = "offline"
    workers: int | None = None  # worker processes; 0 = in-process (trusted runtimes only); None = CPU count
    #: where tool calls run: "local", "ray" (a private local Ray) or "ray:ADDRESS" (see libra.runtime.workers.ray)
    executor: str = "local"
    embedder: str = DEFAULT_EMBEDDER
    config: BuildConfig = field(default_factory=BuildConfig)
    resume: bool = True
    progress: bool = True


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def open_runtime(source: ToolSource, workers: int | None) -> Any:
    """The source's runtime: ``workers`` isolated processes, or in-process when 0 (trusted runtimes)."""
    n = default_workers() if workers is None else workers
    if n <= 0:
        rt = source.runtime(isolated=False)
        if not getattr(rt, "trusted", False):
            rt.close()
            from libra.errors import ConfigError

            raise ConfigError(
                f"benchmark {source.name!r} does not declare its runtime trusted, so it cannot run "
                "in-process: use --workers 1 or more"
            )
        return rt
    return source.runtime(isolated=True, n_workers=n)


def executor_spec(text: str) -> Any:
    """The :class:`~libra.runtime.workers.ray.ExecutorSpec` of ``text``; a bad one is a :class:`ConfigError`."""
    from libra.errors import ConfigError
    from libra.runtime.workers.ray import ExecutorSpec

    try:
        return ExecutorSpec.parse(text)
    except ValueError as exc:
        raise ConfigError(f"executor {exc}") from None


@contextmanager
def executor_scope(spec: Any, workers: int | None) -> Iterator[tuple[int | None, Callable[[], bool]]]:
    """Where a build's runtime starts its workers: here (``local``), or as Ray actors (``ray[:ADDRESS]``).

    Yields the number of workers to open (on Ray without ``workers``: the cluster's CPUs) and a check that says
    whether the runtime opened inside really went to Ray. Ray is started (or connected) before and stopped after.
    """
    if spec.kind == "local":
        yield workers, lambda: True
        return
    from libra.errors import ConfigError
    from libra.runtime.workers.executor import transports_wrapped
    from libra.runtime.workers.ray import cluster_cpus, ray_session, ray_wrapper

    if workers == 0:
        raise ConfigError("--executor ray runs tools in sandboxed workers on Ray actors: use --workers 1 or more")
    wrapped: list[Any] = []
    to_ray = ray_wrapper()

    def wrap(inner: Any) -> Any:
        wrapped.append(inner)
        return to_ray(inner)

    with (
        ray_session(spec.address, workers or (default_workers() if spec.address is None else None)),
        transports_wrapped(wrap),
    ):
        yield (workers if workers is not None else cluster_cpus()), lambda: bool(wrapped)


def _identity(
    catalog: Catalog, contracts: dict[str, Any], config: BuildConfig, embedder_id: str, fixtures: dict[str, Any]
) -> str:
    h = hashlib.sha256()
    for part in (
        catalog.fingerprint(),
        json.dumps(contracts, sort_keys=True),
        json.dumps(config.to_dict(), sort_keys=True),
        embedder_id,
        json.dumps(fixtures, sort_keys=True, default=repr),
        str(FORMAT_VERSION),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


_FRESH_FINGERPRINTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def fresh_fingerprint(source: ToolSource) -> str:
    """The fingerprint of the state a build of ``source`` starts from (its runtime's ``fresh()``).

    Two builds over the same catalog but another starting sandbox (other seed data, another scenario) explore
    different states, so the fresh state is part of what a build depends on. It is read from one isolated
    worker, as a build sees it, without running any tool; the answer is kept per benchmark object, so one
    command that asks several times opens the runtime once.
    """
    try:
        return _FRESH_FINGERPRINTS[source]
    except (KeyError, TypeError):
        pass
    runtime = open_runtime(source, 1)
    try:
        fingerprint = runtime.fresh().fingerprint
    finally:
        runtime.close()
    try:
        _FRESH_FINGERPRINTS[source] = fingerprint
    except TypeError:  # an object that takes no weak reference is simply asked again next time
        pass
    return fingerprint


def build_inputs(
    source: ToolSource, options: BuildOptions | None = None, catalog: Catalog | None = None
) -> dict[str, Any]:
    """Everything a build of ``source`` with ``options`` depends on, as JSON data: the catalog, the fresh state,
    the fixtures, the build configuration (less :data:`BOOKKEEPING_FIELDS`), the proposer, the embedder, the
    engine and the library format. Worker counts, resuming and progress display are how a build runs, not what
    it finds, and are left out."""
    opts = options or BuildOptions()
    catalog = catalog if catalog is not None else source.catalog()
    fixtures = source.fixtures()
    return {
        "catalog": catalog.fingerprint(),
        "fresh_state": fresh_fingerprint(source),
        "fixtures": json.loads(json.dumps(fixtures, sort_keys=True, default=repr)),
        "config": {k: v for k, v in opts.config.to_dict().items() if k not in BOOKKEEPING_FIELDS},
        "proposer": proposer_identity(opts.proposer),
        "embedder": get_embedder(opts.embedder).model_id,
        "engine": CHECKPOINT_VERSION,
        "code": build_code_hash(),
        "format": FORMAT_VERSION,
    }


#: The packages whose code decides what a build finds: a change to any of them (a rule of the exploration, a
#: layer of the value generator) must not reuse a library cached by the code before it.
BUILD_PACKAGES = ("contracts", "induction", "probing", "values", "runtime", "sources")


@functools.cache
def build_code_hash() -> str:
    """A hash of the source of :data:`BUILD_PACKAGES` (read once per process)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for package in BUILD_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def library_key(source: ToolSource, options: BuildOptions | None = None, catalog: Catalog | None = None) -> str:
    """A content hash of :func:`build_inputs`: equal keys mean the same build, so a cached library can be reused
    exactly when its key matches, and any changed input (even an embedder or a budget) rebuilds."""
    inputs = build_inputs(source, options, catalog)
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=repr).encode()).hexdigest()


class _Progress:
    """A rich progress line with candidates tested and relations kept; silent when disabled."""

    def __init__(self, enabled: bool, label: str) -> None:
        self.enabled = enabled
        self.label = label
        self._p = None
        self._task = None

    def __enter__(self) -> _Progress:
        import sys

        self._plain = self.enabled and not sys.stderr.isatty()
        self._last_plain = 0.0
        if self.enabled and not self._plain:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._p = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), transient=False)
            self._p.__enter__()
            self._task = self._p.add_task(self.label)
        return self

    def update(self, engine: Engine) -> None:
        if self._p is None and not getattr(self, "_plain", False):
            return
        c = engine.counters
        kinds = {"provenance": 0, "compatibility": 0, "state": 0}
        for r in engine.relations.values():
            kinds[r.kind] += 1
        tested = c["provenance_tests"] + c["state_tests"]
        text = (
            f"{self.label}: {tested:,} tests, {c['executed_calls']:,} calls, queue "
            f"{len(engine.queue) + len(engine.far) + len(engine.probes) + len(engine.near_probes):,} | "
            f"kept {kinds['provenance']} prov / {kinds['compatibility']} comp / {kinds['state']} state"
        )
        if self._p is None:  # not a terminal (a log file, CI): a plain line every 15 s
            import sys

            now = time.perf_counter()
            if now - self._last_plain >= 15:
                self._last_plain = now
                print(text, file=sys.stderr, flush=True)
            return
        self._p.update(self._task, description=text)

    def __exit__(self, *exc: Any) -> None:
        if self._p is not None:
            self._p.__exit__(*exc)


def build_library(
    source: ToolSource,
    out: str | Path | None = None,
    options: BuildOptions | None = None,
    log: Callable[[str], None] = lambda msg: None,
    update: Library | str | Path | None = None,
) -> Library:
    """Build (or resume building) the library of ``source`` (a benchmark, your own tools, MCP servers); saves it to
    ``out`` when given.

    ``update`` (a library, or its file) is the library an earlier build of this source made: only the tools that
    changed since are built again, and the relations between unchanged tools are kept with their evidence (see
    :mod:`libra.induction.update`); when its starting state or build options differ, everything is built again.

    Builds to the same ``out`` take turns (:func:`libra._util.io.path_lock`): two would otherwise share, and overwrite,
    one checkpoint file. The later one waits, then builds (resuming from the checkpoint of an earlier build that stopped
    early).
    """
    old = Library.load(update) if isinstance(update, (str, Path)) else update
    if out is None:
        return _build(source, None, options, log, old)
    with path_lock(out, on_wait=lambda: log(f"waiting for another build writing {out}")):
        return _build(source, out, options, log, old)


def _build(
    source: ToolSource,
    out: str | Path | None,
    options: BuildOptions | None,
    log: Callable[[str], None],
    old: Library | None = None,
) -> Library:
    opts = options or BuildOptions()
    spec = executor_spec(opts.executor)
    with executor_scope(spec, opts.workers) as (workers, went_remote), long_lived():
        return _build_on(source, out, opts, log, spec, workers, went_remote, old)


def _build_on(
    source: ToolSource,
    out: str | Path | None,
    opts: BuildOptions,
    log: Callable[[str], None],
    spec: Any,
    workers: int | None,
    went_remote: Callable[[], bool],
    old: Library | None = None,
) -> Library:
    catalog = source.catalog()
    fixtures = source.fixtures()
    untestable = source.untestable()
    _warn_untestable(untestable, log)
    out_path = Path(out) if out else None
    ckpt = out_path.with_name(out_path.name + ".ckpt") if out_path else None
    t0 = time.perf_counter()
    peak = PeakMemory()
    runtime = open_runtime(source, workers)
    cleanup: list[Engine] = []
    done = False
    memo: MemoStore | None = None
    try:
        memo = open_memo(catalog, ckpt, opts.resume)
        _check_executor(source, spec, workers, went_remote, log)
        fingerprints = build_fingerprints(source, catalog, opts, runtime.fresh())
        plan, refused = plan_update(old, fingerprints, log) if old is not None else (None, None)
        proposer = get_proposer(opts.proposer)
        summary = _check(catalog, runtime, proposer, fixtures, memo, plan, log)
        contracts = summary.contracts
        t_contracts = time.perf_counter() - t0
        candidates = candidate_compositions(catalog, contracts)
        # (an update offers values along every candidate, as a build does: an unchanged tool upstream of a changed
        # one needs its own inputs to produce what the changed one consumes; only the tests are focused)
        n_tested = len(plan.focus_candidates(candidates)) if plan else len(candidates)
        embedder = get_embedder(opts.embedder)
        encoder = FieldEncoder(embedder)
        names = {c.provider_field for c in candidates} | {c.consumer_input for c in candidates} | set(fixtures)
        encoder.add(names)
        engine = Engine(
            catalog,
            runtime,
            contracts,
            candidates,
            _cached(encoder.similarity),
            opts.config,
            fixtures=fixtures,
            memo=memo,
        )
        engine.focus = plan.focus if plan else None
        engine.kept_flows = plan.kept_flows(catalog) if plan else None
        cleanup.append(engine)
        # the engine has indexed the candidates: the library keeps them as columns, the objects go (see candidate_table)
        stored = candidate_table(candidates, catalog.names, encoder.similarity)
        del candidates
        identity = _identity(
            catalog, {k: c.to_dict() for k, c in contracts.items()}, opts.config, embedder.model_id, fixtures
        ) + (f"-update-{digest(plan.changes.to_dict())}" if plan else "")
        resumed = bool(opts.resume and ckpt and ckpt.exists() and engine.restore(ckpt, identity))
        if resumed:
            log(f"resuming from checkpoint {ckpt} ({engine.counters['waves']} waves done)")
        else:
            engine.start(reuse=summary.memo_keys)  # the exploration takes over checking's calls
        t_engine = time.perf_counter()
        _explore(engine, opts, ckpt, identity, t0, peak, f"inducing {source.name}")
        relations = plan.merge(engine.result()) if plan else engine.result()
        peak.sample(force=True)
        times = {"t0": t0, "contracts": t_contracts, "engine": t_engine}
        stats = _stats(catalog, runtime, engine, summary, relations, len(stored), times, peak, resumed, spec, workers)
        if untestable:
            stats["health"]["untestable"] = untestable
        stats["health"]["literal_origins"] = literal_origins(contracts.values())
        _add_proposer_stats(stats, proposer)
        if old is not None:
            stats["update"] = plan.stats(catalog, len(stored), n_tested, engine) if plan else {"refused": refused}
        if plan:
            plan.merge_health(stats["health"])
        meta = _meta(source, proposer, opts, embedder.model_id, fixtures)
        contract_docs = {k: c.to_dict() for k, c in contracts.items()}
        library = Library(catalog, contract_docs, relations, stored, stats, meta, fingerprints.to_dict())
        if out_path:
            library.save(out_path)
            if ckpt and ckpt.exists():
                ckpt.unlink()
        done = True
        if stats["health"]["warning"]:
            warn(stats["health"]["warning"], opts.progress)
        return library
    finally:
        for engine in cleanup:
            engine.close(remove=done)  # a build that stopped early keeps its memo next to its checkpoint
        if memo is not None and not cleanup:
            # stopped in contract checking: the memo is kept only for a checkpoint to resume
            memo.close(remove=not (ckpt and ckpt.exists()))
        runtime.close()


def _warn_untestable(untestable: dict[str, dict[str, str]], log: Callable[[str], None]) -> None:
    for tool, params in sorted(untestable.items()):
        where = ", ".join(f"{p}: {t}" for p, t in params.items())
        log(f"warning: {tool} cannot be tested: no JSON value builds its parameter(s) {where}; it stays for retrieval")


def _check_executor(
    source: ToolSource, spec: Any, workers: int | None, went_remote: Callable[[], bool], log: Callable[[str], None]
) -> None:
    """Refuse a runtime that did not start its workers where the executor asked (one that ignores it)."""
    if not went_remote():
        from libra.errors import ConfigError

        raise ConfigError(
            f"the runtime of {source.name!r} does not start its workers through libra's executor, so it "
            f"cannot run on {spec.kind}: use --executor local"
        )
    if spec.kind != "local":
        log(f"running tool calls on {workers} Ray actors ({spec})")


def _check(
    catalog: Catalog,
    runtime: Any,
    proposer: Any,
    fixtures: dict[str, Any],
    memo: MemoStore,
    plan: UpdatePlan | None,
    log: Callable[[str], None],
) -> Any:
    """Propose and check the contracts (an update: those of new and changed tools only, the others kept as the
    library had them); the summary's ``contracts`` cover the whole catalog, in its order."""
    kept = plan.kept_contracts(catalog) if plan else {}
    todo = Catalog([t for t in catalog if t.name not in kept], catalog.name) if kept else catalog
    log(f"proposing and checking contracts for {len(todo)} tools ({getattr(proposer, 'name', 'custom')} proposer)")
    initial = proposer.propose_all(todo) if hasattr(proposer, "propose_all") else None
    summary = check_contracts(todo, runtime, initial, proposer=proposer, fixtures=fixtures, memo=memo)
    if kept:
        checked = summary.contracts
        summary.contracts = {
            n: kept[n] if n in kept else checked[n] for n in catalog.names if n in kept or n in checked
        }
    return summary


def _cached(similarity: Callable[[str, str], float]) -> Callable[[str, str], float]:
    """``similarity`` remembered per pair of names: the exploration asks for the same pairs over and over."""
    cache: dict[tuple[str, str], float] = {}

    def cached(a: str, b: str) -> float:
        key = (a, b)
        v = cache.get(key)
        if v is None:
            v = cache[key] = similarity(a, b)
        return v

    return cached


def _explore(
    engine: Engine, opts: BuildOptions, ckpt: Path | None, identity: str, t0: float, peak: PeakMemory, label: str
) -> None:
    """Run the exploration to its end, writing a checkpoint every ``checkpoint_every_s`` (or less often, as
    checkpoints grow: they are kept to a small share of the wall time)."""
    last_ckpt = time.perf_counter()
    interval = opts.config.checkpoint_every_s
    # What is loaded by now (catalog, contracts, the embedding model) lives until the end: see runtime/heap.py
    freeze_loaded()
    with _Progress(opts.progress, label) as bar:
        while engine.step():
            bar.update(engine)
            peak.sample()
            if ckpt and time.perf_counter() - last_ckpt >= interval:
                started = time.perf_counter()
                engine.checkpoint(ckpt, identity, engine.elapsed_before_resume + started - t0)
                last_ckpt = time.perf_counter()
                interval = max(opts.config.checkpoint_every_s, 20 * (last_ckpt - started))
        bar.update(engine)


def _stats(
    catalog: Catalog,
    runtime: Any,
    engine: Engine,
    summary: Any,
    relations: list[Any],
    n_candidates: int,
    times: dict[str, float],
    peak: PeakMemory,
    resumed: bool,
    spec: Any,
    workers: int | None,
) -> dict[str, Any]:
    """The library's statistics: the paper's Table 5 columns, how the build ran, and its health."""
    wall = engine.elapsed_before_resume + time.perf_counter() - times["t0"]
    counts = {"provenance": 0, "compatibility": 0, "state": 0}
    for r in relations:
        counts[r.kind] += 1
    stats = {
        "tools": len(catalog),
        "executable_tools": sum(1 for t in catalog if t.executable),
        "candidate_compositions": n_candidates,
        "relations": counts,
        "value_relations": counts["provenance"] + counts["compatibility"],
        "state_relations": counts["state"],
        "wall_seconds": round(wall, 2),
        "contract_seconds": round(times["contracts"], 2),
        "induction_seconds": round(time.perf_counter() - times["engine"], 2),
        "seconds_per_1000_candidates": round(1000 * wall / max(1, n_candidates), 3),
        "contracts": summary.counts(),
        "engine": dict(engine.counters),
        "resumed": resumed,
        "workers": default_workers() if workers is None else workers,
        "executor": spec.kind,
        # how tools were kept off the network (see libra.runtime.workers.sandbox); in-process runtimes block nothing
        "network_isolation": getattr(runtime, "network_isolation", "allowed"),
        # peak resident memory in MB (see libra.induction.peak) and the memo store's size on disk
        "peak_rss_mb": peak.to_dict(),
        "memo_store": {"rows": len(engine.memo), "disk_mb": round(engine.memo.disk_bytes() / 1e6, 1)},
        # state parts sent to the workers with their data, and "miss" answers (see libra.runtime.workers.lru)
        "parts_shipped": dict(getattr(runtime, "shipped", None) or {}),
        # workers replaced after a call timed out or crashed one (see worker_restarts): such a call's error
        # record may depend on the machine's load, not on the call, so a build that has any is not reproducible
        "worker_restarts": worker_restarts(runtime),
        # workers replaced between calls because their memory grew (see Executor._recycle_if_grown): no call
        # is affected, a fresh worker answers every call as the old one would
        "worker_recycles": worker_restarts(runtime, "recycled"),
        "held": engine.held(),
    }
    runnable = [t.name for t in catalog if t.executable]
    succeeded = (
        {c.tool for c in engine.calls}
        | engine.retry.succeeded
        | {name for name, tc in summary.per_tool.items() if any(t.observed == "success" for t in tc.templates)}
    )
    stats["health"] = health_summary(
        runnable,
        succeeded,
        summary.templates,
        summary.matched,
        engine.counters.get("inconclusive_tests", 0),
        rejection_messages(engine, summary),
        len(relations),
    )
    # why each tool that provides no relation provides none (Table 3's "no edge" tools, by cause)
    stats["health"]["no_relation"] = no_relation_causes(engine, succeeded)
    # annotations the runtime saw contradicted (an MCP tool marked read-only that changed the sandbox)
    conflicts = getattr(runtime, "hint_conflicts", None)
    if conflicts:
        stats["health"]["hint_conflicts"] = dict(sorted(conflicts.items()))
    # per MCP server: whether restores restart it, who decided and why (libra.runtime.mcp.learning)
    servers = getattr(runtime, "servers_learned", None)
    if servers:
        stats["mcp_servers"] = servers
    return stats


def literal_origins(contracts: Any) -> dict[str, int]:
    """How many literal arguments of the contracts came from each layer of the value generator (documented,
    realistic, conventional, typed, repaired; ``proposer`` for literals a proposer wrote itself): where a build's
    values came from, for a reader judging why calls were refused."""
    counts: dict[str, int] = {}
    for contract in contracts:
        for template in contract.templates:
            for arg in template.arguments.values():
                if arg.kind == "literal":
                    key = arg.origin or "proposer"
                    counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def _meta(
    source: ToolSource, proposer: Any, opts: BuildOptions, embedder_id: str, fixtures: dict[str, Any]
) -> dict[str, Any]:
    """What the library records about how it was built."""
    meta = {
        "libra_version": VERSION,
        "benchmark": source.name,
        "proposer": getattr(proposer, "name", str(opts.proposer)),
        "embedder": embedder_id,
        "config": opts.config.to_dict(),
        "fixtures": sorted(fixtures),
    }
    # A catalog served by processes (MCP servers) records how to start them, so `libra serve --workdir` can
    # forward calls to the same servers later without the project file.
    servers = source.server_configs()
    if servers is not None:
        meta["mcp_servers"] = servers
    return meta


def _add_proposer_stats(stats: dict[str, Any], proposer: Any) -> None:
    """A model-backed proposer's counters (requests, cache hits, tokens) go with the library's statistics."""
    if hasattr(proposer, "stats"):
        pstats = proposer.stats
        stats["proposer"] = pstats.to_dict() if hasattr(pstats, "to_dict") else dict(pstats)


def worker_restarts(runtime: Any, counter: str = "restarts") -> int:
    """How many workers the runtime replaced during the build: each one a call that timed out or crashed its worker.

    Why report it: such a call becomes an ``error`` record and is memoised like any other, yet whether a call
    overruns its timeout can depend on how loaded the machine was (the timeout is wall time), so two builds of the
    same inputs may disagree exactly when one of them had restarts. A build with none ran every call to its end.
    (An isolated runtime keeps its executor as ``pool``; a remote one is the executor.) ``counter`` names another
    count the executor keeps (``recycled``)."""
    for holder in (runtime, getattr(runtime, "pool", None)):
        restarts = getattr(holder, counter, None)
        if isinstance(restarts, int):
            return restarts
    return 0


def open_memo(catalog: Catalog, ckpt: Path | None, resume: bool) -> MemoStore:
    """The one memo of invocations of a build: contract checking and the exploration both call through it.

    It lives next to the checkpoint (:func:`memo_path`), or in a temporary directory for a build that saves
    nothing. A build that resumes keeps the rows an earlier run of the same catalog memoised (checking then
    re-runs from them at no cost, and the checkpoint cuts them back to what it covered); any other starts empty.
    """
    memo = MemoStore(memo_path(ckpt) if ckpt else None)
    scope = hashlib.sha256(f"{catalog.fingerprint()}\0{CHECKPOINT_VERSION}".encode()).hexdigest()
    memo.claim(scope)
    if not (resume and ckpt and ckpt.exists()):
        memo.clear()
    return memo


def memo_path(ckpt: Path) -> Path:
    """Where a build's memo store lives: next to its checkpoint (``<library>.ckpt-memo.sqlite``), as its memo part."""
    return ckpt.with_name(ckpt.name + "-memo.sqlite")
