"""Evaluation methods are named in one static table (``libra.eval.methods.METHODS``): every name is known, to
check ``--method`` and write its help, without importing any benchmark, and benchmarks never import evaluation.

``scitoolkg`` is the case that needs it: its retriever lives in the SciToolEval adapter, so a method that only
became known when that adapter was imported was refused at parse time by ``libra eval scitooleval``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from libra.errors import ConfigError
from libra.eval.methods import METHODS, EvalOptions, available_methods, check_method, get_method

from .cli_toys import ROOT, cli_env
from .induction_toys import ShopBenchmark
from .test_imports import import_graph


def test_every_method_resolves_to_its_factory():
    assert available_methods() == sorted(METHODS)
    for name in METHODS:
        assert callable(get_method(name)), name
    assert check_method("  SciToolKG ") == "scitoolkg"
    with pytest.raises(ConfigError, match="unknown method 'magic'"):
        check_method("magic")


def test_method_names_are_known_without_importing_a_benchmark():
    code = (
        "import sys\n"
        "from libra.eval.methods import check_method, method_help\n"
        "check_method('scitoolkg')\n"
        "assert 'scitoolkg' in method_help()\n"
        "print(sorted(m for m in sys.modules if m.startswith('libra.benchmarks.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "scitooleval" not in out.stdout and "bfcl" not in out.stdout, out.stdout


def test_benchmarks_never_import_evaluation():
    graph = import_graph()
    wrong = {m: sorted(d for d in deps if d.startswith("libra.eval")) for m, deps in graph.items()}
    assert {m: d for m, d in wrong.items() if m.startswith("libra.benchmarks") and d} == {}


def test_scitoolkg_needs_scitooleval():
    bench = ShopBenchmark()
    with pytest.raises(ConfigError, match="needs the SciToolKG graph of benchmark 'scitooleval', not 'shop'"):
        get_method("scitoolkg")(bench, bench.catalog(), EvalOptions())


def test_eval_scitooleval_with_scitoolkg_through_the_cli(tmp_path):
    """The whole command in a subprocess: accepted at parse time, scored, printed beside the paper's row."""
    out_json = tmp_path / "kg.json"
    args = ["eval", "scitooleval", "--method", "scitoolkg", "--embedder", "hash", "--json", str(out_json)]
    env = dict(cli_env(tmp_path / "cache"), COLUMNS="200")
    out = subprocess.run(
        [sys.executable, "-m", "libra.cli", *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert out.returncode == 0, out.stderr
    row = next((line for line in out.stdout.splitlines() if "scitoolkg" in line), "")
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[0] == "scitoolkg" and cells[4:7] == ["12.6", "89.7", "82.5"], out.stdout  # beside the paper's row
    results = json.loads(out_json.read_text())["results"]
    assert [r["method"] for r in results] == ["scitoolkg"] and 0 < results[0]["recall"] <= 100
