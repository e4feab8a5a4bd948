"""Runtime relation induction (paper §3.1, Algorithm 1).

The engine explores a catalog from its fresh state with a worklist of *work items* (state, tool, template,
binding). Successful calls export values into a pool; each value is offered to the consumer inputs it is a
candidate for (:mod:`libra.induction.candidates`), which enqueues new items. Every success that used an upstream
value gets a counterfactual control; every state-changing success gets a before/after sweep:

- **input provenance** (E_prov): the consumer succeeds with the provider's value and fails when that input is
  replaced by a valid, different value (or omitted, when optional), from the same saved state;
- **compatibility** (E_comp): both succeed, differently, and the output and input field names are aligned:
  cos(h_f(f_out), h_f(f_in)) > tau;
- **state dependency** (E_state): a consumer call with identical arguments fails before the provider's call and
  succeeds after it.

The verdicts are pure functions of the records (:mod:`libra.induction.judges`); the engine plans and runs the
calls. States are immutable values, so a control runs from exactly the state the consumer saw. Outputs of
state-changing calls create child states that later items run from, which is how multi-hop compositions (create
an account -> sign in -> act) are found.

A wave (:meth:`Engine.step`) has named phases, each in a module of its own, all mixed into :class:`Engine` over
the one state of :mod:`.state`:

1. select the wave: pop work items, bind them, charge their budgets (:mod:`.schedule`, :mod:`.binding`);
2. execute them in one batch (:mod:`.calls`);
3. plan what each success asks for -- its controls (:mod:`.controls`), its pool values (:mod:`.values`), the
   offers they make (:mod:`.offers`), its sweep (:mod:`.planning`);
4. run the controls and state tests and record what the judges keep (:mod:`.judging`);
5. on books of their own, retry the failures with other equally named values (:mod:`.retrying`, :mod:`.retries`).

The rules about inputs that follow from the catalog alone live in :mod:`.inputs` and :mod:`.fits`; checkpoints in
:mod:`.checkpoint`.

Cost control, all without changing what a test would conclude:

- every invocation is memoised by (state fingerprint, tool, arguments): runtimes are deterministic, so a repeated
  call (the "before" half of many state tests, the line-32 re-runs of a sweep) costs nothing; in a build the
  memo is the one contract checking called through, so a call checking made is not run again either (it still
  counts as the exploration's own first call of it: :meth:`~.calls.CallsMixin.run_many`);
- a relation already kept is never tested again, and each (provider field, consumer input) pair is tested at most
  ``tests_per_pair`` times;
- calls run in waves through ``invoke_many`` so an isolated runtime keeps every worker busy;
- a failed call is retried with other equally named values on a budget and books of its own (:mod:`.retries`),
  so the retries never take calls from the exploration and only add relations.

The engine checkpoints between waves; a killed build resumes from the checkpoint and, because the exploration
order is deterministic, ends with the same library.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from libra.catalog import Catalog
from libra.contracts.model import Contract
from libra.induction.config import BuildConfig
from libra.induction.explore.binding import BindingMixin
from libra.induction.explore.calls import CallsMixin
from libra.induction.explore.checkpoint import CHECKPOINT_FORMAT, CHECKPOINT_VERSION, CheckpointMixin
from libra.induction.explore.controls import ControlsMixin, control_choices
from libra.induction.explore.fits import FitChecker
from libra.induction.explore.inputs import InputRules, path_inside, with_leaf
from libra.induction.explore.judging import JudgingMixin
from libra.induction.explore.offers import OffersMixin
from libra.induction.explore.planning import PlanningMixin
from libra.induction.explore.retrying import RetriesMixin
from libra.induction.explore.schedule import ScheduleMixin, gate_message
from libra.induction.explore.state import Explored
from libra.induction.explore.types import FIXTURE, CallInfo, PoolValue, SweepTest, ValueTest, Wave
from libra.induction.explore.values import PoolMixin, record_of, spread
from libra.induction.explore.worklist import Item
from libra.library.artifact import Candidate, Relation, dedupe
from libra.probing.memo import MemoKey, MemoStore
from libra.probing.nodes import Node
from libra.runtime.base import Runtime

# (the names other code imports from here: the engine, its configuration and checkpoint numbers, and the records
# and rules that tests read)
__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "FIXTURE",
    "BuildConfig",
    "CallInfo",
    "Engine",
    "PoolValue",
    "SweepTest",
    "ValueTest",
    "Wave",
    "control_choices",
    "gate_message",
    "path_inside",
    "record_of",
    "spread",
    "with_leaf",
]


class Engine(
    CallsMixin,
    PoolMixin,
    BindingMixin,
    ScheduleMixin,
    OffersMixin,
    ControlsMixin,
    PlanningMixin,
    JudgingMixin,
    RetriesMixin,
    CheckpointMixin,
):
    """Algorithm 1 over a runtime, contracts and candidate compositions (see the module's docstring for its
    phases, :class:`~.state.EngineState` for what it holds)."""

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
        # the build's inputs
        self.catalog = catalog
        self.fixtures = dict(fixtures or {})
        self.runtime = runtime
        self.contracts = contracts
        self.config = config or BuildConfig()
        self.similarity = similarity
        # the rules derived from them (the candidate index among them)
        self.inputs = InputRules(catalog, contracts, candidates, similarity, self.config, self.fixtures)
        self.fits = FitChecker()
        # Every invocation's record and resulting state, on disk (:mod:`libra.probing.memo`): states the engine
        # holds (nodes, results) are light, their payloads are fetched by content key for the calls of a wave.
        # ``memo_path`` None keeps the store in a temporary directory; a build passes the path next to its
        # checkpoint.
        self.memo = memo if memo is not None else MemoStore(memo_path)
        # the explored state (everything a checkpoint saves)
        self.adopt(Explored.fresh())
        self.elapsed_before_resume = 0.0
        # caches (see the mixins that keep them)
        self._outcome_keys = {}
        self._shown_cache = {}
        self._present_by_node = {}
        self._state_makers = None
        self._bare_names = None
        self._present_by_path = {}
        # for one wave
        self._out = None
        self._unqueued = []
        self._queued_upto = 0
        self._retrying = False

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

    def step(self) -> bool:
        """Run one wave; False when the worklist is empty or the budget is spent.

        A wave has named phases: select the work items (:meth:`_select_wave`), execute them in one batch, then for
        every success (:meth:`_on_success`) plan its tests and record the values it produced, then run the
        controls and state tests in batches and record what the judges keep (:meth:`_run_tests`), and finally,
        on books of their own, retry the failures with other equally named values (:meth:`_run_aside`).
        """
        if not self._pending() or self.counters["executed_calls"] >= self.config.max_calls:
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

    def result(self) -> list[Relation]:
        """The relations kept: the exploration's, then those only its retries found (:mod:`.retries`)."""
        return dedupe([*self.relations.values(), *self.retry.relations.values()])

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
