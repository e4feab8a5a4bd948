"""libra installs into an environment pinned to the lowest numpy it declares, and works there.

Why: ``onnx`` (once a dependency, for fusing the embedder's graph) pulls ``ml-dtypes``, whose recent releases need
numpy >= 2, so installing libra into an environment on numpy 1.26 upgraded numpy and broke the packages there.
``onnx`` is now the ``[onnx]`` extra (the embedder runs the model's own graph without it); this test installs
libra from this checkout into a fresh virtual environment that already holds the declared floor of numpy, checks
the floor is still there, and builds and searches the shop example with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def numpy_floor() -> str:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (spec,) = [d for d in deps if re.match(r"numpy\b", d)]
    return re.search(r">=\s*([0-9.]+)", spec).group(1)  # type: ignore[union-attr]


def test_numpy_is_not_required_beyond_its_floor_and_onnx_is_optional():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert numpy_floor() == "1.26"
    assert not any(d.startswith("onnx>") or d.startswith("onnx ") for d in pyproject["project"]["dependencies"])
    assert any(d.startswith("onnx") for d in pyproject["project"]["optional-dependencies"]["onnx"])


def test_an_environment_on_the_lowest_numpy_keeps_it_and_runs_libra(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(LIBRA_CACHE_DIR=str(tmp_path / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, env=env, timeout=300)
    python, bin_ = venv / "bin" / "python", venv / "bin"

    def run(*args: str, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=timeout, check=False)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        return out

    floor = numpy_floor()
    run(str(python), "-m", "pip", "install", "--quiet", f"numpy=={floor}.*")  # an environment pinned to the floor
    run(str(python), "-m", "pip", "install", "--quiet", str(ROOT))
    version = run(str(python), "-c", "import numpy; print(numpy.__version__)").stdout.strip()
    assert version.startswith(floor + "."), f"installing libra moved numpy to {version}"
    missing = subprocess.run([str(python), "-c", "import onnx"], capture_output=True, env=env, check=False)
    assert missing.returncode != 0  # not installed without the [onnx] extra
    shop = ROOT / "examples" / "shop"
    run(str(bin_ / "libra"), "build", "--tools", str(shop / "tools.py"), "--out", "shop.json", "--quiet")
    found = run(str(bin_ / "libra"), "retrieve", "shop.json", "cancel the order I just placed", "--format", "json")
    assert '"tool": "cancel_order"' in found.stdout and '"tool": "login"' in found.stdout
