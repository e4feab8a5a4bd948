"""Ctrl-C on ``libra build`` and ``libra eval``: status 130, one ``interrupted`` line, no traceback, and no process
of the command left running.

Each command runs in its own session, and the test sends SIGINT to the whole process group as a terminal's
Ctrl-C does, so the tool workers receive it too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .cli_toys import MAIN, ROOT, cli_env, group_members


def _as_from_a_terminal() -> None:
    """A command started from a terminal has Ctrl-C's default disposition. A CI runner or ``nohup ... &`` may have
    started the tests with SIGINT ignored, which a child inherits (and Python then never raises
    KeyboardInterrupt), so the child gets the terminal's disposition back before it starts."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_after(marker: str, args: list[str], cache: Path) -> tuple[subprocess.Popen[str], str, str]:
    """Start ``libra ARGS``, wait for ``marker`` on its stdout (work has started), press Ctrl-C."""
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=cli_env(cache),
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line)
        if marker in line:
            break
    else:
        raise AssertionError(
            f"the command ended before {marker!r}: {''.join(seen)} {proc.stderr.read() if proc.stderr else ''}"
        )
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return proc, "".join(seen) + out, err


def _assert_interrupted(proc: subprocess.Popen[str], err: str) -> None:
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted", err
    assert err.count("interrupted") == 1 and "Traceback" not in err and "KeyboardInterrupt" not in err, err
    # The pool's workers and the process that forks them end with the command (the latter once it sees its
    # parent gone, so allow it a moment).
    deadline = time.monotonic() + 30
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert group_members(proc.pid) == []


def test_ctrl_c_during_build_exits_130(tmp_path):
    out = tmp_path / "lib.json"
    proc, _, err = _interrupt_after(
        "proposing and checking contracts",
        ["build", "slow-shop", "--out", str(out), "--workers", "2"],
        tmp_path / "cache",
    )
    _assert_interrupted(proc, err)
    assert not out.exists()
    assert not list(tmp_path.glob(".lib.json.*.tmp"))  # no temporary file of a checkpoint left behind


def test_ctrl_c_during_eval_exits_130(tmp_path):
    # The graph method needs the toy's library, which eval builds first (with isolated workers).
    proc, _, err = _interrupt_after(
        "building slow-shop's library once",
        ["eval", "slow-shop", "--method", "libra", "--embedder", "hash", "--workers", "1"],
        tmp_path / "cache",
    )
    _assert_interrupted(proc, err)
    assert not list((tmp_path / "cache" / "libraries").glob("*.json.gz"))


@pytest.fixture
def ctrl_c_raises():
    """Python's own Ctrl-C handler for the test's duration, whatever disposition the test run inherited."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_interrupts_deferred_holds_ctrl_c_until_the_step_ends(ctrl_c_raises):
    from libra._util.interrupts import interrupts_deferred

    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        done.append("the step went on")
    assert done == ["the step went on"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
