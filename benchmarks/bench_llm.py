"""The LLM proposer end to end against a local OpenAI-compatible endpoint: its acceptance check.

Starts the deterministic stub endpoint on 127.0.0.1, runs ``libra build BENCH --proposer llm`` twice with one
response cache, and records chat calls (<= 3 x tools expected) and that the second build makes none.
Writes benchmarks/results/llm-<benchmark>.json. Run: python benchmarks/bench_llm.py [bfcl]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import save
from libra.contracts.llm.stub_server import OfflineResponder, OpenAIStubServer


def build(url: str, cache: str, out: str, bench: str) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "libra.cli",
        "build",
        bench,
        "--proposer",
        "llm",
        "--llm-base-url",
        url,
        "--llm-model",
        "stub-contracts",
        "--llm-cache",
        cache,
        "--out",
        out,
        "--quiet",
        "--no-resume",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"build failed: {proc.stderr.strip()}")
    show = out + ".show.json"
    subprocess.run([sys.executable, "-m", "libra.cli", "show", out, "--json", show], check=True, capture_output=True)
    return json.loads(Path(show).read_text())


def main() -> None:
    bench = sys.argv[1] if len(sys.argv) > 1 else "bfcl"
    server = OpenAIStubServer(OfflineResponder(), host="127.0.0.1", port=0).start()
    try:
        with tempfile.TemporaryDirectory(prefix="libra-bench-llm-") as tmp:
            first = build(server.url, f"{tmp}/cache", f"{tmp}/a.json", bench)
            served_first = server.count
            second = build(server.url, f"{tmp}/cache", f"{tmp}/b.json", bench)
            served_second = server.count - served_first
    finally:
        server.stop()
    tools = first["stats"]["tools"]
    payload = {
        "benchmark": bench,
        "tools": tools,
        "first_build": {
            "http_requests": served_first,
            "proposer": first["stats"].get("proposer"),
            "relations": first["stats"]["relations"],
        },
        "second_build": {
            "http_requests": served_second,
            "proposer": second["stats"].get("proposer"),
            "relations": second["stats"]["relations"],
        },
        "max_calls_allowed": 3 * tools,
        "same_edges": first["edges"] == second["edges"],
    }
    path = save(f"llm-{bench}", payload)
    print(
        f"{bench}: first build {served_first} chat requests (limit {3 * tools}), second build "
        f"{served_second}; same edges: {payload['same_edges']} -> {path}"
    )


if __name__ == "__main__":
    main()
