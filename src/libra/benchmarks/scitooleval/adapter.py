"""SciToolEval (SciToolAgent, Ding et al. 2025) as a retrieval benchmark, with an offline runtime and SciToolKG.

Data: ``benchmarks/data/scitooleval/`` (MIT, see the NOTICE there): the 477-tool catalog, the level-1/level-2
questions, the level-1 reference answers (for the inputs the reference runs used) and the SciToolKG graph.

- Catalog: every tool keeps its upstream name. Upstream every tool takes one string, so each tool has one string
  parameter: the upstream argument name when there is one; ``smiles`` for argument-less SMILES tools; ``input``
  when several upstream arguments are packed into the one string. ``executable`` is true exactly for the tools
  implemented offline in :mod:`libra.benchmarks.scitooleval.tools`.
- Tasks: 152 level-1 + 379 level-2 records, ids ``level1-0007`` (split + 0-based row). Query = ``question``;
  gold = the distinct tools of ``tool_path`` in order, with two misspelled gold names mapped to catalog names
  (:data:`GOLD_FIXES`). :meth:`SciToolEvalBenchmark.tasks` returns the frozen executable subset
  (``frozen_subset.json``, written by ``benchmarks/freeze_scitooleval.py``) unless built with ``subset="all"``.
- SciToolKG: :func:`scitoolkg_retriever` (see :class:`SciToolKGRetriever`), the evaluation method ``scitoolkg``.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from libra.benchmarks.base import Benchmark, Task
from libra.catalog import Catalog, Tool
from libra.errors import CatalogError, ConfigError, MissingDependencyError
from libra.values.prose import encoded_format

INSTALL_HINT = "pip install 'libra-tools[scitooleval]'"
DATA_PACKAGE = "libra.benchmarks.scitooleval"
DATA_DIR = "data"
SPLITS = ("level1", "level2")
FROZEN_FILE = "frozen_subset.json"
FROZEN_VERSION = 1

#: gold names in the released tool paths that are not catalog names -> the catalog tool they mean
GOLD_FIXES: dict[str, str] = {"GetFrtool_pathCSP3": "GetFractionCSP3", "LengthSELFIES": "Length_SELFIES"}


# ---------------------------------------------------------------------------------------------------------------
# data files
# ---------------------------------------------------------------------------------------------------------------
def _data_text(name: str) -> str:
    root = resources.files(DATA_PACKAGE).joinpath(DATA_DIR)
    try:
        if (root / f"{name}.gz").is_file():
            return gzip.decompress((root / f"{name}.gz").read_bytes()).decode("utf-8")
        return (root / name).read_text(encoding="utf-8")
    except (OSError, EOFError) as exc:
        raise CatalogError(
            f"cannot read SciToolEval data file {name!r} ({exc.__class__.__name__}): reinstall libra-tools"
        ) from None


def _jsonl(name: str) -> list[dict[str, Any]]:
    out = []
    for i, line in enumerate(_data_text(name).splitlines()):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                raise CatalogError(
                    f"SciToolEval file {name!r} line {i + 1} is not JSON: reinstall libra-tools"
                ) from None
    return out


@functools.lru_cache(maxsize=1)
def raw_catalog() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(_data_text("catalog.json")))


@functools.lru_cache(maxsize=1)
def graph_store() -> dict[str, list[list[str]]]:
    """SciToolKG as released: node -> [[relation, node], ...]."""
    return json.loads(_data_text("graph_store.json"))["graph_dict"]


@functools.lru_cache(maxsize=1)
def executable_names() -> frozenset[str]:
    """Names of the tools implemented offline (importing the module does not need RDKit)."""
    from libra.benchmarks.scitooleval import tools as scitooleval_tools
    from libra.runtime.python.runtime import public_functions

    return frozenset(public_functions(scitooleval_tools))


# ---------------------------------------------------------------------------------------------------------------
# catalog
# ---------------------------------------------------------------------------------------------------------------
def parameter_name(rec: Mapping[str, Any]) -> str:
    """The one string parameter of a tool, named after the upstream convention."""
    args = [a for a in rec.get("upstream_args") or [] if isinstance(a, str) and a]
    if len(args) == 1:
        return args[0]
    if not args and [str(i).strip().lower() for i in rec.get("inputs") or []] == ["smiles"]:
        return "smiles"
    return "input"


def _parameter_description(rec: Mapping[str, Any], name: str) -> str:
    inputs = ", ".join(str(i) for i in rec.get("inputs") or [])
    args = rec.get("upstream_args") or []
    if name == "input" and len(args) > 1:
        return f"{', '.join(args)} packed into one string, separated by commas" + (f" ({inputs})" if inputs else "")
    return inputs or name


def _description(rec: Mapping[str, Any]) -> str:
    desc = (rec.get("description") or "").strip()
    doc = (rec.get("docstring") or "").strip()
    if doc and doc != desc and not (desc and doc.startswith(desc) and len(doc) < len(desc) + 3):
        return f"{desc}\n\n{doc}" if desc else doc
    return desc or rec["name"]


#: Short, valid examples of the encodings SciToolEval's tools take (ethanol, a short peptide, ...), keyed by the
#: encoding's name (:data:`libra.values.prose.ENCODED_KINDS`). They are the catalog's own knowledge, so they
#: are written into the parameters as JSON Schema ``examples``; the generic proposer reads examples but invents no
#: molecules.
ENCODED_EXAMPLES: dict[str, str] = {
    "inchikey": "LFQSCWFLJHTTHZ-UHFFFAOYSA-N",
    "inchi": "InChI=1S/C2H6O/c1-2-3/h3H,2H2,1H3",
    "selfies": "[C][C][O]",
    "smiles": "CCO",
    "smarts": "[OX2H]",
    "sybyl line notation": "CH3CH2OH",
    "sln": "CH3CH2OH",
    "protein sequence": "MKTAYIAKQR",
    "amino acid sequence": "MKTAYIAKQR",
    "peptide": "MKTAYIAKQR",
    "rna sequence": "AUGGCCAUUGUA",
    "dna sequence": "ATGGCCATTGTA",
    "nucleotide sequence": "ATGGCCATTGTA",
    "molecular formula": "C2H6O",
    "chemical formula": "C2H6O",
}


def _parameter_schema(rec: Mapping[str, Any], pname: str) -> dict[str, Any]:
    """The one string parameter, with an ``examples`` value when it carries an encoding named in
    :data:`ENCODED_EXAMPLES`."""
    schema: dict[str, Any] = {"type": "string", "description": _parameter_description(rec, pname)}
    example = ENCODED_EXAMPLES.get(encoded_format(pname, schema["description"]) or "")
    if example is not None:
        schema["examples"] = [example]
    return schema


def load_catalog() -> Catalog:
    executable = executable_names()
    tools = []
    for rec in raw_catalog():
        pname = parameter_name(rec)
        tools.append(
            Tool(
                name=rec["name"],
                description=_description(rec),
                parameters={
                    "type": "object",
                    "properties": {pname: _parameter_schema(rec, pname)},
                    "required": [pname],
                },
                group=rec.get("category") or "",
                executable=rec["name"] in executable,
                metadata={
                    "inputs": list(rec.get("inputs") or []),
                    "outputs": list(rec.get("outputs") or []),
                    "source": rec.get("source"),
                },
            )
        )
    return Catalog(tools, name="scitooleval")


# ---------------------------------------------------------------------------------------------------------------
# tasks
# ---------------------------------------------------------------------------------------------------------------
def fix_gold(name: str) -> str:
    return GOLD_FIXES.get(name, name)


@functools.lru_cache(maxsize=1)
def _level1_inputs() -> dict[str, str]:
    """question -> the input the level-1 reference run used ("Input: X and obtained result")."""
    out = {}
    for rec in _jsonl("level1_correct_answer.jsonl"):
        runs = re.findall(
            r"Now we have run the \w+\.\s*Input:\s*(.+?)\s+and obtained result", rec.get("total_output") or "", re.S
        )
        value = runs[0].strip().strip("`'\"") if runs else ""
        if value and not re.search(r"\s", value):  # one clean token, not a sentence
            out.setdefault(rec["question"], value)
    return out


def load_all_tasks() -> list[Task]:
    """All 531 released tasks, in file order."""
    tasks = []
    names = {rec["name"] for rec in raw_catalog()}
    for split in SPLITS:
        for row, rec in enumerate(_jsonl(f"{split}_question.jsonl")):
            path = [fix_gold(t) for t in rec.get("tool_path") or []]
            unknown = [t for t in path if t not in names]
            if unknown:
                raise CatalogError(
                    f"SciToolEval task {split}-{row:04d} names unknown tool(s) {unknown}: the data file is "
                    "corrupt, reinstall libra-tools"
                )
            meta: dict[str, Any] = {
                "split": split,
                "row": row,
                "tool_path": path,
                "released_tool_path": list(rec["tool_path"]),
            }
            if rec.get("Parameter") is not None:
                meta["parameter"] = str(rec["Parameter"])
            if split == "level1" and rec["question"] in _level1_inputs():
                meta["reference_input"] = _level1_inputs()[rec["question"]]
            tasks.append(Task(id=f"{split}-{row:04d}", query=rec["question"], gold=tuple(path), metadata=meta))
    return tasks


def load_frozen() -> dict[str, Any]:
    try:
        data = json.loads(_data_text(FROZEN_FILE))
    except CatalogError:
        raise CatalogError(
            "the SciToolEval frozen subset file is missing: run benchmarks/freeze_scitooleval.py (or use subset='all')"
        ) from None
    if data.get("version") != FROZEN_VERSION or not isinstance(data.get("task_ids"), list):
        raise CatalogError(
            f"{FROZEN_FILE} has version {data.get('version')!r}, expected {FROZEN_VERSION}: regenerate it "
            "with benchmarks/freeze_scitooleval.py"
        )
    return data


# -- starting inputs ---------------------------------------------------------------------------------------------
_SMILES_MARKS = set("()[]=#@+-\\/%0123456789")
_SELFIES = re.compile(r"(?:\[[^\[\]\s]+\]){2,}")
_INCHI = re.compile(r"InChI=1S?/[^\s\"'`]+")
_INCHIKEY = re.compile(r"\b[A-Z]{14}-[A-Z]{10}-[A-Z]\b")
_SEQUENCE = re.compile(r"\b[ACDEFGHIKLMNPQRSTVWY]{6,}\b")
_DNA = re.compile(r"\b[ACGTU]{6,}\b")
_TRAIL = ".,;:?!"


def _tokens(text: str) -> list[str]:
    out = []
    for tok in re.split(r"[\s\"'`“”‘’]+", text):
        tok = tok.rstrip(_TRAIL).lstrip("(")
        while tok.endswith(")") and tok.count(")") > tok.count("("):
            tok = tok[:-1].rstrip(_TRAIL)
        if tok:
            out.append(tok)
    return out


def smiles_in(text: str) -> list[str]:
    """SMILES-looking tokens of a question that RDKit parses, longest first (needs RDKit)."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    found = []
    for tok in _tokens(text):
        if tok.startswith("InChI=") or _SELFIES.fullmatch(tok):
            continue
        plain_word = tok.isalpha() and not tok.isupper()
        if plain_word or not (set(tok) & _SMILES_MARKS or (tok.isupper() and len(tok) >= 2)):
            continue
        if Chem.MolFromSmiles(tok) is not None:
            found.append(tok)
    return sorted(dict.fromkeys(found), key=len, reverse=True)


def starting_input(task: Task, param: str) -> str | None:
    """The value the first tool of ``task`` is called with: the record's ``Parameter``, else the level-1 reference
    run's input when the question names it verbatim, else an extraction from the question by the kind of string
    the parameter expects (SMILES parsed by RDKit, SELFIES, InChI, InChIKey, sequences, lengths)."""
    meta = task.metadata
    if meta.get("parameter"):
        return str(meta["parameter"]).strip()
    q = task.query
    ref = str(meta.get("reference_input") or "")
    if ref and ref in q:  # the reference run's input, when it is what the question names (a few runs mistyped it)
        return ref
    if param == "selfies":
        m = _SELFIES.search(q)
        return m.group(0) if m else None
    if param == "inchi":
        m = _INCHI.search(q)
        return m.group(0).rstrip(_TRAIL) if m else None
    if param == "inchikey":
        m = _INCHIKEY.search(q)
        return m.group(0) if m else None
    if param in ("sequence", "protein", "protein_sequence"):
        m = _DNA.search(q) if "DNA" in q or "RNA" in q else _SEQUENCE.search(q)
        return m.group(0) if m else None
    if param in ("length",):
        m = re.search(r"\b(\d+)\b", q)
        return m.group(1) if m else None
    if param in ("smiles", "template_smiles"):
        found = smiles_in(q)
        return found[0] if found else None
    if param in ("smiles_pair", "target_template", "smiles_list"):
        found = [t for t in smiles_in(q)]
        ordered = [t for t in _tokens(q) if t in found]
        return ".".join(dict.fromkeys(ordered)) if len(set(ordered)) >= 2 else None
    return None


# ---------------------------------------------------------------------------------------------------------------
# runtime
# ---------------------------------------------------------------------------------------------------------------
def _require_rdkit() -> None:
    try:
        import rdkit  # noqa: F401
        import selfies  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            f"the SciToolEval runtime needs RDKit and selfies ({exc.name} is missing): {INSTALL_HINT}"
        ) from None


@dataclass
class SciToolEvalRuntime:
    """Catalog names (no module prefix) over the :class:`~libra.runtime.python.runtime.PythonRuntime` of the tools
    module.

    ``PythonRuntime`` names module functions ``module.function``; SciToolEval's tools have bare names, so this
    thin wrapper maps them. It is stateless (module functions), and the catalog it exposes is the executable
    part of the benchmark catalog, so runtime and benchmark agree on names, descriptions and parameters.
    """

    inner: Any
    catalog: Catalog
    prefix: str = "tools."
    trusted: bool = False

    def fresh(self) -> Any:
        return self.inner.fresh()

    def load_state(self, config: Mapping[str, Any] | None = None) -> Any:
        return self.inner.load_state(config)

    def invoke(self, state: Any, tool: str, args: Mapping[str, Any] | None = None) -> Any:
        from libra.runtime.base import UnknownToolError

        if tool not in self.catalog:
            raise UnknownToolError(
                f"unknown or non-executable SciToolEval tool {tool!r}: see docs/scitooleval.md for the executable list"
            )
        return self.inner.invoke(state, self.prefix + tool, args or {})

    def close(self) -> None:
        self.inner.close()


def build_scitooleval_python_runtime() -> SciToolEvalRuntime:
    """The in-process runtime; also what each isolated worker builds (module-level, so it pickles)."""
    _require_rdkit()
    from libra.benchmarks.scitooleval import tools as scitooleval_tools
    from libra.runtime.python.runtime import PythonRuntime, error_key_rejection

    # the tools turn unusable input into {"error": message}: that is their rejection
    inner = PythonRuntime.from_module(
        scitooleval_tools, trusted=False, name="scitooleval", rejection=error_key_rejection
    )
    catalog = Catalog([t for t in load_catalog() if t.executable], name="scitooleval")
    return SciToolEvalRuntime(inner, catalog)


def make_scitooleval_runtime(
    isolated: bool = True,
    n_workers: int = 2,
    timeout_s: float = 10,
    memory_mb: float | None = 2048,
    **pool_options: Any,
) -> Any:
    """The SciToolEval runtime; isolated by default because some RDKit routines crash or hang on odd inputs."""
    _require_rdkit()
    if not isolated:
        return build_scitooleval_python_runtime()
    from libra.runtime.workers.isolation import IsolatedRuntime

    return IsolatedRuntime(
        build_scitooleval_python_runtime, n_workers=n_workers, timeout_s=timeout_s, memory_mb=memory_mb, **pool_options
    )


#: a parameter that finds no value of its own name in a chain may take one of these (same kind of string)
_ALIASES: dict[str, tuple[str, ...]] = {"template_smiles": ("smiles",), "smiles": ("template_smiles",)}


@dataclass
class ChainResult:
    """Outcome of executing a task's gold tool path from its starting input."""

    ok: bool
    reason: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)


def run_chain(runtime: Any, task: Task, catalog: Catalog) -> ChainResult:
    """Execute ``task``'s full tool path (repeats included) in order.

    Values flow by name: the starting input is bound to the first tool's parameter, every string field of a
    successful output is bound to its field name (``{"smiles": ...}`` feeds a ``smiles`` parameter), and each
    call takes the latest value bound to its parameter name. A chain fails at the first call that has no value,
    is rejected or errors.
    """
    path = list(task.metadata.get("tool_path") or task.gold)
    blocked = [t for t in dict.fromkeys(path) if not catalog[t].executable]
    if blocked:
        return ChainResult(False, f"non-executable: {', '.join(blocked)}")
    first = catalog[path[0]].param_names[0]
    start = starting_input(task, first)
    if not start:
        return ChainResult(False, f"no starting input: no {first!r} value found in the record or the question")
    pool: dict[str, str] = {first: start}
    state = runtime.fresh()
    result = ChainResult(True)
    for tool in path:
        param = catalog[tool].param_names[0]
        value = pool.get(param)
        if value is None:
            value = next((pool[a] for a in _ALIASES.get(param, ()) if a in pool), None)
        if value is None:
            return ChainResult(False, f"chain broken: no {param!r} value for {tool}", result.calls)
        record, state = runtime.invoke(state, tool, {param: value})
        result.calls.append({"tool": tool, "args": {param: value}, "status": record.status, "error": record.error})
        if record.status != "success":
            return ChainResult(False, f"{record.status} at {tool}: {record.error}", result.calls)
        if isinstance(record.output, dict):
            for key, val in record.output.items():
                if isinstance(val, str):
                    pool[key] = val
    return result


# ---------------------------------------------------------------------------------------------------------------
# SciToolKG retrieval
# ---------------------------------------------------------------------------------------------------------------
FUNCTIONALITY = "has the functionality that"
_IO_FORWARD = {"inputs": "is the input of", "outputs": "is the output of"}


@dataclass
class SciToolKGRetriever:
    """SciToolKG retrieval rebuilt from the released graph with our embedder (see docs/scitooleval.md).

    1. Seeds: the ``top_seeds`` tools whose "<tool> has the functionality that <text>" triple is most similar
       to the query (dense score ``(1 + cos) / 2``).
    2. Expansion: up to ``hops`` steps over input/output edges; one step goes from a tool to a data-type node
       it inputs or outputs and on to the other tools that input or output that node (providers of its inputs,
       consumers of its outputs, and tools sharing a type).
    3. Re-ranking: a reached tool scores ``similarity(query, tool) * score(seed)`` (best seed), seeds keep their
       own score; the ``max_tools`` best are returned. Only catalog tools are returned or traversed.
    """

    embedder: Any = "minilm"
    top_seeds: int = 5
    hops: int = 3
    max_tools: int = 10
    name: str = "scitoolkg"
    names: list[str] = field(default_factory=list)
    _vectors: Any = None
    _neighbours: dict[str, list[str]] = field(default_factory=dict)

    def fit(self, catalog: Catalog) -> SciToolKGRetriever:
        from libra.embeddings.embedders import embed_cached, get_embedder

        if isinstance(self.embedder, str):
            self.embedder = get_embedder(self.embedder)
        graph = graph_store()
        self.names = [t.name for t in catalog if t.name in graph]
        texts = []
        for name in self.names:
            func = next((o for r, o in graph[name] if r == FUNCTIONALITY), "") or catalog[name].description
            texts.append(f"{name} {FUNCTIONALITY} {func}")
        self._vectors = embed_cached(self.embedder, texts)
        members = set(self.names)
        position = {n: i for i, n in enumerate(self.names)}
        users: dict[str, set[str]] = {}
        for name in self.names:
            for rel, node in graph[name]:
                if rel in _IO_FORWARD:
                    users.setdefault(node, set()).add(name)
        self._neighbours = {}
        for name in self.names:
            near: set[str] = set()
            for rel, node in graph[name]:
                if rel in _IO_FORWARD:
                    near |= users.get(node, set())
            near.discard(name)
            self._neighbours[name] = sorted(near & members, key=position.__getitem__)
        return self

    def _expand(self, seed: str) -> set[str]:
        seen, frontier = {seed}, [seed]
        for _ in range(self.hops):
            nxt = []
            for tool in frontier:
                for n in self._neighbours.get(tool, []):
                    if n not in seen:
                        seen.add(n)
                        nxt.append(n)
            frontier = nxt
        seen.discard(seed)
        return seen

    def retrieve(self, queries: Sequence[str], depth: int = 10) -> list[list[str]]:
        from libra.embeddings.embedders import embed_cached

        if self._vectors is None:
            raise RuntimeError("call fit(catalog) before retrieve()")
        sims = (1.0 + embed_cached(self.embedder, list(queries)) @ np.asarray(self._vectors).T) / 2.0
        index = {n: i for i, n in enumerate(self.names)}
        out = []
        for row in sims:
            seeds = [self.names[i] for i in np.argsort(-row, kind="stable")[: self.top_seeds]]
            scores: dict[str, float] = {s: float(row[index[s]]) for s in seeds}
            reached: dict[str, float] = {}
            for seed in seeds:
                for n in self._expand(seed):
                    if n not in scores:
                        reached[n] = max(reached.get(n, -1.0), float(row[index[n]]) * scores[seed])
            scores.update(reached)
            ranked = sorted(scores, key=lambda n: (-scores[n], index[n]))
            out.append(ranked[: min(self.max_tools, depth)])
        return out


def scitoolkg_retriever(
    catalog: Catalog, embedder: Any = "minilm", top_seeds: int = 5, hops: int = 3, max_tools: int = 10
) -> SciToolKGRetriever:
    """SciToolKG fitted on ``catalog``: what the evaluation method ``scitoolkg`` runs."""
    return SciToolKGRetriever(embedder=embedder, top_seeds=top_seeds, hops=hops, max_tools=max_tools).fit(catalog)


# ---------------------------------------------------------------------------------------------------------------
# the benchmark
# ---------------------------------------------------------------------------------------------------------------
class SciToolEvalBenchmark(Benchmark):
    contract_rules = "registry"  # the paper's registry conventions apply to SciToolEval (Figure 6)
    calling_convention = "json_object"
    name = "scitooleval"
    description = "SciToolEval: 531 scientific tool-use tasks over 477 tools (frozen executable subset by default)"
    default_k = 10
    paper = {
        "bm25": (12.0, 86.4, 54.1),
        "dense": (11.3, 84.1, 83.9),
        "scitoolkg": (12.6, 89.7, 82.5),
        "libra": (12.7, 91.1, 86.6),
    }
    paper_notes = {"dense": "paper: QTS with Qwen3-Embedding-0.6B"}

    def __init__(self, subset: str = "frozen") -> None:
        if subset not in ("frozen", "all"):
            raise ConfigError(f"unknown SciToolEval subset {subset!r}: use 'frozen' (default) or 'all'")
        self.subset = subset

    def catalog(self) -> Catalog:
        return load_catalog()

    def tasks(self, subset: str | None = None) -> list[Task]:
        """The frozen executable subset (default) or all 531 tasks (``subset="all"``)."""
        subset = subset or self.subset
        tasks = load_all_tasks()
        if subset == "all":
            return tasks
        keep = load_frozen()["task_ids"]
        by_id = {t.id: t for t in tasks}
        missing = [i for i in keep if i not in by_id]
        if missing:
            raise CatalogError(
                f"{FROZEN_FILE} names unknown task(s) {missing[:3]}: regenerate it with "
                "benchmarks/freeze_scitooleval.py"
            )
        return [by_id[i] for i in keep]

    def split_stratum(self, task: Task) -> str:
        """The task's level (one tool or a chain): both halves hold each level in the same proportion."""
        return str(task.metadata.get("split") or "")

    def runtime(self, **kwargs: Any) -> Any:
        return make_scitooleval_runtime(**kwargs)


def executable_report(catalog: Catalog | None = None) -> tuple[list[str], list[str]]:
    """(executable, non-executable) tool names in catalog order."""
    catalog = catalog or load_catalog()
    return [t.name for t in catalog if t.executable], [t.name for t in catalog if not t.executable]


def tool_sources(names: Iterable[str]) -> dict[str, Any]:
    """Upstream source label per tool (for the docs' non-executable list)."""
    src = {rec["name"]: rec.get("source") for rec in raw_catalog()}
    return {n: src.get(n) for n in names}
