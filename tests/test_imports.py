"""Modules that used to import each other stay importable on their own, and no import cycle runs through them.

The cycle check reads the source with :mod:`ast`, counting every import wherever it sits (module level, inside a
function, under ``TYPE_CHECKING``, or ``importlib.import_module("...")`` with a literal name): a lazy import
hides a cycle from the interpreter, not from a reader, and it is the layering that should have no cycle.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PYTHON_API = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
#: Modules that imported each other: evaluation <-> graph retrieval, BFCL's benchmark <-> its runtime.
FORMER_CYCLES = (
    "libra.eval.methods",
    "libra.eval.libraries",
    "libra.benchmarks.bfcl.adapter",
    "libra.benchmarks.bfcl.runtime",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def import_graph() -> dict[str, set[str]]:
    """libra module -> the libra modules it imports anywhere in its source."""
    files = {_module_name(p): p for p in (SRC / "libra").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node.level, node.module)
                deps.add(base)
                deps.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import submodule`
            elif (
                isinstance(node, ast.Call)
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                fn = node.func
                fname = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                if fname in ("import_module", "__import__"):
                    deps.add(node.args[0].value)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def _cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """An import path from ``start`` back to itself, if there is one."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for dep in graph.get(node, ()):
            if dep == start:
                return path + [start]
            if dep not in seen:
                seen.add(dep)
                stack.append((dep, path + [dep]))
    return None


def test_the_graph_reader_sees_lazy_imports():
    graph = import_graph()
    assert "libra.eval.libraries" in graph["libra.eval.methods"]  # imported inside the method factories
    assert "libra.benchmarks.bfcl.runtime" in graph["libra.benchmarks.bfcl.adapter"]
    assert "libra.induction.build" in graph["libra.eval.libraries"]  # under TYPE_CHECKING and in functions


@pytest.mark.parametrize("module", FORMER_CYCLES)
def test_no_import_cycle_runs_through(module):
    cycle = _cycle_through(import_graph(), module)
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize("module", FORMER_CYCLES)
def test_imports_first_in_a_fresh_interpreter(module):
    out = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def _readme_python_block(heading: str) -> str:
    """The first ```python block after the line that starts with ``heading`` on the Python API page."""
    text = PYTHON_API.read_text(encoding="utf-8")
    start = text.index(heading)
    match = re.search(r"```python\n(.*?)```", text[start:], re.DOTALL)
    assert match, f"no python block after {heading!r}"
    return match.group(1)


@pytest.mark.parametrize("heading", ["Score a retriever on a benchmark", "Retrieval over a built library"])
def test_readme_imports_still_resolve(heading):
    """The names the Python API page imports stay where it imports them from (moved names are re-exported)."""
    imports = "\n".join(
        line for line in _readme_python_block(heading).splitlines() if line.startswith(("from ", "import "))
    )
    assert imports
    out = subprocess.run([sys.executable, "-c", imports], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_moved_names_are_still_importable_from_their_old_modules():
    from libra.benchmarks.bfcl import adapter as bfcl
    from libra.benchmarks.bfcl import runtime as bfcl_runtime
    from libra.eval import libraries as graph_methods

    assert bfcl.load_catalog is bfcl_runtime.load_catalog and bfcl.to_json_schema is bfcl_runtime.to_json_schema
    assert bfcl.CLASSES == {c: (m, m) for c, m in bfcl_runtime.CLASS_MODULES.items()}
    for name in (
        "GRAPH_METHODS",
        "OPTION_KEYS",
        "default_library_path",
        "obtain_library",
        "library_edges",
        "candidate_edges",
    ):
        assert hasattr(graph_methods, name)
