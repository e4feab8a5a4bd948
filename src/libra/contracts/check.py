"""Contract checking: execute every candidate call, compare observed with expected outcomes, revise on feedback.

Observations are filled from a pool of values exported by earlier successful calls. A value is only valid in
the state its call produced (a session token means nothing in a fresh sandbox), so each successful call becomes
a node carrying its post-call state (:class:`~libra.probing.nodes.Node`, the exploration's own), and a template
is run from the node whose lineage supplies all of its observations. Several passes let a value produced by one
tool fill another tool's observation, which is how multi-step prerequisites (sign in, then act) get exercised.

Every call goes through a memo of invocations (:class:`~libra.probing.memo.MemoStore`, keyed by state,
tool and arguments). A build passes the store its exploration then uses, so the exploration takes checking's
records instead of running those calls again (:attr:`CheckSummary.memo_keys`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from libra._util.io import atomic_write_json
from libra.catalog import Catalog, Tool
from libra.contracts.model import CONTRACT_VERSION, MAX_REVISIONS, Argument, Contract, ContractError, Template
from libra.contracts.offline.proposer import (
    OfflineProposer,
    exclusive_repairs,
    json_type,
    literal_for,
    literal_repairs,
    missing_references,
    schema_type,
    uncovered_leaves,
    uncovered_text,
    words,
)
from libra.contracts.outcome import classify, extract, rejection_message
from libra.contracts.packed import packed_value
from libra.contracts.text_values import is_empty_text
from libra.contracts.validate import validate_contract
from libra.errors import ConfigError
from libra.probing.memo import MemoKey, MemoStore, memo_key
from libra.probing.nodes import Node, child, lineage
from libra.probing.rebind import REBINDS, Rebound, signature, take_untried, varied_picks
from libra.runtime.base import InvocationRecord, Runtime, State
from libra.schema import message_parameter, repair_literal


@runtime_checkable
class Proposer(Protocol):
    """Where contracts come from: the offline heuristics today, an LLM later, behind the same two calls."""

    name: str

    def propose(self, tool: Tool) -> Contract: ...

    def revise(self, contract: Contract, tool: Tool, feedback: list[dict[str, Any]]) -> Contract | None: ...


_PROPOSERS: dict[str, type] = {"offline": OfflineProposer}


def register_proposer(name: str, factory: type) -> None:
    """Make another proposer (e.g. an LLM-backed one) selectable by name."""
    _PROPOSERS[name] = factory


def get_proposer(proposer: str | Proposer = "offline") -> Proposer:
    if not isinstance(proposer, str):
        return proposer
    try:
        return _PROPOSERS[proposer]()
    except KeyError:
        raise ConfigError(f"unknown contract proposer {proposer!r}: choose one of {sorted(_PROPOSERS)}") from None


def propose_contracts(catalog: Catalog, proposer: str | Proposer = "offline") -> dict[str, Contract]:
    """One contract per tool, each proposed from that tool's own metadata."""
    p = get_proposer(proposer)
    return {tool.name: p.propose(tool) for tool in catalog}


# ---------------------------------------------------------------------------------------------------------------
# Persistence
# ---------------------------------------------------------------------------------------------------------------


def contracts_to_json(contracts: dict[str, Contract], catalog: Catalog | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"contract_version": CONTRACT_VERSION, "contracts": [c.to_dict() for c in contracts.values()]}
    if catalog is not None:
        doc["catalog"] = catalog.name
        doc["catalog_fingerprint"] = catalog.fingerprint()
    return doc


def save_contracts(path: str | Path, contracts: dict[str, Contract], catalog: Catalog | None = None) -> None:
    atomic_write_json(path, contracts_to_json(contracts, catalog))


def contracts_from_json(doc: Any, catalog: Catalog | None = None) -> dict[str, Contract]:
    if not isinstance(doc, dict) or not isinstance(doc.get("contracts"), list):
        raise ContractError("a contracts file must be a JSON object with a 'contracts' list: regenerate it")
    if doc.get("contract_version") != CONTRACT_VERSION:
        raise ContractError(
            f"contracts file has version {doc.get('contract_version')!r}, expected {CONTRACT_VERSION!r}: regenerate it"
        )
    if catalog is not None and doc.get("catalog_fingerprint") not in (None, catalog.fingerprint()):
        raise ContractError(
            f"contracts file was built for another catalog than {catalog.name!r}: regenerate it for this catalog"
        )
    out: dict[str, Contract] = {}
    for d in doc["contracts"]:
        c = Contract.from_dict(d)
        if catalog is not None and c.tool not in catalog:
            raise ContractError(f"contracts file names tool {c.tool!r}, which catalog {catalog.name!r} does not have")
        out[c.tool] = c
    return out


def load_contracts(path: str | Path, catalog: Catalog | None = None) -> dict[str, Contract]:
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContractError(f"contracts file {str(p)!r} does not exist: check the path") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ContractError(
            f"contracts file {str(p)!r} cannot be read ({exc.__class__.__name__}): regenerate it"
        ) from None
    return contracts_from_json(doc, catalog)


# ---------------------------------------------------------------------------------------------------------------
# Value pool and binding
# ---------------------------------------------------------------------------------------------------------------

_STOP = {
    "the",
    "a",
    "an",
    "of",
    "to",
    "in",
    "for",
    "from",
    "on",
    "at",
    "by",
    "with",
    "and",
    "or",
    "is",
    "be",
    "this",
    "that",
    "which",
    "used",
    "use",
    "can",
    "will",
    "it",
    "its",
    "as",
    "if",
    "only",
    "no",
    "not",
    "are",
    "current",
}


def _stem(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


@functools.lru_cache(maxsize=1 << 16)
def _bag(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in words(text) if w not in _STOP)


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass
class PoolValue:
    """A value checking may bind to an observation: where it was read (for the lexical match) and on which node
    it holds; ``id`` is its place in the checker's value list (a node records values by id)."""

    node: int
    tool: str
    export: str
    source: str
    path: str
    value: Any
    description: str = ""
    id: int = -1


def _coerce(param_schema: dict[str, Any], value: Any) -> Any | None:
    """The argument to pass for a pooled value, or None when its JSON type cannot fit the parameter."""
    t = schema_type(param_schema)
    vt = json_type(value)
    if t == "array":
        items = param_schema.get("items") if isinstance(param_schema.get("items"), dict) else {}
        inner = _coerce(items, value)
        return None if inner is None else [inner]
    if t is None or t == vt or (t == "number" and vt == "integer"):
        return value
    return None


def _coercion(param_schema: dict[str, Any]) -> tuple[int, str | None]:
    """:func:`_coerce` taken apart: how many lists a fitting value is wrapped in, and the JSON type it must have
    (None: any). Why: checking coerces every pooled value for every observation from every base state, and the
    schema's part of the answer is the same for all of them."""
    depth, t = 0, schema_type(param_schema)
    while t == "array":
        items = param_schema.get("items")
        param_schema = items if isinstance(items, dict) else {}
        depth, t = depth + 1, schema_type(param_schema)
    return depth, t


def match_score(param: str, arg: Argument, param_schema: dict[str, Any], pv: PoolValue) -> float:
    """How well a pooled value fits an observation: name overlap first, then description overlap.

    Shared head nouns (``tweet_id`` ~ ``id``, ``file_name`` ~ ``name``) count extra because the last word of a
    field name usually says what kind of value it is. When both names qualify their head noun and neither
    qualifier appears on the other side (``booking_id`` vs ``user_id``), they name different entities and the
    pair is penalised; a qualifier found in the other side's description (``receiver_id`` described as a user
    ID) keeps them compatible.
    """
    return _name_score(arg.field or param, arg.refers_to or "", pv.export, pv.description or "")


@functools.lru_cache(maxsize=1 << 18)
def _name_score(name: str, refers_to: str, export: str, description: str) -> float:
    """:func:`match_score` of an input named ``name`` (described as referring to ``refers_to``) and a value of
    ``export`` (described by ``description``): a pure function of the four texts, cached, because contract
    checking scores every pooled value for every observation from every base state, and the same few thousand
    name pairs recur throughout."""
    pn = [_stem(w) for w in words(name)]
    en = [_stem(w) for w in words(export)]
    if not pn or not en:
        return 0.0
    p_bag = set(pn) | _bag(refers_to)
    e_bag = set(en) | _bag(description)
    score = _jaccard(set(pn), set(en))
    if pn[-1] == en[-1]:
        score += 0.5
    if set(pn) == set(en):
        score += 0.5
    p_q, e_q = set(pn) - {pn[-1]}, set(en) - {en[-1]}
    if p_q and e_q and not (e_q & p_bag) and not (p_q & e_bag):
        score -= 0.6
    score += 0.4 * _jaccard(_bag(refers_to), _bag(description))
    return score


MIN_SCORE = 0.5
#: How many other states a failed template is re-run from, looking for the state change that lets it succeed.
RETRY_STATES = 4
#: How many times a text input is re-packed from successive rejections ("missing start", then "missing end").
PACK_ROUNDS = 4
#: Pool values that are sandbox fixtures (facts the runtime's operator knows) carry this tool name and node.
FIXTURE = "fixture"
FIXTURE_NODE = -1


_PHRASE_END = {
    "of",
    "for",
    "to",
    "from",
    "sent",
    "in",
    "on",
    "at",
    "by",
    "with",
    "that",
    "which",
    "used",
    "returned",
    "is",
    "are",
    "was",
    "will",
    "must",
    "should",
    "can",
}


@functools.lru_cache(maxsize=1 << 14)
def _lead_phrase(description: str) -> str:
    """The words a description opens with, up to its first preposition or verb: what the input *is*
    ("The phone number to search for" -> "the phone number"; "The code sent to your email" -> "the code")."""
    out: list[str] = []
    for w in words(description):
        if w in _PHRASE_END:
            break
        out.append(w)
    return " ".join(out)


def fixture_score(param: str, arg: Argument, param_schema: dict[str, Any], pv: PoolValue) -> float:
    """How well a fixture fits an input: the engine's rule for fills, on the checker's lexical score.

    A fixture fits by name like any pooled value, and also fits an input whose description says that is what it
    is ("The phone number to search for" for ``phone_number``; "Your account phone_number" for ``username``): a
    sandbox fact the input's own text asks for. Only the description's opening phrase counts, because a fixture
    merely mentioned later ("the code sent to your email") names where the value came from, not what it is.
    """
    score = match_score(param, arg, param_schema, pv)
    named = " ".join(words(pv.export))
    return (
        max(score, 1.0)
        if named and f" {named} " in f" {_lead_phrase(str(param_schema.get('description', '')))} "
        else score
    )


# ---------------------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class TemplateCheck:
    """What happened to one template: its expected and observed outcome and where observations came from."""

    template: str
    expected: str
    observed: str = "unbound"  # success | failure | unmatched | unbound
    status: str | None = None
    arguments: dict[str, Any] | None = None
    bindings: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    # The tool whose state change let this template succeed after it failed from an earlier state (a gate).
    gated_by: str | None = None

    @property
    def matched(self) -> bool:
        return self.observed == self.expected


@dataclass
class ToolCheck:
    tool: str
    valid: bool = True
    errors: list[str] = field(default_factory=list)
    revision: int = 0
    templates: list[TemplateCheck] = field(default_factory=list)
    # What revisions learned, as their notes say it (a declared type the tool does not return, a refusal shape,
    # a literal repaired from a rejection).
    notes: list[str] = field(default_factory=list)


@dataclass
class CheckSummary:
    """Counts over the whole catalog plus per-tool detail and the final (possibly revised) contracts."""

    tools: int = 0
    templates: int = 0
    matched: int = 0
    revised: int = 0
    invalid: int = 0
    unbound: int = 0
    unmatched: int = 0
    calls: int = 0
    gated: int = 0  # templates seen failing from one state and succeeding after another tool changed it
    memo_hits: int = 0  # calls answered by the memo of invocations instead of the runtime (``calls`` ran)
    type_mismatches: int = 0  # tools whose declared response type the observed outputs contradicted
    per_tool: dict[str, ToolCheck] = field(default_factory=dict)
    contracts: dict[str, Contract] = field(default_factory=dict)
    # The memo keys of every call checking made (run or answered by the memo), in order: what an exploration
    # over the same memo store takes over (:meth:`~libra.induction.explore.engine.Engine.start`).
    memo_keys: list[MemoKey] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            k: getattr(self, k)
            for k in (
                "tools",
                "templates",
                "matched",
                "revised",
                "invalid",
                "unbound",
                "unmatched",
                "calls",
                "memo_hits",
                "gated",
                "type_mismatches",
            )
        }

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = self.counts()
        d["per_tool"] = {}
        for name, tc in self.per_tool.items():
            row = asdict(tc)
            for t, obj in zip(row["templates"], tc.templates):
                t["matched"] = obj.matched
            d["per_tool"][name] = row
        return d


# ---------------------------------------------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class _Run:
    tool: str
    template: Template
    check: TemplateCheck
    args: dict[str, Any]
    record: dict[str, Any]
    post: State
    parent: int | None
    node: int | None = None


def empty_text_output(output: Any) -> bool:
    """A reply in text that says it found nothing: a blank or empty-result string (:func:`~.text_values.is_empty_text`),
    alone, as the only text block of a list, or as the only field of an object (``{"content": "No matches"}``)."""
    if isinstance(output, dict) and len(output) == 1:
        output = next(iter(output.values()))
    if isinstance(output, list) and len(output) == 1:
        output = output[0]
    return isinstance(output, str) and (not output.strip() or is_empty_text(output))


class _Checker:
    def __init__(
        self,
        catalog: Catalog,
        runtime: Runtime,
        contracts: dict[str, Contract],
        proposer: Proposer,
        max_revisions: int,
        fixtures: dict[str, Any] | None = None,
        memo: MemoStore | None = None,
    ) -> None:
        self.catalog = catalog
        self.runtime = runtime
        self.contracts = contracts
        self.proposer = proposer
        self.max_revisions = max_revisions
        self.memo = memo if memo is not None else MemoStore()
        self.fresh = self.memo.keep(runtime.fresh())
        # The states successful calls led to (parent None is the fresh state), the values they exported (by id),
        # and the run that created each node (``Node.creator`` indexes ``made``).
        self.nodes: list[Node] = []
        self.values: list[PoolValue] = []
        self.made: list[_Run] = []
        self.runs: dict[str, list[_Run]] = {}
        # Calls kept only as feedback: the failing half of a contrast (same call, earlier state).
        self.contrast: dict[str, list[_Run]] = {}
        self.calls = 0
        self.memo_hits = 0
        self.keys: dict[MemoKey, None] = {}  # every call's memo key, in order
        self.revised: set[str] = set()  # tools a revision changed
        # Per (tool, template): the bindings run and the retries spent on other equally fitting values (_rebinds).
        self.rebound: dict[tuple[str, str], Rebound] = {}
        # Sandbox fixtures are in every pool, from the fresh state on (they hold in it by definition).
        self.fixtures = [
            PoolValue(FIXTURE_NODE, FIXTURE, str(k), FIXTURE, "$", v) for k, v in sorted((fixtures or {}).items())
        ]

    # -- pool ----------------------------------------------------------------------------------------------
    def _lineage(self, node: int | None) -> list[Node]:
        return lineage(self.nodes, node)

    def _set_values(self, node: Node, pvs: list[PoolValue]) -> None:
        """Record ``pvs`` as the values a node's call produced (replacing what an earlier contract exported)."""
        for pv in pvs:
            pv.id = len(self.values)
            self.values.append(pv)
        node.replace(pvs)

    def _creator(self, node: Node) -> str:
        """The tool whose call led to ``node``."""
        return self.made[node.creator].tool

    def _node_values(self, contract: Contract, run: _Run, node_id: int) -> list[PoolValue]:
        """The values a successful run adds to the checking pool.

        An argument that was the template's own invented literal, passed to a call that changed nothing (a
        search's criterion), is left out: the sandbox never showed it, and binding it elsewhere (a made-up phone
        number as a contact's number) only feeds the next tool a value its validation rejects, while the records
        the same search listed sit unused. A literal a call wrote into the state (a created file's name) stays.
        """
        by_name = {e.name: e for e in contract.exports}
        out = []
        seen = set()
        unchanged = run.record.get("state_changes") in (None, {}, [])
        invented = [a.value for a in run.template.arguments.values() if a.kind == "literal"]
        for x in extract(contract, run.args, run.record):
            exp = by_name.get(x.name)
            if exp is None or not exp.propagate or x.value in ("", None) or isinstance(x.value, bool):
                continue
            if unchanged and x.source == "arguments" and any(x.value == v for v in invented):
                continue
            key = (x.name, json.dumps(x.value))
            if key in seen:
                continue
            seen.add(key)
            out.append(
                PoolValue(node_id, run.tool, x.name, x.source, x.path, x.value, str(exp.schema.get("description", "")))
            )
        return out

    def _add_node(self, run: _Run) -> None:
        """A successful call's post-state becomes a base for later calls.

        Only expected-success templates feed the value pool: an expected-failure template carries a value built
        to not exist, which must never be offered to another call even if this tool happened to accept it.
        """
        node = child(self.nodes, run.parent, run.post, len(self.made))
        self.made.append(run)
        run.node = node.id
        if run.template.expected == "success":
            self._set_values(node, self._node_values(self.contracts[run.tool], run, node.id))

    def _pool(self, node: Node | None) -> list[PoolValue]:
        """The values a call from ``node`` may bind (None: the fresh state, which holds only the fixtures)."""
        return (
            (self.fixtures + [self.values[v] for n in self._lineage(node.id) for v in n.values])
            if node is not None
            else self.fixtures
        )

    def _scored(
        self, tool: Tool, template: Template, pool: list[PoolValue]
    ) -> dict[str, list[tuple[float, int, PoolValue, Any]]] | None:
        """For each observation of ``template``, the pooled values that fit it as (score, -node, value, argument);
        None when some observation has none."""
        out: dict[str, list[tuple[float, int, PoolValue, Any]]] = {}
        for p in template.observations:
            scored = self._fitting(tool, p, template.arguments[p], pool)
            if not scored:
                return None
            out[p] = scored
        return out

    @staticmethod
    def _fitting(
        tool: Tool, param: str, arg: Argument, pool: list[PoolValue]
    ) -> list[tuple[float, int, PoolValue, Any]]:
        """The pooled values that fit observation ``param`` as (score, -node, value, argument), in pool order:
        coerced to the input's schema and scored by name and kind (fixtures by :func:`fixture_score`)."""
        ps = tool.param_schema(param)
        depth, t = _coercion(ps)  # (what _coerce decides, the schema's part once)
        scored = []
        for pv in pool:
            val = pv.value
            if val is None:
                continue  # (_coerce answers None, "does not fit", for it whatever the schema)
            if t is not None:
                vt = json_type(val)
                if t != vt and not (t == "number" and vt == "integer"):
                    continue
            for _ in range(depth):
                val = [val]
            s = fixture_score(param, arg, ps, pv) if pv.tool == FIXTURE else match_score(param, arg, ps, pv)
            if s >= MIN_SCORE:
                scored.append((s, -pv.node, pv, val))
        return scored

    @staticmethod
    def _fill(
        literal_args: dict[str, Any], picks: dict[str, tuple[float, int, PoolValue, Any]]
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """Arguments and binding notes for one choice of pooled value per observation."""
        args = dict(literal_args)
        binds: dict[str, dict[str, Any]] = {}
        for p, (s, _, pv, val) in picks.items():
            args[p] = val
            binds[p] = {
                "tool": pv.tool,
                "export": pv.export,
                "source": pv.source,
                "path": pv.path,
                "score": round(s, 3),
            }
        return args, binds

    def _bases(self) -> list[Node | None]:
        """The states a template may run from: the fresh one when fixtures can fill it, then every node."""
        return ([None] if self.fixtures else []) + list(self.nodes)

    def _bind(
        self, tool: Tool, template: Template
    ) -> tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]] | None:
        """The base node and concrete arguments for a template, or None when some observation has no value."""
        literal_args = {p: a.value for p, a in template.arguments.items() if a.kind == "literal"}
        if not template.observations:
            return None, literal_args, {}
        best: tuple[float, int, int] | None = None
        chosen: tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]] | None = None
        for node in self._bases():
            scored = self._scored(tool, template, self._pool(node))
            if scored is None:
                continue
            picks = {p: max(sc, key=lambda z: (z[0], z[1])) for p, sc in scored.items()}
            total = sum(z[0] for z in picks.values())
            key = (total, -node.depth, -node.id) if node is not None else (total, 0, 1)
            if best is None or key > best:
                best, chosen = key, (node.id if node is not None else None, *self._fill(literal_args, picks))
        return chosen

    def _rebinds(
        self, tool: Tool, template: Template, check: TemplateCheck
    ) -> list[tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]]]:
        """Other bindings for a success template whose bound run failed, best first: for each observation a
        value that fits its name at least as well as the one the failed run took, differing from every binding
        already run in at least one observation, at most :data:`REBINDS` over the template's life.

        Why: binding picks, for each observation, the value whose name fits best, and observed values of one
        name often denote different kinds of thing (a listing's ``path`` holds folders and files alike; an
        ``id`` may be an order's or a draft's). The name cannot tell them apart, so a run that failed with one of
        them says little about the others: the tool may want exactly the other kind (an editor that works only
        on a file). A worse-named value is a worse guess, not an equal one, so it is not tried. Values that
        appear in later passes (a file another tool wrote) count too, so the outcome does not hinge on which
        tool happened to run first. Deterministic order: higher total fit, then bases as binding ranks them
        (shallowest, then oldest), within a base the best values, then one input at a time varied over its
        other values, oldest first. The rule is :mod:`libra.probing.rebind`'s, shared with the exploration
        (:meth:`libra.induction.explore.engine.Engine._rebinds`); this method supplies checking's pool and name score.
        """
        obs = template.observations
        binds0 = check.bindings or {}
        if not obs or any("score" not in binds0.get(p, {}) for p in obs) or check.arguments is None:
            return []
        memory = self._rebound(tool, template)
        memory.tried.add(signature(obs, check.arguments))
        if memory.runs >= REBINDS or memory.nodes == len(self.nodes):
            return []
        # Bases looked at before offered every value they hold (or the retries ran out): only new ones can add.
        bases = self._bases() if memory.nodes < 0 else self.nodes[memory.nodes :]
        memory.nodes = len(self.nodes)
        want = {p: binds0[p]["score"] for p in obs}
        literal_args = {p: a.value for p, a in template.arguments.items() if a.kind == "literal"}
        ranked: list[
            tuple[
                tuple[float, int, int, int],
                dict[str, Any],
                tuple[int | None, dict[str, Any], dict[str, dict[str, Any]]],
            ]
        ] = []
        for node in bases:
            scored = self._scored(tool, template, self._pool(node))
            if scored is None:
                continue
            fit = {
                p: sorted((z for z in sc if round(z[0], 3) >= want[p]), key=lambda z: (-z[0], -z[1], z[2].id))
                for p, sc in scored.items()
            }
            if not all(fit.values()):
                continue
            where = (0, 0) if node is None else (node.depth, node.id)
            for i, picks in enumerate(varied_picks({p: fit[p] for p in obs})):
                total = round(sum(z[0] for z in picks.values()), 3)
                args, binds = self._fill(literal_args, picks)
                ranked.append(((-total, *where, i), args, (node.id if node is not None else None, args, binds)))
        return take_untried(memory, obs, ranked, REBINDS)

    def _rebound(self, tool: Tool, template: Template) -> Rebound:
        """The rebinding memory of one template (a template a revision rewrote starts afresh)."""
        key = (tool.name, json.dumps(template.to_dict(), sort_keys=True, default=str))
        return self.rebound.setdefault(key, Rebound())

    def _retry_rebound(self, tool: Tool, template: Template, check: TemplateCheck) -> int:
        """Run a success template whose bound run failed with the next values that fit it as well
        (:meth:`_rebinds`); the first success becomes its result, and every failure stays as feedback for revision
        (a refusal of the right kind of value says what else is wrong: an edit's text that is not in the file).
        Returns how many calls it made."""
        if template.expected != "success" or check.observed != "failure":
            return 0
        ran = 0
        for parent, args, binds in self._rebinds(tool, template, check):
            self._rebound(tool, template).runs += 1
            ran += 1
            if self._adopt(tool, template, check, parent, args, binds):
                break
        return ran

    def retry_rebound(self, tool_checks: dict[str, ToolCheck]) -> int:
        """:meth:`_retry_rebound` for every failed success template, with the values later calls produced."""
        ran = 0
        for tool, template, check in self._checked_templates(tool_checks):
            if template.observations:
                ran += self._retry_rebound(tool, template, check)
        return ran

    def _checked_templates(self, tool_checks: dict[str, ToolCheck]):
        """(tool, template, check) of every executable tool whose contract passed validation, in catalog order:
        the later passes over the checked templates all walk the same set in the same order."""
        for tool in self.catalog:
            tc = tool_checks.get(tool.name)
            if tc is None or not tc.valid or not tool.executable:
                continue
            yield from (
                (tool, template, check) for template, check in zip(self.contracts[tool.name].templates, tc.templates)
            )

    # -- execution -----------------------------------------------------------------------------------------
    def _invoke(self, state: State, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], State]:
        """One call through the memo of invocations: a call made before (by checking, or by an earlier build
        resumed over the same store) is answered by its record; a new one runs and is memoised. A call the
        runtime crashed on is an observed error outcome, not memoised (the exploration would run it itself)."""
        key = memo_key(state, tool, args)
        hit = self.memo.get(key)
        if hit is not None:
            self.memo_hits += 1
            self.keys[key] = None
            return hit
        self.calls += 1
        try:
            record, post = self.runtime.invoke(self.memo.full(state), tool, args)
        except Exception as exc:  # noqa: BLE001 - a crashing runtime call is an observed error outcome
            return InvocationRecord("error", None, {}, f"{exc.__class__.__name__}: {exc}").to_dict(), state
        rec = record.to_dict()
        light = self.memo.put_many([(key, rec, post)])[0]
        self.keys[key] = None
        return rec, light

    def run_pending(self, tool_checks: dict[str, ToolCheck], fallback: bool = False) -> int:
        """One pass over every template not yet executed; returns how many ran.

        With ``fallback``, a template whose observations no seen value fits runs once from the fresh state with
        the values its own metadata suggests, so the tool still yields same-tool feedback for revision (a tool
        that needs a real upstream value simply fails).
        """
        ran = 0
        for tool in self.catalog:
            tc = tool_checks.get(tool.name)
            if tc is None or not tc.valid or not tool.executable:
                continue  # a tool the runtime cannot execute keeps its proposed contract unchecked
            done = {r.template.name for r in self.runs.get(tool.name, [])}
            for template, check in zip(self.contracts[tool.name].templates, tc.templates):
                if template.name in done:
                    continue
                bound = self._bind(tool, template)
                if bound is None and fallback and template.expected == "success":
                    args = {p: a.value for p, a in template.arguments.items() if a.kind == "literal"}
                    for p in template.observations:
                        ps = tool.param_schema(p)
                        args[p] = literal_for(p, ps, ps.get("description", ""))
                    bound = (None, args, {p: {"constructed": True} for p in template.observations})
                if bound is None:
                    continue
                self._execute(tool, template, check, *bound)
                if template.expected == "success" and check.observed != "success":
                    self._retry_with_fixtures(tool, template, check, bound[0], bound[1], bound[2])
                    self._retry_rebound(tool, template, check)
                if template.expected == "success" and check.observed != "success" and bound[0] is None:
                    self._retry_repaired(tool, template, check, bound[1], bound[2])
                if template.expected == "success" and check.observed != "success":
                    ran += self._retry_packed(tool, template, check)
                ran += 1
        return ran

    def _execute(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int | None,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> _Run:
        """Run one template from a base node and record it as the template's result."""
        state = self.fresh if parent is None else self.nodes[parent].state
        record, post = self._invoke(state, tool.name, args)
        check.arguments, check.bindings = args, binds
        check.status, check.error = record.get("status"), record.get("error")
        run = _Run(tool.name, template, check, args, record, post, parent)
        self.runs.setdefault(tool.name, []).append(run)
        self._classify(run)
        return run

    def _adopt(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int | None,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> bool:
        """Run a variant of a template that did not succeed; keep it as the template's result if it succeeds.

        The failed run stays as feedback (a contrast for revision); a failing variant is kept as feedback too.
        """
        old = next(r for r in reversed(self.runs[tool.name]) if r.template.name == template.name)
        trial = TemplateCheck(template.name, template.expected)
        run = self._execute(tool, template, trial, parent, args, binds)
        self.runs[tool.name].remove(run if trial.observed != "success" else old)
        self.contrast.setdefault(tool.name, []).append(run if trial.observed != "success" else old)
        if trial.observed != "success":
            return False
        run.check = check
        check.observed, check.arguments, check.bindings = trial.observed, trial.arguments, trial.bindings
        check.status, check.error = trial.status, trial.error
        return True

    def _reveal(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> bool:
        """Run a template whose success printed that it found nothing ("No results", "Notes: []") from another
        state; keep the run as the template's result when it succeeds with something to show.

        Why: revision learns what a text reply holds (an embedded JSON list, ids, lines) from a reply that holds
        it, and a listing from the fresh state is often empty. Only an empty reply in text triggers this (see
        :func:`empty_text_output`); the empty run stays as feedback.
        """
        trial = TemplateCheck(template.name, template.expected)
        run = self._execute(tool, template, trial, parent, args, binds)
        self.runs[tool.name].remove(run)
        if trial.observed != "success" or empty_text_output(run.record.get("output")):
            self.contrast.setdefault(tool.name, []).append(run)
            return False
        old = next(r for r in reversed(self.runs[tool.name]) if r.template.name == template.name)
        self.runs[tool.name] = [run if r is old else r for r in self.runs[tool.name]]
        self.contrast.setdefault(tool.name, []).append(old)
        run.check = check
        check.observed, check.arguments, check.bindings = trial.observed, trial.arguments, trial.bindings
        check.status, check.error = trial.status, trial.error
        return True

    def _retry_repaired(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> bool:
        """Repair a constructed value the tool's validation rejected, from its message, and run once more.

        Why: a template whose observations nothing produced runs with values its metadata suggests; when the
        tool rejects one for its form ("must start with '+' and country code") the message says how to fix it
        (the paper's feedback loop, as :func:`~libra.contracts.offline.proposer.literal_repairs` does for literals).
        Without the repair the tool is never seen succeeding in checking, so its response is never observed and
        revision never exports what it returns (a message id).
        """
        constructed = {p: args[p] for p, b in binds.items() if b.get("constructed") and p in args}
        run = next((r for r in reversed(self.runs.get(tool.name, [])) if r.template.name == template.name), None)
        message = rejection_message(run.record) if run is not None else None
        if not constructed or not message:
            return False
        param = message_parameter(message, constructed, others=[p for p in args if p not in constructed])
        if param is None:
            return False
        value = repair_literal(param, tool.param_schema(param), constructed[param], message)
        if value is None or value == constructed[param]:
            return False
        return self._adopt(tool, template, check, None, {**args, param: value}, binds)

    def _retry_packed(self, tool: Tool, template: Template, check: TemplateCheck, limit: int = PACK_ROUNDS) -> int:
        """Pack more values into a text input the tool rejected for holding too few, from its message; returns
        how many calls it made.

        Why: a tool that takes several values packed into one string ("two sequences separated by a comma", "a
        path and a line, comma-separated") is bound to one observed value of that kind and refuses it, saying
        what is missing. :func:`~libra.contracts.packed.packed_value` builds what the message asks for, from
        the rejected value and the other observed values that fit the input (best first); a message that asks
        for one more part at a time is followed for at most ``limit`` rounds. An invented value (a literal) this
        loop packed, which the tool then refuses for its parts' form, is repaired from that message as any
        literal is (:func:`~libra.schema.repair_literal`) and packed again in the next round; a literal refused
        before any packing is left to revision, which rewrites the template itself. Without this the tool is never
        seen succeeding. The run that succeeds becomes the template's result; failures stay as feedback.
        """
        ran = 0
        packed_params: set[str] = set()
        run = next((r for r in reversed(self.runs.get(tool.name, [])) if r.template.name == template.name), None)
        for _ in range(limit):
            message = rejection_message(run.record) if run is not None else None
            if run is None or not message or check.observed == "success":
                return ran
            changed = None
            for p, value in run.args.items():
                ps = tool.param_schema(p)
                if not isinstance(value, str) or schema_type(ps) not in (None, "string"):
                    continue
                others = self._alternatives(tool, template, p, run)
                packed = packed_value(value, message, str(ps.get("description", "")), others)
                if packed is None and p in packed_params and self._invented(template, p, check):
                    # a packed literal whose parts the tool refuses for their form: repair it, then pack again
                    packed = (
                        repair_literal(p, ps, value, message)
                        if message_parameter(message, {p: value}, [q for q in run.args if q != p]) == p
                        else None
                    )
                if packed is not None and packed != value and _coerce(ps, packed) is not None:
                    changed = {**run.args, p: packed}
                    packed_params.add(p)
                    break
            if changed is None:
                return ran
            ran += 1
            if self._adopt(tool, template, check, run.parent, changed, dict(check.bindings or {})):
                return ran
            run = self.contrast[tool.name][-1]  # the packed call just refused: its message asks for the next part
        return ran

    @staticmethod
    def _invented(template: Template, param: str, check: TemplateCheck) -> bool:
        """Whether a call's value for ``param`` is the proposer's own (a literal, or constructed for an
        observation nothing produced), not a value the sandbox showed."""
        arg = template.arguments.get(param)
        return arg is not None and (
            arg.kind == "literal" or bool((check.bindings or {}).get(param, {}).get("constructed"))
        )

    def _alternatives(self, tool: Tool, template: Template, param: str, run: _Run) -> list[Any]:
        """Other observed values that fit an observation input from a run's base, best first (none for a literal)."""
        arg = template.arguments.get(param)
        if arg is None or arg.kind != "observation":
            return []
        node = self.nodes[run.parent] if run.parent is not None else None
        # a number coerced to text is not another value of a text input's kind
        text = [pv for pv in self._pool(node) if isinstance(pv.value, str)]
        scored = [
            (-s, pv.id, val) for s, _, pv, val in self._fitting(tool, param, arg, text) if val != run.args.get(param)
        ]
        return [v for _, _, v in sorted(scored, key=lambda z: (z[0], z[1]))]

    def _retry_with_fixtures(
        self,
        tool: Tool,
        template: Template,
        check: TemplateCheck,
        parent: int | None,
        args: dict[str, Any],
        binds: dict[str, dict[str, Any]],
    ) -> None:
        """Offer the sandbox's fixtures to the literal inputs of a success template the tool did not accept.

        A literal is the proposer's guess; a fixture whose name or description fits the input is a value the
        sandbox is known to hold (its test account's number, its user name). Tried only after the literal failed,
        so a template that creates a new record with a fresh literal keeps its own value.
        """
        fixed = dict(args)
        fills = dict(binds)
        for p, a in template.arguments.items():
            if a.kind != "literal":
                continue
            ps = tool.param_schema(p)
            scored = [
                (fixture_score(p, Argument.observation(str(ps.get("description", "")), field=p), ps, pv), pv)
                for pv in self.fixtures
            ]
            scored = [(sc, pv) for sc, pv in scored if sc >= MIN_SCORE and _coerce(ps, pv.value) is not None]
            if scored:
                sc, pv = max(scored, key=lambda z: z[0])
                if _coerce(ps, pv.value) != args.get(p):
                    fixed[p] = _coerce(ps, pv.value)
                    fills[p] = {
                        "tool": FIXTURE,
                        "export": pv.export,
                        "source": FIXTURE,
                        "path": "$",
                        "score": round(sc, 3),
                    }
        if fixed != args:
            self._adopt(tool, template, check, parent, fixed, fills)

    def _last_change(self, node: int) -> str:
        """The tool of the latest call on a node's lineage that changed the state: what the state hinges on
        (states are tried shallowest first, so this is the one change the retried call needed)."""
        for n in self._lineage(node):
            before = self.fresh.fingerprint if n.parent is None else self.nodes[n.parent].state.fingerprint
            if n.state.fingerprint != before:
                return self._creator(n)
        return self._creator(self.nodes[node])

    def _same_group(self, tool: Tool, other: str) -> bool:
        """One class or one app: the tools whose state changes most likely gate this one."""
        if other.split(".")[0] == tool.name.split(".")[0] and "." in tool.name:
            return True
        return bool(tool.group) and other in self.catalog and self.catalog[other].group == tool.group

    def retry_elsewhere(self, tool_checks: dict[str, ToolCheck], limit: int = RETRY_STATES) -> int:
        """Re-run each failed success template that needs no observation from states other calls produced (and
        each whose success printed an empty result, see :meth:`_reveal`).

        The same call before and after a state change is the contrast that shows a gate (a read refused until a
        sign-in) and tells a refusal's payload from a success's. States are tried shallowest first (the fewest
        calls that could make the difference), tools of the same group (one class, one app) before the rest, at
        most ``limit`` distinct states per template; the first success becomes the template's result, with the
        tool of the last state-changing call on that state's lineage as ``gated_by``.
        """
        ran = 0
        for tool, template, check in self._checked_templates(tool_checks):
            if template.expected != "success" or template.observations or check.observed == "unbound":
                continue
            run = next((r for r in reversed(self.runs.get(tool.name, [])) if r.template.name == template.name), None)
            if run is None or check.observed == "success" and not empty_text_output(run.record.get("output")):
                continue
            tried = {self.fresh.fingerprint if run.parent is None else self.nodes[run.parent].state.fingerprint}
            tried |= {
                (self.fresh.fingerprint if r.parent is None else self.nodes[r.parent].state.fingerprint)
                for r in self.contrast.get(tool.name, [])
                if r.template.name == template.name
            }
            bases = sorted(self.nodes, key=lambda n: (not self._same_group(tool, self._creator(n)), n.depth, n.id))
            for node in bases:
                if len(tried) > limit or node.state.fingerprint in tried:
                    continue
                tried.add(node.state.fingerprint)
                ran += 1
                if check.observed == "success":
                    if self._reveal(tool, template, check, node.id, dict(run.args), dict(check.bindings)):
                        break
                elif self._adopt(tool, template, check, node.id, dict(run.args), dict(check.bindings)):
                    check.gated_by = self._last_change(node.id)
                    break
        return ran

    def _classify(self, run: _Run) -> None:
        contract = self.contracts[run.tool]
        run.check.observed = classify(contract, run.record)
        if run.check.observed == "success":
            if run.node is None:
                self._add_node(run)
            elif run.template.expected == "success":
                self._set_values(self.nodes[run.node], self._node_values(contract, run, run.node))

    # -- revision ------------------------------------------------------------------------------------------
    def needs_revision(self, tool: str) -> bool:
        """Unmatched outcomes, or successful output/state structure that no export reaches."""
        contract = self.contracts[tool]
        for run in self.runs.get(tool, []):
            if run.check.observed == "unmatched":
                return True
            if run.check.observed == "success" and (
                uncovered_leaves(contract, run.args, run.record) or uncovered_text(contract, run.record)
            ):
                return True
        if any(classify(contract, r.record) == "unmatched" for r in self.contrast.get(tool, [])):
            return True
        feedback = self._feedback(tool)
        return bool(
            literal_repairs(contract, self.catalog[tool], feedback)
            or missing_references(contract, feedback)
            or exclusive_repairs(contract, self.catalog[tool], feedback)
        )

    def _feedback(self, tool: str) -> list[dict[str, Any]]:
        """Same-tool feedback: every template's current run, then the calls kept as contrasts."""
        runs = self.runs.get(tool, []) + self.contrast.get(tool, [])
        contract = self.contracts[tool]
        return [
            {
                "template": r.template.name,
                "expected": r.template.expected,
                "observed": classify(contract, r.record),
                "arguments": r.args,
                "record": r.record,
            }
            for r in runs
        ]

    def revise(self, tool: Tool, tc: ToolCheck) -> bool:
        contract = self.contracts[tool.name]
        if contract.revision >= self.max_revisions or not self.needs_revision(tool.name):
            return False
        feedback = self._feedback(tool.name)
        new = self.proposer.revise(contract, tool, feedback)
        if new is None:
            return False
        errors = validate_contract(new.to_dict(), tool)
        if errors:
            tc.errors.append(f"revision {new.revision} rejected: {errors[0]}")
            return False
        self.contracts[tool.name] = new
        tc.revision = new.revision
        tc.notes.extend(n for n in new.notes if n not in contract.notes)
        if [t.name for t in new.templates] != [t.name for t in contract.templates]:
            # A proposer may rewrite templates: keep results of the ones that survive, by name.
            old = {c.template: c for c in tc.templates}
            tc.templates = [old.get(t.name) or TemplateCheck(t.name, t.expected) for t in new.templates]
            for c, t in zip(tc.templates, new.templates):
                c.expected = t.expected
            keep = {t.name: t for t in new.templates}
            self.runs[tool.name] = [r for r in self.runs.get(tool.name, []) if r.template.name in keep]
            self.contrast[tool.name] = [r for r in self.contrast.get(tool.name, []) if r.template.name in keep]
            for r in self.runs[tool.name]:
                r.template = keep[r.template.name]
        for run in self.runs.get(tool.name, []):
            self._classify(run)
        self._promote_contrasts(tool, tc)
        self._rerun_changed(tool, tc, contract, new)
        return True

    def _promote_contrasts(self, tool: Tool, tc: ToolCheck) -> None:
        """After a revision, a call kept as a contrast may now read as the success the template's own run is not
        (the revision accepted its shape): the same call from that state becomes the template's result."""
        contract = self.contracts[tool.name]
        for template, check in zip(contract.templates, tc.templates):
            if template.expected != "success" or check.observed == "success":
                continue
            current = next((r for r in self.runs.get(tool.name, []) if r.template.name == template.name), None)
            if current is None:
                continue
            better = next(
                (
                    r
                    for r in self.contrast.get(tool.name, [])
                    if r.template.name == template.name
                    and r.args == current.args
                    and classify(contract, r.record) == "success"
                ),
                None,
            )
            if better is None:
                continue
            self.runs[tool.name] = [better if r is current else r for r in self.runs[tool.name]]
            self.contrast[tool.name] = [current if r is better else r for r in self.contrast[tool.name]]
            better.template, better.check = template, check
            check.status, check.error = better.record.get("status"), better.record.get("error")
            self._classify(better)
            check.gated_by = self._last_change(better.parent) if better.parent is not None else None

    def _rerun_changed(self, tool: Tool, tc: ToolCheck, old: Contract, new: Contract) -> None:
        """Run again the templates a revision rewrote under the same name (a literal repaired from a rejection):
        their stored run was a different call, so its result says nothing about the new template."""
        before = {t.name: t.to_dict() for t in old.templates}
        changed = {t.name for t in new.templates if t.name in before and before[t.name] != t.to_dict()}
        if not changed:
            return
        stale = [r for r in self.runs.get(tool.name, []) if r.template.name in changed]
        self.runs[tool.name] = [r for r in self.runs.get(tool.name, []) if r.template.name not in changed]
        self.contrast.setdefault(tool.name, []).extend(stale)
        for template, check in zip(new.templates, tc.templates):
            if template.name not in changed:
                continue
            check.observed, check.gated_by = "unbound", None
            bound = self._bind(tool, template)
            if bound is not None:
                self._execute(tool, template, check, *bound)
                self._retry_rebound(tool, template, check)
                if check.observed != "success":
                    self._retry_packed(tool, template, check)


def check_contracts(
    catalog: Catalog,
    runtime: Runtime,
    contracts: dict[str, Contract] | None = None,
    *,
    proposer: str | Proposer = "offline",
    passes: int = 3,
    max_revisions: int = MAX_REVISIONS,
    fixtures: dict[str, Any] | None = None,
    memo: MemoStore | None = None,
) -> CheckSummary:
    """Execute every contract's templates against ``runtime`` and revise contracts from same-tool feedback.

    Templates whose observations cannot be filled from values seen so far are reported as ``unbound``. Revised
    records are re-classified in place rather than re-executed: a call from the same state with the same
    arguments is deterministic in a sandbox, and classification is a pure function of the record; a template a
    revision rewrote is run again. ``fixtures`` (the benchmark's sandbox facts, e.g. its test account) are
    offered to every input whose name or description fits them, as induction does. A success template that
    failed is re-run from the states other calls produced, so a gate shows in checking (``gated_by``).

    Calls go through ``memo`` (a temporary store when None): a build passes the store its exploration uses, and
    the summary's ``memo_keys`` tell the exploration which of its rows are checking's calls.
    """
    prop = get_proposer(proposer)
    contracts = dict(contracts) if contracts is not None else propose_contracts(catalog, prop)
    summary = CheckSummary(tools=len(catalog))
    tool_checks: dict[str, ToolCheck] = {}
    for tool in catalog:
        contract = contracts.get(tool.name)
        if contract is None:
            contract = prop.propose(tool)
            contracts[tool.name] = contract
        errors = validate_contract(contract.to_dict(), tool)
        tool_checks[tool.name] = ToolCheck(
            tool.name,
            valid=not errors,
            errors=errors,
            revision=contract.revision,
            templates=[TemplateCheck(t.name, t.expected) for t in contract.templates],
        )
    checker = _Checker(catalog, runtime, contracts, prop, max_revisions, fixtures, memo)
    try:
        _check_passes(catalog, checker, tool_checks, passes)
    finally:
        if memo is None:
            checker.memo.close()
    summary.per_tool = tool_checks
    summary.contracts = checker.contracts
    summary.calls = checker.calls
    summary.memo_hits = checker.memo_hits
    summary.memo_keys = list(checker.keys)
    summary.invalid = sum(1 for tc in tool_checks.values() if not tc.valid)
    summary.revised = len(checker.revised)
    for tc in tool_checks.values():
        if not tc.valid:
            continue
        summary.templates += len(tc.templates)
        summary.matched += sum(1 for t in tc.templates if t.matched)
        summary.unbound += sum(1 for t in tc.templates if t.observed == "unbound")
        summary.unmatched += sum(1 for t in tc.templates if t.observed == "unmatched")
        summary.gated += sum(1 for t in tc.templates if t.gated_by and t.observed == "success")
    summary.type_mismatches = sum(1 for c in checker.contracts.values() if "declared_type_mismatch" in c.flags)
    return summary


def _check_passes(catalog: Catalog, checker: _Checker, tool_checks: dict[str, ToolCheck], passes: int) -> None:
    """Run, re-run elsewhere and revise, pass after pass (see :func:`check_contracts`)."""
    revised = checker.revised
    for _ in range(max(1, passes)):
        ran = checker.run_pending(tool_checks)
        ran += checker.retry_elsewhere(tool_checks)
        ran += checker.retry_rebound(tool_checks)
        for tool in catalog:
            tc = tool_checks[tool.name]
            if tc.valid and checker.revise(tool, tc):
                revised.add(tool.name)
        if ran == 0:
            break
    # Tools whose observations nothing produced get one run with constructed values, for feedback only.
    if checker.run_pending(tool_checks, fallback=True):
        for tool in catalog:
            tc = tool_checks[tool.name]
            if tc.valid and checker.revise(tool, tc):
                revised.add(tool.name)
    # A revision may have added exports that now bind other tools' observations: give them one more chance.
    if revised and checker.run_pending(tool_checks) + checker.retry_elsewhere(tool_checks) + checker.retry_rebound(
        tool_checks
    ):
        for tool in catalog:
            tc = tool_checks[tool.name]
            if tc.valid and checker.revise(tool, tc):
                revised.add(tool.name)
