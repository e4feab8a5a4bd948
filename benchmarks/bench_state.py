"""Per-call cost of the Python runtime on a database-backed toy of a few megabytes, whose calls must stay cheap.

The toy (``tests/state_toys.py``'s ``Warehouse``: thousands of product records in a dict, an order log, a
session) is called in four ways, each from the state the previous step left or from one fixed state, so the
figures separate what a call costs when it reads, writes one record, or starts from another state:

- ``read``: ``get_product`` from the same state, repeatedly;
- ``write``: ``order`` (changes one record and appends to the log), each time from the previous result;
- ``write-from-fixed``: ``order`` of different products, all from one signed-in state (the engine's pattern:
  many calls from a saved state);
- ``alternate``: reads alternating between two states that differ in one record;
- ``isolated-read`` / ``isolated-write``: reads and writes from one state through a one-worker pool
  (:class:`~libra.runtime.workers.isolation.IsolatedRuntime`), where new states travel back over a pipe.

Writes results/state.json (seconds per call, median of the runs).

    python benchmarks/bench_state.py [--products 6000] [--calls 40]
"""

from __future__ import annotations

import argparse
import functools
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.state_toys import Warehouse  # noqa: E402

from _common import save  # noqa: E402
from libra.runtime.python.runtime import PythonRuntime  # noqa: E402


def make_runtime(products: int) -> PythonRuntime:
    """Module-level so a worker process can build it."""
    return PythonRuntime(
        classes=[Warehouse], init_kwargs={"Warehouse": {"n_products": products}}, trusted=True, name="warehouse"
    )


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--products", type=int, default=6000)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--out", default="state")
    args = ap.parse_args()
    rt = make_runtime(args.products)
    size_mb = len(pickle.dumps(Warehouse(args.products), pickle.HIGHEST_PROTOCOL)) / 2**20
    t0 = time.perf_counter()
    s0 = rt.fresh()
    fresh_s = time.perf_counter() - t0
    _, signed = rt.invoke(s0, "Warehouse.sign_in", {"user": "ann"})
    rec, other = rt.invoke(signed, "Warehouse.order", {"product_id": "P00007"})
    assert rec.status == "success", rec
    n = args.calls
    results = {}
    results["read"] = per_call(lambda i: rt.invoke(signed, "Warehouse.get_product", {"product_id": f"P{i:05d}"}), n)
    cur = [signed]

    def write(i: int) -> None:
        _, cur[0] = rt.invoke(cur[0], "Warehouse.order", {"product_id": f"P{i % 50:05d}"})

    results["write"] = per_call(write, n)
    results["write-from-fixed"] = per_call(
        lambda i: rt.invoke(signed, "Warehouse.order", {"product_id": f"P{i:05d}"}), n
    )
    results["alternate"] = per_call(
        lambda i: rt.invoke(signed if i % 2 else other, "Warehouse.get_product", {"product_id": "P00001"}), n
    )
    from libra.runtime.workers.isolation import IsolatedRuntime

    with IsolatedRuntime(
        functools.partial(make_runtime, args.products), n_workers=1, timeout_s=120, context="fork"
    ) as iso:
        _, iso_signed = iso.invoke(iso.fresh(), "Warehouse.sign_in", {"user": "ann"})
        results["isolated-read"] = per_call(
            lambda i: iso.invoke(iso_signed, "Warehouse.get_product", {"product_id": f"P{i:05d}"}), n
        )
        results["isolated-write"] = per_call(
            lambda i: iso.invoke(iso_signed, "Warehouse.order", {"product_id": f"P{i:05d}"}), n
        )
    rows = {k: round(v * 1000, 2) for k, v in results.items()}
    print(f"state {size_mb:.2f} MB pickled; fresh() {fresh_s * 1000:.0f} ms; ms per call: {rows}")
    save(
        args.out,
        {
            "benchmark": "python runtime per-call cost on a multi-MB state",
            "settings": {"products": args.products, "calls": n, "state_mb": round(size_mb, 2)},
            "fresh_ms": round(fresh_s * 1000, 1),
            "ms_per_call": rows,
        },
    )


if __name__ == "__main__":
    main()
