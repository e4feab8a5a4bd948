"""Toy benchmarks the command line can name, for CLI tests that run ``libra`` in a real subprocess.

``python -c CODE`` with :data:`MAIN` registers them and runs the CLI: ``shop-tasks`` is the toy shop with two
requests and their gold tools; ``slow-shop`` is the same shop whose stateful tools each take a moment, so a build
is still running when a test interrupts it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from libra.benchmarks.base import Task
from libra.benchmarks.registry import register

from .induction_toys import ShopBenchmark

ROOT = Path(__file__).resolve().parents[1]


@register
class ShopTasks(ShopBenchmark):
    """The shop with requests: adding an item needs the sign-in the request never names."""

    name = "shop-tasks"

    def tasks(self) -> list[Task]:
        return [
            Task("t1", "put a new item titled lamp in the shop", ("Shop.add_item", "Shop.login")),
            Task("t2", "what is the square root of 2", ("Shop.square_root",)),
        ]


@register
class SlowShop(ShopTasks):
    """Each account or item call sleeps: contract checking alone takes several seconds."""

    name = "slow-shop"

    def __init__(self) -> None:
        super().__init__(delay=0.3)


MAIN = "import tests.cli_toys\nfrom libra.cli.main import main\nmain()"


def cli_env(cache: Path) -> dict[str, str]:
    """The environment of a CLI subprocess: this checkout's sources, its own cache, unbuffered output."""
    env = dict(os.environ, LIBRA_CACHE_DIR=str(cache), PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_cli(*args: str, cache: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=cli_env(cache),
        check=False,
    )


def interrupt_and_wait(proc: subprocess.Popen, timeout: float = 30) -> None:
    """Stop a long-running libra command as a user would (Ctrl-C), killing it only if it does not exit in time."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``: what a stopped command must not leave behind."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive
