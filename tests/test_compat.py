"""Module paths of earlier releases keep importing, as the same module objects as their new homes.

Why: code written against an earlier layout (the README's Python API, scripts, notebooks) imports from the old
paths; the layout moved, the modules did not disappear. Each old path gives the very module that replaced it, so
an attribute set through the old name (``libra.runtime.snapshot.WATCH = False``) reaches the real module, and a
:class:`DeprecationWarning` names the new path.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from libra import _compat

#: What the README and docs of the earlier layout import, each with a name it takes from there.
OLD_IMPORTS = [
    ("libra.benchmarks.user", "ToolsBenchmark"),
    ("libra.tool_sources", "parse_spec"),
    ("libra.retrieval.graph_methods", "library_edges"),
    ("libra.retrieval.graph_methods", "obtain_library"),
    ("libra.retrieval.explain", "explained_retrieval"),
    ("libra.runtime.mcp_source", "McpSource"),
    ("libra.runtime.snapshot", "WATCH"),
    ("libra.bigtool", "retrieve_tools_function"),
    ("libra.project", "load_project"),
    ("libra.llm_client", "ChatClient"),
    ("libra.retrieval.embedders", "get_embedder"),
    ("libra.library_check", "library_schema"),
    ("libra.induction.engine", "BuildConfig"),
    ("libra.search_options", "SearchOptions"),
]


@pytest.mark.parametrize(("old", "name"), OLD_IMPORTS)
def test_old_paths_of_the_readme_still_import(old, name):
    code = f"import warnings; warnings.simplefilter('error', DeprecationWarning)\nfrom {old} import {name}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "DeprecationWarning" in out.stderr and "moved to" in out.stderr, out.stderr
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", f"from {old} import {name}"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("old", sorted(_compat.MOVED))
def test_every_moved_module_imports_under_its_old_name(old):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(old)
    target = _compat.MOVED[old]
    if isinstance(target, str):
        assert module is importlib.import_module(target)
        assert module.__spec__.name == target  # reload and pickling see the real name
    else:
        assert all(hasattr(importlib.import_module(t), "__name__") for t in target)


def test_an_attribute_set_through_the_old_name_reaches_the_module():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        old = importlib.import_module("libra.runtime.snapshot")
    from libra.runtime.python import snapshot

    before = snapshot.WATCH
    try:
        old.WATCH = not before
        assert snapshot.WATCH is (not before)
    finally:
        old.WATCH = before
