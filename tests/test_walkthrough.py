"""The walk-through of ``docs/getting-started.md``, run exactly as written, from a fresh directory.

Why: the walk-through is the first hour of a new user (a wheel installed into a fresh virtual environment, a
library built from ``examples/``, an agent's ``search_tools`` over MCP), and a walk-through that no longer runs
sends every new user the wrong way. The test takes the page's blocks between ``<!-- walkthrough -->`` markers in
order: ``bash`` blocks are run as they are, a block with a ``title="FILE"`` is written to that file first, and
the ``text`` block after the last command is the output the page promises, which the run must print.

Nothing of this checkout leaks in: the run has no ``PYTHONPATH``, so ``libra`` is the installed wheel. pip
fetches the wheel's dependencies from the configured index, as a user's install would.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "getting-started.md"
ROOT = PAGE.parents[1]
_BLOCK = re.compile(r"```(\w+)([^\n]*)\n(.*?)```", re.DOTALL)


def walkthrough() -> tuple[str, list[str]]:
    """The walk-through as one bash script, and the lines of the output it promises."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("<!-- walkthrough -->", 1)[1].split("<!-- /walkthrough -->", 1)[0]
    script, promised = ["set -euo pipefail"], []
    for lang, info, body in _BLOCK.findall(section):
        title = re.search(r'title="([^"]+)"', info)
        if title:
            script.append(f"cat > {title.group(1)} <<'LIBRA_WALKTHROUGH_FILE'\n{body}LIBRA_WALKTHROUGH_FILE")
        elif lang == "bash":
            script.append(body)
        elif lang == "text":
            promised += [line for line in body.splitlines() if line.strip()]
    return "\n".join(script) + "\n", promised


def test_the_page_has_a_walkthrough_from_a_wheel_to_search_over_mcp():
    script, promised = walkthrough()
    assert "pip install" in script and ".whl" in script and "examples/" in script
    assert "libra build" in script and "python search.py" in script and "search_tools" in script
    assert promised


def test_the_walkthrough_runs_as_written(tmp_path):
    script, promised = walkthrough()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(LIBRA_CLONE=str(ROOT), LIBRA_CACHE_DIR=str(tmp_path / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    out = subprocess.run(
        ["bash", "-c", script], cwd=fresh, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = [line.rstrip() for line in out.stdout.splitlines()]
    assert "tools: search_tools" in lines, out.stdout[-3000:]
    for line in promised:
        assert line.rstrip() in lines, f"the page promises {line!r}:\n{out.stdout[-3000:]}"
    assert "may need login" in out.stdout  # the text form an agent reads, with its evidence
    # the installed wheel ran, not this checkout
    where = subprocess.run(
        [str(fresh / "venv" / "bin" / "python"), "-c", "import libra; print(libra.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert str(fresh / "venv") in where and str(ROOT / "src") not in where
