"""AppWorld as a retrieval benchmark with an executable runtime (paper §4.1, Appendix D).

- Tasks: the 147 AppWorld tasks with public required-API annotations (90 train, 57 dev). They ship encrypted in
  ``data/appworld/retrieval_tasks.bundle`` (AppWorld's license requires encrypted redistribution) and are
  decrypted at run time, with the ``appworld`` package's own ``unpack_bundle``, into
  ``<libra cache>/appworld/`` (never into the source tree). Query = the task instruction; gold = its
  ``required_apis``. Users with the official ``appworld download data`` folder can use it instead: set
  ``LIBRA_APPWORLD_DATA=/path/to/data`` (or pass ``data_dir=``); then ``datasets/{train,dev}.txt`` list the
  tasks, ``tasks/<id>/specs.json`` gives the instruction and ``tasks/<id>/ground_truth/compiled_solution.py``
  the gold (distinct ``apis.APP.API`` names, AppWorld's own definition).
- Catalog: the public APIs that ``ApiDocCollection.build()`` generates offline (457 over 11 apps), named
  ``app.api_name``; AppWorld's parameter lists become JSON Schema (types, required, defaults, descriptions and
  the constraints AppWorld states: lengths, bounds, enums, e-mail format); the documented success response
  becomes a response schema. Generated once in the AppWorld environment and cached as JSON.
- Runtime: :class:`~libra.runtime.workers.remote.RemoteRuntime` servers running ``server.py`` in AppWorld's own
  virtual environment (see :mod:`.appworld_env`; the package cannot share ours).

Everything that needs the ``appworld`` package runs in that environment; without it every entry point ends in
one error line saying how to create it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from libra.benchmarks.appworld import env as appworld_env
from libra.benchmarks.appworld.server import CONTACT, SUPERVISOR
from libra.benchmarks.base import Benchmark, Task
from libra.catalog import Catalog, Tool
from libra.errors import CatalogError, ConfigError, MissingDependencyError

BUNDLE = "retrieval_tasks.bundle"
SERVER_FILE = Path(__file__).with_name("server.py")
SPLITS = ("train", "dev")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def cache_folder() -> Path:
    from libra.embeddings.embedders import cache_dir

    return cache_dir() / "appworld"


def bundle_path() -> Path:
    return Path(str(resources.files("libra.benchmarks.appworld") / "data" / BUNDLE))


def _run_in_env(*args: str, timeout: float = 600.0) -> None:
    """Run ``server.py ARGS`` under the AppWorld interpreter; one error line on failure."""
    python = appworld_env.require_env()
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            [str(python), "-I", "-W", "ignore", str(SERVER_FILE), *args],
            env=appworld_env.appworld_env_vars(appworld_root=folder / "root"),
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise MissingDependencyError(
            f"the AppWorld environment did not finish '{args[0]}' within {timeout:.0f}s: re-create it "
            f"({appworld_env.SETUP_HINT} --force)"
        ) from None
    if proc.returncode != 0:
        tail = " | ".join(proc.stderr.strip().splitlines()[-2:])
        raise MissingDependencyError(
            f"the AppWorld environment failed '{args[0]}' ({tail}): re-create it ({appworld_env.SETUP_HINT} --force)"
        )


# ---------------------------------------------------------------------------------------------------------------
# tasks
# ---------------------------------------------------------------------------------------------------------------
def decrypted_tasks_file() -> Path:
    """``tasks.jsonl`` of the bundle, decrypted into the cache on first use (re-done when the bundle changes)."""
    bundle = bundle_path()
    if not bundle.exists():
        raise CatalogError(f"the AppWorld task bundle {bundle} is missing: reinstall libra-tools")
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    folder = cache_folder()
    target = folder / "appworld_retrieval" / "tasks.jsonl"
    stamp = folder / "bundle.sha256"
    if target.exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return target
    _run_in_env("decrypt", str(bundle), str(folder))
    if not target.exists():
        raise CatalogError(
            f"decrypting {bundle.name} did not produce {target}: the bundle may be damaged; reinstall libra-tools"
        )
    stamp.write_text(digest + "\n")
    return target


def _read_bundle_tasks() -> list[Task]:
    path = decrypted_tasks_file()
    tasks = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            tasks.append(
                Task(
                    id=rec["id"],
                    query=rec["instruction"],
                    gold=tuple(rec["required_apis"]),
                    metadata={"split": rec["split"], **rec.get("metadata", {})},
                )
            )
        except (json.JSONDecodeError, KeyError) as exc:
            raise CatalogError(
                f"{path}:{n} is not a valid task record ({exc}): delete {path.parent} to decrypt again"
            ) from None
    return tasks


def _read_official_tasks(data_dir: Path) -> list[Task]:
    """Tasks from an official ``appworld download data`` folder (train + dev, the splits with ground truth)."""
    tasks = []
    for split in SPLITS:
        listing = data_dir / "datasets" / f"{split}.txt"
        try:
            ids = [i.strip() for i in listing.read_text(encoding="utf-8").splitlines() if i.strip()]
        except OSError:
            raise CatalogError(
                f"{listing} is missing: LIBRA_APPWORLD_DATA must point at AppWorld's data/ folder"
            ) from None
        for task_id in ids:
            folder = data_dir / "tasks" / task_id
            try:
                specs = json.loads((folder / "specs.json").read_text(encoding="utf-8"))
                code = (folder / "ground_truth" / "compiled_solution.py").read_text(encoding="utf-8")
            except (OSError, json.JSONDecodeError) as exc:
                raise CatalogError(
                    f"AppWorld task {task_id}: cannot read specs.json / ground_truth/compiled_solution.py "
                    f"({exc.__class__.__name__}): check {folder}"
                ) from None
            gold = sorted(set(re.findall(r"apis\.(\w+\.\w+)", code)))
            tasks.append(Task(id=task_id, query=specs["instruction"], gold=tuple(gold), metadata={"split": split}))
    return tasks


# ---------------------------------------------------------------------------------------------------------------
# catalog
# ---------------------------------------------------------------------------------------------------------------
def raw_api_docs() -> list[dict[str, Any]]:
    """AppWorld's public API docs (standard format), generated in the AppWorld environment and cached."""
    path = cache_folder() / "api_docs.json"
    if not path.exists():
        _run_in_env("catalog", str(path))
    try:
        docs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        raise CatalogError(f"the cached AppWorld catalog {path} is unreadable: delete it to regenerate") from None
    if not isinstance(docs, list) or not docs:
        raise CatalogError(f"the cached AppWorld catalog {path} is empty: delete it to regenerate")
    return docs


def _type_schema(type_text: str) -> dict[str, Any]:
    """AppWorld's type strings ("string", "list[number]", "number | integer | string") as JSON Schema."""
    alts = []
    for part in (p.strip() for p in type_text.split("|")):
        m = re.fullmatch(r"list\[(\w+)\]", part)
        alts.append({"type": "array", "items": {"type": m.group(1)}} if m else {"type": part})
    if len(alts) == 1:
        return alts[0]
    if all(set(a) == {"type"} for a in alts):
        return {"type": [a["type"] for a in alts]}
    return {"anyOf": alts}


def _number(text: str, integer: bool) -> int | float:
    value = float(text)
    return int(value) if integer and value.is_integer() else value


def apply_constraints(schema: dict[str, Any], constraints: list[str]) -> dict[str, Any]:
    """Turn AppWorld's constraint phrases (its ``parse_constraints`` output) back into JSON Schema keywords.

    Grammar: "length >= A, <= B", "value >= A, > B, <= C, < D", "value in [...]", "value is email address".
    Phrases that do not parse are kept verbatim under ``x-constraints`` rather than dropped.
    """
    out = dict(schema)
    integer = out.get("type") == "integer"
    is_array = out.get("type") == "array"
    unparsed = []
    for phrase in constraints:
        head, _, rest = phrase.partition(" ")
        try:
            if head == "length":
                for cmp in rest.split(","):
                    op, num = cmp.split()
                    key = {
                        ">=": "minItems" if is_array else "minLength",
                        "<=": "maxItems" if is_array else "maxLength",
                    }[op]
                    out[key] = int(float(num))
            elif head == "value" and rest.startswith("in "):
                out["enum"] = list(ast.literal_eval(rest[3:]))
            elif head == "value" and rest == "is email address":
                out["format"] = "email"
            elif head == "value":
                for cmp in rest.split(","):
                    op, num = cmp.split()
                    key = {">=": "minimum", ">": "exclusiveMinimum", "<=": "maximum", "<": "exclusiveMaximum"}[op]
                    out[key] = _number(num, integer)
            else:
                unparsed.append(phrase)
        except (ValueError, KeyError, SyntaxError):
            unparsed.append(phrase)
    if unparsed:
        out["x-constraints"] = unparsed
    return out


def example_schema(example: Any) -> dict[str, Any]:
    """A JSON Schema for one of AppWorld's documented response examples (placeholders of the right types)."""
    if isinstance(example, dict):
        return {"type": "object", "properties": {k: example_schema(v) for k, v in example.items()}}
    if isinstance(example, list):
        return {"type": "array", "items": example_schema(example[0]) if example else {}}
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    if isinstance(example, str):
        return {"type": "string", "format": "date-time"} if _DATETIME.match(example) else {"type": "string"}
    return {}


def doc_to_tool(doc: dict[str, Any]) -> Tool:
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in doc.get("parameters", []):
        schema = _type_schema(str(p.get("type", "string")))
        schema["description"] = p.get("description", "")
        if p.get("required"):
            required.append(p["name"])
        else:
            schema["default"] = p.get("default")
        props[p["name"]] = apply_constraints(schema, list(p.get("constraints") or []))
    responses = doc.get("response_schemas") or {}
    response = example_schema(responses["success"]) if "success" in responses else None
    return Tool(
        name=f"{doc['app_name']}.{doc['api_name']}",
        description=doc.get("description", ""),
        parameters={"type": "object", "properties": props, "required": required},
        response=response,
        group=doc["app_name"],
        metadata={"path": doc.get("path"), "method": doc.get("method"), "failure_response": responses.get("failure")},
    )


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    return Catalog([doc_to_tool(d) for d in raw_api_docs()], name="appworld")


# ---------------------------------------------------------------------------------------------------------------
# runtime
# ---------------------------------------------------------------------------------------------------------------
def make_appworld_runtime(
    workers: int | None = None, timeout_s: float = 30.0, memory_mb: float | None = 2048, **kwargs: Any
):
    """``workers`` AppWorld servers (default: CPU count) in the AppWorld environment, behind the Runtime protocol."""
    from libra.runtime.workers.remote import RemoteRuntime

    python = appworld_env.require_env()
    n = kwargs.pop("n_workers", workers)
    if n is not None and n < 1:
        raise ConfigError("the AppWorld runtime runs out of process: use --workers 1 or more")
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    return RemoteRuntime(
        python,
        SERVER_FILE,
        catalog=load_catalog(),
        n_servers=n,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        env={**appworld_env.appworld_env_vars(appworld_root=folder / "root"), "PYTHONWARNINGS": "ignore"},
        cwd=folder,
        name="appworld",
        **kwargs,
    )


# ---------------------------------------------------------------------------------------------------------------
# the benchmark
# ---------------------------------------------------------------------------------------------------------------
class AppWorldBenchmark(Benchmark):
    name = "appworld"
    description = "AppWorld: 147 train/dev tasks with public required-API annotations over 457 APIs of 11 apps"
    default_k = 15
    paper = {
        "bm25": (10.9, 20.0, 18.8),
        "dense": (15.5, 28.7, 32.8),
        "libra": (21.8, 40.7, 39.1),
    }
    paper_notes = {
        "bm25": (
            "the dataset README measures 16.6/31.9/34.8 with the paper's own BM25 settings; the paper's protocol "
            "differs somewhere"
        ),
        "dense": "paper: QTS with Qwen3-Embedding-0.6B",
    }

    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        env = os.environ.get("LIBRA_APPWORLD_DATA")
        self.data_dir = Path(data_dir or env).expanduser() if (data_dir or env) else None

    def catalog(self) -> Catalog:
        return load_catalog()

    def tasks(self) -> list[Task]:
        tasks = _read_official_tasks(self.data_dir) if self.data_dir else _read_bundle_tasks()
        names = set(self.catalog().names)
        for t in tasks:
            unknown = [g for g in t.gold if g not in names]
            if unknown:
                raise CatalogError(
                    f"AppWorld task {t.id} needs {unknown[0]!r}, which is not in the generated catalog: "
                    f"regenerate it (delete {cache_folder() / 'api_docs.json'})"
                )
        return tasks

    def split_unit(self, task: Task) -> str:
        """The scenario: AppWorld phrases each scenario as three tasks (``<scenario>_1`` .. ``_3``) with the same
        tools, so the three stay in one half."""
        return task.id.rsplit("_", 1)[0]

    def split_stratum(self, task: Task) -> str:
        """AppWorld's own split (train, dev) and the scenario's difficulty."""
        return f"{task.metadata.get('split', '')}/{task.metadata.get('difficulty', '')}"

    def fixtures(self) -> dict[str, Any]:
        """What the sandbox's operator knows: the made-up supervisor's e-mail and phone number. Never the apps'
        passwords: those are only readable through ``supervisor.show_account_passwords``."""
        return {"email": SUPERVISOR["email"], "phone_number": SUPERVISOR["phone_number"]}

    def runtime(self, **kwargs: Any):
        return make_appworld_runtime(**kwargs)


__all__ = ["AppWorldBenchmark", "CONTACT", "SUPERVISOR", "load_catalog", "make_appworld_runtime"]
