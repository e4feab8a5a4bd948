"""BFCL v4 multi_turn_base as a retrieval benchmark (paper Appendix D).

Data comes from the ``bfcl-eval`` package (install it with ``pip install --no-deps bfcl-eval==2026.3.23 mpmath``:
its declared dependencies pull GBs of CUDA torch that neither the data nor the 8 backends need).

- Catalog: the 128 functions of the 8 multi-turn classes, named ``Class.function``.
- Query: every non-empty user message of every turn, in order, joined by newlines.
- Gold: the distinct fully qualified functions called in ``ground_truth`` (nested calls included), in the order
  they execute. The record's ``path`` field is deliberately not used: it is not the gold.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from libra.benchmarks.base import Benchmark, Task

# The catalog side lives with the runtime in :mod:`.bfcl_runtime` (one class table for both); these names are
# re-exported so ``from libra.benchmarks.bfcl.adapter import load_catalog`` keeps working.
from libra.benchmarks.bfcl.runtime import (  # noqa: F401 - re-exported
    CLASS_MODULES,
    INSTALL_HINT,
    load_catalog,
    make_bfcl_runtime,
    to_json_schema,
)
from libra.benchmarks.bfcl.runtime import data_dir as _data_dir
from libra.benchmarks.bfcl.runtime import raw_docs as _raw_docs
from libra.benchmarks.bfcl.runtime import read_jsonl as _read_jsonl
from libra.catalog import Catalog
from libra.errors import CatalogError, MissingDependencyError

#: class name -> (backend module under func_source_code, function-doc file stem): a view of
#: :data:`~libra.benchmarks.bfcl.runtime.CLASS_MODULES`, where the one table is kept (the two are the same name).
CLASSES: dict[str, tuple[str, str]] = {cls: (module, module) for cls, module in CLASS_MODULES.items()}

SPLIT = "BFCL_v4_multi_turn_base.json"

#: What the build's sandbox holds beyond BFCL's default scenario. That scenario's file system is a bare root, so
#: every tool that acts on an existing file or folder fails there, and a dependency such as "change into the
#: folder before reading its file" can never be observed. Likewise the posting backend starts without a single
#: post, so nothing can be shared or commented on before the sandbox account posts one itself. What is added is
#: ours (no task's): a working folder with a text file and a sub-folder holding another file and an empty folder,
#: and one earlier post of the sandbox account. The other classes' defaults already hold users, stocks and accounts.
SANDBOX_SCENARIO: dict[str, Any] = {
    "TwitterAPI": {
        "tweets": {
            "0": {"id": 0, "username": "john", "content": "A first post in the sandbox", "tags": [], "mentions": []}
        },
        "tweet_counter": 1,
    },
    "GorillaFileSystem": {
        "root": {
            "workspace": {
                "type": "directory",
                "contents": {
                    "readme.txt": {"type": "file", "content": "Welcome to the workspace.\nSee the docs folder."},
                    "docs": {
                        "type": "directory",
                        "contents": {
                            "summary.txt": {"type": "file", "content": "First line\nSecond line\nTotal: 42"},
                            "old": {"type": "directory", "contents": {}},
                        },
                    },
                },
            }
        }
    },
}


def data_dir() -> Path:
    """bfcl-eval's data folder, with this benchmark's task split in it."""
    path = _data_dir()
    if not (path / SPLIT).exists():
        raise MissingDependencyError(
            f"bfcl-eval is installed but {path / SPLIT} is missing: reinstall it ({INSTALL_HINT})"
        )
    return path


def called_functions(call: str) -> list[str]:
    """Function names called in one ground-truth call string, inner calls first (execution order)."""
    try:
        tree = ast.parse(call.strip(), mode="eval")
    except SyntaxError as exc:
        raise CatalogError(f"unparseable BFCL ground-truth call {call!r}: {exc.msg}") from None
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            visit(child)
        if isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Name):
                names.append(fn.id)
            elif isinstance(fn, ast.Attribute):
                names.append(fn.attr)

    visit(tree)
    return names


def load_tasks() -> list[Task]:
    root = data_dir()
    records = _read_jsonl(root / SPLIT)
    answers = {a["id"]: a for a in _read_jsonl(root / "possible_answer" / SPLIT)}
    qualify = {doc["name"]: f"{cls}.{doc['name']}" for cls, doc in _raw_docs()}
    tasks: list[Task] = []
    for rec in records:
        ans = answers.get(rec["id"])
        if ans is None:
            raise CatalogError(
                f"BFCL task {rec['id']!r} has no possible_answer record: reinstall bfcl-eval ({INSTALL_HINT})"
            )
        messages = [
            m["content"].strip()
            for turn in rec["question"]
            for m in turn
            if m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"].strip()
        ]
        gold: list[str] = []
        for turn in ans["ground_truth"]:
            for call in turn:
                for fn in called_functions(call):
                    if fn not in qualify:
                        raise CatalogError(
                            f"BFCL task {rec['id']!r} calls {fn!r}, which is not in the multi-turn catalog"
                        )
                    gold.append(qualify[fn])
        tasks.append(
            Task(
                id=rec["id"],
                query="\n".join(messages),
                gold=tuple(gold),
                metadata={
                    "initial_config": rec.get("initial_config", {}),
                    "involved_classes": rec.get("involved_classes", []),
                },
            )
        )
    return tasks


class BFCLBenchmark(Benchmark):
    name = "bfcl"
    description = "BFCL v4 multi_turn_base: 200 multi-turn tasks over 128 functions of 8 stateful API classes"
    default_k = 15
    contract_rules = "stateful"  # the paper adds its stateful-tool rules for BFCL (Figure 7)
    paper = {
        "bm25": (26.2, 75.5, 69.5),
        "dense": (28.6, 81.8, 76.2),
        "libra": (30.6, 86.4, 78.4),
    }
    paper_notes = {"dense": "paper: QTS with Qwen3-Embedding-0.6B"}

    def catalog(self) -> Catalog:
        return load_catalog()

    def tasks(self) -> list[Task]:
        return load_tasks()

    def split_stratum(self, task: Task) -> str:
        """The API classes a task involves: both halves hold each combination in the same proportion."""
        return "+".join(sorted(task.metadata.get("involved_classes") or []))

    def fixtures(self) -> dict[str, Any]:
        """The sandbox account of BFCL's default scenario (the posting backend's DEFAULT_STATE credentials).

        A sandbox's own test account is something its operator knows, like AppWorld's supervisor; without it no
        sign-in could ever succeed from the default state, because no public tool reveals a password.
        """
        from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import posting_api

        state = posting_api.DEFAULT_STATE
        return {"username": state["username"], "password": state["password"]}

    def runtime(self, **kwargs: Any):
        """The runtime library construction explores: BFCL's default scenario plus :data:`SANDBOX_SCENARIO`
        (pass ``initial_config`` for another starting state, e.g. a task's)."""
        kwargs.setdefault("initial_config", SANDBOX_SCENARIO)
        return make_bfcl_runtime(**kwargs)
