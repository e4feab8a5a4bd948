"""Build this example's library from Python: ``python examples/workspace/build.py [OUT]``.

Installs the pinned servers if needed (``libra.runtime.mcp.setup``; the MCP runtime finds them in libra's server
directories, no PATH edit), creates the template when it is missing, reads ``libra.toml`` and builds with the offline
proposer. It prints
the relations found, the build's health summary and its wall time.
"""

from __future__ import annotations

import json
import sys
import time
import tomllib
from pathlib import Path

from libra.induction.build import BuildOptions, build_library
from libra.runtime.mcp.setup import npm_servers_bin, pypi_servers_bin
from libra.sources.mcp import McpSource

HERE = Path(__file__).resolve().parent


def main(out: str) -> int:
    npm_servers_bin(), pypi_servers_bin()  # install (once): found there as bare commands
    if not (HERE / "template" / ".git").is_dir():
        from make_template import make_template

        make_template()
    config = tomllib.loads((HERE / "libra.toml").read_text())
    source = McpSource.from_config(config, HERE, name="workspace")
    t0 = time.perf_counter()
    library = build_library(source, out, BuildOptions(workers=1, resume=False, progress=False))
    wall = time.perf_counter() - t0
    for rel in sorted(library.relations, key=lambda r: (r.provider, r.consumer, r.kind)):
        print(f"{rel.provider} -> {rel.consumer} [{rel.kind}] {rel.provider_field} -> {rel.consumer_input}")
    print(json.dumps(library.stats.get("health"), indent=1))
    print(f"{len(library.relations)} relations, wall time {wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "workspace.lib.json.gz"))
