"""Builds on Ray: the overhead of Ray on this machine, and a measured model of AppWorld on N workers.

Three parts, all on this machine (``machine.cpus`` in the results file):

1. **Builds**: BFCL and SciToolEval built with the local worker pool and with ``--executor ray`` (a private local
   Ray on 127.0.0.1 started and stopped by the build), the same number of workers each. Reports the wall times and
   Ray's overhead, executed calls per second per worker, and whether the relations are identical.
2. **Dispatch**: the same cheap BFCL call sent 2,000 times through a local pool and through Ray actors: what one
   call costs the caller on each transport, without any tool work (Ray's start-up reported apart).
3. **AppWorld on N workers**: a model built from measurements. Every batch a build sends (``invoke_many``) is a
   barrier: the engine waits for all its calls before its next step. A spy on the executor records each batch's
   size and time during a short AppWorld build (a call budget, so it stops after a few waves): the per-call
   service time on AppWorld's servers, the batch structure (batches per wave), the contract checks (sent one call
   at a time) and the caller's own time (set-up before the engine, then its bookkeeping between batches, per
   executed call). The full build's committed statistics (``benchmarks/results/build-appworld.json``: executed
   calls, waves, wall time on 2 workers) scale it: wall(N) = caller + contract calls + sum over batches of
   ceil(calls / N) x per-call time, with one factor matching the prediction at 2 workers to the committed wall
   time (the machine's load differs between the runs). Each batch takes at least one call's time whatever N: the
   critical path of the waves. Ray adds its measured cost per call (part 2), counted as serial (an upper bound).

Nothing here changes how the engine runs: the batches are observed from outside (a wrapper of
``Executor.invoke_many``). Writes benchmarks/results/ray.json.

    python benchmarks/bench_ray.py [--workers 2] [--appworld-calls 6000] [--skip-appworld]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Self

from _common import RESULTS, save

TARGET_WORKERS = (8, 32, 96)


@dataclass
class Spy:
    """Batches sent through any executor of this process: (calls, seconds) each."""

    batches: list[tuple[int, float]] = field(default_factory=list)
    #: how many batches were sent before the engine started (the contract checks' calls)
    engine_from: int = 0
    engine_started: float = 0.0
    original: Any = None
    original_start: Any = None

    def __enter__(self) -> Self:
        from libra.induction.explore.engine import Engine
        from libra.runtime.workers.executor import Executor

        self.original = Executor.invoke_many
        self.original_start = Engine.start
        spy = self

        def start(engine: Any) -> Any:
            spy.engine_from = len(spy.batches)
            spy.engine_started = time.perf_counter()
            return spy.original_start(engine)

        Engine.start = start  # type: ignore[method-assign]

        def invoke_many(executor: Any, calls: Any) -> Any:
            t0 = time.perf_counter()
            out = spy.original(executor, calls)
            spy.batches.append((len(out), time.perf_counter() - t0))
            return out

        Executor.invoke_many = invoke_many  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        from libra.induction.explore.engine import Engine
        from libra.runtime.workers.executor import Executor

        Executor.invoke_many = self.original  # type: ignore[method-assign]
        Engine.start = self.original_start  # type: ignore[method-assign]

    def summary(self, workers: int, wall_s: float) -> dict[str, Any]:
        """Per-call service time (each batch's time over its rounds of ``workers`` calls), the caller's time."""
        calls = sum(n for n, _ in self.batches)
        in_batches = sum(s for _, s in self.batches)
        per_call = [s / math.ceil(n / workers) for n, s in self.batches if n]
        weighted = sum(p * n for p, (n, _) in zip(per_call, [b for b in self.batches if b[0]])) / max(1, calls)
        sizes = [n for n, _ in self.batches]
        return {
            "batches": len(self.batches),
            "calls": calls,
            "single_call_batches": sum(1 for n in sizes if n == 1),
            "calls_per_batch_median": statistics.median(sizes) if sizes else 0,
            "calls_per_batch_max": max(sizes, default=0),
            "seconds_in_batches": round(in_batches, 2),
            "caller_seconds": round(wall_s - in_batches, 2),
            "per_call_ms": round(1000 * weighted, 3),
        }


def _edges(lib: Any) -> list[tuple]:
    return [r.key for r in lib.relations]


def build_pair(name: str, workers: int) -> dict[str, Any]:
    """One benchmark built locally and on a private local Ray, with the same workers."""
    from libra.benchmarks.registry import get_benchmark
    from libra.induction.build import BuildOptions, build_library

    out: dict[str, Any] = {}
    libs = {}
    for executor in ("local", "ray"):
        bench = get_benchmark(name)
        with Spy() as spy:
            t0 = time.perf_counter()
            lib = build_library(bench, None, BuildOptions(workers=workers, executor=executor, progress=False))
            wall = time.perf_counter() - t0
        s = lib.stats
        calls = s["engine"]["executed_calls"]
        libs[executor] = lib
        out[executor] = {
            "wall_s": round(wall, 2),
            "build_wall_s": s["wall_seconds"],
            "induction_s": s["induction_seconds"],
            "executed_calls": calls,
            "calls_per_s_per_worker": round(calls / s["induction_seconds"] / workers, 1),
            "batches": spy.summary(workers, wall),
            "relations": len(lib.relations),
        }
        print(
            (
                f"{name} {executor}: {wall:.1f} s, {calls:,} calls, {out[executor]['calls_per_s_per_worker']} "
                "calls/s/worker"
            ),
            flush=True,
        )
    out["ray_overhead_pct"] = round(100 * (out["ray"]["wall_s"] / out["local"]["wall_s"] - 1), 1)
    out["identical_relations"] = _edges(libs["local"]) == _edges(libs["ray"])
    return out


def dispatch(workers: int, n: int = 2000) -> dict[str, Any]:
    """Seconds per call of a cheap BFCL read through the local pool and through Ray actors (no tool work)."""
    from libra.benchmarks.bfcl.adapter import BFCLBenchmark
    from libra.runtime.workers.executor import transports_wrapped
    from libra.runtime.workers.ray import ray_session, ray_wrapper

    def run() -> float:
        rt = BFCLBenchmark().runtime(isolated=True, n_workers=workers)
        try:
            state = rt.fresh()
            rt.invoke_many([(state, "GorillaFileSystem.pwd", {})] * (4 * workers))  # warm: every worker holds the state
            t0 = time.perf_counter()
            rt.invoke_many([(state, "GorillaFileSystem.pwd", {})] * n)
            return time.perf_counter() - t0
        finally:
            rt.close()

    local = run()
    t0 = time.perf_counter()
    with ray_session(None, workers):
        started = time.perf_counter() - t0
        with transports_wrapped(ray_wrapper()):
            on_ray = run()
        t1 = time.perf_counter()
    stopped = time.perf_counter() - t1
    return {
        "calls": n,
        "workers": workers,
        "local_ms_per_call": round(1000 * local / n, 3),
        "ray_ms_per_call": round(1000 * on_ray / n, 3),
        "local_calls_per_s_per_worker": round(n / local / workers, 1),
        "ray_calls_per_s_per_worker": round(n / on_ray / workers, 1),
        "ray_added_ms_per_call": round(1000 * (on_ray - local) / n, 3),
        "ray_start_s": round(started, 2),
        "ray_stop_s": round(stopped, 2),
    }


def appworld_model(workers: int, budget: int, dispatch_ms: float) -> dict[str, Any]:
    """A short AppWorld build observed batch by batch, scaled to the full build's committed statistics.

    Measured in the sample: the caller's set-up before the engine starts (contract proposals, candidate
    compositions, field embeddings) less the contract checks' calls; the contract checks (one call at a time); the
    engine's batches (per-call service time = a batch's seconds over its rounds of ``workers`` calls) and the
    caller's own seconds per executed call between them. The full build's wall time on 2 workers, predicted from
    these and its calls and waves, is then matched to the committed one by one factor (the machine's load differs
    between the two runs), and the same factor applies to every N.
    """
    from libra.benchmarks.registry import get_benchmark
    from libra.induction.build import BuildOptions, build_library
    from libra.induction.config import BuildConfig

    full = json.loads((RESULTS / "build-appworld.json").read_text())
    fs = full["stats"]
    with Spy() as spy:
        t0 = time.perf_counter()
        lib = build_library(
            get_benchmark("appworld"),
            None,
            BuildOptions(workers=workers, config=BuildConfig(max_calls=budget), progress=False),
        )
        wall = time.perf_counter() - t0
    waves = lib.stats["engine"]["waves"]
    contract_batches, engine_batches = spy.batches[: spy.engine_from], spy.batches[spy.engine_from :]
    contract_s = sum(sec for _, sec in contract_batches)
    setup_caller_s = (spy.engine_started - t0) - contract_s
    engine_calls = sum(n for n, _ in engine_batches)
    engine_batch_s = sum(sec for _, sec in engine_batches)
    engine_caller_s = (t0 + wall - spy.engine_started) - engine_batch_s
    per_call_s = engine_batch_s / max(1, sum(math.ceil(n / workers) for n, _ in engine_batches))
    contract_call_s = contract_s / max(1, len(contract_batches))
    caller_per_call_s = engine_caller_s / max(1, engine_calls)
    calls, full_waves = fs["engine"]["executed_calls"], fs["engine"]["waves"]
    full_batches = len(engine_batches) / max(1, waves) * full_waves
    calls_per_batch = calls / max(1.0, full_batches)
    contract_calls = sum(n for n, _ in contract_batches)

    def parts(n_workers: int) -> dict[str, float]:
        return {
            "caller": setup_caller_s + calls * caller_per_call_s,
            "contracts": contract_calls * contract_call_s,  # sent one at a time: the same on any N
            "engine": full_batches * math.ceil(calls_per_batch / n_workers) * per_call_s,
            "ray": calls * dispatch_ms / 1000,  # upper bound: Ray's added cost per call, paid serially by the caller
        }

    base = parts(fs["workers"])
    scale = fs["wall_seconds"] / (base["caller"] + base["contracts"] + base["engine"])
    rows = []
    for n in (fs["workers"], *TARGET_WORKERS):
        p = {k: v * scale for k, v in parts(n).items()}
        local = p["caller"] + p["contracts"] + p["engine"]
        rows.append(
            {
                "workers": n,
                "caller_s": round(p["caller"], 1),
                "contract_calls_s": round(p["contracts"], 1),
                "engine_calls_s": round(p["engine"], 1),
                "batch_floor_s": round(
                    full_batches * per_call_s * scale, 1
                ),  # one call per batch, whatever N: the waves' critical path
                "wall_local_s": round(local, 1),
                "speedup_local": round(fs["wall_seconds"] / local, 1),
                "ray_dispatch_s": round(p["ray"], 1),
                "wall_ray_s": round(local + p["ray"], 1),
            }
        )
    last = rows[-1]
    at96 = {
        "the caller's own work (set-up and engine bookkeeping, serial)": last["caller_s"],
        "Ray dispatch by the caller (upper bound)": last["ray_dispatch_s"],
        "contract checks (one call at a time)": last["contract_calls_s"],
        "the engine's batches": last["engine_calls_s"],
    }
    return {
        "sample": {
            "max_calls": budget,
            "wall_s": round(wall, 1),
            "waves": waves,
            "engine_batches": len(engine_batches),
            "engine_calls": engine_calls,
            "contract_calls": contract_calls,
            "setup_caller_s": round(setup_caller_s, 1),
            "contract_calls_s": round(contract_s, 1),
            "engine_batch_s": round(engine_batch_s, 1),
            "engine_caller_s": round(engine_caller_s, 1),
            **spy.summary(workers, wall),
        },
        "full_build": {
            "executed_calls": calls,
            "waves": full_waves,
            "wall_s_on_2": fs["wall_seconds"],
            "contract_s": fs["contract_seconds"],
            "workers": fs["workers"],
            "batches_estimated": round(full_batches),
            "calls_per_batch": round(calls_per_batch, 1),
        },
        "per_call_ms": round(1000 * per_call_s * scale, 3),
        "contract_call_ms": round(1000 * contract_call_s * scale, 3),
        "caller_ms_per_call": round(1000 * caller_per_call_s * scale, 3),
        "load_scale": round(scale, 3),
        "rows": rows,
        "largest_part_at_96": max(at96, key=at96.__getitem__),
        "parts_at_96_s": {k: round(v, 1) for k, v in at96.items()},
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--appworld-calls", type=int, default=6000, help="call budget of the observed AppWorld build")
    ap.add_argument("--skip-appworld", action="store_true")
    ap.add_argument("--benchmarks", nargs="*", default=["bfcl", "scitooleval"])
    ap.add_argument(
        "--model-only",
        action="store_true",
        help="re-measure the AppWorld model only, keeping the other parts of results/ray.json",
    )
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"benchmark": "builds on Ray", "workers": args.workers}
    if args.model_only:
        kept = json.loads((RESULTS / "ray.json").read_text())
        result.update({k: kept[k] for k in ("dispatch", "builds")})
    else:
        result["dispatch"] = dispatch(args.workers)
        print("dispatch:", result["dispatch"], flush=True)
        result["builds"] = {name: build_pair(name, args.workers) for name in args.benchmarks}
    if not args.skip_appworld:
        result["appworld_model"] = appworld_model(
            args.workers, args.appworld_calls, result["dispatch"]["ray_added_ms_per_call"]
        )
        print(json.dumps(result["appworld_model"]["rows"], indent=1), flush=True)
    print(f"wrote {save('ray', result)}")


if __name__ == "__main__":
    main()
