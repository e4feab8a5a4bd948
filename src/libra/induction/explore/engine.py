"""Runtime relation induction (paper §3.1, Algorithm 1).

The engine explores a catalog from its fresh state with a worklist of *work items* (state, tool, template,
binding). Successful calls export values into a pool; each value is offered to the consumer inputs it is a
candidate for (:mod:`.candidates`), which enqueues new items. Every success that used an upstream value gets a
counterfactual control; every state-changing success gets a before/after sweep:

- **input provenance** (E_prov): the consumer succeeds with the provider's value and fails when that input is
  replaced by a valid, different value (or omitted, when optional), from the same saved state;
- **compatibility** (E_comp): both succeed, differently, and the output and input field names are aligned:
  cos(h_f(f_out), h_f(f_in)) > tau;
- **state dependency** (E_state): a consumer call with identical arguments fails before the provider's call and
  succeeds after it.

The verdicts are pure functions of the records (:mod:`.judges`); this module plans and runs the calls. A wave
(:meth:`Engine.step`) has named phases: select and bind work items, execute them, plan what each success asks for
(controls, pool values, offers, sweeps), run the controls and state tests, and record what the judges keep.

States are immutable values, so a control runs from exactly the state the consumer saw. Outputs of state-changing
calls create child states that later items run from, which is how multi-hop compositions (create an account ->
sign in -> act) are found.

Cost control, all without changing what a test would conclude:

- every invocation is memoised by (state fingerprint, tool, arguments): runtimes are deterministic, so a repeated
  call (the "before" half of many state tests, the line-32 re-runs of a sweep) costs nothing; in a build the
  memo is the one contract checking called through, so a call checking made is not run again either (it still
  counts as the exploration's own first call of it: :meth:`Engine.run_many`);
- a relation already kept is never tested again, and each (provider field, consumer input) pair is tested at most
  ``tests_per_pair`` times;
- calls run in waves through ``invoke_many`` so an isolated runtime keeps every worker busy;
- a failed call is retried with other equally named values on a budget and books of its own (:mod:`.retries`),
  so the retries never take calls from the exploration and only add relations.

The engine checkpoints between waves; a killed build resumes from the checkpoint and, because the exploration
order is deterministic, ends with the same library.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import pickle
import random
import re
import zlib
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from libra._util.io import atomic_open
from libra.catalog import Catalog, Tool
from libra.contracts.exclusive import Exclusive, exclusive_inputs, one_of
from libra.contracts.model import Contract
from libra.contracts.offline.proposer import is_creation_tool, literal_for, schema_type, sentinel_for
from libra.contracts.outcome import classify_keyed, extract, rejection_message, schema_key
from libra.contracts.text_values import is_empty_text
from libra.embeddings.fields import humanize
from libra.induction.config import DEFAULT_MAX_CALLS, DEFAULT_MAX_DEPTH
from libra.induction.explore.pair_counts import PairCounts
from libra.induction.explore.retries import RetryLedger, retry_budget
from libra.induction.explore.worklist import Item, ItemCodec, PackedHeap, PackedQueue
from libra.induction.judges import Run, judge_compatibility, judge_provenance, judge_state
from libra.library.artifact import Candidate, Relation, dedupe
from libra.probing.memo import MemoKey, MemoStore, memo_key
from libra.probing.nodes import Node, child, lineage
from libra.probing.paths import canonical_path
from libra.probing.rebind import REBINDS, Rebound, signature, take_untried, varied_picks
from libra.runtime.base import InvocationRecord, Runtime, State
from libra.runtime.diff import path_keys
from libra.schema import stated_form, words

CHECKPOINT_VERSION = 34  # bump whenever the exploration changes: an old checkpoint must not be resumed
# The checkpoint's layout (the packed worklist of :mod:`.worklist` since 2): a change of layout alone changes no
# library, so it has its own number rather than CHECKPOINT_VERSION, which is part of a library's cache key.
# 3: the heaps remember the spent items they left out (worklist.PackedHeap), offers are counted per candidate
# position (pair_counts.PairCounts); 4: a heap keeps one array bucket per priority (worklist.PackedHeap)
CHECKPOINT_FORMAT = 4
FIXTURE = "<sandbox>"
EVIDENCE_CHARS = 4000


@dataclass
class BuildConfig:
    """Budgets and thresholds of one build; every field is recorded in the library's metadata."""

    tau: float = 0.75  # field-name alignment needed for a compatibility relation (cosine of name embeddings)
    max_calls_per_tool: int = 400  # candidate-binding work items executed per tool
    max_probes_per_tool: int = 300  # unbound probes (a template re-run from a new state) executed per tool
    max_calls: int = DEFAULT_MAX_CALLS  # executed invocations in total (memo hits are free)
    # Executed invocations the retries of failed calls may add, on top of max_calls (None: a share of it, see
    # libra.induction.explore.retries.retry_budget; 0: no retries, the exploration alone).
    max_retry_calls: int | None = None
    max_depth: int = DEFAULT_MAX_DEPTH  # longest chain of state-changing calls from the fresh state
    sweeps_per_tool: int = 8  # state-changing calls per provider and depth that get the full before/after sweep
    # ...of which this many also sweep the tools of other groups; the rest sweep the provider's own group. In a
    # catalog of separate apps or classes one group's state change seldom enables another group's calls, yet the
    # cross-group part is most of a large catalog's sweep cost; one sweep per provider and depth still finds a
    # cross-group dependency that any of its state changes creates.
    cross_group_sweeps_per_tool: int = 1
    tests_per_pair: int = 3  # counterfactual tests per (provider, field, consumer, input) before giving up
    offers_per_pair: int = 8  # values offered per (provider field, consumer input) before the pair is left alone
    state_offers_per_pair: int = 4  # offers beyond that per (state creator, consumer input), as state tests only
    values_per_export: int = 3  # values one call contributes per export (list elements beyond are alike)
    # Offers to numbers the template fills with a literal, per consumer tool: numbers are everywhere (prices,
    # temperatures, counts) and most numeric inputs take any of them, so these tests queue behind the other
    # offers and have their own budget instead of spending the consumer's budget of id and name offers.
    number_offers_per_tool: int = 40
    fill_alignment: float = 0.5  # name similarity an incidental fill needs (candidate tests themselves need none)
    # Who provides a value: "export" credits every successful call that exports it, arguments included (the
    # paper's Algorithm 1, line 24); "origin" credits only the call that put it into the state, so a read that
    # hands back its input, or an action that re-states a known value, provides nothing.
    credit: str = "origin"
    seed: int = 0
    batch_size: int = 512
    checkpoint_every_s: float = 20.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PoolValue:
    id: int
    tool: str
    export: str
    value: Any
    node: int
    call: int  # id of the provider call in the call log
    restated: bool = False  # a state-changing call re-stated a value already known on its path
    for_group: str = ""  # the tool group its list element names (a password listed for one app's account)
    record: str = ""  # the record it was read from (see :func:`record_of`): its fields are its siblings
    in_text: bool = False  # read from inside a text reply (an export's ``from_text``), not a field of its own


@dataclass
class CallInfo:
    node: int
    tool: str
    args: dict[str, Any]
    record: dict[str, Any] | None  # None once its wave is over: see Engine._record
    suppliers: tuple[int, ...] = ()  # the calls (in the call log) that produced the values it used


@dataclass
class ValueTest:
    """A counterfactual control planned for one success: the consumer call, the value it used, the control."""

    pair: tuple[str, str, str, str]  # (provider, export, consumer, input)
    use: CallInfo
    vid: int
    control_args: dict[str, Any]
    #: a literal input the tool is not known to check (the caller's free choice, text or number), or a placed offer
    free_choice: bool = False


@dataclass
class SweepTest:
    """The before/after test of one consumer call around a provider's state change."""

    call_id: int  # the provider call
    before_node: int
    consumer: str
    args: dict[str, Any]


@dataclass
class Wave:
    """What one wave's successes ask for: tests to run and work items to enqueue."""

    controls: list[ValueTest] = field(default_factory=list)
    parent_tests: list[tuple[int, CallInfo]] = field(default_factory=list)  # (creator call, success after it)
    sweeps: list[SweepTest] = field(default_factory=list)
    new_items: list[Item] = field(default_factory=list)
    # successes of placed offers whose other inputs get their control on the side books (Engine._run_aside)
    placed: list[tuple[Item, dict[str, Any], dict[str, int], dict[str, Any]]] = field(default_factory=list)


_NO_LITERAL = object()  # the template gives the input no literal
_NO_REFERENCES: dict[str, Any] = {}  # a contract without nested references (read only)
_NO_KEYS: frozenset[tuple[str, str]] = frozenset()


def _offerable_literal(schema: dict[str, Any]) -> bool:
    """Whether a literal input is still offered values: numbers without a closed set of values.

    A number one tool returns and another takes (a timestamp, a coordinate, an amount) is a candidate composition
    like an id; a flag or an enumerated choice is the caller's to make, and text is too free to be replaced.
    """
    return schema_type(schema) in ("integer", "number") and "enum" not in schema and "const" not in schema


def control_choices(
    param: str,
    schema: dict[str, Any],
    observed: Any,
    alternatives: Sequence[Any] = (),
    template_literal: Any = _NO_LITERAL,
) -> list[Any]:
    """Candidate replacements for a required input's value, best first; the engine takes the first that fits the
    input's schema (formats and patterns included) and differs from the observed value.

    A control must be a *valid, different* value, or its failure proves only that it was malformed (an
    ``observed + "_other"`` phone number). For an input the template fills with a literal (a number on offer),
    the control is that literal, or another ordinary literal of the proposer: what the call does without the
    provider; for a number, then other observed numbers of the same kind, and never one :func:`_near` the
    observed number. For an observed input, in order: a neutral placeholder for strings that must refer to something (a
    plausible guess could name an existing record), the proposer's ordinary literals, a sentinel, and last
    other observed values of the same kind (valid in form because the sandbox produced them). The observed
    values come last because they are real records: a consumer that accepts any existing file or user succeeds
    with another one too, which tests whether *some* record works, not whether this provider's value was needed
    (Algorithm 1, line 17: a test value not produced by t_p); they replace the malformed guess where nothing
    constructed is valid.
    """
    out: list[Any] = []
    desc = schema.get("description", "")
    if template_literal is not _NO_LITERAL:
        out.append(template_literal)
        out.extend(literal_for(param, schema, desc, option=o) for o in range(3))
        if _is_number(observed):
            # a number on offer: other observed numbers of the same kind are valid too, and are the far
            # replacements when the proposer's literals all lie next to the observed value (see _near)
            out.extend(alternatives)
            return [c for c in out if c is not None and c != observed and not _near(c, observed)]
        return [c for c in out if c is not None and c != observed]
    if schema_type(schema) in (None, "string") and "enum" not in schema:
        out.append("libra_control_value")
        out.append(sentinel_for(schema))
    out.extend(literal_for(param, schema, desc, option=o) for o in range(3))
    out.append(sentinel_for(schema))
    out.extend(alternatives)
    return [c for c in out if c is not None and c != observed]


#: (schema, value) verdicts of :meth:`Engine._fits` kept at most (about a hundred bytes each), and the longest
#: string kept among them
FIT_CACHE = 1 << 17
FIT_CACHE_CHARS = 256
#: JSON Schema keywords that annotate and never constrain (Draft 2020-12, meta-data vocabulary and comments)
ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)

NEAR_FRACTION = 0.25  # numbers this close, relative to their magnitude, may be one value to a tolerant tool


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _near(candidate: Any, observed: Any) -> bool:
    """Whether a numeric control lies too close to the observed number to test it: within
    :data:`NEAR_FRACTION` of the larger magnitude.

    Why: tools commonly treat nearby numbers alike -- a lookup within a radius, a tolerance, rounding, a bucket.
    A control next to the observed value then succeeds for that reason alone, and its success would be read as
    "any value works" (a coordinate 2.0 replacing a located 2.35 falls inside a 50 km match radius). A control
    must be *different* in the sense the tool can tell; a far one tests that, and with none the test is
    inconclusive rather than rejected on a control that was never different.
    """
    if not (_is_number(candidate) and _is_number(observed)):
        return False
    scale = max(abs(float(candidate)), abs(float(observed)))
    return scale > 0 and abs(float(candidate) - float(observed)) <= NEAR_FRACTION * scale


_key = memo_key  # one key for every memoised invocation, checking's and the exploration's


def _clip(record: dict[str, Any]) -> dict[str, Any]:
    """Evidence keeps records readable: large outputs and diffs are cut to a preview."""
    out = dict(record)
    for k in ("output", "state_changes"):
        text = json.dumps(out.get(k), default=repr)
        if len(text) > EVIDENCE_CHARS:
            out[k] = {"_truncated": text[:EVIDENCE_CHARS]}
    return out


def _arg_name(path: str) -> str:
    """``$.user.name`` / ``$['user']`` -> ``user``: the top-level argument an argument export reads."""
    p = path[1:] if path.startswith("$") else path
    p = p.lstrip(".")
    if p.startswith("["):
        return p[1:].split("]", 1)[0].strip("'\"")
    return p.split(".", 1)[0].split("[", 1)[0]


_LAST_INDEX = re.compile(r"^(.*\[\d+\])")


def record_of(source: str, path: str) -> str:
    """The record a value was read from: the innermost list element holding it, else the whole reply (or the
    whole argument set, or diff), qualified by where it was read (``response:$[1]`` for ``$[1]['zip_code']``).

    Why: the fields of one record belong together -- a customer's id and zip code, a place's latitude and
    longitude. A consumer that takes several of them checks them against each other, so mixing fields of
    different records (one customer's id with another's zip code) fails whatever the values are worth.
    """
    m = _LAST_INDEX.match(path)
    return f"{source}:{m.group(1) if m else '$'}"


def _scalars(data: Any) -> list[Any]:
    if isinstance(data, dict):
        return [x for v in data.values() for x in _scalars(v)]
    if isinstance(data, (list, tuple)):
        return [x for v in data for x in _scalars(v)]
    return [data]


def _occurs(value: Any, data: Any, depth: int = 0) -> bool:
    """Whether ``value`` appears in ``data`` as a scalar or as a mapping key (e.g. a file name keying a listing)."""
    if depth > 40:
        return False
    if isinstance(data, dict):
        return any(
            (isinstance(value, str) and value in str(k)) or _occurs(value, v, depth + 1) for k, v in data.items()
        )
    if isinstance(data, (list, tuple)):
        return any(_occurs(value, v, depth + 1) for v in data)
    if isinstance(value, str) and isinstance(data, str):
        return value == data or (len(value) >= 3 and value in data)
    return value == data and type(value) is type(data)


def gate_message(message: str | None, args: dict[str, Any]) -> str | None:
    """The refusal as a gate's signature when it names none of the call's argument values, else None.

    Why: "No user is currently logged in." refuses a call whatever value it was given -- the state is refused,
    not the value -- while "Receiver 'x' not found" is about the value. Only the first kind says that other
    values offered in the same state will fail the same way. A value that happens to appear in the message makes
    the refusal count as value-specific, which errs towards trying more values.
    """
    if not message:
        return None
    low = message.lower()
    for v in _scalars(args):
        text = v if isinstance(v, str) else json.dumps(v)
        if text and text.lower() in low:
            return None
    return " ".join(low.split())


def offered_inputs(item: Item) -> tuple[str, ...]:
    """The inputs an item offers values to (sorted; empty for a probe): what its refusals are evidence about."""
    return tuple(sorted(p for p, _v in item.fixed))


def spread(n: int, m: int) -> list[int]:
    """``m`` positions spread evenly over a list of ``n`` (all of them when ``n <= m``), first and last included.

    Why: a listing is usually sorted (directories before the files inside them, a table by key, oldest first), so
    its first few elements tend to be alike and can all be of the wrong kind for every consumer (three directories
    offered to an input that takes a file). Positions spread from the first element to the last sample the kinds the
    list holds at the same cost.
    """
    if n <= m:
        return list(range(n))
    if m <= 1:
        return [0] if m == 1 else []
    return sorted({round(i * (n - 1) / (m - 1)) for i in range(m)})


def _representatives(entries: list[tuple[Any, Any, Any, str]], per_export: int) -> list[tuple[Any, Any, Any, str]]:
    """The elements of one export's list that enter the pool: a few, spread over the list (:func:`spread`).

    Why: a long list (fingerprint bits, search hits) is one kind of value many times over, so a few elements
    represent it; offering every element would multiply the tests without finding another relation. Elements
    labelled for different groups (entries with a group name) are each meant for another service, so such a list
    keeps eight times as many.
    """
    cap = 8 * per_export if any(e[-1] for e in entries) else per_export
    return [entries[i] for i in spread(len(entries), cap)]


def _inside(vjson: str, given: Iterable[str]) -> bool:
    """Whether a string (as JSON) occurs inside one of the JSON-encoded strings in ``given``: a value read out of
    text is known when some longer text already held it."""
    inner = vjson[1:-1]
    return bool(inner) and any(g.startswith('"') and inner in g for g in given)


def _written(value: Any, state_changes: Any) -> bool:
    """Whether a call wrote ``value`` into the state: as a new value of a changed path, or anywhere in what it
    added -- not merely in the path of a record that already existed, nor in a record it removed.

    Why: an update addresses the record it changes by its key (``customers.C100000.zip_code``); the key was in
    the state before the call, so the call re-stated it and is not its source. A created record's key (a new file
    name) and a written value are the call's own. A removed record (a closed loan naming its book) left the
    state: the call took its values away and put none of them there (issue 18, defect 13). Diffs not in the
    runtime's ``changed``/``added``/``removed`` shape fall back to any occurrence.
    """
    if not isinstance(state_changes, dict):
        return _occurs(value, state_changes)
    for part in state_changes.values():
        if not (
            isinstance(part, dict)
            and set(part) <= {"changed", "added", "removed"}
            and isinstance(part.get("changed", {}), dict)
        ):
            if _occurs(value, part):
                return True
            continue
        changed = part.get("changed") or {}
        after = [d.get("after") if isinstance(d, dict) and "after" in d else d for d in changed.values()]
        if _occurs(value, after) or _occurs(value, part.get("added")):
            return True
    return False


def _rewrote_in_place(value: Any, state_changes: Any) -> bool:
    """Whether ``value`` is the key of a record the call changed in place -- a segment of the path of one of its
    ``changed`` entries (``orders["12446"].price``) -- and no value it wrote there or added.

    Why: a call that reports such a key (an order id it was not given) overwrote a record that was already in
    the state. Origin credit rightly withholds the key from it (see :func:`_written`), but a creating tool does
    this too when the key it mints coincides with a record the sandbox already holds (a counter that starts at
    an existing id, a default name a fixture already uses): then the key it *would* mint is never seen. Only a
    second call from the state it created tells the two apart (:meth:`Engine._on_success`).
    """
    if not isinstance(state_changes, dict) or _written(value, state_changes):
        return False
    text = value if isinstance(value, str) else json.dumps(value) if _is_number(value) else None
    if not text:
        return False
    for part in state_changes.values():
        changed = part.get("changed") if isinstance(part, dict) else None
        if isinstance(changed, dict) and any(text in path_keys(str(path)) for path in changed):
            return True
    return False


def _filled(value: Any, state_changes: Any) -> bool:
    """Whether ``value`` names a record whose content the call wrote where there was none: it is in the path of a
    changed entry whose value before the call was empty (``root.contents["new.txt"].content``: ``""`` -> text).

    Why: a record is often created in two steps, first empty (a file touched, an account opened, a draft begun)
    and then filled. The call that gives the blank record its first content is, for a reader of that content,
    where the record comes from, as much as the call that added it; an update of content that was already there
    (an address overwritten: ``customers.C100000.address1``) only re-states whose record it changed (see
    :func:`_written`).
    """
    if not isinstance(state_changes, dict):
        return False
    for part in state_changes.values():
        changed = part.get("changed") if isinstance(part, dict) else None
        if not isinstance(changed, dict):
            continue
        for path, d in changed.items():
            if (
                isinstance(d, dict)
                and "before" in d
                and d["before"] in (None, "", [], {})
                and _occurs(value, {path: None})
            ):
                return True
    return False


#: Words of an input that names a place in a file tree.
PATH_WORDS = frozenset({"path", "filepath", "dirpath"})


def path_inside(folder: Any, literal: Any) -> str | None:
    """``literal`` (a relative path a template chose) placed inside ``folder`` (a value some call produced), or None
    when either is no path: the folder must be a one-line string, the literal a relative path without ``..``."""
    if not (isinstance(folder, str) and isinstance(literal, str)):
        return None
    base, name = folder.strip().rstrip("/"), literal.strip()
    if (
        not base
        or not name
        or len(base) > 255
        or "\n" in base
        or name.startswith(("/", "~"))
        or ".." in name.split("/")
    ):
        return None
    return f"{base}/{name}"


def with_leaf(structure: Any, pointer: Sequence[str | int], value: str) -> Any | None:
    """A copy of ``structure`` with the string leaf at ``pointer`` replaced by ``value``, or None when the pointer
    does not lead to a string leaf."""
    out = copy.deepcopy(structure)
    node = out
    for i, step in enumerate(pointer):
        keyed = isinstance(node, dict) and isinstance(step, str) and step in node
        indexed = (
            isinstance(node, list) and isinstance(step, int) and not isinstance(step, bool) and 0 <= step < len(node)
        )
        if not (keyed or indexed):
            return None
        if i == len(pointer) - 1:
            if not isinstance(node[step], str):
                return None
            node[step] = value
            return out
        node = node[step]
    return None


def _held(value: Any) -> str | None:
    """The string a filled input holds (None for anything else); a one-element list holds its string, since a
    scalar may fill a list input."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value if isinstance(value, str) else None


def _holding(on_offer: set[str | None], args: dict[str, Any]) -> frozenset[str]:
    """The strings a call under binding already passes: the values on offer and the inputs filled so far."""
    return frozenset({*on_offer, *map(_held, args.values())} - {None})


def _offer_coincides(args: dict[str, Any], used: dict[str, int], offered: dict[str, int]) -> bool:
    """Whether a string on offer to one input is also what the call passes in another input it filled itself.

    Why: a call that receives the same string in two roles (a customer id as the id and as the zip code) cannot
    tell the roles apart, and whatever it then writes or returns ties the value to both: every relation learned
    from it is a coincidence of values across fields (issue 18, defect 12). Such a binding is not made; the
    offer is tested where the other inputs hold their own values.
    """
    for param, vid in offered.items():
        value = args.get(param)
        if not isinstance(value, str) or used.get(param) != vid:
            continue
        if any(p != param and p in used and p not in offered and args.get(p) == value for p in args):
            return True
    return False


def _call_json(tool: str, args: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    return {"tool": tool, "arguments": args, "record": _clip(record)}


class _CallsOut:
    """A wave's stream of calls to the runtime, with results taken by ticket in any order.

    The stream hands results back in the order calls were submitted; calls prefetched while a wave is planned
    (:meth:`Engine._prefetch`) are taken later, in the order the tests list them, so results that come back before
    their turn wait here (``held``).
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.submitted = 0
        self.held: dict[int, tuple[Any, State]] = {}
        self.taken = 0  # the stream's results taken so far (tickets below it are in ``held`` or were handed out)
        self.early: dict[MemoKey, int] = {}  # prefetched calls not taken yet: memo key -> ticket

    def submit(self, call: tuple[State, str, dict[str, Any]]) -> int:
        self.stream.submit(call)
        self.submitted += 1
        return self.submitted - 1

    def poll(self) -> None:
        """Let the workers go on with the calls submitted (see
        :meth:`~libra.runtime.workers.executor.CallStream.poll`)."""
        poll = getattr(self.stream, "poll", None)
        if poll is not None:
            poll()

    def ready(self, ticket: int) -> bool:
        """True when the result of ``ticket`` can be had without waiting for a worker."""
        return ticket in self.held or (ticket == self.taken and self.stream.ready())

    def result(self, ticket: int) -> tuple[Any, State]:
        while ticket not in self.held:
            self.held[self.taken] = self.stream.next()
            self.taken += 1
        return self.held.pop(ticket)

    def close(self) -> None:
        self.early.clear()
        self.held.clear()
        self.stream.close()


class Engine:
    """Algorithm 1 over a runtime, contracts and candidate compositions."""

    def __init__(
        self,
        catalog: Catalog,
        runtime: Runtime,
        contracts: dict[str, Contract],
        candidates: Sequence[Candidate],
        similarity: Callable[[str, str], float],
        config: BuildConfig | None = None,
        fixtures: dict[str, Any] | None = None,
        memo_path: str | Path | None = None,
        memo: MemoStore | None = None,
    ) -> None:
        self.catalog = catalog
        # Sandbox facts the runtime was set up with (e.g. the test account's credentials): values a caller of the
        # sandbox legitimately knows, offered to inputs whose names they match. They are not tools, so no
        # relation ever starts from them.
        self.fixtures = dict(fixtures or {})
        self.runtime = runtime
        self.contracts = contracts
        self._outcome_keys: dict[str, tuple[Contract, str, str]] = {}  # see _classify
        self.config = config or BuildConfig()
        self.similarity = similarity
        # candidate index: provider (tool, export) -> consumer (tool, input); consumer (tool, input) -> providers
        self.by_provider: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self.by_consumer: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        runnable = {t.name for t in catalog if t.executable and t.name in contracts}
        self.groups = {t.group.lower() for t in catalog if t.group}
        # One tuple per distinct (tool, name) pair, shared by every entry naming it: the index holds millions of
        # entries (AppWorld: 2.1 M candidates) over a few thousand pairs, so a tuple per entry was most of its size.
        pairs: dict[tuple[str, str], tuple[str, str]] = {}
        providers: dict[tuple[str, str], dict[tuple[str, str], None]] = {}
        intern, by_provider = pairs.setdefault, self.by_provider  # (bound once: the loop runs millions of times)
        for c in candidates:
            if c.provider not in runnable or c.consumer not in runnable:
                continue  # compositions with a tool the runtime cannot execute are counted, never tested
            provider = (c.provider, c.provider_field)
            provider = intern(provider, provider)
            consumer = (c.consumer, c.consumer_input)
            consumer = intern(consumer, consumer)
            row = by_provider.get(provider)
            if row is None:
                row = by_provider[provider] = []
            row.append(consumer)
            seen = providers.get(consumer)
            if seen is None:
                seen = providers[consumer] = {}
            seen[provider] = None
        # (a tuple per consumer input: it is only iterated, and its order never matters, see _ranked_keys)
        self.by_consumer = {k: tuple(v) for k, v in providers.items()}
        del providers
        self._validators: list[jsonschema.Draft202012Validator] = []  # see _validator_id
        self._schema_by_text: dict[str, int] = {}
        self._schema_ids: dict[tuple[str, str], int] = {}
        self._key_cache: dict[tuple[str, str], list[tuple[float, tuple[str, str]]]] = {}
        self._allowed_cache: dict[tuple[str, str], dict[tuple[str, str], float]] = {}
        self._offered_cache: dict[tuple[str, str], bool] = {}
        self._group_of = {t.name: t.group for t in catalog}
        self._tools = {t.name: t for t in catalog}
        # (validator id, value type, value) -> how the value is passed ("as is", "listed") or None: see _fits
        self._fit_cache: dict[tuple[int, type, Any], str | None] = {}
        self._literal_fit_cache: dict[tuple[str, str], bool] = {}
        self._checked_cache: dict[tuple[str, str], bool] = {}
        self._inside_cache: dict[tuple[str, str], bool] = {}
        self._nested = {name: c.nested_references() for name, c in contracts.items()}
        self._shown_cache: dict[int, frozenset[str]] = {}
        # (node, consumer, input) -> the node's key count and its keys the input admits; (deepest node, consumer,
        # input) -> the path's key count and its admitted keys, ranked: see _present_keys
        self._present_by_node: dict[tuple[int, str, str], tuple[int, frozenset[tuple[str, str]]]] = {}
        self._present_by_path: dict[tuple[int, str, str], tuple[int, list[tuple[float, tuple[str, str]]]]] = {}
        # exploration state (everything below is checkpointed)
        self.nodes: list[Node] = []
        self.values: list[PoolValue] = []
        self.calls: list[CallInfo] = []
        self.call_values: dict[int, list[int]] = {}  # call id -> the pool values it produced
        # Binding items (a new value offered to a candidate input) go first: they are the candidate tests. Probes
        # (a template re-run from a new state) explore; they wait and have their own budget.
        # Offers between tools of the same group (one app, one class) go before offers across groups: a service's
        # tokens and ids are mostly consumed by the same service, and in a large catalog the cross-group offers
        # would otherwise spend a consumer's budget first. Within each, the best-named pairings go first (the
        # field similarity of the offered export and the input): a consumer's budget of bound calls is spent on
        # ``song_id -> song_id`` before ``review_id -> song_id``, whatever order the values were discovered in.
        # Only the order changes, never what a test concludes.
        # (Items are held packed, see :mod:`.worklist`: a large build queues millions it never runs.)
        codec = ItemCodec()
        self.queue = PackedHeap(codec)  # heaps by (-similarity, sequence)
        self.far = PackedHeap(codec)
        self.probes = PackedQueue(codec)
        self.near_probes = PackedQueue(codec)  # probes of a state their own group's change created: see _pop
        self.enqueued = 0
        # Work items already run, by a 128-bit digest of (state, tool, arguments, credit): a large build runs hundreds
        # of thousands, and their keys in full (the arguments' JSON) were tens of megabytes.
        self.seen_items: set[bytes] = set()
        # Every invocation's record and resulting state, on disk (:mod:`.memo`): states the engine holds (nodes,
        # results) are light, their payloads are fetched by content key for the calls of a wave. ``memo_path``
        # None keeps the store in a temporary directory; a build passes the path next to its checkpoint.
        self.memo = memo if memo is not None else MemoStore(memo_path)
        # Memo keys of calls contract checking made through the same store that this exploration has not made
        # yet (see :meth:`start` and :meth:`run_many`).
        self.inherited: set[MemoKey] = set()
        self.per_tool: dict[str, int] = {}
        self.per_tool_probes: dict[str, int] = {}
        self.per_tool_numbers: dict[str, int] = {}
        self.sweeps: dict[str, int] = {}
        self.pair_tests: dict[tuple[str, str, str, str], int] = {}
        # Moot tests per pair, and the (pair, value) they tested (see _moot)
        self.pair_moot: dict[tuple[str, str, str, str], int] = {}
        self.moot_values: set[tuple[tuple[str, str, str, str], str]] = set()
        self.pair_offers = PairCounts()  # offers per candidate pair, aligned with by_provider (see _offers)
        self.state_offers: dict[tuple[str, str, str], int] = {}
        # The retries of failed calls keep their own books (:mod:`.retries`): nothing above reads them.
        self.retry = RetryLedger()
        self._retrying = False  # True while a wave's retries run (see _aside), never checkpointed
        # (node, consumer, inputs offered to) -> value-independent refusal -> the distinct argument sets it refused
        # there (see gated)
        self.refusals: dict[tuple[int, str, tuple[str, ...]], dict[str, set[str]]] = {}
        # consumer -> inputs its own rejection said exclude one another (see _learn_exclusive)
        self.exclusive: dict[str, Exclusive] = {}
        self.relations: dict[tuple, Relation] = {}
        self.counters: dict[str, int] = {
            "work_items": 0,
            "executed_calls": 0,
            "memo_hits": 0,
            "calls_from_checking": 0,
            "provenance_tests": 0,
            "state_tests": 0,
            "skipped_implied": 0,
            "skipped_unfit": 0,
            "inconclusive_tests": 0,
            "moot_tests": 0,
            "waves": 0,
        }
        self.counters.update(self.retry.stats(()))  # the retries' figures, kept current by _run_aside
        self.started = False
        self.elapsed_before_resume = 0.0
        self._out: _CallsOut | None = None  # the current wave's stream of calls (see run_many), never checkpointed
        # the current wave's planned new items, and how many of them are queued already (see _idle), never checkpointed
        self._unqueued: list[Item] = []
        self._queued_upto = 0

    # ------------------------------------------------------------------------------------------------- setup
    def start(self, reuse: Iterable[MemoKey] = ()) -> None:
        """Begin the exploration from the fresh state.

        ``reuse`` are the memo keys of the calls contract checking made through this engine's memo store
        (:attr:`~libra.contracts.check.CheckSummary.memo_keys`): the store keeps exactly those rows and forgets
        anything else, and the exploration takes their records instead of running the calls again. Without
        ``reuse`` the store starts empty.
        """
        keys = list(dict.fromkeys(reuse))
        if keys:
            self.memo.retain(keys)
        else:
            self.memo.clear()
        self.inherited = set(keys)
        root = Node(0, self.memo.keep(self.runtime.fresh()), None, 0)
        self.nodes.append(root)
        for name in sorted(self.fixtures):
            pv = PoolValue(len(self.values), FIXTURE, name, self.fixtures[name], 0, -1)
            self.values.append(pv)
            root.add(pv)
        order = [t.name for t in self.catalog if t.executable and t.name in self.contracts]
        random.Random(self.config.seed).shuffle(order)
        for name in order:
            for ti, tmpl in enumerate(self.contracts[name].templates):
                if tmpl.expected == "success":
                    self.probes.append(Item(0, name, ti))
        self.started = True

    # ------------------------------------------------------------------------------------------- execution
    def run_many(
        self, calls: Sequence[tuple[State, str, dict[str, Any]]], purpose: str | Sequence[str]
    ) -> list[tuple[dict[str, Any], State]]:
        """Invoke with memoisation; unique new calls go to the runtime in one batch.

        ``purpose`` (one for all calls, or one per call) says what the budget was spent on -- offers, probes,
        controls, sweeps -- so a build's statistics show where its calls went. While retries run (:meth:`_aside`)
        every memoised call is free and the calls executed are the retries' (:attr:`RetryLedger.made`)."""
        keys = [_key(s, t, a) for s, t, a in calls]
        todo: dict[tuple[str, str, str], tuple[State, str, dict[str, Any]]] = {}
        purposes = [purpose] * len(calls) if isinstance(purpose, str) else list(purpose)
        known = self.memo.get_many(keys)
        for k, c, why in zip(keys, calls, purposes):
            if k in known and (self._retrying or not self._owed(k)):
                self.counters["memo_hits"] += 1
            elif k not in todo:
                todo[k] = c
                self.counters[f"calls_{why}"] = self.counters.get(f"calls_{why}", 0) + 1
        if not self._retrying:
            self._take_over(todo)
        pending = list(todo.items())
        if pending:
            calls_out = self._calls_out()
            done = self._run_streamed(pending, calls_out) if calls_out is not None else self._run_chunked(pending)
            for (k, _c), rec, light in done:
                known[k] = (rec, light)
            if self._retrying:
                self.retry.made.update(k for k, _c in pending)
        return [known[k] for k in keys]

    def _classify(self, tool: str, record: dict[str, Any]) -> str:
        """Which outcome of ``tool``'s contract a record shows (:func:`~libra.contracts.outcome.classify`).

        Why not ``classify`` itself: it checks on every record that the contract's schemas were not edited in
        place since their text was taken, a comparison of the whole schema that cost more than the validation.
        The exploration's contracts are fixed (checking and revision are over before it starts, and it edits no
        contract), so their texts are taken once per contract object; a contract replaced in ``contracts`` is a
        different object and gets its texts anew. The verdict is the same.
        """
        contract = self.contracts[tool]
        keys = self._outcome_keys.get(tool)
        if keys is None or keys[0] is not contract:
            keys = self._outcome_keys[tool] = (contract, schema_key(contract.success), schema_key(contract.failure))
        return classify_keyed(keys[1], keys[2], record)

    def _owed(self, key: MemoKey) -> bool:
        """Whether a memoised call is one the exploration has not made itself: contract checking or a retry made
        it first. Such a call is still the exploration's own first call of it (see :meth:`_take_over`)."""
        return key in self.inherited or key in self.retry.made

    def _take_over(self, todo: dict[MemoKey, Any]) -> None:
        """Take the exploration's calls that contract checking or a retry already made from the memo instead of
        running them again (removed from ``todo``), counted as the exploration's own first calls of them (budgets,
        the executed total): what the exploration explores does not depend on what checking or the retries
        happened to run, only their runtime work is saved."""
        reused = [k for k in todo if k in self.inherited]
        if reused:
            self.inherited.difference_update(reused)
            self.counters["calls_from_checking"] += len(reused)
        retried = [k for k in todo if k in self.retry.made]
        if retried:
            self.retry.made.difference_update(retried)
            self.counters["calls_from_retries"] = self.counters.get("calls_from_retries", 0) + len(retried)
        for k in reused + retried:
            del todo[k]
        self.counters["executed_calls"] += len(reused) + len(retried)

    def _calls_out(self) -> _CallsOut | None:
        """The wave's stream of calls to the runtime, opened on first use (None: the runtime has no stream)."""
        if self._out is None:
            stream_of = getattr(self.runtime, "stream", None)
            if stream_of is None:
                return None
            self._out = _CallsOut(stream_of())
        return self._out

    def _poll_calls(self) -> None:
        """Between pieces of the engine's own work (binding, planning): read the replies that arrived and send the
        idle workers their next calls, so that they run the calls submitted while the engine plans."""
        if self._out is not None:
            self._out.poll()

    def _close_calls(self) -> None:
        if self._out is not None:
            out, self._out = self._out, None
            out.close()

    #: calls submitted ahead of the wave's tests at most (see :meth:`_prefetch`): a bound on the records and states
    #: held before the tests take them
    PREFETCH = 2048

    def _prefetch(self, calls: Iterable[tuple[State, str, dict[str, Any]]]) -> None:
        """Submit now calls that a later :meth:`run_many` of this wave is certain to make, so that the workers run
        them while the engine is still planning the wave.

        Why it changes nothing: a call submitted here is one :meth:`run_many` would run (not memoised, not made by
        contract checking, not submitted already), nothing memoises calls between the planning and the tests of a
        wave (its retries run after its tests), and :meth:`run_many` takes the result when its turn comes,
        counting, memoising and ordering everything exactly as without the prefetch. A call's result depends on
        its own state and arguments only.
        """
        out = self._calls_out()
        if out is None:
            return
        for s, t, a in calls:
            if len(out.early) >= self.PREFETCH:
                return
            k = _key(s, t, a)
            if k in out.early or k in self.inherited or k in self.memo:
                continue
            out.early[k] = out.submit((self.memo.full(s), t, a))

    def _store(
        self, chunk: Sequence[tuple[MemoKey, Any]], results: Sequence[tuple[Any, State]]
    ) -> list[tuple[tuple[MemoKey, Any], dict[str, Any], State]]:
        """Memoise the results of new calls; returns (call, record, light state) per call."""
        recs = [rec.to_dict() if isinstance(rec, InvocationRecord) else rec for rec, _st in results]
        lights = self.memo.put_many((k, rec, st) for (k, _c), rec, (_r, st) in zip(chunk, recs, results))
        self.counters["executed_calls"] += len(results)
        return list(zip(chunk, recs, lights))

    def _run_chunked(
        self, pending: list[tuple[MemoKey, Any]]
    ) -> list[tuple[tuple[MemoKey, Any], dict[str, Any], State]]:
        """New calls to a runtime without a stream, in chunks of a batch: a chunk's results (records and the full
        states the calls led to) are stored before the next chunk runs, so a wave of many thousand sweep calls
        never holds all of its snapshots at once. Each call's result depends on its own state and arguments only,
        so the chunking changes nothing the engine sees."""
        out = []
        step = max(1, self.config.batch_size)
        for start in range(0, len(pending), step):
            chunk = pending[start : start + step]
            batch = [(self.memo.full(s), t, a) for _k, (s, t, a) in chunk]
            if hasattr(self.runtime, "invoke_many"):
                results = self.runtime.invoke_many(batch)  # type: ignore[attr-defined]
            else:
                results = [self.runtime.invoke(s, t, a) for s, t, a in batch]
            del batch
            out.extend(self._store(chunk, results))
            del results
        return out

    #: results of a stream memoised together at most (see :meth:`_run_streamed`)
    STORE_GROUP = 64
    #: work items queued at a time while the caller waits for a worker (see :meth:`_idle`)
    IDLE_ITEMS = 256

    def _queue_planned(self, n: int) -> None:
        """Queue the next ``n`` of the wave's planned new items not queued yet, in the order they were planned."""
        items, start = self._unqueued, self._queued_upto
        end = min(len(items), start + n)
        self._queued_upto = end
        for it in items[start:end]:
            self._enqueue(it)

    def _idle(self, out: _CallsOut, ticket: int) -> None:
        """Until the result of ``ticket`` is back, queue the wave's planned new items (:meth:`_queue_planned`).

        Why: the caller's work on a wave is serial and the workers wait for it, and queueing a large wave's new
        items (an offer per candidate input of every new value) was a good share of it, done after all of the
        wave's calls. It changes nothing to do it while the workers run the wave's tests: once the wave's
        successes are planned its new items are final, nothing pops the worklist before the next wave, and
        what queueing an item reads (its node, values and names, and the per-tool budgets, which only the next
        wave's admissions charge) is fixed by then; the items are queued in the order they were planned, so they
        take the same sequence numbers, and :meth:`step` queues whatever is left before it sweeps the heaps.
        """
        while self._queued_upto < len(self._unqueued) and not out.ready(ticket):
            self._queue_planned(self.IDLE_ITEMS)

    def _run_streamed(
        self, pending: list[tuple[MemoKey, Any]], out: _CallsOut
    ) -> list[tuple[tuple[MemoKey, Any], dict[str, Any], State]]:
        """New calls through the runtime's stream (:class:`~libra.runtime.workers.executor.CallStream`): the engine's
        own
        work on them (fetching their states from the memo store, memoising their results) happens while the
        workers run the calls submitted before.

        At most a batch of calls is submitted ahead of the results taken, so a wave of many thousand sweep calls
        never holds all of its snapshots at once. Results are taken in the order of ``pending`` (calls prefetched
        by :meth:`_prefetch` were submitted earlier) and memoised whenever the next one is not back yet (the
        workers are busy: the caller's turn), or when :data:`STORE_GROUP` are waiting. Each call's result depends
        on its own state and arguments only, so none of this changes what the engine sees.
        """
        done: list[tuple[tuple[MemoKey, Any], dict[str, Any], State]] = []
        ahead = max(1, self.config.batch_size)
        tickets: list[int] = []
        group: list[tuple[MemoKey, Any]] = []
        results: list[tuple[Any, State]] = []
        submitted = 0
        for taken in range(len(pending)):
            while submitted < len(pending) and submitted - taken < ahead:
                k, (s, t, a) = pending[submitted]
                early = out.early.pop(k, None)
                tickets.append(early if early is not None else out.submit((self.memo.full(s), t, a)))
                submitted += 1
            if group and (len(group) >= self.STORE_GROUP or not out.ready(tickets[taken])):
                done.extend(self._store(group, results))
                group, results = [], []
            self._idle(out, tickets[taken])
            results.append(out.result(tickets[taken]))
            group.append(pending[taken])
        if group:
            done.extend(self._store(group, results))
        return done

    def held(self) -> dict[str, int]:
        """How many entries the exploration holds in memory, per structure (the memo's caches included): what a
        build's memory grows with, reported in its statistics."""
        out = {
            "nodes": len(self.nodes),
            "values": len(self.values),
            "calls": len(self.calls),
            "queued_items": len(self.queue) + len(self.far) + len(self.probes) + len(self.near_probes),
            "seen_items": len(self.seen_items),
            "relations": len(self.relations),
        }
        out.update({f"memo_{k}": v for k, v in self.memo.held().items() if k.endswith("in_memory")})
        return out

    def close(self, remove: bool = False) -> None:
        """Close the memo store (``remove`` deletes its files: the build is done)."""
        self.memo.close(remove)

    # -------------------------------------------------------------------------------------------- binding
    def _lineage(self, node_id: int) -> list[Node]:
        return lineage(self.nodes, node_id)

    def _fits(self, tool: Tool, param: str, value: Any) -> Any | None:
        """The value as it would be passed to ``param`` (a scalar may fill a list input), or None if invalid.

        Declared formats are checked too: a status message offered to an ``email`` input is a test that can only
        fail, and in a large catalog such offers would use up the consumer's budget before the real providers'.
        """
        schema_id = self._schema_id(tool, param)
        v = self._validators[schema_id]
        # The verdict is a pure function of the schema and the value, and the same pool values are offered to the
        # same kinds of input over and over (every binding, every offer): each is validated once per schema.
        # Keyed by type too, because 1, 1.0 and True are equal as dict keys but not to a schema; long text is
        # validated every time rather than kept alive by the cache.
        cached = isinstance(value, (int, float, bool)) or (isinstance(value, str) and len(value) <= FIT_CACHE_CHARS)
        if cached:
            hit = self._fit_cache.get((schema_id, type(value), value), _NO_LITERAL)
            if hit is not _NO_LITERAL:
                return value if hit == "as is" else [value] if hit == "listed" else None
        if v.is_valid(value):
            out: Any = value
        elif isinstance(value, (str, int, float, bool)) and v.is_valid([value]):
            out = [value]
        else:
            out = None
        if cached:
            if len(self._fit_cache) >= FIT_CACHE:
                self._fit_cache.clear()  # bounded: a cleared cache only validates again
            self._fit_cache[(schema_id, type(value), value)] = (
                "as is" if out is value else "listed" if out is not None else None
            )
        return out

    def _schema_id(self, tool: Tool, param: str) -> int:
        """The validator id of an input (:meth:`_validator_id`), cached per input: what :meth:`_fits` decides by."""
        key = (tool.name, param)
        schema_id = self._schema_ids.get(key)
        if schema_id is None:
            schema_id = self._schema_ids[key] = self._validator_id(tool.param_schema(param))
        return schema_id

    def _validator_id(self, schema: dict[str, Any]) -> int:
        """The id of the validator of a parameter schema, shared by every input whose schema differs only in
        annotations (:data:`ANNOTATIONS`: a description says nothing about which values are valid), so inputs of
        the same kind (an id, an e-mail address, a page number) share one validator and one cache of verdicts."""
        text = json.dumps({k: v for k, v in schema.items() if k not in ANNOTATIONS}, sort_keys=True, default=repr)
        schema_id = self._schema_by_text.get(text)
        if schema_id is None:
            schema_id = self._schema_by_text[text] = len(self._validators)
            self._validators.append(
                jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
            )
        return schema_id

    def bind(self, item: Item, prefer_call: int | None = None) -> tuple[dict[str, Any], dict[str, int]] | None:
        """Concrete arguments for an item, or None when a required observation has no fitting value."""
        tool = self.catalog[item.tool]
        tmpl = self.contracts[item.tool].templates[item.template]
        fixed = dict(item.fixed)
        required = set(tool.required)
        lineage: list[Node] | None = None
        args: dict[str, Any] = {}
        used: dict[str, int] = {}
        siblings = self._records(fixed.values())
        # The values on offer are taken before any input is filled: a value offered to one input never also fills
        # another as its sibling or best-named value (one value in two roles, see :func:`_offer_coincides`), also
        # when the offer is passed as a one-element list.
        offered = {v for p, v in fixed.items() if p in tmpl.arguments}
        # the strings on offer: with the inputs filled so far, what a filled input avoids repeating (_best_value)
        on_offer = {_held(self.values[v].value) for v in offered}
        for param, arg in tmpl.arguments.items():
            if param in fixed and arg.kind in ("observation", "literal"):
                # the value on offer (a literal input receives one only when it is a number: see ``_offers``)
                pv = self.values[fixed[param]]
                offer = self._placed(item.tool, param, item.placement, pv.value, arg.value)
                val = None if offer is None else self._fits(tool, param, offer)
                if val is None:
                    return None
                args[param], used[param] = val, pv.id
                continue
            if arg.kind == "literal":
                args[param] = arg.value
                sibling = (
                    self._sibling_value(item.tool, tool, param, siblings, offered | set(used.values()))
                    if self.offered_literal(item.tool, param)
                    else None
                )
                if sibling is not None:
                    # a field of the offered value's own record (the longitude beside an offered latitude)
                    args[param], used[param] = sibling[1], sibling[0].id
                elif self._known_fits(item.tool, param):
                    # A literal input that a sandbox fact fits by name or description ("phone_number: The phone
                    # number to search for." beside the sandbox's own phone number) takes the best known value
                    # instead of an invented one: a search for an invented number finds nothing.
                    if lineage is None:
                        lineage = self._lineage(item.node)
                    best = self._best_value(
                        item.tool,
                        tool,
                        param,
                        lineage,
                        prefer_call,
                        siblings,
                        offered | set(used.values()),
                        _holding(on_offer, args),
                        self._records(offered | set(used.values())),
                    )
                    if best is not None:
                        args[param], used[param] = best[2], best[1].id
            elif arg.kind == "observation":
                if lineage is None:
                    lineage = self._lineage(item.node)
                best = self._best_value(
                    item.tool,
                    tool,
                    param,
                    lineage,
                    prefer_call,
                    siblings,
                    offered | set(used.values()),
                    _holding(on_offer, args),
                    self._records(offered | set(used.values())),
                )
                if best is None:
                    if param not in required:
                        continue  # an optional observation with nothing to observe is left out
                    # Nothing observed fits: try the value the tool's own metadata suggests. If the tool really
                    # needs a pre-existing value the call fails and teaches nothing; if it accepts any value,
                    # the observation was over-cautious and the call still opens the states that follow.
                    schema = tool.param_schema(param)
                    args[param] = literal_for(param, schema, schema.get("description", ""))
                    continue
                args[param], used[param] = best[2], best[1].id
        if _offer_coincides(args, used, fixed):
            return None
        group = self.exclusive.get(item.tool)
        if group is not None:
            keep = one_of(args, group, [p for p in fixed if p in args], item.node + item.template)
            if keep is not None:
                args = {p: v for p, v in args.items() if p not in group.inputs or p == keep}
                used = {p: v for p, v in used.items() if p in args}
        return args, used

    def _known_fits(self, consumer: str, param: str) -> bool:
        """Whether a literal input is one a sandbox fact fits (the name/description rule of :meth:`_ranked_keys`).

        Closed sets, flags and numbers keep their literal (any of their values is legitimate), and so does a value
        the call chooses anew (``new_password``, "the name of the new folder"): filling it with a known value
        would make a creation collide with the record it names.
        """
        key = (consumer, param)
        hit = self._literal_fit_cache.get(key)
        if hit is None:
            schema = self.catalog[consumer].param_schema(param)
            new = "new" in words(param) or "new" in words(str(schema.get("description", "")))
            free = schema_type(schema) in (None, "string") and "enum" not in schema and "const" not in schema
            hit = self._literal_fit_cache[key] = (
                bool(self.fixtures)
                and free
                and not new
                and any(k[0] == FIXTURE for _s, k in self._ranked_keys(consumer, param))
            )
        return hit

    def checked_form(self, consumer: str, param: str) -> bool:
        """Whether the tool checks the form of a literal input: it refused the proposer's first literal and a
        revision repaired it from the message (:meth:`Contract.checked_literals`: "use one of mm, cm, m, km", "on
        or after 1980"), or the input declares or its description states a form (:func:`stated_form`: an ISO
        date). Cached.

        Why: such an input is no free choice. A value another tool returns that the tool accepts there is of the
        checked kind (a unit, a timestamp after 1980, a date), so it is a candidate like an id is: it is offered
        (text too, see :meth:`_offers`) and, when the template's own literal works as well, the test concludes
        compatibility. A literal the tool never refused may take any number or any text, and both succeeding
        then shows only that.
        """
        key = (consumer, param)
        hit = self._checked_cache.get(key)
        if hit is None:
            schema = self.catalog[consumer].param_schema(param)
            closed = "enum" in schema or "const" in schema
            text = schema_type(schema) in (None, "string") and stated_form(schema)
            hit = not closed and (param in self.contracts[consumer].checked_literals() or text)
            self._checked_cache[key] = hit
        return hit

    def offered_literal(self, consumer: str, param: str) -> bool:
        """Whether a literal input receives offers: a number without a closed set (:func:`_offerable_literal`), or
        an input whose form the tool checks (:meth:`checked_form`). Cached (every binding asks)."""
        key = (consumer, param)
        hit = self._offered_cache.get(key)
        if hit is None:
            hit = self._offered_cache[key] = _offerable_literal(
                self.catalog[consumer].param_schema(param)
            ) or self.checked_form(consumer, param)
        return hit

    def _placed(self, consumer: str, param: str, placement: str, value: Any, literal: Any) -> Any | None:
        """The argument an offer of ``value`` passes: the value itself, the template's path literal inside it (a
        folder offer, :meth:`placed_path`), or the template's structured literal with its reference leaf replaced
        (a leaf offer, :meth:`~libra.contracts.model.Contract.nested_references`); None when it cannot be placed."""
        if placement == "folder":
            return path_inside(value, literal)
        if placement == "leaf":
            pointer = self._nested.get(consumer, {}).get(param)
            return None if pointer is None or not isinstance(value, str) else with_leaf(literal, pointer, value)
        return value

    def placed_path(self, consumer: str, param: str) -> bool:
        """Whether a creating tool's path input, which its template fills with a relative literal, receives values
        as the folder to create in (:func:`path_inside`). Cached.

        Why: a tool that creates a file or folder at a path the caller chooses can create it inside a folder
        another call made -- and often only there: a nested path fails until its parent exists. Offering the
        produced path *as the parent* of the template's own name keeps the name the caller's choice and makes
        that dependency testable: the call succeeds after the folder's creation and fails before it (a state
        relation, found by the state test every success after a change gets). Only inputs named as paths
        (:data:`PATH_WORDS`) of tools the proposer reads as creating something, so names, keys and contents are
        never joined.
        """
        key = (consumer, param)
        hit = self._inside_cache.get(key)
        if hit is None:
            tool = self.catalog[consumer]
            hit = (
                bool(set(words(param)) & PATH_WORDS)
                and is_creation_tool(tool)
                and schema_type(tool.param_schema(param)) in (None, "string")
            )
            self._inside_cache[key] = hit
        return hit

    def _same_group_key(self, key: tuple[str, str], tool: Tool) -> bool:
        """A value from the consumer's own group (or the sandbox) is the likelier fit among equally named ones:
        an app's API takes that app's token, not another app's."""
        return key[0] == FIXTURE or self._group_of[key[0]] == tool.group

    def _same_group(self, pv: PoolValue, tool: Tool) -> bool:
        """Also true for a value its list element labels as this group's (the password listed for this app)."""
        return pv.for_group == tool.group.lower() if pv.for_group else self._same_group_key((pv.tool, pv.export), tool)

    def _meant_for(self, pv: PoolValue, consumer: str) -> bool:
        """False for a value its record labels as another group's (another app's password)."""
        return not pv.for_group or self._group_of[consumer].lower() == pv.for_group

    def _ranked_keys(self, consumer: str, param: str) -> list[tuple[float, tuple[str, str]]]:
        """(similarity, (provider, export)) pairs that may fill an input, best match first (static, cached)."""
        cache_key = (consumer, param)
        keys = self._key_cache.get(cache_key)
        if keys is None:
            keys = []
            desc = (
                " "
                + " ".join(
                    re.findall(
                        r"[a-z0-9]+", str(self.catalog[consumer].param_schema(param).get("description", "")).lower()
                    )
                )
                + " "
            )

            def fit(name: str) -> float:
                # A value also fits an input whose description names it ("username: Your account phone_number.").
                sim = self.similarity(name, param)
                return max(sim, 1.0) if f" {humanize(name)} " in desc else sim

            for prov, export in self.by_consumer.get(cache_key, ()):
                sim = fit(export)
                if prov != consumer and sim >= self.config.fill_alignment:
                    keys.append((sim, (prov, export)))
            for name in self.fixtures:
                sim = fit(name)
                if sim > self.config.tau:
                    keys.append((sim, (FIXTURE, name)))
            keys.sort(key=lambda x: (-x[0], x[1]))
            self._key_cache[cache_key] = keys
        return keys

    def _allowed(self, consumer: str, param: str) -> dict[tuple[str, str], float]:
        """:meth:`_ranked_keys` as a mapping (provider, export) -> similarity (static, cached)."""
        cache_key = (consumer, param)
        allowed = self._allowed_cache.get(cache_key)
        if allowed is None:
            allowed = self._allowed_cache[cache_key] = {k: sim for sim, k in self._ranked_keys(consumer, param)}
        return allowed

    def _records(self, vids: Iterable[int]) -> frozenset[tuple[int, str]]:
        """The (call, record) pairs the given pool values were read from (fixtures have none)."""
        return frozenset((pv.call, pv.record) for pv in (self.values[v] for v in vids) if pv.call >= 0 and pv.record)

    def _sibling_value(
        self, consumer: str, tool: Tool, param: str, siblings: frozenset[tuple[int, str]], taken: Iterable[int] = ()
    ) -> tuple[PoolValue, Any] | None:
        """A value for ``param`` read from the same record as a value on offer, best-named first, or None.

        Why: a consumer that takes several fields of one record (a customer's id and zip code to verify them, a
        latitude and longitude) checks them against each other. Filled independently, the other field takes the
        best-named value of *any* record -- the first customer's zip code beside the offered customer's id -- and
        every offer but the first record's fails for the mismatch, so only that record is ever seen succeeding
        (and if its orders cannot be cancelled, nothing cancellable is ever listed). The offered value's own
        record is what a caller would take its other fields from. Only inputs the name rule already admits for
        the value (:meth:`_ranked_keys`) take a sibling, and a field fills one input only (``taken``: the values
        the binding already uses), or the call would get one value in two roles (see :func:`_offer_coincides`).
        Which relations a test can conclude is unchanged.

        A field fills an input only if it is its record's best-named field for that input (what the name rule
        would pick among the record's fields). When that field is already taken -- it is the value on offer, in
        another input -- the input takes no sibling (None) and is filled as without this rule. Why: a caller
        passes a record's fields in their own roles. A record's first name offered as a last name would otherwise
        make the first-name input take the record's *last* name (the next best-named field, 0.79 alike): the
        permuted call tests neither field, yet where it succeeds (any names will do) and so does its control,
        name similarity alone concludes a ``first_name -> last_name`` compatibility. Ties count against the
        sibling: a taken field named as well as it for the input leaves the role ambiguous.
        """
        if not siblings:
            return None
        taken = set(taken)
        allowed = self._allowed(consumer, param)
        best: tuple[tuple[float, int], PoolValue, Any] | None = None
        best_taken = float("-inf")  # the best name similarity of a record field already in another input
        for call in sorted({c for c, _r in siblings}):
            for vid in self.call_values.get(call, ()):
                pv = self.values[vid]
                sim = allowed.get((pv.tool, pv.export))
                if sim is None or (pv.call, pv.record) not in siblings or not self._meant_for(pv, consumer):
                    continue
                if pv.id in taken:
                    best_taken = max(best_taken, sim)
                    continue
                val = self._fits(tool, param, pv.value)
                if val is not None and (best is None or (sim, -pv.id) > best[0]):
                    best = ((sim, -pv.id), pv, val)
        if best is None or best_taken >= best[0][0]:
            return None  # no field of the record, or its best-named one is in another role already
        return best[1], best[2]

    def _best_value(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        lineage: list[Node],
        prefer_call: int | None,
        siblings: frozenset[tuple[int, str]] = frozenset(),
        taken: Iterable[int] = (),
        held: frozenset[str] = frozenset(),
        records: frozenset[tuple[int, str]] = frozenset(),
    ) -> tuple[Any, ...] | None:
        """The pool value an incidental fill takes: a field of the offered value's own record first (see
        :meth:`_sibling_value`), then the calling provider's own value, then the best-named producer, then the
        deepest state, then the oldest value.

        A string another input of the call already holds (``held``: the offers and the inputs filled so far, see
        :func:`_holding`) is taken only when no other value fits. Why: a tool that takes two values of one kind
        (two files to compare, a source and a destination, two cities, two currencies) is meant for two different
        ones; given the same value in both roles it compares a file with itself or converts a currency into
        itself, which tools refuse or answer with nothing, and a test cannot tell the roles apart. Where the value
        is new in a state, every input prefers it: a file just created fills both inputs of a comparison, in the
        sweep that tests the creation (which prefers the creator's values) and in the offer of the new name (the
        deepest state's value is the best), so without this rule no test shows that the comparison needs the file
        created. With a second value of the kind on the path, the call gets two.

        That second value is not taken from a record the call already passes a value of (``records``): a record's
        fields fill their own roles or none (:meth:`_sibling_value`), and a record's last name in the first-name
        input beside its first name offered as the last name is the permutation the sibling rule refuses. Such a
        binding then holds one value twice, and :func:`_offer_coincides` drops it.
        """
        sibling = self._sibling_value(consumer, tool, param, siblings, taken)
        if sibling is not None:
            return ((True, 2.0), sibling[0], sibling[1])
        if held:
            best = self._best_fill(consumer, tool, param, lineage, prefer_call, held, records)
            if best is not None:
                return best
        return self._best_fill(consumer, tool, param, lineage, prefer_call, frozenset())

    def _best_fill(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        lineage: list[Node],
        prefer_call: int | None,
        held: frozenset[str],
        records: frozenset[tuple[int, str]] = frozenset(),
    ) -> tuple[Any, ...] | None:
        """:meth:`_best_value` after the sibling: the best value whose string ``held`` does not list, read from none
        of ``records``."""
        keys = self._ranked_keys(consumer, param)
        allowed = self._allowed(consumer, param)
        best: tuple[Any, ...] | None = None
        if prefer_call is not None:
            for vid in self.call_values.get(prefer_call, ()):
                pv = self.values[vid]
                if not self._meant_for(pv, consumer):
                    continue
                sim = allowed.get((pv.tool, pv.export))
                if sim is None:
                    continue
                val = self._fits(tool, param, pv.value)
                if val is not None and _held(val) not in held and (pv.call, pv.record) not in records:
                    rank = (True, sim, True, self._same_group(pv, tool), self.nodes[pv.node].depth, -pv.id)
                    if best is None or rank > best[0]:
                        best = (rank, pv, val)
            if best is not None:
                return best
        # Only a key with a value somewhere on the path can fill the input: when the path holds fewer keys than the
        # input admits (the usual case for an input many tools can fill), the keys are taken from the path's side,
        # in the same order, and the search is the same.
        total = sum(len(n.by_key) for n in lineage)
        if total < len(keys) * len(lineage):
            keys = self._present_keys(consumer, param, lineage, allowed, total)
        for sim, key in keys:
            if best is not None and sim < best[0][1]:
                break
            for n in lineage:  # deepest first: the first fitting value of a key is its best
                vids = n.by_key.get(key)
                if not vids:
                    continue
                hit = None
                for vid in vids:
                    pv = self.values[vid]
                    if not self._meant_for(pv, consumer):
                        continue
                    val = self._fits(tool, param, pv.value)
                    if val is not None and _held(val) not in held and (pv.call, pv.record) not in records:
                        hit = (pv, val)
                        break
                if hit is not None:
                    # A sandbox fact is the fallback: a tool that reveals the same fact is what a caller would use.
                    rank = (False, sim, key[0] != FIXTURE, self._same_group_key(key, tool), n.depth, -hit[0].id)
                    if best is None or rank > best[0]:
                        best = (rank, hit[0], hit[1])
                    break
        return best

    #: entries of each cache of :meth:`_present_keys` at most (a cleared cache only computes again)
    PRESENT_CACHE = 1 << 14

    def _present_keys(
        self, consumer: str, param: str, lineage: list[Node], allowed: dict[tuple[str, str], float], total: int
    ) -> list[tuple[float, tuple[str, str]]]:
        """The keys ``allowed`` admits that hold a value somewhere on ``lineage``, best match first, as
        :meth:`_ranked_keys` orders them; ``total`` is the number of keys the lineage's nodes hold together.

        Why cached: an input is filled on the same path over and over (a sweep binds every tool in a new state,
        the probes it queues bind them there again, and every path shares its ancestors), and the intersection of
        a node's keys with the input's was most of a binding's cost. Nothing here can go stale: a node's keys only
        grow (values are added, never removed, and a key once added stays), so a node holding as many keys as
        when its entry was made holds the same keys, and a path (fixed by its deepest node) holding as many in
        total holds the same keys on every node. An entry whose count differs is recomputed.
        """
        path_key = (lineage[0].id, consumer, param)
        hit = self._present_by_path.get(path_key)
        if hit is not None and hit[0] == total:
            return hit[1]
        by_node = self._present_by_node
        if len(by_node) >= self.PRESENT_CACHE:
            by_node.clear()
        present: set[tuple[str, str]] = set()
        for n in lineage:
            node_key = (n.id, consumer, param)
            got = by_node.get(node_key)
            if got is None or got[0] != len(n.by_key):
                common = n.by_key.keys() & allowed.keys()  # walks the smaller of the two, in C
                got = by_node[node_key] = (len(n.by_key), frozenset(common) if common else _NO_KEYS)
            present |= got[1]
        keys = sorted(((allowed[k], k) for k in present), key=lambda x: (-x[0], x[1]))
        if len(self._present_by_path) >= self.PRESENT_CACHE:
            self._present_by_path.clear()
        self._present_by_path[path_key] = (total, keys)
        return keys

    def control_value(
        self,
        tool: Tool,
        param: str,
        observed: Any,
        alternatives: Sequence[Any] = (),
        template_literal: Any = _NO_LITERAL,
    ) -> tuple[bool, Any] | None:
        """An independently constructed replacement for ``param``: (omit?, literal), or None when no valid,
        different value exists (the test is then inconclusive, never judged on a malformed control).

        An optional input is omitted (the paper's control). A required one takes the first of
        :func:`control_choices` that validates against the input's JSON Schema, declared formats and patterns
        included.
        """
        if param not in tool.required:
            return True, None
        for lit in control_choices(param, tool.param_schema(param), observed, alternatives, template_literal):
            if self._fits(tool, param, lit) is not None:
                return False, lit
        return None

    def _control_alternatives(self, consumer: str, param: str, pv: PoolValue, lineage: list[Node]) -> list[Any]:
        """Other observed values of the same kind on the consumer's path, deepest first: values of the same
        (provider, export) as the one tested, then values the input's name rule accepts (:meth:`_ranked_keys`).
        Something produced them, so their form is one the sandbox itself uses."""
        seen = {json.dumps(pv.value, sort_keys=True)}
        out: list[Any] = []
        keys = [(pv.tool, pv.export)] + [
            k for _sim, k in self._ranked_keys(consumer, param) if k != (pv.tool, pv.export)
        ]
        for key in keys:
            if len(out) >= 8:
                break
            for n in lineage:
                for vid in n.by_key.get(key, ()):
                    v = self.values[vid].value
                    j = json.dumps(v, sort_keys=True)
                    if j not in seen:
                        seen.add(j)
                        out.append(v)
        return out

    # ------------------------------------------------------------------------------------------------ waves
    def _take_state_offer(self, pv: PoolValue, target: Node, consumer: str, param: str) -> bool:
        """Whether a value whose pair is settled as a value test is still offered, as a test of ``target``.

        In a state some call created, a success is also a state test against the parent state (the file listed
        after changing directory is only readable there), so a few such offers per (creator, consumer input) go
        ahead until that dependency is known. Across groups the sweeps suffice, and the creator's own value is a
        value test, not a state test.
        """
        if target.parent is None or target.creator < 0 or pv.call == target.creator:
            return False
        creator = self.calls[target.creator].tool
        tool = self.catalog[consumer]
        key = (creator, consumer, param)
        if (
            creator == consumer
            or self.catalog[creator].group != tool.group
            or not self._same_group(pv, tool)
            or (creator, consumer, "state", None, None) in self.relations
            or self.state_offers.get(key, 0) >= self.config.state_offers_per_pair
        ):
            return False
        self.state_offers[key] = self.state_offers.get(key, 0) + 1
        return True

    def _enqueue(self, item: Item) -> None:
        if not item.fixed:
            node = self.nodes[item.node]
            near = (
                node.creator >= 0 and self.catalog[self.calls[node.creator].tool].group == self.catalog[item.tool].group
            )
            (self.near_probes if near else self.probes).append(item)
            return
        tool = self._tools[item.tool]
        if len(item.fixed) == 1:  # every offer (the general form below, without its generators)
            ((p, v),) = item.fixed
            pv = self.values[v]
            near = self._same_group(pv, tool)
            sim = 2.0 if item.state_test else self.similarity(pv.export, self._offer_name(item.tool, p, item.placement))
        else:
            near = all(self._same_group(self.values[v], tool) for _p, v in item.fixed)
            # A state test's names say nothing about its odds, and there are only a few per (creator, consumer).
            sim = (
                2.0
                if item.state_test
                else min(
                    self.similarity(self.values[v].export, self._offer_name(item.tool, p, item.placement))
                    for p, v in item.fixed
                )
            )
        self.enqueued += 1
        heap = self.queue if near and not (item.number_offer or item.placement) else self.far
        # (an item whose tool's budget is spent would only be popped to be dropped: see _discard_spent)
        heap.push(-round(float(sim), 6), self.enqueued, item, spent=self._spent(item))

    def _offer_name(self, consumer: str, param: str, placement: str) -> str:
        """The name an offered value's own name is matched against to order the offers: the input's name, or for a
        leaf offer the key of the leaf it replaces (``entityName`` inside ``observations``).

        Why: a structured input's name says what its items hold, the leaf's key what the reference names. Ranked
        by the container's name every provider looks alike, and the leaf offers' budget (shared with the number
        offers) goes to whichever values came first rather than to the ones named like the reference. Only the
        order changes, never what a test concludes."""
        if placement == "leaf":
            pointer = self._nested.get(consumer, {}).get(param) or []
            key = next((k for k in reversed(pointer) if isinstance(k, str)), None)
            if key:
                return key
        return param

    def _pending(self) -> bool:
        return bool(self.queue or self.far or self.probes or self.near_probes)

    def _pop(self) -> Item | None:
        # Every tool's initial calls (Algorithm 1, lines 7-8) run before any offer. Offers never run out in a large
        # catalog, so under a binding budget an initial call left behind them never runs, and its tool then
        # provides nothing at all.
        #
        # A tool re-run in a state its own group's change created (sign in -> list the watchlist) goes before the
        # offers across groups: the values only that state lists are the ones its group's consumers can use, and
        # cross-group offers, which seldom succeed, would otherwise spend those consumers' budgets before the
        # state is ever read. Probes of states another group created still wait for every offer.
        # (A heap answers None where it would pop only items left out as spent: see _discard_spent.)
        if self.probes and self.probes.peek().node == 0:
            return self.probes.popleft()
        if self.queue:
            return self.queue.pop()
        if self.near_probes:
            return self.near_probes.popleft()
        if self.far:
            return self.far.pop()
        if self.probes:
            return self.probes.popleft()
        raise IndexError("empty worklist")

    def _add_relation(self, rel: Relation) -> None:
        self.relations.setdefault(rel.key, rel)

    def step(self) -> bool:
        """Run one wave; False when the worklist is empty or the budget is spent.

        A wave has named phases: select the work items (:meth:`_select_wave`), execute them in one batch, then for
        every success (:meth:`_on_success`) plan its tests and record the values it produced, then run the
        controls and state tests in batches and record what the judges keep (:meth:`_run_tests`), and finally,
        on books of their own, retry the failures with other equally named values (:meth:`_run_aside`).
        """
        cfg = self.config
        if not self._pending() or self.counters["executed_calls"] >= cfg.max_calls:
            return False
        self.counters["waves"] += 1
        wave = Wave()
        first_call = len(self.calls)
        try:
            batch = self._select_wave()
            if not batch:
                return self._pending()
            self.counters["work_items"] += len(batch)
            results = self.run_many(
                [(self.nodes[it.node].state, it.tool, args) for it, args, _ in batch],
                ["offers" if it.fixed else "probes" for it, _a, _u in batch],
            )
            failed = self._record_outcomes(batch, results, wave)
            # the wave's new items are all planned: they are queued while the workers run its tests (see _idle)
            self._unqueued = wave.new_items
            self._run_tests(wave)
            self._run_aside(wave, failed)
        finally:
            self._close_calls()
        # The wave's records go back to the memo store: the call log keeps what a call was, not what it returned
        # (read back by :meth:`_record` when a later relation's evidence or provenance needs it).
        for info in self.calls[first_call:]:
            info.record = None
        self._queue_planned(len(self._unqueued))
        self._unqueued, self._queued_upto = [], 0
        self._discard_spent()
        return self._pending()

    #: a heap of offers is swept for spent items once it holds this many, and again whenever it has doubled
    DISCARD_AT = 1 << 16

    def _discard_spent(self) -> None:
        """Drop the queued offers whose tool's budget is spent (:meth:`_spent`): they would only be popped to be
        dropped.

        Why: a large build queues millions of offers and runs a small share of them; most of the rest belong to
        consumers whose budget went on better-named offers (AppWorld: 3.4 M queued at the end of a 400k-call build,
        most of the caller's memory growth). Budgets only grow, so a spent item stays spent, and dropping it
        without side effects is all that popping it would have done; the heaps keep the exploration's order exactly
        as if the items were there (:class:`~.worklist.PackedHeap`). Swept only when a heap has doubled, so the
        cost per queued item stays constant."""
        for heap in (self.queue, self.far):
            if len(heap) >= max(self.DISCARD_AT, 2 * heap.kept_after_discard):
                heap.discard(self._spent)

    # ------------------------------------------------------------------------------- phase 1: select the wave
    def _select_wave(self) -> list[tuple[Item, dict[str, Any], dict[str, int]]]:
        """Pop work items, bind them and charge their tool's budget, until a batch is full (Algorithm 1, lines
        10-11: Pop and Fill)."""
        cfg = self.config
        batch: list[tuple[Item, dict[str, Any], dict[str, int]]] = []
        while self._pending() and len(batch) < cfg.batch_size:
            item = self._pop()
            if item is None or not self._may_run(item):
                continue
            bound = self.bind(item)
            if bound is None:
                continue
            args, used = bound
            if self._admit(item, args, used):
                batch.append((item, args, used))
                # the wave's first run_many makes this call: the workers start on it while the rest is bound
                self._prefetch(((self.nodes[item.node].state, item.tool, args),))
            self._poll_calls()
        return batch

    def _budget(self, item: Item) -> tuple[dict[str, int], int]:
        """The per-tool budget an item's calls are charged to, and its limit."""
        cfg = self.config
        if item.number_offer or item.placement:
            return self.per_tool_numbers, cfg.number_offers_per_tool
        return (
            (self.per_tool, cfg.max_calls_per_tool) if item.fixed else (self.per_tool_probes, cfg.max_probes_per_tool)
        )

    def _spent(self, item: Item) -> bool:
        """Whether an item's tool has spent the budget it would be charged to, for good (budgets only grow).

        State tests have their own cap (per creator and consumer), so a consumer whose budget went on value tests
        early still gets them: the states that need them are often reached late."""
        budget, limit = self._budget(item)
        return budget.get(item.tool, 0) >= limit and not item.state_test

    def _may_run(self, item: Item) -> bool:
        """Whether an item may still run: its tool's budget is not spent and, for an offer, its state is not gated."""
        if self._spent(item):
            return False
        if item.fixed and self.gated(item.node, item.tool, offered_inputs(item)):
            self.counters["skipped_gated"] = self.counters.get("skipped_gated", 0) + 1
            return False
        return True

    def _admit(self, item: Item, args: dict[str, Any], used: dict[str, int]) -> bool:
        """Whether a bound call is new, charging its tool's budget when it will run; False for a repeat.

        The same call credited to different providers is a different test (its outcome is memoised, so only the
        credit is new); the same call with the same credit is a repeat. Budgets bound execution: a memoised
        repeat costs nothing.
        """
        call_key, key = self._item_key(item, args, used)
        if key in self.seen_items:
            return False
        self.seen_items.add(key)
        if call_key not in self.memo or self._owed(call_key):
            budget, _limit = self._budget(item)
            budget[item.tool] = budget.get(item.tool, 0) + 1
        return True

    def _item_key(self, item: Item, args: dict[str, Any], used: dict[str, int]) -> tuple[MemoKey, bytes]:
        """A bound call's memo key, and a 128-bit digest of (state, tool, arguments, credit) that tells a repeat."""
        call_key = _key(self.nodes[item.node].state, item.tool, args)
        credit = sorted((p, self.values[v].tool, self.values[v].export) for p, v in used.items())
        return call_key, hashlib.blake2b(json.dumps([*call_key, credit]).encode(), digest_size=16).digest()

    def _record_outcomes(
        self,
        batch: Sequence[tuple[Item, dict[str, Any], dict[str, int]]],
        results: Sequence[tuple[dict[str, Any], State]],
        wave: Wave,
    ) -> list[tuple[Item, dict[str, Any], dict[str, int], str | None]]:
        """Plan what each success asks for (:meth:`_on_success`) and note each refusal; returns the calls that
        failed, in batch order, each with its value-independent refusal (:func:`gate_message`) or None."""
        failed = []
        for (item, args, used), (rec, new_state) in zip(batch, results):
            self._poll_calls()
            outcome = self._classify(item.tool, rec)
            if outcome == "success":
                marks = (len(wave.controls), len(wave.sweeps), len(wave.parent_tests))
                self._on_success(item, args, used, rec, new_state, wave)
                self._prefetch(self._test_calls(wave, *marks))
                continue
            if self._learn_exclusive(item, args, rec, wave):
                continue
            if item.fixed:
                self._note_refusal(item, args, rec)
            if outcome == "failure":
                failed.append((item, args, used, gate_message(rejection_message(rec), args)))
        return failed

    def _learn_exclusive(self, item: Item, args: dict[str, Any], rec: dict[str, Any], wave: Wave) -> bool:
        """Learn from a refusal that the call gave several of a set of inputs that exclude one another, and run
        the item again; True when the refusal was about such a set (whether or not the item runs again).

        Why: contract checking splits such a template when it sees the refusal (see
        :func:`~libra.contracts.offline.proposer.exclusive_repairs`), but a tool behind a sign-in is often first called
        by the exploration, with a template that fills every optional input ("Exactly one of track_id, album_id
        or playlist_id must be given, found 3"). From then on :meth:`bind` keeps exactly one input of the set
        (the one on offer, else one in turn by state and template), and the refused item runs again, rebound. The
        refusal says nothing about the state, so it is no evidence of a gate (:meth:`_note_refusal`) and no call
        to retry with other values."""
        if rec.get("status") == "success":
            return False
        group = exclusive_inputs(rejection_message(rec) or "", self.catalog[item.tool].param_names)
        if group is None:
            return False
        if sum(1 for p in group.inputs if p in args) >= 2:
            self.exclusive[item.tool] = group
            wave.new_items.append(item)
        return True

    # ---------------------------------------------------------- phase 4: retry failures with equally named values
    def _run_aside(self, wave: Wave, failed: Sequence[tuple[Item, dict[str, Any], dict[str, int], str | None]]) -> None:
        """Tests the exploration's own books leave out, run on books of their own: retry each failed call of the
        wave with the next bindings :meth:`_rebinds` gives, one at a time, until one succeeds or they run out, and
        test each success as the exploration tests its own (a control per upstream value it used, and the free
        state test against the parent state); and give the other inputs of each placed offer's success (the
        ``path`` beside an edit's placed text) the usual control (see :meth:`_plan_controls`).

        Why retries: a value refused for its form (a folder where an editor wants a file) says nothing about
        whether the call needed the provider's value, and trying the next equally named value is how a user would
        fix the call (:mod:`.rebind`). A retry's success is tested, not explored: its values and the state it
        leads to join no pool and queue no work, so what the exploration does next never depends on it.

        Why books of their own (:meth:`_aside`, :mod:`.retries`): charged to the exploration's budgets, retries
        take calls from offers, and on a large catalog crowd out more relations than they add. So they have their
        own budget of executed calls (:func:`~libra.induction.explore.retries.retry_budget`, on top of ``max_calls``),
        their own tested pairs and items, their relations kept apart: the exploration runs exactly the calls it
        runs without them, and they only add relations.

        Retries run in rounds: every call's first retry in one batch, the second retry of those that failed again
        in the next, so a call whose first retry succeeds spends no more. No retry runs in a state gated for the
        consumer (:meth:`gated`), and a call whose retry got the same refusal naming none of its values as the
        call itself (:func:`gate_message`: "Not signed in.") is retried no further: two values refused alike are
        the state's answer, which every other value would get too.
        """
        budget = retry_budget(self.config.max_calls, self.config.max_retry_calls)
        if (failed or wave.placed) and self.retry.counters["executed_calls"] < budget:
            with self._aside():
                if wave.placed:
                    tests = Wave()
                    for item, args, used, rec in wave.placed:
                        offered = {p for p, _v in item.fixed}
                        self._plan_controls(
                            item, args, {p: v for p, v in used.items() if p not in offered}, rec, tests, aside=True
                        )
                    self._run_within(tests, budget)
                pending = [
                    (item, alts, sig) for item, args, used, sig in failed if (alts := self._rebinds(item, args, used))
                ]
                while pending and (room := budget - self.retry.counters["executed_calls"]) > 0:
                    pending = self._retry_round(pending, room, budget)
        self.counters.update(self.retry.stats(self.relations))

    def _retry_round(
        self,
        pending: list[tuple[Item, list[tuple[dict[str, Any], dict[str, int]]], str | None]],
        room: int,
        budget: int,
    ) -> list[tuple[Item, list[tuple[dict[str, Any], dict[str, int]]], str | None]]:
        """One round of retries (at most ``room`` calls, each call's next binding) and the tests of its successes
        (within what is left of ``budget``); returns the calls to retry again."""
        batch: list[
            tuple[Item, dict[str, Any], dict[str, int], list[tuple[dict[str, Any], dict[str, int]]], str | None]
        ] = []
        for item, alts, sig in pending:
            if len(batch) >= room:
                break
            if self.gated(item.node, item.tool, offered_inputs(item)):
                continue
            while alts:
                args, used = alts.pop(0)
                _call_key, key = self._item_key(item, args, used)
                if key not in self.retry.seen:
                    self.retry.seen.add(key)
                    batch.append((item, args, used, alts, sig))
                    break
        if not batch:
            return []
        self.counters["retries"] += len(batch)
        for item, _a, _u, _alts, _sig in batch:
            self.retry.rebound[self._rebind_key(item)].runs += 1
        results = self.run_many([(self.nodes[it.node].state, it.tool, a) for it, a, _u, _q, _s in batch], "retries")
        tests = Wave()
        again = []
        for (item, args, used, alts, sig), (rec, _state) in zip(batch, results):
            outcome = self._classify(item.tool, rec)
            if outcome == "success":
                self.counters["successes"] += 1
                self.retry.succeeded.add(item.tool)
                self._plan_parent_test(item, args, rec, tests)
                self._plan_controls(item, args, used, rec, tests, aside=True)
            elif outcome == "failure" and alts and (sig is None or gate_message(rejection_message(rec), args) != sig):
                again.append((item, alts, sig))
        self._run_within(tests, budget)
        return again

    def _run_within(self, tests: Wave, budget: int) -> None:
        """Run side tests (:meth:`_run_tests`) that fit in what is left of the side books' ``budget``: each
        control may take a second call (the state before a re-stated value's provider), so the tests kept are the
        first whose calls could not exceed it, however many of them turn out memoised."""
        room = max(0, budget - self.retry.counters["executed_calls"])
        tests.controls = tests.controls[: room // 2]
        tests.parent_tests = tests.parent_tests[: room - 2 * len(tests.controls)]
        if tests.controls or tests.parent_tests:
            self._run_tests(tests)

    @contextmanager
    def _aside(self) -> Iterator[None]:
        """Run the retries on their own books (:class:`~libra.induction.explore.retries.RetryLedger`): the relations
        they
        keep, the pairs they test and everything they count go there, and the calls they execute are theirs
        (:meth:`run_many`). The exploration's relations are looked up too (no retry tests a relation already
        known) but never written, so nothing the exploration decides later differs for the retries."""
        books = (self.relations, self.pair_tests, self.pair_moot, self.moot_values, self.counters)
        self.relations = ChainMap(self.retry.relations, books[0])  # type: ignore[assignment]
        self.pair_tests = self.retry.pair_tests
        self.pair_moot = self.retry.pair_moot
        self.moot_values = self.retry.moot_values
        self.counters = self.retry.counters
        self._retrying = True
        try:
            yield
        finally:
            self.relations, self.pair_tests, self.pair_moot, self.moot_values, self.counters = books
            self._retrying = False

    def _rebind_key(self, item: Item) -> tuple[Any, ...]:
        """What one rebinding memory covers: a consumer template with what was on offer to it (the provider field
        and input, and its placement), or with nothing on offer (a probe)."""
        offered = tuple((p, self.values[v].tool, self.values[v].export) for p, v in item.fixed)
        return (item.tool, item.template, item.placement, offered)

    def _rebinds(
        self, item: Item, args: dict[str, Any], used: dict[str, int]
    ) -> list[tuple[dict[str, Any], dict[str, int]]]:
        """Other bindings for a call that failed, best first: each an input the call filled by the name rule
        (:meth:`_best_value`) given another observed value that fits that input's name at least as well
        (:meth:`_equally_named`), one input at a time, never a binding already run, at most
        :data:`~libra.probing.rebind.REBINDS` over the life of one (consumer, template, offer) memory.

        Why: the name rule takes the best-named value, and observed values of one name often denote different
        kinds of thing (a listing's ``path`` holds folders and files alike; an ``id`` may be an order's or a
        draft's). A call that failed with one of them says little about the others: an editor offered a text to
        find in a file fails for the folder the name rule filled its ``path`` with, and succeeds for the file
        listed beside it, which is then the test of both values. The value on offer is never varied (it is what
        the call tests), nor a field of its own record (:meth:`_sibling_value`, deliberately that record's); an
        input that kept the template's own literal was filled by no rule and has nothing to vary. The rule, shared
        with contract checking, is :mod:`libra.probing.rebind`'s; the memory is per offer rather than per call so
        the retries stay bounded however often a pair is offered.
        Deterministic order: higher total name fit, then inputs in the template's order, each input's values as
        the name rule ranks them (see :meth:`_equally_named`).
        """
        fixed = dict(item.fixed)
        siblings = self._records(fixed.values())
        tmpl = self.contracts[item.tool].templates[item.template]
        named = [
            p
            for p, vid in used.items()
            if p not in fixed
            and p in tmpl.arguments
            and (self.values[vid].call, self.values[vid].record) not in siblings
        ]
        if not named:
            return []
        memory = self.retry.rebound.setdefault(self._rebind_key(item), Rebound())
        if memory.runs >= REBINDS:
            return []  # (and nothing more to remember: a large build fails hundreds of thousands of calls)
        inputs = sorted(args)
        memory.tried.add(signature(inputs, args))
        tool = self.catalog[item.tool]
        lineage = self._lineage(item.node)
        taken = set(used.values())
        candidates: dict[str, list[tuple[float, PoolValue | None, Any]]] = {}
        for p in named:
            ran = self.values[used[p]]
            sim = self._allowed(item.tool, p).get((ran.tool, ran.export))
            if sim is None:
                continue
            alts = self._equally_named(item.tool, tool, p, ran, sim, lineage, taken)
            if alts:
                candidates[p] = [(sim, None, args[p])] + alts
        options = []
        for i, picks in enumerate(varied_picks(candidates)):
            if i == 0:
                continue  # the binding that ran
            new_args, new_used = dict(args), dict(used)
            for p, (_sim, pv, val) in picks.items():
                if pv is not None:
                    new_args[p], new_used[p] = val, pv.id
            if _offer_coincides(new_args, new_used, fixed):
                continue
            total = round(sum(z[0] for z in picks.values()), 6)
            options.append(((-total, i), new_args, (new_args, new_used)))
        return take_untried(memory, inputs, options, REBINDS)

    def _equally_named(
        self,
        consumer: str,
        tool: Tool,
        param: str,
        ran: PoolValue,
        sim: float,
        lineage: list[Node],
        taken: set[int],
        limit: int = 2 * REBINDS,
    ) -> list[tuple[float, PoolValue, Any]]:
        """Up to ``limit`` observed values on the path other than ``ran`` that fit ``param`` and whose (provider,
        export) fits its name at least as well (``sim``), as (similarity, value, argument), ranked as
        :meth:`_best_value` ranks its keys: better name, a tool's value before a sandbox fact, the consumer's own
        group first, deeper state first, older value first. Values equal to the one that ran are no
        alternative, nor values another input already takes (``taken``)."""
        allowed = self._allowed(consumer, param)
        keys = [k for s, k in self._ranked_keys(consumer, param) if s >= sim]
        # (as in _best_value: when the path holds fewer keys than qualify, take them from the path's side)
        if sum(len(n.by_key) for n in lineage) < len(keys) * len(lineage):
            keys = sorted(
                {k for n in lineage for k in n.by_key if allowed.get(k, -1.0) >= sim}, key=lambda k: (-allowed[k], k)
            )
        seen = {json.dumps(ran.value, sort_keys=True, default=str)}
        found: list[tuple[tuple[Any, ...], PoolValue, Any]] = []
        for key in keys:
            for n in lineage:
                for vid in n.by_key.get(key, ()):
                    pv = self.values[vid]
                    if vid in taken or not self._meant_for(pv, consumer):
                        continue
                    val = self._fits(tool, param, pv.value)
                    if val is None:
                        continue
                    j = json.dumps(val, sort_keys=True, default=str)
                    if j in seen:
                        continue
                    seen.add(j)
                    found.append(
                        ((allowed[key], key[0] != FIXTURE, self._same_group_key(key, tool), n.depth, -pv.id), pv, val)
                    )
        found.sort(key=lambda f: f[0], reverse=True)
        return [(f[0][0], f[1], f[2]) for f in found[:limit]]

    #: Distinct argument sets one value-independent refusal must have refused in a state before the consumer
    #: counts as gated there: one refusal could still be a coincidence of the value, two with different values
    #: are the state's answer.
    GATE_EVIDENCE = 2

    def _note_refusal(self, item: Item, args: dict[str, Any], rec: dict[str, Any]) -> None:
        """Remember an offer the consumer refused in a state for a reason that names none of its arguments."""
        sig = gate_message(rejection_message(rec), args)
        if sig is not None:
            seen = self.refusals.setdefault((item.node, item.tool, offered_inputs(item)), {}).setdefault(sig, set())
            seen.add(json.dumps(args, sort_keys=True, default=str))

    def gated(self, node_id: int, consumer: str, inputs: tuple[str, ...]) -> bool:
        """Whether offers to ``consumer`` in this state can only fail: the state is gated for it.

        Why: a consumer behind a sign-in refuses every value offered before the sign-in with the same message, and
        in a stateful catalog most explored states are such states; without this, a consumer's whole budget of
        bound calls goes on them and the values listed after the sign-in, the ones that can succeed, arrive when
        nothing is left. A state is gated for a consumer when :data:`GATE_EVIDENCE` different calls there got the
        same value-independent refusal (:func:`gate_message`), and a state inherits its parent's gate when a tool
        of another group created it (another app's change does not open this one's gate: see
        :meth:`_mixed_path`). Probes and sweeps still run in gated states, so the state test that finds the gate's
        opener is unaffected; only offers, which test values, are skipped.

        Offers are gated per input: the evidence is refusals of values offered to the same inputs. A refusal that
        names no value is not always the state's answer: wrong values offered to a token input are refused with
        "not authorized", which names nothing, in a state where the user is signed in; that says nothing about a
        path offered to the same tool's file input there (a listing's file offered to a reader). In a state that
        refuses every call, offers to each input meet the refusal in turn, after :data:`GATE_EVIDENCE` of them.
        """
        group = self.catalog[consumer].group
        n: Node | None = self.nodes[node_id]
        while n is not None:
            refused = self.refusals.get((n.id, consumer, inputs))
            if refused and any(len(v) >= self.GATE_EVIDENCE for v in refused.values()):
                return True
            if n.parent is None or n.creator < 0 or self.catalog[self.calls[n.creator].tool].group == group:
                return False
            n = self.nodes[n.parent]
        return False

    # ------------------------------------------------------------------------- phase 2: what a success asks for
    def _on_success(
        self,
        item: Item,
        args: dict[str, Any],
        used: dict[str, int],
        rec: dict[str, Any],
        new_state: State,
        wave: Wave,
    ) -> None:
        """Log a successful call and plan everything it leads to: the free state test against the parent state,
        a control per upstream value it used (lines 17-19), the state it created, the values it exports and the
        offers they make (lines 24-25), and the before/after sweep of its state change (lines 26-32)."""
        node = self.nodes[item.node]
        call_id = len(self.calls)
        self.calls.append(
            CallInfo(
                item.node,
                item.tool,
                args,
                rec,
                tuple(sorted({self.values[v].call for v in used.values() if self.values[v].call >= 0})),
            )
        )
        self._plan_parent_test(item, args, rec, wave)
        self._plan_controls(item, args, used, rec, wave)
        if item.placement and len(used) > len(item.fixed):
            wave.placed.append((item, args, used, rec))
        changed = new_state.fingerprint != node.state.fingerprint
        if changed:
            # A number offer is a value test; the state it leads to (a brake pressed to 0.53 instead of the
            # template's 1.0) is a variant of the template's own and is not explored, so it spends no sweep.
            if node.depth >= self.config.max_depth or item.number_offer or item.placement:
                return
            target = child(self.nodes, node.id, new_state, call_id)
        else:
            target = node
        fresh = self._pool_values(item, args, used, rec, node, target, call_id, changed)
        wave.new_items.extend(self._offers(fresh, target))
        if changed:
            self._plan_sweeps(item, node, target, call_id, wave)
            if self._mint_again(item, node, rec, fresh):
                wave.new_items.append(Item(target.id, item.tool, item.template))

    def _mint_again(self, item: Item, node: Node, rec: dict[str, Any], fresh: list[PoolValue]) -> bool:
        """Whether a state-changing success runs its template once more, from the state it created.

        It does when its reply names a record it rewrote in place without being given its key
        (:func:`_rewrote_in_place`): either it updates a record of its own choosing, or it created one whose key
        coincides with a record that was already there, and then the key it mints -- what a caller passes on to
        read, change or cancel what it made -- is withheld from it. A second call from the state it created
        mints a key no earlier state held, and its offers test it like any created record's. A call that is
        itself such a repeat (its state was created by the same tool) runs no third one.
        """
        if node.creator >= 0 and self.calls[node.creator].tool == item.tool:
            return False
        changes = rec.get("state_changes")
        return any(pv.record.startswith("response:") and _rewrote_in_place(pv.value, changes) for pv in fresh)

    def _plan_parent_test(self, item: Item, args: dict[str, Any], rec: dict[str, Any], wave: Wave) -> None:
        """Every success reached after a state change is also a state test for free: the same call from the parent
        state (memoised, usually already run) tells whether the change that created this state enabled it."""
        node = self.nodes[item.node]
        if node.parent is not None and node.creator >= 0:
            creator = self.calls[node.creator].tool
            if creator != item.tool and (creator, item.tool, "state", None, None) not in self.relations:
                wave.parent_tests.append((node.creator, CallInfo(item.node, item.tool, args, rec)))

    def _plan_controls(
        self,
        item: Item,
        args: dict[str, Any],
        used: dict[str, int],
        rec: dict[str, Any],
        wave: Wave,
        aside: bool = False,
    ) -> None:
        """One counterfactual control per upstream value the success used (Algorithm 1, lines 17-19), each pair at
        most ``tests_per_pair`` times. An input with no valid control is an inconclusive test, counted, not run.

        Which controls keep a placed offer's placement: on the exploration's own books, every input's (the rule it
        has always run, kept so that its calls stay what they were; an input other than the placed one seldom has
        such a control, and its test is inconclusive there); on the side books (``aside``, see
        :meth:`_run_aside`) only the placed input's, the call's other inputs, filled as usual, getting the usual
        control -- whether the edit needed *that* file's path, beside whether it needed the text placed in it.
        """
        cfg = self.config
        tool = self.catalog[item.tool]
        lineage: list[Node] | None = None
        offered = {p for p, _v in item.fixed}
        for param, vid in used.items():
            pv = self.values[vid]
            if pv.tool == FIXTURE:
                continue  # a sandbox fact is not a provider
            pair = (pv.tool, pv.export, item.tool, param)
            if (pv.tool, item.tool, "provenance", pv.export, param) in self.relations:
                self.counters["skipped_implied"] += 1
                continue
            if self.pair_tests.get(pair, 0) >= cfg.tests_per_pair:
                continue
            if pv.restated and self._known_moot(pair, pv):
                self.counters["skipped_moot"] = self.counters.get("skipped_moot", 0) + 1
                continue  # moot again, at no cost (see _moot)
            if lineage is None:
                lineage = self._lineage(item.node)
            tmpl_arg = self.contracts[item.tool].templates[item.template].arguments.get(param)
            template_literal = tmpl_arg.value if tmpl_arg is not None and tmpl_arg.kind == "literal" else _NO_LITERAL
            if template_literal is not _NO_LITERAL and template_literal == args[param]:
                continue  # the value on offer is the template's own literal: the provider changed nothing
            placed_here = bool(item.placement) and (param in offered or not aside)
            if placed_here:
                # The control of a placed offer keeps the placement and changes only the value placed, to one no
                # call made: whether the call needed *that* folder or record, not whether it needed one at all (a
                # tool that creates missing parents succeeds either way, and is no consumer of the folder).
                placed = self._placed(
                    item.tool, param, item.placement, sentinel_for({"type": "string"}), template_literal
                )
                control = (
                    (False, placed) if placed is not None and self._fits(tool, param, placed) is not None else None
                )
            else:
                alternatives = (
                    self._control_alternatives(item.tool, param, pv, lineage) if param in tool.required else []
                )
                control = self.control_value(tool, param, args[param], alternatives, template_literal)
            if control is None:
                self.counters["inconclusive_tests"] = self.counters.get("inconclusive_tests", 0) + 1
                continue
            self.pair_tests[pair] = self.pair_tests.get(pair, 0) + 1
            omit, lit = control
            control_args = {k: v for k, v in args.items() if k != param}
            if not omit:
                control_args[param] = lit
            # A free literal (text or number the tool never checked), or a folder offer (any folder would do when
            # the control succeeds too), shows no compatibility when both calls succeed: only provenance can be
            # concluded from such a test (see :meth:`_record_value_test`).
            free_choice = placed_here or template_literal is not _NO_LITERAL and not self.checked_form(item.tool, param)
            wave.controls.append(
                ValueTest(pair, CallInfo(item.node, item.tool, args, rec), vid, control_args, free_choice)
            )

    def _pool_values(
        self,
        item: Item,
        args: dict[str, Any],
        used: dict[str, int],
        rec: dict[str, Any],
        node: Node,
        target: Node,
        call_id: int,
        changed: bool,
    ) -> list[PoolValue]:
        """The values a success contributes to the pool of ``target`` (Algorithm 1, line 24: Extract).

        A value is credited to the call that last put it into the state. A call that changes the state becomes a
        producer of every value it exports (arguments included: it may have just created the record named by a
        value it was given). A call that changes nothing produces none of what its path already knew: what it
        was given, and what the calls that supplied its inputs, and their suppliers in turn, showed (arguments,
        output and state changes). A read that hands back one of its inputs, or a no-op action fed one order id
        that repeats the order ids of the listing it descends from, has produced nothing, and crediting it would
        let a consumer "depend" on whichever call repeated the value last. A call that turns what it was fed into
        something no supplier showed (a user name into a user id) is a source of it, and so is a call fed
        nothing: two listings of the same tokens are two ways a caller learns them. Fixtures are no calls: a
        tool that reveals a sandbox fact is what a caller who does not know the fact would use.
        """
        cfg = self.config
        contract = self.contracts[item.tool]
        lineage_known = [n.known for n in self._lineage(node.id)]
        target_lineage = self._lineage(target.id)
        # what the call was given: a read that hands one of its inputs back has produced nothing new
        given = {json.dumps(v, sort_keys=True) for v in _scalars(args)}
        # ...nor what the calls that supplied its inputs already showed (their arguments and output)
        for vid in used.values():
            given |= self._shown(self.values[vid].call)
        if not changed:
            given |= self._path_inputs(node)
        origin = cfg.credit == "origin"
        fresh: list[PoolValue] = []
        # the values a call could contribute, per export, in the order the reply lists them
        eligible: dict[str, list[tuple[Any, Any, Any, str]]] = {}
        listed: set[str] = set()
        for ex in extract(contract, args, rec):
            export = contract.export(ex.name)
            if export is None or not export.propagate:
                continue
            if ex.value is None or (isinstance(ex.value, str) and (not ex.value.strip() or is_empty_text(ex.value))):
                # an empty value ("", "No matches found") identifies nothing; any success with it is a coincidence
                continue
            # a relative path enters the pool in its plain spelling ("./notes.txt" -> "notes.txt", see paths.py)
            value = canonical_path(ex.value)
            vkey = json.dumps([item.tool, ex.name, value], sort_keys=True)
            if vkey in listed or any(vkey in n.known for n in target_lineage):
                continue  # each (tool, export, value) enters a path's pool once
            listed.add(vkey)
            named = [g for g in ex.labels if g in self.groups]
            eligible.setdefault(ex.name, []).append((ex, export, value, named[0] if len(named) == 1 else ""))
        for ex, export, value, for_group in (
            e for entries in eligible.values() for e in _representatives(entries, cfg.values_per_export)
        ):
            vjson = json.dumps(value, sort_keys=True)
            # an echo in either spelling is an echo (what the call or its suppliers showed is kept as printed)
            echoed = vjson in given or (value is not ex.value and json.dumps(ex.value, sort_keys=True) in given)
            if (
                export.from_text is not None
                and isinstance(ex.value, str)
                and (_inside(vjson, given) or (value is not ex.value and _inside(json.dumps(ex.value), given)))
            ):
                # A value picked out of text that was already inside a text the call was given or its suppliers
                # showed (a path in an error message repeating its input) is an echo, whether or not it changed
                # anything: it was there before this call printed it.
                continue
            if origin and not changed and echoed:
                continue
            if (
                origin
                and changed
                and ex.source == "arguments"
                and _arg_name(ex.path) in used
                and not (_written(ex.value, rec.get("state_changes")) or _filled(ex.value, rec.get("state_changes")))
            ):
                continue  # a value it was given and neither wrote nor filled a blank record of: still the original's
            if (
                origin
                and changed
                and ex.source != "arguments"
                and echoed
                and not _written(ex.value, rec.get("state_changes"))
            ):
                # ...and so is one it echoes back in its reply or its diff (an update re-stating whose record it
                # changed, a removal)
                continue
            pv = PoolValue(
                len(self.values),
                item.tool,
                ex.name,
                value,
                target.id,
                call_id,
                restated=origin and any(vjson in k for k in lineage_known),
                for_group=for_group,
                record=record_of(ex.source, ex.path),
                in_text=export.from_text is not None,
            )
            self.values.append(pv)
            target.add(pv)
            self.call_values.setdefault(call_id, []).append(pv.id)
            fresh.append(pv)
        return fresh

    def _path_inputs(self, node: Node) -> frozenset[str]:
        """JSON of every scalar the calls that created ``node``'s state (the state changes on its path) were given.

        Why: a value a state-changing call was given and kept (a user name signed in with, a fixture's account)
        was put into the state by that call; a later read that changed nothing and shows it back (a profile that
        repeats the signed-in user name) is an echo, not its source (issue 18, defect 13). Crediting the read
        would make it the "provider" of the very input that enabled it.
        """
        out: set[str] = set()
        for n in self._lineage(node.id):
            if n.creator >= 0:
                out |= {json.dumps(v, sort_keys=True, default=repr) for v in _scalars(self.calls[n.creator].args)}
        return frozenset(out)

    def _shown(self, call_id: int) -> frozenset[str]:
        """JSON of every scalar a logged call or its suppliers (transitively) were given or showed (arguments,
        output, state changes); cached per call."""
        if call_id < 0:
            return frozenset()  # a fixture: no call supplied it
        # suppliers first, without recursion (a chain of offers can be long; after a resume nothing is cached)
        stack = [call_id]
        while stack:
            c = stack[-1]
            if c in self._shown_cache:
                stack.pop()
                continue
            missing = [s for s in self.calls[c].suppliers if s not in self._shown_cache]
            if missing:
                stack.extend(missing)
                continue
            info = self.calls[c]
            record = self._record(info)
            own = {
                json.dumps(v, sort_keys=True, default=repr)
                for v in _scalars([info.args, record.get("output"), record.get("state_changes")])
            }
            for s in info.suppliers:
                own |= self._shown_cache[s]
            self._shown_cache[c] = frozenset(own)
            stack.pop()
        return self._shown_cache[call_id]

    def _offers(self, fresh: list[PoolValue], target: Node) -> list[Item]:
        """Work items offering each new value to the inputs it is a candidate for (Algorithm 1, line 25).

        An input receives offers where the consumer's template observes it, and where the template fills a number
        or an input of a checked form with a literal (:meth:`offered_literal`): a timestamp, a coordinate or a unit
        one tool returns and another takes is a candidate like an id is, and such a literal is no less
        replaceable than an observation (its control is the template's own literal). Other literals (flags,
        closed sets, free text) are the caller's choice and are not offered, except that a creating tool's path
        input takes a produced path as the folder its own name is placed in (:meth:`placed_path`), on the same
        budget and rules as number offers. These literal offers queue behind
        the others, on their own budget (``BuildConfig.number_offers_per_tool``), are
        never state tests and explore no state (see :meth:`_on_success`); a value equal to the template's literal
        is no offer (the call would be the template's own).
        """
        cfg = self.config
        items: list[Item] = []
        nested, tools, schema_ids = self._nested, self._tools, self._schema_ids
        pair_tests, relations, counters = self.pair_tests, self.relations, self.counters
        tests_per_pair, offers_per_pair = cfg.tests_per_pair, cfg.offers_per_pair
        # (the loops below visit every candidate input of every new value, millions in a large build: what does not
        # change from one input to the next is taken out of them; the verdicts and counts are those of the rules)
        for pv in fresh:
            self._poll_calls()
            key = (pv.tool, pv.export)
            consumers = self.by_provider.get(key, ())
            if consumers:
                offers, slots = self.pair_offers.row(key, consumers), self.pair_offers.slots(key, consumers)
            # whether the value fits an input, per validator: a function of the two (see _fits), and the value's
            # many candidate inputs share a few validators
            fits: dict[int, bool] = {}
            # the part of _take_state_offer that depends on the value and the state only
            state_offer = not (target.parent is None or target.creator < 0 or pv.call == target.creator)
            for at, (consumer, param) in enumerate(consumers):
                if pv.for_group and not self._meant_for(pv, consumer):
                    continue
                leaf = nested.get(consumer, _NO_REFERENCES).get(param)
                if leaf is None:
                    schema_id = schema_ids.get((consumer, param))
                    if schema_id is None:
                        schema_id = self._schema_id(tools[consumer], param)
                    fit = fits.get(schema_id)
                    if fit is None:
                        fit = fits[schema_id] = self._fits(tools[consumer], param, pv.value) is not None
                    if not fit:
                        counters["skipped_unfit"] += 1  # wrong type or format: the offer could only fail
                        continue
                if pv.restated:
                    pair = (pv.tool, pv.export, consumer, param)
                    if self._known_moot(pair, pv):
                        counters["skipped_moot"] = counters.get("skipped_moot", 0) + 1
                        continue  # its test would be moot again: no offer, no charge to the consumer (see _moot)
                # Offers queue up faster than tests conclude; beyond a few per pair they only repeat.
                slot = at if slots is None else slots[at]
                settled_or_spent = (
                    offers[slot] >= offers_per_pair
                    or pair_tests.get((pv.tool, pv.export, consumer, param), 0) >= tests_per_pair
                    or (pv.tool, consumer, "provenance", pv.export, param) in relations
                )
                if settled_or_spent:
                    if not state_offer or not self._take_state_offer(pv, target, consumer, param):
                        counters["skipped_implied"] += 1
                        continue
                else:
                    offers[slot] += 1
                numeric = self.offered_literal(consumer, param)
                for ti, tmpl in enumerate(self.contracts[consumer].templates):
                    arg = tmpl.arguments.get(param)
                    if tmpl.expected != "success" or arg is None:
                        continue
                    if arg.kind == "observation":
                        items.append(Item(target.id, consumer, ti, ((param, pv.id),), state_test=settled_or_spent))
                    elif pv.in_text:
                        # A value picked out of text (any path or hash a reply prints) is offered only where an
                        # input must name something that exists: filling a literal with it is a long shot on a
                        # budget shared with the number and folder offers, which would go to such guesses first.
                        continue
                    elif arg.kind == "literal" and numeric and not settled_or_spent and arg.value != pv.value:
                        items.append(Item(target.id, consumer, ti, ((param, pv.id),), number_offer=True))
                    elif (
                        arg.kind == "literal"
                        and not settled_or_spent
                        and (leaf is not None or self.placed_path(consumer, param))
                    ):
                        placement = "leaf" if leaf is not None else "folder"
                        if self._placed(consumer, param, placement, pv.value, arg.value) is not None:
                            items.append(Item(target.id, consumer, ti, ((param, pv.id),), placement=placement))
        return items

    def _mixed_path(self, node: Node, group: str) -> bool:
        """Whether a state was reached through a state change made by a tool of another group than ``group``.

        Sweeps are budgeted per provider and depth. In a catalog of separate apps or classes, every other group's
        state change is one more state in which a provider's change can be swept, and those mixed paths vastly
        outnumber the paths within the provider's own group (sign in -> act, lock -> brake -> start); yet another
        group's change seldom enables anything that the same change without it does not. Mixed paths therefore
        have their own small budget (``cross_group_sweeps_per_tool``) and cannot use up the one the provider's own
        chains need.
        """
        for n in self._lineage(node.id):
            if n.creator >= 0 and self.catalog[self.calls[n.creator].tool].group != group:
                return True
        return False

    def _plan_sweeps(self, item: Item, node: Node, target: Node, call_id: int, wave: Wave) -> None:
        """The state dependency sweep of a state change (Algorithm 1, lines 26-32): every other tool's templates
        re-run from the new state (line 32) and, where no state relation is known yet, tested before and after."""
        cfg = self.config
        tool = self.catalog[item.tool]
        mixed = self._mixed_path(node, tool.group)
        sweep_key = f"{item.tool}@{node.depth}" + ("@mixed" if mixed else "")
        if self.sweeps.get(sweep_key, 0) >= (cfg.cross_group_sweeps_per_tool if mixed else cfg.sweeps_per_tool):
            return
        across = not mixed and self.sweeps.get(sweep_key, 0) < cfg.cross_group_sweeps_per_tool
        self.sweeps[sweep_key] = self.sweeps.get(sweep_key, 0) + 1
        for consumer in self.catalog:
            if not consumer.executable or consumer.name not in self.contracts:
                continue
            self._poll_calls()
            if consumer.name == item.tool:
                # The provider's other templates run in the state it created (not as tests of it: a tool is not
                # its own prerequisite): a switch turned off is turned on again there, so a gate that starts
                # open is seen closing and opening -- the off-then-on chain of depth 2.
                for ti, tmpl in enumerate(self.contracts[consumer.name].templates):
                    if ti != item.template and tmpl.expected == "success":
                        wave.new_items.append(Item(target.id, consumer.name, ti))
                continue
            if not across and consumer.group != tool.group:
                continue
            for ti, tmpl in enumerate(self.contracts[consumer.name].templates):
                if tmpl.expected != "success":
                    continue
                probe = Item(target.id, consumer.name, ti)
                bound = self.bind(probe, prefer_call=call_id)
                if bound is None:
                    continue
                wave.new_items.append(probe)
                if (item.tool, consumer.name, "state", None, None) not in self.relations:
                    wave.sweeps.append(SweepTest(call_id, node.id, consumer.name, bound[0]))
                else:
                    self.counters["skipped_implied"] += 1

    # ------------------------------------------------------------------------ phase 3: controls and state tests
    def _test_calls(
        self, wave: Wave, controls: int = 0, sweeps: int = 0, parent_tests: int = 0
    ) -> list[tuple[State, str, dict[str, Any]]]:
        """The calls of a wave's controls, the "before" halves of its sweeps and its parent-state tests, from the
        given positions of each list on: what :meth:`_run_tests` runs first (and :meth:`step` prefetches)."""
        calls: list[tuple[State, str, dict[str, Any]]] = []
        for t in wave.controls[controls:]:
            calls.append((self.nodes[t.use.node].state, t.use.tool, t.control_args))
        for s in wave.sweeps[sweeps:]:
            calls.append((self.nodes[s.before_node].state, s.consumer, s.args))
        for _creator, info in wave.parent_tests[parent_tests:]:
            parent = self.nodes[self.nodes[info.node].parent]  # type: ignore[index]
            calls.append((parent.state, info.tool, info.args))
        return calls

    def _run_tests(self, wave: Wave) -> None:
        """Run a wave's controls and state tests in batches and record what the judges keep.

        Controls and the "before" half of every state test run in one batch; the "after" half only where the
        consumer failed before (a consumer that already succeeds cannot depend on the provider's state).
        """
        controls, sweeps, parent_tests = wave.controls, wave.sweeps, wave.parent_tests
        calls = self._test_calls(wave)
        # A provider that re-stated a value already known on its path is only its source if the consumer could
        # not use that value before the provider ran: otherwise an earlier record with the same name is what the
        # consumer found (e.g. a sign-in that happens to use a file's name as a user name).
        restated: list[int] = []
        for idx, t in enumerate(controls):
            pv = self.values[t.vid]
            vnode = self.nodes[pv.node]
            if pv.restated and vnode.parent is not None and vnode.creator == pv.call:
                restated.append(idx)
                calls.append((self.nodes[vnode.parent].state, t.use.tool, t.use.args))
        why = (
            ["controls"] * len(controls)
            + ["sweeps"] * len(sweeps)
            + ["controls"] * (len(calls) - len(controls) - len(sweeps))
        )
        first = self.run_many(calls, why) if calls else []
        n_main = len(controls) + len(sweeps)
        before_provider = {idx: first[n_main + len(parent_tests) + j][0] for j, idx in enumerate(restated)}
        for k, (creator, info) in enumerate(parent_tests):
            self._record_state(
                creator, info.tool, info.args, first[n_main + k][0], info.record, after_outcome="success"
            )  # a success (see step)
        self.counters["state_tests"] += len(parent_tests)
        befores = first[len(controls) : n_main]
        # each "before" record is classified once, here (the judge of its test reads the same outcome)
        before_outcomes = [self._classify(s.consumer, before) for s, (before, _) in zip(sweeps, befores)]
        after_calls = []
        for s, outcome in zip(sweeps, before_outcomes):
            if outcome == "failure":
                after_calls.append((self._node_after(s.call_id).state, s.consumer, s.args))
            else:
                self.counters["skipped_implied"] += 1
        after_results = iter(self.run_many(after_calls, "sweeps") if after_calls else [])
        self.counters["provenance_tests"] += len(controls)
        self.counters["state_tests"] += len(sweeps)
        for idx, (t, (rec, _)) in enumerate(zip(controls, first[: len(controls)])):
            if idx in before_provider and self._classify(t.use.tool, before_provider[idx]) != "failure":
                self._moot(t)
                continue
            self._record_value_test(t, rec)
        for s, (before, _), outcome in zip(sweeps, befores, before_outcomes):
            if outcome == "failure":
                self._record_state(
                    s.call_id, s.consumer, s.args, before, next(after_results)[0], before_outcome=outcome
                )
            else:
                self._record_state(
                    s.call_id, s.consumer, s.args, before, before, before_outcome=outcome, after_outcome=outcome
                )

    def _moot(self, t: ValueTest) -> None:
        """Count a moot test (the consumer succeeded with the same value before its provider ran): it concludes
        nothing about the provider. The pair's first moot test gives its budget back, later ones do not; and the
        same value, re-stated by the same provider again, is neither offered to nor tested for that pair again
        (:meth:`_offers`, :meth:`_plan_controls`).

        Why give back: a provider whose first value re-stated an existing record (a creation whose first key
        collides with one already there, see :meth:`_mint_again`) would otherwise settle the pair on tests of
        that old record and never test the keys it creates.

        Why not offer or test a moot value again: the provider re-states that value wherever it runs from a
        state that holds the record (the same colliding key from every state it is called in), and its consumer
        already used the value without it; each such offer would be charged to the consumer's budget and the
        pair's offers, and its test would be moot as well, spending the pair's budget and its calls on a question
        already answered. So a moot test costs its consumer nothing beyond the call already made.

        Why only once per pair: a test costs real calls whether it concludes or not (the control, and the
        consumer's call in the state before the provider), and the pair's budget is what bounds them. A provider
        whose values of an export are re-stated as a rule (it shows records other tools show too) makes every
        test of the pair moot; given back each time, such a pair never settles, keeps receiving value offers
        charged to its consumer's budget and keeps running controls, and those crowd out the offers of
        providers whose values are new. Once per pair covers the one collision a creation makes before it mints
        fresh keys, and keeps a pair's cost within ``tests_per_pair + 1`` tests.

        Why the consumer's own budget is not given back (charged when its call was admitted, :meth:`_admit`):
        that charge pays for the call, which ran and explores as any success does (its values, its state, its
        sweep); the test is only one of the things it led to. Per-tool budgets thus stay monotone, as
        :meth:`_spent` and the worklist's left-out items rely on (:class:`~.worklist.PackedHeap`).
        """
        self.counters["moot_tests"] = self.counters.get("moot_tests", 0) + 1
        self.moot_values.add((t.pair, json.dumps(self.values[t.vid].value, sort_keys=True)))
        moot = self.pair_moot.get(t.pair, 0)
        self.pair_moot[t.pair] = moot + 1
        if moot == 0:
            self.pair_tests[t.pair] -= 1

    def _known_moot(self, pair: tuple[str, str, str, str], pv: PoolValue) -> bool:
        """Whether a test of ``pair`` with ``pv``'s value was moot before (see :meth:`_moot`)."""
        return pair in self.pair_moot and (pair, json.dumps(pv.value, sort_keys=True)) in self.moot_values

    def concluded_tests(self, pair: tuple[str, str, str, str]) -> int:
        """How many of the exploration's tests of ``pair`` concluded (ran and were not moot, see :meth:`_moot`).

        ``pair_tests`` counts the tests planned, less the one moot test whose budget was given back; the other
        moot tests stay charged there, yet concluded nothing either."""
        moot = self.pair_moot.get(pair, 0)
        return self.pair_tests.get(pair, 0) + min(moot, 1) - moot

    # --------------------------------------------------------------------------- phase 4: record relations
    def _record_value_test(self, t: ValueTest, control_rec: dict[str, Any]) -> None:
        """Judge one value test (Algorithm 1, lines 20-23) and keep the relation the judges admit."""
        pv = self.values[t.vid]
        param = t.pair[3]
        use = Run(self._classify(t.use.tool, t.use.record), t.use.record)
        control = Run(self._classify(t.use.tool, control_rec), control_rec)
        sim = float(self.similarity(pv.export, param))
        evidence = {
            "provider_call": self._call_evidence(pv.call),
            "consumer_call": _call_json(t.use.tool, t.use.args, t.use.record),
            "control_call": _call_json(t.use.tool, t.control_args, control_rec),
            "control": "omitted" if param not in t.control_args else "literal",
        }
        verdict = judge_provenance(use, control, omitted=param not in t.control_args)
        if verdict.kept:
            self._add_relation(Relation(pv.tool, t.use.tool, "provenance", pv.export, param, sim, evidence))
            return
        # An input the template fills with a literal is the caller's free choice unless the tool checks its form
        # (:meth:`checked_form`), whether the literal is a number or text: the test can show that the tool needs
        # the provider's value (the literal fails, the provider's works), but both succeeding shows only that any
        # value will do, and name alignment alone (fuelLevel ~ fuelAmount, a reply's subject ~ an email's
        # subject) is no dependency. Text reaches such an input as a sibling field or a known sandbox fact.
        if control.outcome == "success" and not t.free_choice:
            verdict = judge_compatibility(use, control, sim, self.config.tau)
            if verdict.kept:
                self._add_relation(Relation(pv.tool, t.use.tool, "compatibility", pv.export, param, sim, evidence))
                return
        if verdict.inconclusive:
            self.counters["inconclusive_tests"] = self.counters.get("inconclusive_tests", 0) + 1

    def _record_state(
        self,
        provider_call: int,
        consumer: str,
        args: dict[str, Any],
        before: dict[str, Any],
        after: dict[str, Any],
        before_outcome: str | None = None,
        after_outcome: str | None = None,
    ) -> None:
        """Judge one before/after state test (Algorithm 1, lines 28-31) and keep the relation if admitted; an
        outcome the caller already classified is passed in rather than classified again."""
        b = before_outcome if before_outcome is not None else self._classify(consumer, before)
        a = after_outcome if after_outcome is not None else self._classify(consumer, after)
        verdict = judge_state(Run(b, before), Run(a, after))
        if verdict.inconclusive:
            self.counters["inconclusive_state_tests"] = self.counters.get("inconclusive_state_tests", 0) + 1
        if verdict.kept:
            evidence = {
                "provider_call": self._call_evidence(provider_call),
                "before_call": _call_json(consumer, args, before),
                "after_call": _call_json(consumer, args, after),
            }
            self._add_relation(Relation(self.calls[provider_call].tool, consumer, "state", None, None, None, evidence))

    def _node_after(self, call_id: int) -> Node:
        """The node a provider call led to: the newest child of its node created by that call."""
        info = self.calls[call_id]
        rec_state = self.memo[_key(self.nodes[info.node].state, info.tool, info.args)][1]
        for n in reversed(self.nodes):
            if n.state.fingerprint == rec_state.fingerprint:
                return n
        return self.nodes[info.node]

    def _call_evidence(self, call_id: int) -> dict[str, Any]:
        info = self.calls[call_id]
        return _call_json(info.tool, info.args, self._record(info))

    def _record(self, info: CallInfo) -> dict[str, Any]:
        """A logged call's record: held while its wave runs, then read back from the memo (it is the memoised
        record of the call from its node's state, which is what the call log was given)."""
        if info.record is not None:
            return info.record
        return self.memo[_key(self.nodes[info.node].state, info.tool, info.args)][0]

    # ------------------------------------------------------------------------------------------- results
    def result(self) -> list[Relation]:
        """The relations kept: the exploration's, then those only its retries found (:mod:`.retries`)."""
        return dedupe([*self.relations.values(), *self.retry.relations.values()])

    # ---------------------------------------------------------------------------------------- checkpoints
    _CHECKPOINTED = (
        "nodes",
        "values",
        "calls",
        "call_values",
        "queue",
        "far",
        "probes",
        "near_probes",
        "enqueued",
        "seen_items",
        "per_tool",
        "per_tool_probes",
        "per_tool_numbers",
        "sweeps",
        "pair_tests",
        "pair_moot",
        "moot_values",
        "pair_offers",
        "state_offers",
        "retry",
        "refusals",
        "exclusive",
        "relations",
        "counters",
        "started",
        "inherited",
    )

    def checkpoint(self, path: Path, identity: str, elapsed: float) -> None:
        # The memo lives in its store; the checkpoint records how many of its rows it covers (made durable first).
        payload = {
            "version": CHECKPOINT_VERSION,
            "format": CHECKPOINT_FORMAT,
            "identity": identity,
            "elapsed": elapsed,
            "memo_rows": self.memo.sync(),
        }
        payload.update({k: getattr(self, k) for k in self._CHECKPOINTED})
        # Streamed through fast gzip: a large build's pool of records and sandbox states compresses several-fold,
        # and is never held in memory twice. (The memo's states, most of it, are in the store, not here.)
        with atomic_open(path) as fh, gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=1) as gz:
            pickle.dump(payload, gz, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, path: Path, identity: str) -> bool:
        """Load a checkpoint written for the same build identity; False (and nothing loaded) otherwise."""
        try:
            with gzip.open(path, "rb") as fh:
                payload = pickle.load(fh)
        except (OSError, EOFError, zlib.error, pickle.UnpicklingError, AttributeError, ImportError):
            return False  # unreadable, truncated or from an older format: start afresh
        if (
            payload.get("version") != CHECKPOINT_VERSION
            or payload.get("format") != CHECKPOINT_FORMAT
            or payload.get("identity") != identity
        ):
            return False
        if any(k not in payload for k in self._CHECKPOINTED) or not self.memo.truncate(
            int(payload.get("memo_rows", -1))
        ):
            return False  # (a store with fewer rows than the checkpoint saw is not this checkpoint's memo)
        for k in self._CHECKPOINTED:
            setattr(self, k, payload[k])
        self._present_by_node.clear()  # (keyed by node ids: the restored nodes are others)
        self._present_by_path.clear()
        self.elapsed_before_resume = float(payload.get("elapsed", 0.0))
        return True
