"""Kinds: whether a provider's field names the records a consumer's input takes, or its values only happen to.

Why: many services number their records with small counters, one per kind (e-mails 1, 2, 3, ...; events 1, 2,
3, ...; files 1, 2, 3, ...). An e-mail's number offered to an event's input then often names *some* event: the
consumer succeeds, a control that names nothing fails, and provenance would be concluded although the value only
happens to exist in the consumer's table. The same holds for any value that lands in another kind's range (a page
count that is also a message number). What tells the two apart is what the consumer does with *the other values
of the same field*: a field that identifies what the consumer needs gives values it knows, while a field of
another kind gives, sooner or later, a value it has never heard of.

The rule (:meth:`KindsMixin._confirm_kinds`): before a value relation the judges admit is kept, the consumer's
call is made again with other values the provider's field showed in the very state the consumer ran in (the same
call, only that input changed), and compared with its call with an *absent* value, one no call produced (the
test's own control when it was such a value and was refused, else a call made for it), when the consumer refuses
that value by itself (:func:`naming_signature`: the refusal quotes it and no other input). If the consumer refuses
one of the provider's values of the tested value's form exactly as it refuses the absent one
(:func:`refusal_signature`: the same refusal, the value's own text aside), it treats a value the provider showed in
that state as naming nothing: the field is not the consumer's kind, the pair is refuted (no relation, and no more
offers or tests of it). Values refused for another reason (an order already cancelled), or of another form (a
listing's folders beside its files, :func:`value_form`), refute nothing: they may well be of the consumer's kind,
or of another kind the field mixes in. A relation whose provider showed no other value in that state is kept on
its test alone.

What the rule gives up: a provider whose values are a wider set than the consumer's records (every user, where
the consumer takes only employees) is refuted with the values the consumer does not know. That is what "this
value identifies what the consumer needs" asks for; such a pairing would only hold for some of the provider's
values anyway.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from libra.contracts.outcome import extract, rejection_message
from libra.induction.explore.retries import retry_budget
from libra.induction.explore.state import EngineState
from libra.induction.explore.types import Call, ValueTest
from libra.induction.explore.values import record_of, spread
from libra.library.artifact import Relation
from libra.probing.paths import canonical_path

__all__ = ["KindsMixin", "Pending", "counter_like", "naming_signature", "refusal_signature", "value_form"]

#: A relation the judges admitted, waiting for its kind check: (its test, the control's record, the relation).
Pending = tuple[ValueTest, dict[str, Any], Relation]


def _texts(value: Any) -> list[str]:
    """The spellings a message may quote a value in: as printed, and as JSON (a string's quotes aside)."""
    out = []
    if isinstance(value, str):
        out.append(value)
    elif value is not None:
        out.append(json.dumps(value) if not isinstance(value, float) else repr(value))
        out.append(str(value))
    return sorted({t for t in out if t.strip()}, key=len, reverse=True)


def refusal_signature(message: str | None, value: Any) -> str | None:
    """A refusal with the refused value's own text replaced by a placeholder (lower case, blanks collapsed), so
    that two refusals of different values compare equal exactly when they say the same thing about them; None
    without a message (a refusal that says nothing is no evidence of what it refused).

    ``"File with ID '33' not found."`` for ``"33"`` and ``"File with ID 'libra_control_value' not found."`` for
    the absent value give the same signature; ``"'notes' is a folder"`` and ``"no document at 'x'"`` do not.
    The value is replaced only where it stands as a whole (``1`` inside ``"10 left"`` is not it).
    """
    if not message or not message.strip():
        return None
    text = message
    for t in _texts(value):
        text = re.sub(rf"(?<![\w.]){re.escape(t)}(?![\w])", "\x00", text)
    return " ".join(text.lower().split())


def naming_signature(message: str | None, value: Any, others: dict[str, Any]) -> str | None:
    """:func:`refusal_signature` of a refusal that is about ``value`` alone, else None: one that quotes the value
    (``"no meeting 12"``) and none of the call's other text inputs (``others``: ``"'alice' is not assigned to card
    12"`` is about the pair, and so is a refusal any value of the input would meet with those others).

    Why: only a refusal of a value by itself says what the consumer does with a value that names nothing; one that
    does not quote it may be about another input ("card 1 not found" while a user name is varied), and one that
    quotes another input's value too is about their combination, which an existing record can fail as well."""
    sig = refusal_signature(message, value)
    if sig is None or "\x00" not in sig:
        return None
    for other in others.values():
        if isinstance(other, str) and len(other.strip()) >= 3 and other.strip().lower() in sig:
            return None
    return sig


def counter_like(value: Any) -> bool:
    """Whether a value reads as a counter's number: a whole number, or a short string of digits (``"7"``).

    Why: a counter's next number is, most often, a number another kind's counter has already given, so a value a
    creation returns may name an existing record of another kind; a fresh id or a new name does not."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and 0 < len(value) <= 9 and value.isdigit()


_RUNS = re.compile(r"[0-9]+|[^\W\d_]+")


def value_form(value: Any) -> str:
    """The form of a value: its runs of digits and of letters each reduced to one mark, its other characters kept
    (``"BR-001"`` and ``"PA-017"`` are ``"a-9"``, ``"top.txt"`` is ``"a.a"``, ``"photos/"`` is ``"a/"``); a whole
    number is ``"9"``, any other value its JSON type.

    Why: values of one kind look alike (a counter's numbers, a table's codes), while a listing that mixes kinds
    shows it in their form (a folder's bare name beside a file's name with its extension). A refused value refutes
    a field only when it has the form of the value that worked (see :meth:`KindsMixin._refuting`)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "9"
    if isinstance(value, str):
        return _RUNS.sub(lambda m: "9" if m.group(0)[0].isdigit() else "a", value)
    return type(value).__name__


class KindsMixin(EngineState):
    """Confirming the kind of a value relation before it is kept (see the module's docstring)."""

    #: other values of a provider's field a relation is checked against at most: spread over what the provider
    #: showed, first to last (a listing is usually sorted, and counters of two kinds part at the ends)
    KIND_PROBES = 16

    def _confirm_kinds(self, admitted: Sequence[Pending]) -> None:
        """Check each admitted relation's kind and keep those not refuted, in the order they were admitted.

        Two batches: the absent-value calls of the tests whose control cannot stand in for one, then the probes of
        the tests whose absent value was refused with a message. Each relation key is checked once (the first
        test that admitted it)."""
        todo: list[tuple[Pending, list[Any]]] = []
        seen: set[tuple] = set()
        for p in admitted:
            t, _ctl, rel = p
            if rel.key in seen or rel.key in self.relations or t.pair in self.refuted:
                continue
            seen.add(rel.key)
            todo.append((p, self._kind_probes(t)))
        if not todo:
            return
        references = self._references([p for p, probes in todo if probes])
        planned: list[tuple[Pending, list[Any], str | None]] = []
        calls: list[Call] = []
        room = self._probe_room()
        for (p, probes), ref in zip(todo, self._aligned(todo, references)):
            sig = None if ref is None else ref[1]
            probes = probes[: max(0, room - len(calls))] if sig else []
            planned.append((p, probes, sig))
            if sig:
                t = p[0]
                state = self.nodes[t.use.node].state
                calls.extend((state, t.use.tool, {**t.use.args, **v}) for v in probes)
        results = iter(self.run_many(calls, "kinds") if calls else [])
        for (t, _ctl, rel), probes, sig in planned:
            runs = [(v, next(results)[0]) for v in probes]
            refuting = self._refuting(t, runs, sig)
            if refuting is not None:
                self.refuted[t.pair] = refuting
                self.counters["refuted_kinds"] = self.counters.get("refuted_kinds", 0) + 1
                continue
            if runs:
                rel.evidence["kind_probes"] = [
                    {"arguments": v, "outcome": self._classify(t.use.tool, rec)} for v, rec in runs
                ]
            self._add_relation(rel)

    def _probe_room(self) -> int:
        """Probe calls this check may make at most: any number for the exploration (its budgets bound the tests,
        and a test makes at most :data:`KIND_PROBES`), what is left of their own budget for the retries
        (:func:`~.retries.retry_budget`: they never exceed it)."""
        if not self._retrying:
            return 1 << 62
        budget = retry_budget(self.config.max_calls, self.config.max_retry_calls)
        return max(0, budget - self.retry.counters["executed_calls"])

    @staticmethod
    def _aligned(
        todo: Sequence[tuple[Pending, list[Any]]], references: list[tuple[Any, str] | None]
    ) -> list[tuple[Any, str] | None]:
        """``references`` (one per test with probes) spread back over ``todo`` (None where there were none)."""
        it = iter(references)
        return [next(it) if probes else None for _p, probes in todo]

    def _refuting(self, t: ValueTest, runs: list[tuple[dict[str, Any], dict[str, Any]]], sig: str | None) -> str | None:
        """Why the probes refute the pair, or None: a value of the tested value's form (:func:`value_form`) that
        the consumer refuses as it refuses the absent one. A value of another form refutes nothing: the field
        mixes kinds (a listing's folders beside its files), and the tested value is of the consumer's."""
        if sig is None:
            return None
        param = t.pair[3]
        form = value_form(t.use.args.get(param))
        for v, rec in runs:
            if (
                value_form(v[param]) == form
                and self._classify(t.use.tool, rec) == "failure"
                and refusal_signature(rejection_message(rec), v[param]) == sig
            ):
                return f"{v[param]!r}, shown by the provider there, is refused like a value nothing produced"
        return None

    def _references(self, pending: Sequence[Pending]) -> list[tuple[Any, str] | None]:
        """Per test, the absent value and the signature of the consumer's refusal of it, or None when there is no
        absent value or the consumer does not refuse it by itself (:func:`naming_signature`: it takes anything, or
        its refusal is about another input, and there is nothing to compare).

        A test whose control replaced the input with the absent value itself has its reference already; the others
        get a call with it (:meth:`~.controls.ControlsMixin.absent_value`), all in one batch. (A control of another
        literal is no reference: an ordinary literal -- a common user name, a small number -- may name a record.)"""
        out: list[tuple[Any, str] | None] = []
        calls: list[Call] = []
        asked: list[tuple[int, Any]] = []
        for i, (t, ctl, _rel) in enumerate(pending):
            param = t.pair[3]
            out.append(None)
            others = {k: v for k, v in t.use.args.items() if k != param}
            absent = self.absent_value(t.use.tool, param, t.use.args.get(param), self._lineage(t.use.node))
            if absent is not None and param in t.control_args and t.control_args[param] == absent:
                if self._classify(t.use.tool, ctl) == "failure":
                    sig = naming_signature(rejection_message(ctl), absent, others)
                    out[i] = None if sig is None else (absent, sig)
                continue
            if absent is not None:
                asked.append((i, absent))
                calls.append((self.nodes[t.use.node].state, t.use.tool, {**t.use.args, param: absent}))
        for (i, absent), (rec, _state) in zip(asked, self.run_many(calls, "kinds") if calls else []):
            t = pending[i][0]
            if self._classify(t.use.tool, rec) == "failure":
                others = {k: v for k, v in t.use.args.items() if k != t.pair[3]}
                sig = naming_signature(rejection_message(rec), absent, others)
                out[i] = None if sig is None else (absent, sig)
        return out

    def _kind_probes(self, t: ValueTest) -> list[dict[str, Any]]:
        """Other values of the tested provider field, shown in the state the consumer ran in, as the arguments
        that replace the tested one in the consumer's call: every value of that field in the records of the
        provider's call that gave the tested value (not only the few a call contributes to the pool; other calls
        of the provider may list another scope -- another channel's messages -- that the consumer's other inputs
        do not reach), spread over them
        (:data:`KIND_PROBES`), the tested value and values that do not fit the input left out. An input the call
        filled with another field of the tested value's own record (``ValueTest.tied``: a customer's zip code
        beside its id, which the consumer checks together) takes that field of each probe's record, so a probe
        varies the record, not one of its fields. None when the value came from another state (a record shown
        there may since have been removed, and its refusal would say nothing about its kind)."""
        pv = self.values[t.vid]
        node = self.nodes[t.use.node]
        if pv.node != node.id:
            return []
        tool = self.catalog[t.use.tool]
        param = t.pair[3]
        seen = {json.dumps(t.use.args.get(param), sort_keys=True, default=str)}
        found: list[dict[str, Any]] = []
        group = self.inputs.group_of[t.use.tool].lower()
        for fields, for_group in self._records_of(pv.call):
            if pv.export not in fields or (for_group and for_group != group):
                continue  # (a record its listing labels as another group's is meant for that group)
            arg = self.fits.as_passed(tool, param, fields[pv.export])
            key = json.dumps(arg, sort_keys=True, default=str)
            if arg is None or key in seen:
                continue
            override = {param: arg}
            for other, export in t.tied:
                sibling = self.fits.as_passed(tool, other, fields.get(export)) if export in fields else None
                if sibling is None:
                    break
                override[other] = sibling
            else:
                seen.add(key)
                found.append(override)
        return [found[i] for i in spread(len(found), self.KIND_PROBES)]

    def _records_of(self, call_id: int) -> list[tuple[dict[str, Any], str]]:
        """The records of a logged call's reply, arguments and state changes, in the order it lists them, each as
        export -> value (its first value of that export, in the plain spelling the pool holds), with the group its
        list element names ("" for none: see :attr:`~.types.PoolValue.for_group`)."""
        if call_id < 0:
            return []
        info = self.calls[call_id]
        records: dict[str, tuple[dict[str, Any], str]] = {}
        for ex in extract(self.contracts[info.tool], info.args, self._record(info)):
            if ex.value is None or (isinstance(ex.value, str) and not ex.value.strip()):
                continue
            named = [g for g in ex.labels if g in self.inputs.groups]
            fields, _group = records.setdefault(
                record_of(ex.source, ex.path), ({}, named[0] if len(named) == 1 else "")
            )
            fields.setdefault(ex.name, canonical_path(ex.value))
        return list(records.values())
