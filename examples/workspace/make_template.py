"""Create this example's sandbox template: a project folder that is a git repository with one commit.

A git repository cannot be committed inside another, so the template is made here rather than kept in the
project. Commits use the same pinned identity and date as the MCP runtime gives its servers, so the template's
commit hash is the same on every machine. Run it once before the first build; it replaces an existing template.

    python examples/workspace/make_template.py [DIR]    # DIR defaults to examples/workspace/template
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from libra.runtime.mcp.client import pinned_environment

HERE = Path(__file__).resolve().parent


def make_template(root: Path = HERE / "template") -> Path:
    """Write the template under ``root`` and return it."""
    shutil.rmtree(root, ignore_errors=True)
    repo = root
    repo.mkdir(parents=True)
    env = {**os.environ, **pinned_environment()}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "README.md").write_text("# demo\n")
    (repo / "notes").mkdir()
    (repo / "notes" / "todo.txt").write_text("buy milk\n")
    subprocess.run(["git", "-C", str(repo), "add", "README.md", "notes"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "initial commit"], check=True, env=env)
    return root


if __name__ == "__main__":
    print(make_template(Path(sys.argv[1]).absolute() if len(sys.argv) > 1 else HERE / "template"))
