"""What the engine holds: the one state its phases share, documented in one place.

The engine (:class:`~libra.induction.explore.engine.Engine`) is composed of one mixin per phase of a wave
(``calls``, ``values``, ``binding``, ``schedule``, ``offers``, ``planning``, ``judging``, ``retrying``,
``checkpoint``), and every mixin reads and writes the attributes declared on :class:`EngineState`. Why mixins over
one state rather than objects passing it around: the retries run the same tests on books of their own by swapping
a few of these attributes for the duration of a wave's retries (``RetriesMixin._aside``), and every phase must
then see the swapped books; one state, read through ``self``, is what keeps that exact.

What the exploration has found and decided so far is :class:`Explored`: the part a checkpoint saves, and all that
decides what the exploration does next. The rest is given (the build's inputs and the rules derived from them),
rebuilt on demand (caches), or lives for one wave only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from libra.contracts.exclusive import Exclusive
from libra.induction.explore.pair_counts import PairCounts
from libra.induction.explore.retries import RetryLedger
from libra.induction.explore.types import CallInfo, PoolValue
from libra.induction.explore.worklist import ItemCodec, PackedHeap, PackedQueue
from libra.library.artifact import Relation
from libra.probing.memo import MemoKey
from libra.probing.nodes import Node, lineage

if TYPE_CHECKING:
    from collections.abc import Callable

    from libra.catalog import Catalog
    from libra.contracts.model import Contract
    from libra.induction.config import BuildConfig
    from libra.induction.explore.fits import FitChecker
    from libra.induction.explore.inputs import InputRules
    from libra.induction.explore.stream import CallsOut
    from libra.induction.explore.worklist import Item
    from libra.induction.update import KeptFlows
    from libra.probing.memo import MemoStore
    from libra.runtime.base import Runtime

__all__ = ["COUNTERS", "EngineState", "Explored"]

#: The exploration's counters every build reports (``stats.engine``), in the order they are reported; others are
#: added as they first count (``calls_<purpose>``, ``skipped_moot``, ...), and the retries' figures follow.
COUNTERS = (
    "work_items",
    "executed_calls",
    "memo_hits",
    "calls_from_checking",
    "provenance_tests",
    "state_tests",
    "skipped_implied",
    "skipped_unfit",
    "inconclusive_tests",
    "moot_tests",
    "waves",
)


@dataclass
class Explored:
    """What the exploration has found and decided so far: everything a checkpoint saves, and everything that
    decides which call the exploration makes next. The engine holds each field as an attribute of its own name.

    The worklist comes first. Binding items (a new value offered to a candidate input) go before probes (a
    template re-run from a new state): they are the candidate tests, and probes, which explore, wait and have
    their own budget. Offers between tools of the same group (one app, one class) go before offers across
    groups: a service's tokens and ids are mostly consumed by the same service, and in a large catalog the
    cross-group offers would otherwise spend a consumer's budget first. Within each, the best-named pairings go
    first (the field similarity of the offered export and the input): a consumer's budget of bound calls is spent
    on ``song_id -> song_id`` before ``review_id -> song_id``, whatever order the values were discovered in. Only
    the order changes, never what a test concludes. (Items are held packed, see :mod:`.worklist`: a large build
    queues millions it never runs.)
    """

    queue: PackedHeap  # offers within a group, by (-similarity, sequence)
    far: PackedHeap  # offers across groups, number offers and placed offers, by (-similarity, sequence)
    probes: PackedQueue  # template re-runs, first in first out
    near_probes: PackedQueue  # probes of a state their own group's change created: see ScheduleMixin._pop
    enqueued: int = 0  # offers queued so far (their sequence numbers)
    # Work items already run, by a 128-bit digest of (state, tool, arguments, credit): a large build runs hundreds
    # of thousands, and their keys in full (the arguments' JSON) were tens of megabytes.
    seen_items: set[bytes] = field(default_factory=set)
    nodes: list[Node] = field(default_factory=list)  # the states reached, the fresh state first
    values: list[PoolValue] = field(default_factory=list)  # the pool, by value id
    calls: list[CallInfo] = field(default_factory=list)  # the call log: every success, by call id
    call_values: dict[int, list[int]] = field(default_factory=dict)  # call id -> the pool values it produced
    per_tool: dict[str, int] = field(default_factory=dict)  # offers run per consumer (max_calls_per_tool)
    per_tool_probes: dict[str, int] = field(default_factory=dict)  # probes run per tool (max_probes_per_tool)
    per_tool_numbers: dict[str, int] = field(default_factory=dict)  # number and placed offers run per consumer
    per_tool_far: dict[str, int] = field(default_factory=dict)  # offers of other groups' values run per consumer
    sweeps: dict[str, int] = field(default_factory=dict)  # sweeps per "provider@depth[@mixed]"
    pair_tests: dict[tuple[str, str, str, str], int] = field(default_factory=dict)  # tests per candidate pair
    # Moot tests per pair, and the (pair, value) they tested (see JudgingMixin._moot)
    pair_moot: dict[tuple[str, str, str, str], int] = field(default_factory=dict)
    moot_values: set[tuple[tuple[str, str, str, str], str]] = field(default_factory=set)
    pair_offers: PairCounts = field(default_factory=PairCounts)  # offers per candidate pair (see OffersMixin)
    state_offers: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (creator, consumer, input)
    # (node, consumer, inputs offered to) -> value-independent refusal -> the distinct argument sets it refused
    # there (see ScheduleMixin.gated)
    refusals: dict[tuple[int, str, tuple[str, ...]], dict[str, set[str]]] = field(default_factory=dict)
    # consumer -> inputs its own rejection said exclude one another (see PlanningMixin._learn_exclusive)
    exclusive: dict[str, Exclusive] = field(default_factory=dict)
    relations: dict[tuple, Relation] = field(default_factory=dict)  # the relations kept, by key
    # Pairs whose provider field names another kind of record than the consumer's input (see kinds.KindsMixin),
    # with why: no relation, and neither offered nor tested again.
    refuted: dict[tuple[str, str, str, str], str] = field(default_factory=dict)
    # The retries of failed calls keep their own books (:mod:`.retries`): nothing above reads them.
    retry: RetryLedger = field(default_factory=RetryLedger)
    # (tool, template index) -> revisions of that template's literals from refusals, and the contracts so revised
    # (see :mod:`.revising`): a resumed build runs the revised templates, as the build it resumes did
    revisions: dict[tuple[str, int], int] = field(default_factory=dict)
    revised: dict[str, Contract] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)  # see COUNTERS
    started: bool = False  # the fresh state and the initial probes are in (Engine.start)
    # Memo keys of calls contract checking made through the same store that this exploration has not made yet
    # (see Engine.start and CallsMixin.run_many).
    inherited: set[MemoKey] = field(default_factory=set)

    @classmethod
    def fresh(cls) -> Explored:
        """Nothing explored yet: an empty worklist (its heaps and queues share one codec) and zero counters."""
        codec = ItemCodec()
        state = cls(PackedHeap(codec), PackedHeap(codec), PackedQueue(codec), PackedQueue(codec))
        state.counters = dict.fromkeys(COUNTERS, 0)
        state.counters.update(state.retry.stats(()))  # the retries' figures, kept current by _run_aside
        return state

    def complete(self) -> bool:
        """Whether every field is set (an object unpickled from another layout may lack some)."""
        return all(f.name in vars(self) for f in fields(self))


class EngineState:
    """The attributes every phase of the engine shares (set by ``Engine.__init__``).

    The build's inputs, never changed by the exploration: ``catalog``, ``runtime``, ``contracts``, ``config``,
    ``similarity`` (of two field names) and ``fixtures`` (sandbox facts the runtime was set up with, e.g. the test
    account's credentials: values a caller of the sandbox legitimately knows, offered to inputs whose names they
    match; they are not tools, so no relation ever starts from them). The rules derived from them: ``inputs``
    (:class:`~.inputs.InputRules`) and ``fits`` (:class:`~.fits.FitChecker`). The memo of every invocation:
    ``memo``.

    The explored state: every field of :class:`Explored`, as an attribute of the same name (:meth:`adopt`).

    Caches, rebuilt on demand and never checkpointed, are declared by the mixins that keep them; so is what lives
    for one wave only (the stream of calls, the planned items not queued yet, whether the retries are running).
    """

    catalog: Catalog
    runtime: Runtime
    contracts: dict[str, Contract]
    config: BuildConfig
    similarity: Callable[[str, str], float]
    fixtures: dict[str, Any]
    inputs: InputRules
    fits: FitChecker
    memo: MemoStore
    elapsed_before_resume: float  # seconds the build had run before the checkpoint it resumed from
    #: the tools an update builds again (:mod:`libra.induction.update`): when set, only pairs with one of them on
    #: either side are tested; None tests every pair
    focus: frozenset[str] | None = None
    #: with ``focus``: where an update offers values between two unchanged tools (:class:`~libra.induction.update.
    #: KeptFlows`)
    kept_flows: KeptFlows | None = None

    # the explored state (see Explored)
    queue: PackedHeap
    far: PackedHeap
    probes: PackedQueue
    near_probes: PackedQueue
    enqueued: int
    seen_items: set[bytes]
    nodes: list[Node]
    values: list[PoolValue]
    calls: list[CallInfo]
    call_values: dict[int, list[int]]
    per_tool: dict[str, int]
    per_tool_probes: dict[str, int]
    per_tool_numbers: dict[str, int]
    per_tool_far: dict[str, int]
    sweeps: dict[str, int]
    pair_tests: dict[tuple[str, str, str, str], int]
    pair_moot: dict[tuple[str, str, str, str], int]
    moot_values: set[tuple[tuple[str, str, str, str], str]]
    pair_offers: PairCounts
    state_offers: dict[tuple[str, str, str], int]
    refusals: dict[tuple[int, str, tuple[str, ...]], dict[str, set[str]]]
    exclusive: dict[str, Exclusive]
    relations: dict[tuple, Relation]
    refuted: dict[tuple[str, str, str, str], str]
    retry: RetryLedger
    revisions: dict[tuple[str, int], int]
    revised: dict[str, Contract]
    counters: dict[str, int]
    started: bool
    inherited: set[MemoKey]

    _bare_names: set[str] | None  # the catalog's tool names without their server or class (see _revise_literals)

    # for one wave (never checkpointed)
    _out: CallsOut | None  # the wave's stream of calls (CallsMixin.run_many)
    _unqueued: list[Item]  # the wave's planned new items (ScheduleMixin._queue_planned)
    _queued_upto: int  # how many of them are queued already
    _retrying: bool  # True while a wave's retries run (RetriesMixin._aside)

    def outside_focus(self, provider: str, consumer: str) -> bool:
        """Whether a test of ``provider`` -> ``consumer`` is left out: an update keeps that pair's evidence."""
        return self.focus is not None and provider not in self.focus and consumer not in self.focus

    def adopt(self, explored: Explored) -> None:
        """Hold ``explored``'s fields as this engine's explored state."""
        for f in fields(Explored):
            setattr(self, f.name, getattr(explored, f.name))

    def explored(self) -> Explored:
        """The explored state, as a checkpoint saves it."""
        return Explored(**{f.name: getattr(self, f.name) for f in fields(Explored)})

    def _lineage(self, node_id: int) -> list[Node]:
        """A state and its ancestors, deepest first."""
        return lineage(self.nodes, node_id)
