"""AppWorld sandbox costs: server start, fresh state, calls and resets, measured inside AppWorld's own environment.

Writes benchmarks/results/appworld-sandbox.json. Run: make bench-appworld (needs `make appworld` first).
"""

from __future__ import annotations

import json
import subprocess
import sys

from _common import ROOT, save


def main() -> None:
    from libra.benchmarks.appworld import env as appworld_env

    python = appworld_env.require_env()
    server = ROOT / "src" / "libra" / "benchmarks" / "appworld_server.py"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    proc = subprocess.run(
        [str(python), "-I", "-W", "ignore", str(server), "bench", str(n)],
        env=appworld_env.appworld_env_vars(),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"the AppWorld sandbox benchmark failed: {proc.stderr.strip()[-500:]}")
    timings = json.loads(proc.stdout.strip().splitlines()[-1])
    path = save("appworld-sandbox", {"calls_per_measure": n, "timings": timings})
    print(json.dumps(timings, indent=1), "->", path)


if __name__ == "__main__":
    main()
