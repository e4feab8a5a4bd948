"""Running a wave's tests and recording what the judges keep (Algorithm 1, lines 17-23 and 28-31).

The tests planned for a wave's successes (:mod:`.planning`) run here in batches: each control, the "before" half
of each sweep, each free parent-state test, and the "after" half of the sweeps whose consumer failed before. The
verdicts are pure functions of the records (:mod:`libra.induction.judges`); a relation they admit is kept with the
calls that show it as evidence. A value test whose consumer already succeeded before its provider ran is moot: it
concludes nothing and is booked as such (:meth:`JudgingMixin._moot`).
"""

from __future__ import annotations

import json
from typing import Any

from libra.induction.explore.kinds import KindsMixin, Pending, counter_like
from libra.induction.explore.types import Call, PoolValue, SweepTest, ValueTest, Wave
from libra.induction.judges import Run, judge_compatibility, judge_provenance, judge_state, produced_something
from libra.library.artifact import Relation
from libra.probing.memo import memo_key
from libra.probing.nodes import Node

__all__ = ["EVIDENCE_CHARS", "JudgingMixin", "call_json", "clip"]

EVIDENCE_CHARS = 4000


def clip(record: dict[str, Any]) -> dict[str, Any]:
    """Evidence keeps records readable: large outputs and diffs are cut to a preview."""
    out = dict(record)
    for k in ("output", "state_changes"):
        text = json.dumps(out.get(k), default=repr)
        if len(text) > EVIDENCE_CHARS:
            out[k] = {"_truncated": text[:EVIDENCE_CHARS]}
    return out


def call_json(tool: str, args: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """A call as a relation's evidence shows it."""
    return {"tool": tool, "arguments": args, "record": clip(record)}


class JudgingMixin(KindsMixin):
    """Running controls and state tests, judging them, booking moot tests, keeping relations."""

    def _test_calls(self, wave: Wave, controls: int = 0, sweeps: int = 0, parent_tests: int = 0) -> list[Call]:
        """The calls of a wave's controls, the "before" halves of its sweeps and its parent-state tests, from the
        given positions of each list on: what :meth:`_run_tests` runs first (and a wave prefetches, see
        :meth:`~libra.induction.explore.planning.PlanningMixin._record_outcomes`)."""
        calls: list[Call] = []
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

        A value a state change brought into the pool is that change's contribution only if the consumer could not
        use it before the change: so the batch of a control of such a value also runs the consumer's call from the
        state before the provider (:meth:`_predates`). A provider that re-stated a value already known on its path
        is not its source where that call succeeds (an earlier record with the same name is what the consumer
        found: a sign-in that happens to use a file's name as a user name); a counter's number new on the path
        (:func:`~.kinds.counter_like`) is not where that call succeeds with something to show (a file's new number
        that is also an existing event's number: the event was there before the file). Either test is moot. Other
        new values (a fresh id, a new name) cannot name a record the provider did not make, and get no such call.

        The relations the judges admit are then checked against the other values of their provider's field
        (:meth:`~.kinds.KindsMixin._confirm_kinds`) before they are kept.
        """
        controls, sweeps, parent_tests = wave.controls, wave.sweeps, wave.parent_tests
        calls = self._test_calls(wave)
        restated: list[int] = []
        for idx, t in enumerate(controls):
            pv = self.values[t.vid]
            vnode = self.nodes[pv.node]
            if vnode.parent is not None and vnode.creator == pv.call and (pv.restated or counter_like(pv.value)):
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
            )  # a success (see PlanningMixin._plan_parent_test)
        self.counters["state_tests"] += len(parent_tests)
        befores = [rec for rec, _state in first[len(controls) : n_main]]
        after_results = self._run_sweeps_after(sweeps, befores)
        self.counters["provenance_tests"] += len(controls)
        self.counters["state_tests"] += len(sweeps)
        admitted: list[Pending] = []
        for idx, (t, (rec, _)) in enumerate(zip(controls, first[: len(controls)])):
            if idx in before_provider and self._predates(t, before_provider[idx]):
                self._moot(t)
                continue
            rel = self._judge_value_test(t, rec)
            if rel is not None:
                admitted.append((t, rec, rel))
        self._confirm_kinds(admitted)
        for s, before, (outcome, after) in zip(sweeps, befores, after_results):
            if outcome == "failure":
                self._record_state(s.call_id, s.consumer, s.args, before, after, before_outcome=outcome)
            else:
                self._record_state(
                    s.call_id, s.consumer, s.args, before, before, before_outcome=outcome, after_outcome=outcome
                )

    def _run_sweeps_after(
        self, sweeps: list[SweepTest], befores: list[dict[str, Any]]
    ) -> list[tuple[str, dict[str, Any]]]:
        """Each sweep's "before" outcome (each record classified once, here: the judge of its test reads the same
        outcome), and the record after the provider's change where the consumer failed before (run in one
        batch), else the "before" record again."""
        before_outcomes = [self._classify(s.consumer, before) for s, before in zip(sweeps, befores)]
        after_calls = []
        for s, outcome in zip(sweeps, before_outcomes):
            if outcome == "failure":
                after_calls.append((self._node_after(s.call_id).state, s.consumer, s.args))
            else:
                self.counters["skipped_implied"] += 1
        after_results = iter(self.run_many(after_calls, "sweeps") if after_calls else [])
        return [
            (outcome, next(after_results)[0] if outcome == "failure" else before)
            for before, outcome in zip(befores, before_outcomes)
        ]

    def _predates(self, t: ValueTest, before: dict[str, Any]) -> bool:
        """Whether the consumer's call of a value test, made from the state before the value's provider ran
        (``before``), shows the provider was not the value's source (see :meth:`_run_tests`): for a re-stated
        value, a call that does not fail; for a value new on the path, a success that produced something (an empty
        success -- a search by a name nothing had yet -- is what the call gives without the provider's record)."""
        outcome = self._classify(t.use.tool, before)
        if self.values[t.vid].restated:
            return outcome != "failure"
        return outcome == "success" and produced_something(before)

    # -------------------------------------------------------------------------------------------- moot tests
    def _moot(self, t: ValueTest) -> None:
        """Count a moot test (the consumer succeeded with the same value before its provider ran): it concludes
        nothing about the provider. The pair's first moot test gives its budget back, later ones do not; and the
        same value, re-stated by the same provider again, is neither offered to nor tested for that pair again
        (:meth:`~libra.induction.explore.offers.OffersMixin._offers`,
        :meth:`~libra.induction.explore.planning.PlanningMixin._plan_controls`).

        Why give back: a provider whose first value re-stated an existing record (a creation whose first key
        collides with one already there, see
        :meth:`~libra.induction.explore.planning.PlanningMixin._mint_again`) would otherwise settle the pair on
        tests of that old record and never test the keys it creates.

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

        Why the consumer's own budget is not given back (charged when its call was admitted,
        :meth:`~.schedule.ScheduleMixin._admit`): that charge pays for the call, which ran and explores as any
        success does (its values, its state, its sweep); the test is only one of the things it led to. Per-tool
        budgets thus stay monotone, as :meth:`~.schedule.ScheduleMixin._spent` and the worklist's left-out items
        rely on (:class:`~.worklist.PackedHeap`).
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

    # ------------------------------------------------------------------------------------ recording relations
    def _judge_value_test(self, t: ValueTest, control_rec: dict[str, Any]) -> Relation | None:
        """Judge one value test (Algorithm 1, lines 20-23): the relation the judges admit, or None.

        An input the template fills with a literal is the caller's free choice unless the tool checks its form
        (:meth:`~.inputs.InputRules.checked_form`), whether the literal is a number or text: the test can show
        that the tool needs the provider's value (the literal fails, the provider's works), but both succeeding
        shows only that any value will do, and name alignment alone (fuelLevel ~ fuelAmount, a reply's subject ~
        an email's subject) is no dependency. Text reaches such an input as a sibling field or a known sandbox
        fact.
        """
        pv = self.values[t.vid]
        param = t.pair[3]
        use = Run(self._classify(t.use.tool, t.use.record), t.use.record)
        control = Run(self._classify(t.use.tool, control_rec), control_rec)
        sim = float(self.similarity(pv.export, param))
        evidence = {
            "provider_call": self._call_evidence(pv.call),
            "consumer_call": call_json(t.use.tool, t.use.args, t.use.record),
            "control_call": call_json(t.use.tool, t.control_args, control_rec),
            "control": "omitted" if param not in t.control_args else "literal",
        }
        verdict = judge_provenance(use, control, omitted=param not in t.control_args)
        if verdict.kept:
            return Relation(pv.tool, t.use.tool, "provenance", pv.export, param, sim, evidence)
        if control.outcome == "success" and not t.free_choice:
            verdict = judge_compatibility(use, control, sim, self.config.tau)
            if verdict.kept:
                return Relation(pv.tool, t.use.tool, "compatibility", pv.export, param, sim, evidence)
        if verdict.inconclusive:
            self.counters["inconclusive_tests"] = self.counters.get("inconclusive_tests", 0) + 1
        return None

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
                "before_call": call_json(consumer, args, before),
                "after_call": call_json(consumer, args, after),
            }
            self._add_relation(Relation(self.calls[provider_call].tool, consumer, "state", None, None, None, evidence))

    def _add_relation(self, rel: Relation) -> None:
        self.relations.setdefault(rel.key, rel)

    def _node_after(self, call_id: int) -> Node:
        """The node a provider call led to: the newest child of its node created by that call."""
        info = self.calls[call_id]
        rec_state = self.memo[memo_key(self.nodes[info.node].state, info.tool, info.args)][1]
        for n in reversed(self.nodes):
            if n.state.fingerprint == rec_state.fingerprint:
                return n
        return self.nodes[info.node]

    def _call_evidence(self, call_id: int) -> dict[str, Any]:
        info = self.calls[call_id]
        return call_json(info.tool, info.args, self._record(info))
