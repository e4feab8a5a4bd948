"""Running calls: every invocation the exploration makes goes through :meth:`CallsMixin.run_many`.

Calls are memoised by (state fingerprint, tool, arguments): runtimes are deterministic, so a repeated call costs
nothing. A call contract checking or a retry made first is taken from the memo and still counted as the
exploration's own first call of it, so what the exploration explores does not depend on what they happened to run.
New calls go to the runtime in batches, through its stream when it has one (results taken by ticket while the
engine goes on with its own work), and calls a wave is certain to make are submitted ahead while it is planned
(:meth:`CallsMixin._prefetch`). None of that changes what the engine sees: each call's result depends on its own
state and arguments only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from libra.contracts.model import Contract
from libra.contracts.outcome import classify_keyed, schema_key
from libra.induction.explore.state import EngineState
from libra.induction.explore.stream import CallsOut
from libra.induction.explore.types import Call, CallInfo
from libra.probing.memo import MemoKey, memo_key
from libra.runtime.base import InvocationRecord, State

__all__ = ["CallsMixin", "CallsOut"]

#: A new call's result: ((memo key, call), record, the light state it led to).
Done = tuple[tuple[MemoKey, Any], dict[str, Any], State]


class CallsMixin(EngineState):
    """Running the exploration's calls (memoised, batched, streamed), classifying their records, reading the
    records of logged calls back. Keeps ``_outcome_keys`` (see :meth:`_classify`)."""

    _outcome_keys: dict[str, tuple[Contract, str, str]]

    #: calls submitted ahead of the wave's tests at most (see :meth:`_prefetch`): a bound on the records and states
    #: held before the tests take them
    PREFETCH = 2048
    #: results of a stream memoised together at most (see :meth:`_run_streamed`)
    STORE_GROUP = 64
    #: work items queued at a time while the caller waits for a worker (see :meth:`_idle`)
    IDLE_ITEMS = 256

    def run_many(self, calls: Sequence[Call], purpose: str | Sequence[str]) -> list[tuple[dict[str, Any], State]]:
        """Invoke with memoisation; unique new calls go to the runtime in one batch.

        ``purpose`` (one for all calls, or one per call) says what the budget was spent on -- offers, probes,
        controls, sweeps -- so a build's statistics show where its calls went. While retries run
        (:meth:`~libra.induction.explore.retrying.RetriesMixin._aside`) every memoised call is free and the calls
        executed are the retries' (:attr:`RetryLedger.made`)."""
        keys = [memo_key(s, t, a) for s, t, a in calls]
        todo: dict[tuple[str, str, str], Call] = {}
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

    def _record(self, info: CallInfo) -> dict[str, Any]:
        """A logged call's record: held while its wave runs, then read back from the memo (it is the memoised
        record of the call from its node's state, which is what the call log was given)."""
        if info.record is not None:
            return info.record
        return self.memo[memo_key(self.nodes[info.node].state, info.tool, info.args)][0]

    # ----------------------------------------------------------------------------- calls made by others first
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

    # ------------------------------------------------------------------------------------ the wave's stream
    def _calls_out(self) -> CallsOut | None:
        """The wave's stream of calls to the runtime, opened on first use (None: the runtime has no stream)."""
        if self._out is None:
            stream_of = getattr(self.runtime, "stream", None)
            if stream_of is None:
                return None
            self._out = CallsOut(stream_of())
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

    def _prefetch(self, calls: Iterable[Call]) -> None:
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
            k = memo_key(s, t, a)
            if k in out.early or k in self.inherited or k in self.memo:
                continue
            out.early[k] = out.submit((self.memo.full(s), t, a))

    # ---------------------------------------------------------------------------------------- new calls
    def _store(self, chunk: Sequence[tuple[MemoKey, Any]], results: Sequence[tuple[Any, State]]) -> list[Done]:
        """Memoise the results of new calls; returns (call, record, light state) per call."""
        recs = [rec.to_dict() if isinstance(rec, InvocationRecord) else rec for rec, _st in results]
        lights = self.memo.put_many((k, rec, st) for (k, _c), rec, (_r, st) in zip(chunk, recs, results))
        self.counters["executed_calls"] += len(results)
        return list(zip(chunk, recs, lights))

    def _run_chunked(self, pending: list[tuple[MemoKey, Any]]) -> list[Done]:
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

    def _idle(self, out: CallsOut, ticket: int) -> None:
        """Until the result of ``ticket`` is back, queue the wave's planned new items
        (:meth:`~libra.induction.explore.schedule.ScheduleMixin._queue_planned`).

        Why: the caller's work on a wave is serial and the workers wait for it, and queueing a large wave's new
        items (an offer per candidate input of every new value) was a good share of it, done after all of the
        wave's calls. It changes nothing to do it while the workers run the wave's tests: once the wave's
        successes are planned its new items are final, nothing pops the worklist before the next wave, and
        what queueing an item reads (its node, values and names, and the per-tool budgets, which only the next
        wave's admissions charge) is fixed by then; the items are queued in the order they were planned, so they
        take the same sequence numbers, and ``Engine.step`` queues whatever is left before it sweeps the heaps.
        """
        while self._queued_upto < len(self._unqueued) and not out.ready(ticket):
            self._queue_planned(self.IDLE_ITEMS)

    def _run_streamed(self, pending: list[tuple[MemoKey, Any]], out: CallsOut) -> list[Done]:
        """New calls through the runtime's stream (:class:`~libra.runtime.workers.executor.CallStream`): the
        engine's own work on them (fetching their states from the memo store, memoising their results) happens
        while the workers run the calls submitted before.

        At most a batch of calls is submitted ahead of the results taken, so a wave of many thousand sweep calls
        never holds all of its snapshots at once. Results are taken in the order of ``pending`` (calls prefetched
        by :meth:`_prefetch` were submitted earlier) and memoised whenever the next one is not back yet (the
        workers are busy: the caller's turn), or when :data:`STORE_GROUP` are waiting. Each call's result depends
        on its own state and arguments only, so none of this changes what the engine sees.
        """
        done: list[Done] = []
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
