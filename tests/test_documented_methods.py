"""Every retrieval method the documentation lists runs through ``libra eval`` on the command line.

Why: a method the README or the command-line page names must be one ``--method`` accepts and runs; the SciToolKG
row was once refused at parse time because its name became known only when its benchmark was imported. The
documented names are read from the pages themselves (``--method NAME`` anywhere, and the methods table of
``docs/cli.md``), compared with :data:`libra.eval.methods.METHODS`, and each is run in a subprocess: the four LLM
methods against the scripted local endpoint, the others on the toy shop with the hash embedder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from libra.contracts.llm.stub_server import OpenAIStubServer
from libra.eval.baselines.scripted import MethodResponder
from libra.eval.methods import METHODS

from .cli_toys import ROOT, run_cli

PAGES = [ROOT / "README.md", ROOT / "docs" / "cli.md"]
LLM_METHODS = {"toolrex", "tgr-adapt", "ego-trip", "toolreagt"}


def documented_methods() -> set[str]:
    found: set[str] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found |= set(re.findall(r"--method ([a-z][a-z0-9-]*)", text))
    table = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("| method |", 1)[1].split("\n\n", 1)[0]
    found |= set(re.findall(r"^\| `([a-z][a-z0-9-]*)` \|", table, re.MULTILINE))
    return found


def test_the_documentation_lists_every_method_and_no_other():
    assert documented_methods() == set(METHODS)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("methods-cache")  # one library of the toy shop, built once for the graph methods


@pytest.mark.parametrize("method", sorted(documented_methods()))
def test_every_documented_method_runs_through_the_cli(method, cache, tmp_path):
    results = tmp_path / "results.json"
    if method == "scitoolkg":
        args = ["eval", "scitooleval", "--method", method]
    else:
        args = ["eval", "shop-tasks", "--method", method, "--k", "3"]
    args += ["--embedder", "hash", "--json", str(results)]
    if method in LLM_METHODS:
        from libra.benchmarks.registry import get_benchmark

        from . import cli_toys  # noqa: F401 - registers shop-tasks

        extra = ["--base", "dense", "--iterations", "2"] if method == "toolreagt" else []
        with OpenAIStubServer(MethodResponder(get_benchmark("shop-tasks").catalog())) as srv:
            out = run_cli(*args, "--llm-base-url", srv.url, "--llm-model", "stub", *extra, cache=cache)
    else:
        out = run_cli(*args, cache=cache)
    assert out.returncode == 0, out.stderr
    [row] = json.loads(results.read_text())["results"]
    assert row["method"] == method and 0 <= row["recall"] <= 100
