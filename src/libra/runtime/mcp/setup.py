"""Install the MCP servers that the tests and the workspace example run, into caches outside the project.

``python -m libra.runtime.mcp.setup`` (what ``make mcp-servers`` runs) is idempotent: each install writes a stamp
naming exactly what it installed and is skipped while the stamp matches, so a second run costs a few file reads.

- ``~/.cache/libra/mcp-servers``: a venv with ``mcp-server-git`` and ``mcp-server-time`` from PyPI (pinned).
- ``~/.cache/libra/mcp1-venv``: a venv with the 1.x SDK alone, to run the 1.x test server (the 2.x client must
  fall back to the initialize handshake against it).
- ``~/.cache/libra/npm``: ``@modelcontextprotocol/server-filesystem`` and ``server-memory`` (pinned) installed
  with ``npm install --prefix``. Missing ``node``/``npm`` gives one line saying what to install.

``LIBRA_MCP_CACHE`` moves the root (default ``~/.cache/libra``, beside the AppWorld venv).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from libra.errors import ConfigError

#: what each cache holds (pinned, so every machine runs the same servers)
PYPI_SERVERS: tuple[str, ...] = ("mcp-server-git==2026.10.19", "mcp-server-time==2026.10.19")
MCP1_SDK: tuple[str, ...] = ("mcp>=1.9,<2",)
NPM_SERVERS: tuple[str, ...] = (
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-memory@2026.8.31",
)


def cache_root() -> Path:
    return Path(os.environ.get("LIBRA_MCP_CACHE") or Path.home() / ".cache" / "libra")


def _stamped(stamp: Path, spec: str) -> bool:
    return stamp.is_file() and stamp.read_text(encoding="utf-8") == spec


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    if proc.returncode != 0:
        tail = " | ".join(proc.stdout.strip().splitlines()[-3:])
        raise ConfigError(f"installing {what} failed (exit {proc.returncode}): {tail}")


def ensure_venv(name: str, requirements: tuple[str, ...]) -> Path:
    """A venv ``cache_root()/name`` holding ``requirements``; returns its ``bin`` directory."""
    root = cache_root() / name
    stamp = root / ".libra-installed"
    spec = "\n".join(requirements)
    if not _stamped(stamp, spec):
        if not (root / "bin" / "python").exists():
            _run([sys.executable, "-m", "venv", str(root)], f"the venv {root}")
        _run(
            [
                str(root / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                *requirements,
            ],
            ", ".join(requirements),
        )
        stamp.write_text(spec, encoding="utf-8")
    return root / "bin"


def pypi_servers_bin() -> Path:
    """``bin`` of the venv with ``mcp-server-git`` and ``mcp-server-time`` (installed on first use)."""
    return ensure_venv("mcp-servers", PYPI_SERVERS)


def mcp1_python() -> Path:
    """The interpreter of the venv with the 1.x SDK (installed on first use)."""
    return ensure_venv("mcp1-venv", MCP1_SDK) / "python"


def npm_servers_bin() -> Path:
    """``node_modules/.bin`` of the npm cache with the filesystem and memory servers (installed on first use)."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise ConfigError(
            f"{' and '.join(missing)} not found: install Node.js 20 or newer (e.g. apt-get install nodejs "
            "npm) to run the npm MCP servers"
        )
    root = cache_root() / "npm"
    stamp = root / ".libra-installed"
    spec = "\n".join(NPM_SERVERS)
    if not _stamped(stamp, spec):
        root.mkdir(parents=True, exist_ok=True)
        _run(
            ["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", "--loglevel=error", *NPM_SERVERS],
            ", ".join(NPM_SERVERS),
        )
        stamp.write_text(spec, encoding="utf-8")
    return root / "node_modules" / ".bin"


#: the commands the pinned servers above install (what :func:`managed_bin_dirs` holds once installed)
MANAGED_COMMANDS: tuple[str, ...] = ("mcp-server-git", "mcp-server-time", "mcp-server-filesystem", "mcp-server-memory")


def managed_bin_dirs() -> tuple[Path, ...]:
    """Where this module installs server commands, without installing anything: the PyPI servers' venv ``bin``
    and the npm cache's ``node_modules/.bin``. The MCP runtime looks a bare ``command`` up here after ``PATH``,
    so a project file can name ``mcp-server-git`` and work right after ``make mcp-servers`` with no PATH edit."""
    root = cache_root()
    return (root / "mcp-servers" / "bin", root / "npm" / "node_modules" / ".bin")


def setup_all() -> dict[str, Path]:
    """Install everything; returns where each piece is."""
    return {"pypi": pypi_servers_bin(), "mcp1": mcp1_python(), "npm": npm_servers_bin()}


def main() -> int:
    try:
        where = setup_all()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, path in where.items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
