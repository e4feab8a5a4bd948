"""The house rules a newcomer relies on, checked so they cannot drift.

- Small modules and functions: no module over 800 lines and no function over 100, except those listed with their
  reason in ``[tool.libra-dev.size-exceptions]`` of pyproject.toml (a listed exception that no longer needs to be
  one is an error too, so the list stays true).
- ``docs/architecture.md`` shows the packages as they are: every package of ``src/libra`` and only those, in the
  order of the import-linter layers of pyproject.toml (which ``make lint`` enforces).
- No docstring or comment cites an issue or defect number: the reason is written out instead, since an issue
  tracker's numbers mean nothing to a reader of the code.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "libra"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXCEPTIONS = PYPROJECT["tool"]["libra-dev"]["size-exceptions"]
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_modules_are_small():
    too_long = {
        _rel(p): n for p in _modules() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    allowed = EXCEPTIONS.get("modules", {})
    assert set(too_long) - set(allowed) == set(), f"modules over {MAX_MODULE_LINES} lines: {too_long}"
    assert set(allowed) - set(too_long) == set(), "listed as exceptions but no longer long: remove them"


def _functions(path: Path) -> dict[str, int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out[name] = child.end_lineno - child.lineno + 1
                walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def test_functions_are_small():
    too_long = {
        f"{_rel(p)}:{name}": n for p in _modules() for name, n in _functions(p).items() if n > MAX_FUNCTION_LINES
    }
    allowed = EXCEPTIONS.get("functions", {})
    assert set(too_long) - set(allowed) == set(), f"functions over {MAX_FUNCTION_LINES} lines: {too_long}"
    assert set(allowed) - set(too_long) == set(), "listed as exceptions but no longer long: remove them"


def test_every_exception_says_why():
    for kind in ("modules", "functions"):
        for where, why in EXCEPTIONS.get(kind, {}).items():
            assert isinstance(why, str) and len(why.split()) >= 5, f"{where}: give the reason in a sentence"


_CITATION = re.compile(r"\b(?:issue|defect)s?\s+#?\d+|\(#\d+\)|\bissue\s+\d+\b", re.IGNORECASE)


def _prose(path: Path) -> list[tuple[int, str]]:
    """Comments and docstrings of a module, with their line numbers."""
    text = path.read_text(encoding="utf-8")
    out = [
        (t.start[0], t.string)
        for t in tokenize.generate_tokens(io.StringIO(text).readline)
        if t.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((getattr(node, "lineno", 1), doc))
    return out


def test_no_docstring_or_comment_cites_an_issue_number():
    files = [*_modules(), *sorted((ROOT / "tests").glob("*.py")), *sorted((ROOT / "benchmarks").glob("*.py"))]
    cited = [f"{_rel(p)}:{line}" for p in files for line, text in _prose(p) if _CITATION.search(text)]
    assert cited == [], "cite the reason, not the issue: " + ", ".join(cited)


def _documented_packages() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- layout -->\n```text\n(.*?)```", text, re.DOTALL)
    assert block, "docs/architecture.md has no layout block"
    return [m.group(1).rstrip("/") for line in block.group(1).splitlines() if (m := re.match(r"  (\S+/)\s", line))]


def test_architecture_lists_every_package_in_layer_order():
    packages = sorted(p.parent.relative_to(SRC).parts[0] for p in SRC.glob("*/__init__.py"))
    documented = _documented_packages()
    assert sorted(documented) == packages, "docs/architecture.md must list exactly the packages of src/libra"
    layers = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["type"] == "layers")["layers"]
    ordered = [name for layer in reversed(layers) for name in re.split(r"[|:]", layer) if name.strip() in documented]
    assert documented == [n.strip() for n in ordered], "list the packages bottom-up, in the order of the layers"
