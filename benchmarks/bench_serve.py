"""``libra serve`` on the AppWorld library, as agents meet it: the official MCP client against the real command.

- ``open_seconds``: :meth:`libra.Searcher.open` in-process, from the cached search index (median of runs), beside
  ``library_load_seconds``, the full :meth:`libra.library.artifact.Library.load` it replaces at startup;
- ``mcp_import_seconds``: ``import mcp.server.lowlevel`` alone in a fresh interpreter (the SDK's share of a start);
- ``startup``: spawn ``libra serve`` over stdio until the client's handshake completes (``ready_seconds``) and
  until the first ``search_tools`` result is back (``first_result_seconds``: the library's index and the embedding
  model load in the background from the handshake on, and the first search waits for what is left);
- ``embedding``: the embedding model alone on the same queries, in this process with no server running: the
  word pieces each query is (``tokens_p50``/``tokens_p99``/``tokens_max``) and one model run per query (wall p50,
  p99 in ms, and CPU ms per run across the model's threads). This is the floor under a new query's latency: a
  run's cost grows with the query's length, so the longest queries set p99. ``embedding_package_graph``: the same
  model run as its package ships it, before :mod:`libra.embeddings.onnx_fusion` (measured in alternating rounds);
- ``phases_cpu_ms``: where a new query's CPU goes in-process, per phase (see :func:`search_phases`);
- ``stdio`` / ``http``: ``search_tools`` latency, one client, sequential calls (p50, p99 in ms), each query new
  to the server (so each is embedded), the server's CPU time per call (``server_cpu_ms``: what a call costs
  whatever else shares the machine) and this client's (``client_cpu_ms``: the official client's own share, which
  includes checking each result against the tool's output schema); ``stdio_repeated``: the same queries asked again in
  the same session,
  answered from the server's cache of recent queries (:data:`libra.search.searcher.QUERY_CACHE_BYTES`);
- ``http_load``: ``--clients`` concurrent HTTP clients (default 50), each calling ``search_tools`` in a loop for
  ``--seconds`` (default 30; each call bounded by a timeout): requests served, errors, p50/p99. Every request's
  query is unique (a task request with a request number appended), so none is answered from the cache;
- ``load_average``: the machine's 1-minute load average before and after (it may be shared);
- ``previous``: the previous retrieval default (:data:`PREVIOUS`: dense base, one hop, Ks 15), measured in the same
  run for comparison: its ``stdio`` latency (the two servers answer the same queries, in alternating rounds, so
  both see the same machine) and its ``open_and_model_seconds``;
- ``open_and_model_seconds``: :meth:`Searcher.open` and the embedding model's load (:meth:`Searcher.warm`) in a
  fresh interpreter: what a server start pays before its first search can run;
- ``server_peak_rss_mb``: the stdio server's peak resident memory after all its calls (Linux ``VmHWM``).

Queries are the benchmark's distinct task requests (only their text; nothing of the gold). Writes
results/serve.json.

    python benchmarks/bench_serve.py [--library PATH] [--calls 200] [--clients 50] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import ROOT, save

K = 5
CALL_TIMEOUT = 30.0
#: The retrieval default before the search on development halves (benchmarks/bench_defaults.py), as
#: :mod:`libra.retrieval.defaults` names its values.
PREVIOUS = {
    "DEFAULT_BASE": "dense",
    "DEFAULT_KS": 15,
    "DEFAULT_HOPS": 1,
    "DEFAULT_DECAY": 1.0,
    "DEFAULT_SCORE_SPACE": "probability",
}


def _env(previous: bool = False) -> dict[str, str]:
    """The environment of a measured process; ``previous``: with the previous retrieval default
    (:data:`PREVIOUS`, read by ``serve_with.py`` and :data:`OPEN_WARM`)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("LIBRA_BENCH_DEFAULTS", None)
    if previous:
        env["LIBRA_BENCH_DEFAULTS"] = json.dumps(PREVIOUS)
    return env


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def p(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return {
        "calls": len(values),
        "p50_ms": round(p(0.50), 2),
        "p99_ms": round(p(0.99), 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def library_path(given: str | None) -> Path:
    """``--library``, else AppWorld's cached default build (built now if missing)."""
    if given:
        return Path(given)
    from libra.benchmarks.registry import get_benchmark
    from libra.eval.libraries import default_library_path, obtain_library
    from libra.eval.methods import EvalOptions

    bench = get_benchmark("appworld")
    catalog = bench.catalog()
    path = default_library_path(bench, catalog)
    if not path.exists():
        obtain_library(bench, catalog, EvalOptions())
    return path


def queries(n: int) -> list[str]:
    """Up to ``n`` distinct task requests, in task order."""
    from libra.benchmarks.registry import get_benchmark

    return list(dict.fromkeys(t.query for t in get_benchmark("appworld").tasks()))[:n]


LOAD = (
    "import sys, time\nfrom libra.library.artifact import Library\nt = "
    "time.perf_counter()\nLibrary.load(sys.argv[1])\nprint(time.perf_counter() - t)"
)
OPEN = (
    "import sys, time\nfrom libra.search.searcher import Searcher\nt = "
    "time.perf_counter()\nSearcher.open(sys.argv[1])\nprint(time.perf_counter() - t)"
)


MCP_IMPORT = "import time\nt = time.perf_counter()\nimport mcp.server.lowlevel\nprint(time.perf_counter() - t)"
OPEN_WARM = (
    "import json, os, sys, time\nfrom libra.retrieval import defaults\n"
    "for k, v in json.loads(os.environ.get('LIBRA_BENCH_DEFAULTS') or '{}').items(): setattr(defaults, k, v)\n"
    "from libra.search.searcher import Searcher\nt = time.perf_counter()\ns = Searcher.open(sys.argv[1])\n"
    "s.warm()\nprint(time.perf_counter() - t)"
)


def measure_open(path: Path, repeat: int = 3) -> tuple[dict[str, float], float]:
    """Each in a fresh interpreter (what a server start pays; nothing held in memory), after its imports; and
    the import of the MCP SDK's server alone (what every start pays before it can answer the handshake). The
    second value is the previous default's ``open_and_model_seconds``."""

    def seconds(code: str, previous: bool = False) -> float:
        env = _env(previous)
        return float(
            subprocess.run(
                [sys.executable, "-c", code, str(path)], check=True, env=env, capture_output=True, text=True
            ).stdout.split()[-1]
        )

    seconds(OPEN)  # writes the search index when this library was never opened
    loads = [seconds(LOAD) for _ in range(repeat)]
    opens = [seconds(OPEN) for _ in range(repeat)]
    warm = [seconds(OPEN_WARM) for _ in range(repeat)]
    warm_previous = [seconds(OPEN_WARM, previous=True) for _ in range(repeat)]
    sdk = [seconds(MCP_IMPORT) for _ in range(repeat)]
    return {
        "library_load_seconds": round(statistics.median(loads), 3),
        "open_seconds": round(statistics.median(opens), 3),
        "open_and_model_seconds": round(statistics.median(warm), 3),
        "mcp_import_seconds": round(statistics.median(sdk), 3),
    }, round(statistics.median(warm_previous), 3)


async def _calls(client, texts: list[str]) -> tuple[list[float], int]:
    times, errors = [], 0
    for q in texts:
        t = time.perf_counter()
        result = await client.call_tool("search_tools", {"query": q, "k": K}, read_timeout_seconds=CALL_TIMEOUT)
        times.append(time.perf_counter() - t)
        errors += bool(result.is_error)
    return times, errors


def server_child() -> int:
    """The ``libra serve`` process the stdio client started (a child of this one), from /proc."""
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid()
                and b"serve" in (entry / "cmdline").read_bytes()
            ):
                return int(entry.name)
        except OSError:
            continue
    raise SystemExit("no libra serve process found")


async def measured_calls(client, texts: list[str], pid: int) -> dict:
    """:func:`_calls` as figures, with the server's and this client's CPU time per call."""
    cpu0, own0 = cpu_seconds(pid), time.process_time()
    times, errors = await _calls(client, texts)
    per_call = 1000 / len(texts)
    return {
        **_ms(times),
        "errors": errors,
        "server_cpu_ms": round((cpu_seconds(pid) - cpu0) * per_call, 2),
        "client_cpu_ms": round((time.process_time() - own0) * per_call, 2),
    }


def embedding_floor(texts: list[str], rounds: int = 3) -> tuple[dict, dict]:
    """The default embedding model alone, one run per query as the server runs it (see the module docstring):
    as served (the fused graph, :mod:`libra.embeddings.onnx_fusion`) and as the package ships it, in alternating
    rounds so both see the same machine; each keeps its round of least CPU (the one least disturbed)."""
    from libra.embeddings.embedders import MiniLMEmbedder

    embedders = {"fused": MiniLMEmbedder(), "package": MiniLMEmbedder(fused=False)}
    tokens = sorted(embedders["fused"].token_counts(texts))
    best: dict[str, tuple[float, list[float]]] = {}
    for _ in range(rounds):
        for name, embedder in embedders.items():
            embedder.embed(texts[:3])  # the first runs allocate
            times, cpu0 = [], time.process_time()
            for q in texts:
                t = time.perf_counter()
                embedder.embed([q])
                times.append(time.perf_counter() - t)
            cpu = (time.process_time() - cpu0) / len(texts) * 1000
            if name not in best or cpu < best[name][0]:
                best[name] = (cpu, times)
    shape = {
        "queries": len(texts),
        "tokens_p50": tokens[len(tokens) // 2],
        "tokens_p99": tokens[min(len(tokens) - 1, int(0.99 * len(tokens)))],
        "tokens_max": tokens[-1],
    }

    def row(name: str) -> dict:
        cpu, times = best[name]
        figures = _ms(times)
        return {**shape, "p50_ms": figures["p50_ms"], "p99_ms": figures["p99_ms"], "cpu_ms": round(cpu, 2)}

    return row("fused"), row("package")


def _embedder_of(base: Any) -> Any:
    """The embedding model of a base retriever: its own, or that of its dense part when it fuses several."""
    if hasattr(base, "embedder"):
        return base.embedder
    return next(p.embedder for p in base.parts if hasattr(p, "embedder"))


def search_phases(path: Path, texts: list[str]) -> dict:
    """CPU ms per query of each phase of answering a new query, in-process: the embedding model (tokens in,
    vector out), the rest of the search (scores, propagation, prerequisites), the two result forms
    (structured and text), and the SDK's shaping of the result for the wire (validation and JSON)."""
    import json

    import mcp_types as types
    from mcp.server.runner import _dump_result
    from mcp_types import LATEST_PROTOCOL_VERSION
    from mcp_types.methods import serialize_server_result

    from libra.search.searcher import Searcher
    from libra.serve.server import SearchResponse, structured, text_form

    searcher = Searcher.open(path)
    searcher.warm()
    embedder = _embedder_of(searcher._base())
    results = {q: searcher.search(q, K) for q in texts}  # every query now answered from the query cache

    def wire(q: str) -> str:
        res = types.CallToolResult(
            content=[types.TextContent(type="text", text=text_form(q, results[q]))],
            structured_content=structured(SearchResponse(q, K, results[q])),
        )
        return json.dumps(serialize_server_result("tools/call", LATEST_PROTOCOL_VERSION, _dump_result(res)))

    phases = {
        "embedding": lambda q: embedder.embed([q]),
        "search_without_embedding": lambda q: searcher.search(q, K),
        "result_forms": lambda q: (structured(SearchResponse(q, K, results[q])), text_form(q, results[q])),
        "sdk_wire_form": wire,
    }
    out = {}
    for name, run in phases.items():
        cpu0 = time.process_time()
        for q in texts:
            run(q)
        out[name] = round((time.process_time() - cpu0) / len(texts) * 1000, 3)
    return out


def _stdio_params(path: Path, previous: bool = False) -> Any:
    from mcp.client.stdio import StdioServerParameters

    if previous:
        args = [str(ROOT / "benchmarks" / "serve_with.py"), "serve", str(path)]
    else:
        args = ["-m", "libra.cli", "serve", str(path)]
    return StdioServerParameters(command=sys.executable, args=args, env=_env(previous), cwd=str(ROOT))


async def stdio_run(path: Path, texts: list[str], repeat: int = 3) -> tuple[dict, dict, dict]:
    from mcp import Client

    params = _stdio_params(path)
    ready, first = [], []
    latency: dict = {}
    for i in range(repeat):
        t0 = time.perf_counter()
        async with Client(params, read_timeout_seconds=120) as client:
            ready.append(time.perf_counter() - t0)
            await client.call_tool("search_tools", {"query": texts[0], "k": K})
            first.append(time.perf_counter() - t0)
            if i == repeat - 1:
                pid = server_child()
                latency = await measured_calls(client, texts[1:], pid)
                repeated = await measured_calls(client, texts[1:], pid)
                latency["server_peak_rss_mb"] = peak_rss_mb(pid)
    startup = {
        "ready_seconds": round(statistics.median(ready), 3),
        "first_result_seconds": round(statistics.median(first), 3),
        "runs": repeat,
    }
    return startup, latency, repeated


async def stdio_side_by_side(path: Path, texts: list[str], rounds: int = 3) -> dict[str, dict]:
    """New queries to the default's server and the previous default's, in alternating rounds (each round a
    fresh server of each, every query new to it), so both see the same machine; the calls of all rounds are
    pooled per server."""
    from mcp import Client

    times: dict[str, list[float]] = {"default": [], "previous": []}
    peak: dict[str, float] = {}
    for _ in range(rounds):
        for name in times:
            async with Client(_stdio_params(path, name == "previous"), read_timeout_seconds=120) as client:
                await client.call_tool("search_tools", {"query": texts[0], "k": K})  # the model loads
                pid = server_child()
                got, _ = await _calls(client, texts[1:])
                times[name] += got
                peak[name] = max(peak.get(name, 0.0), peak_rss_mb(pid))
    return {name: {**_ms(t), "server_peak_rss_mb": peak[name]} for name, t in times.items()}


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory of process ``pid`` so far, in MB (Linux ``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def start_http(path: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "libra.cli", "serve", str(path), "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=_env(),
        cwd=ROOT,
    )
    line = proc.stderr.readline()
    match = re.search(r"(http://\S+/mcp)", line)
    if not match:
        proc.kill()
        raise SystemExit(f"the server announced no address: {line!r}")
    return proc, match.group(1)


async def http_run(url: str, texts: list[str], pid: int) -> dict:
    from mcp import Client

    async with Client(url, read_timeout_seconds=120) as client:
        await client.call_tool("search_tools", {"query": texts[0], "k": K})  # the model loads
        return await measured_calls(client, texts[1:], pid)


async def http_load(url: str, texts: list[str], clients: int, seconds: float) -> dict:
    from mcp import Client

    times: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def one(i: int) -> None:
        try:
            async with Client(url, read_timeout_seconds=CALL_TIMEOUT) as client:
                j = i
                while time.perf_counter() < deadline:
                    t = time.perf_counter()
                    query = f"{texts[j % len(texts)]} (request {j})"  # unique: never answered from the cache
                    result = await client.call_tool("search_tools", {"query": query, "k": K})
                    times.append(time.perf_counter() - t)
                    if result.is_error:
                        errors.append(result.content[0].text[:100])
                    j += clients
        except Exception as exc:  # noqa: BLE001 - counted, not fatal: the figure is how many failed
            errors.append(f"{type(exc).__name__}: {exc}"[:100])

    t0 = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(clients))), timeout=seconds + 4 * CALL_TIMEOUT)
    wall = time.perf_counter() - t0
    return {
        "clients": clients,
        "seconds": round(wall, 1),
        "served": len(times),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:3],
        "requests_per_second": round(len(times) / wall, 1),
        **({k: v for k, v in _ms(times).items() if k != "calls"} if times else {}),
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def http_runs(path: Path, texts: list[str], clients: int, seconds: float) -> tuple[dict, dict]:
    """``http`` (sequential calls) and ``http_load`` (``clients`` concurrent clients for ``seconds``)."""
    proc, url = start_http(path)
    try:
        http = asyncio.run(http_run(url, texts, proc.pid))
        print("http", http, flush=True)
        server0, clients0 = cpu_seconds(proc.pid), time.process_time()
        load = asyncio.run(http_load(url, texts, clients, seconds))
        # Where the two cores went: the server, or the clients sharing the machine with it.
        load["server_cpu_seconds"] = round(cpu_seconds(proc.pid) - server0, 1)
        load["clients_cpu_seconds"] = round(time.process_time() - clients0, 1)
        print("http_load", load, flush=True)
    finally:
        stop(proc)
    return http, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--library", help="library file (default: AppWorld's cached build)")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--no-http", action="store_true", help="skip the HTTP runs (stdio, startup and memory only)")
    args = ap.parse_args()
    path = library_path(args.library)
    texts = queries(args.calls)
    load_before = os.getloadavg()[0]
    print(f"library {path}; {len(texts)} distinct queries; load average {load_before:.2f}", flush=True)
    opened, previous_open = measure_open(path)
    print("open", opened, "previous default's open_and_model_seconds", previous_open, flush=True)
    embedding, package_graph = embedding_floor(texts[1:])
    print("embedding", embedding, "\nembedding_package_graph", package_graph, flush=True)
    phases = search_phases(path, texts[1:])
    print("phases_cpu_ms", phases, flush=True)
    startup, stdio, repeated = asyncio.run(stdio_run(path, texts))
    print("startup", startup, "\nstdio", stdio, "\nstdio_repeated", repeated, flush=True)
    side = asyncio.run(stdio_side_by_side(path, texts))
    print("stdio side by side", side, flush=True)
    http, load = ({}, {}) if args.no_http else http_runs(path, texts, args.clients, args.seconds)
    loadavg = {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)}
    result = {
        "library": path.name,
        "k": K,
        **opened,
        "embedding": embedding,
        "embedding_package_graph": package_graph,
        "phases_cpu_ms": phases,
        "startup": startup,
        "stdio": stdio,
        "stdio_repeated": repeated,
        "stdio_alternating": side["default"],
        "http": http,
        "http_load": load,
        "load_average": loadavg,
        "previous": {
            "options": PREVIOUS,
            "stdio_alternating": side["previous"],
            "open_and_model_seconds": previous_open,
        },
    }
    print(f"-> {save('serve', result)}")


if __name__ == "__main__":
    main()
