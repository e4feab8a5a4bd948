"""AppWorld's own virtual environment: creating it, finding it and running code in it.

Why a separate environment: ``appworld==0.1.3.post1`` pins pydantic<2 and old sqlmodel/fastapi, which cannot be
installed beside ours. Everything that needs the package (decrypting the task bundle, generating the API catalog,
executing APIs) therefore runs under the interpreter of this environment, started as a subprocess.

Set-up (offline apart from PyPI)::

    python -m libra.benchmarks.appworld.env setup      # or: make appworld
    python -m libra.benchmarks.appworld.env status

creates ``$LIBRA_APPWORLD_VENV`` (default ``~/.cache/libra/appworld-venv``), pip-installs the package there and
runs ``appworld install`` (which only unpacks the apps' encrypted sources shipped in the wheel). AppWorld's own
cache (``APPWORLD_CACHE``) is kept inside the environment's folder so nothing lands in ``~/.appworld``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from libra._util.io import atomic_write_json
from libra.errors import MissingDependencyError

APPWORLD_REQUIREMENT = "appworld==0.1.3.post1"
SETUP_HINT = "run: make appworld (or python -m libra.benchmarks.appworld.env setup)"
_MARKER = "libra-appworld.json"


def venv_dir() -> Path:
    """Where the AppWorld environment lives (``$LIBRA_APPWORLD_VENV`` or ``~/.cache/libra/appworld-venv``)."""
    env = os.environ.get("LIBRA_APPWORLD_VENV")
    if env:
        return Path(env).expanduser()
    return Path(os.path.expanduser("~/.cache/libra/appworld-venv"))


def python_path(root: Path | None = None) -> Path:
    return (root or venv_dir()) / "bin" / "python"


def is_ready(root: Path | None = None) -> bool:
    """True when the environment exists, has the pinned package and its sources were unpacked."""
    root = root or venv_dir()
    try:
        marker = json.loads((root / _MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return marker.get("requirement") == APPWORLD_REQUIREMENT and python_path(root).exists()


def appworld_env_vars(root: Path | None = None, appworld_root: Path | None = None) -> dict[str, str]:
    """The environment for a process of the AppWorld interpreter.

    Only what the package needs: PATH/HOME/LANG, its cache inside the venv folder (so nothing is written to
    ``~/.appworld``) and ``APPWORLD_ROOT`` (where ``data/`` would be, used only with an official data download).
    """
    root = root or venv_dir()
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    env["APPWORLD_CACHE"] = str(root / "appworld-cache")
    if appworld_root is not None:
        env["APPWORLD_ROOT"] = str(appworld_root)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def require_env() -> Path:
    """The environment's interpreter, or one actionable error line saying how to create it."""
    if not is_ready():
        raise MissingDependencyError(
            f"the AppWorld benchmark needs its own environment at {venv_dir()} (not set up): {SETUP_HINT}"
        )
    return python_path()


def _run(cmd: Sequence[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
    proc = subprocess.run(list(cmd), env=env, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise MissingDependencyError(f"AppWorld set-up step failed ({' '.join(cmd[:4])} ...): {tail}")


def ensure_env(force: bool = False, base_python: str | None = None, quiet: bool = False) -> Path:
    """Create the AppWorld environment if it is missing (or ``force``); return its interpreter.

    ``base_python`` is the interpreter the venv is made from (default: the one running this, whose version
    AppWorld supports: 3.11+).
    """
    root = venv_dir()
    if is_ready(root) and not force:
        return python_path(root)
    say = (lambda *_: None) if quiet else (lambda msg: print(msg, file=sys.stderr))
    t0 = time.perf_counter()
    base = base_python or getattr(sys, "_base_executable", None) or sys.executable
    say(f"creating the AppWorld environment in {root} ...")
    root.parent.mkdir(parents=True, exist_ok=True)
    _run([base, "-m", "venv", "--clear", str(root)])
    py = python_path(root)
    say(f"installing {APPWORLD_REQUIREMENT} (pydantic<2 and friends, isolated from libra's environment) ...")
    _run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", APPWORLD_REQUIREMENT])
    say("unpacking the AppWorld app sources (appworld install, offline) ...")
    env = appworld_env_vars(root)
    workdir = root / "work"
    workdir.mkdir(exist_ok=True)
    _run([str(root / "bin" / "appworld"), "install"], env=env, cwd=workdir)
    seconds = time.perf_counter() - t0
    atomic_write_json(
        root / _MARKER, {"requirement": APPWORLD_REQUIREMENT, "python": base, "setup_seconds": round(seconds, 1)}
    )
    say(f"AppWorld environment ready in {seconds:.0f}s: {py}")
    return py


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    cmd = args[0] if args else "status"
    try:
        if cmd == "setup":
            ensure_env(force="--force" in args)
            return 0
        if cmd == "status":
            root = venv_dir()
            print(f"{'ready' if is_ready(root) else 'missing'}: {root}")
            return 0 if is_ready(root) else 1
        if cmd == "path":
            print(require_env())
            return 0
    except MissingDependencyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("usage: python -m libra.benchmarks.appworld.env {setup [--force] | status | path}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
