"""The value pool: which values a successful call contributes, to which state, and whose they are.

A success exports values (its contract's exports: fields of its reply, its arguments, what its state change
wrote). Each becomes a :class:`~.types.PoolValue` of the state the call led to (or ran in, when it changed
nothing), credited to the call that put it into the state (``BuildConfig.credit``), and offered from there to the
inputs it is a candidate for (:mod:`.offers`). A long list contributes a few representatives (:func:`spread`), and
a value the call only echoed -- what it was given, or what its suppliers showed -- is not its own (origin credit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from libra.contracts.model import Export
from libra.contracts.outcome import Extracted, extract
from libra.contracts.text_values import is_empty_text
from libra.induction.explore.state import EngineState
from libra.induction.explore.types import PoolValue
from libra.induction.explore.worklist import Item
from libra.probing.nodes import Node
from libra.probing.paths import canonical_path
from libra.runtime.diff import path_keys

__all__ = [
    "PoolMixin",
    "filled",
    "is_number",
    "occurs",
    "record_of",
    "representatives",
    "rewrote_in_place",
    "scalars",
    "spread",
    "written",
]

#: An export's value that may enter the pool: (extracted, its export, the value in its plain spelling, the group
#: its list element names or "").
Eligible = tuple[Extracted, Export, Any, str]


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def arg_name(path: str) -> str:
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


def scalars(data: Any) -> list[Any]:
    """Every scalar inside ``data`` (nested mappings and lists walked)."""
    if isinstance(data, dict):
        return [x for v in data.values() for x in scalars(v)]
    if isinstance(data, (list, tuple)):
        return [x for v in data for x in scalars(v)]
    return [data]


def occurs(value: Any, data: Any, depth: int = 0) -> bool:
    """Whether ``value`` appears in ``data`` as a scalar or as a mapping key (e.g. a file name keying a listing)."""
    if depth > 40:
        return False
    if isinstance(data, dict):
        return any((isinstance(value, str) and value in str(k)) or occurs(value, v, depth + 1) for k, v in data.items())
    if isinstance(data, (list, tuple)):
        return any(occurs(value, v, depth + 1) for v in data)
    if isinstance(value, str) and isinstance(data, str):
        return value == data or (len(value) >= 3 and value in data)
    return value == data and type(value) is type(data)


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


def representatives(entries: list[tuple[Any, Any, Any, str]], per_export: int) -> list[tuple[Any, Any, Any, str]]:
    """The elements of one export's list that enter the pool: a few, spread over the list (:func:`spread`).

    Why: a long list (fingerprint bits, search hits) is one kind of value many times over, so a few elements
    represent it; offering every element would multiply the tests without finding another relation. Elements
    labelled for different groups (entries with a group name) are each meant for another service, so such a list
    keeps eight times as many.
    """
    cap = 8 * per_export if any(e[-1] for e in entries) else per_export
    return [entries[i] for i in spread(len(entries), cap)]


def inside(vjson: str, given: Iterable[str]) -> bool:
    """Whether a string (as JSON) occurs inside one of the JSON-encoded strings in ``given``: a value read out of
    text is known when some longer text already held it."""
    inner = vjson[1:-1]
    return bool(inner) and any(g.startswith('"') and inner in g for g in given)


def written(value: Any, state_changes: Any) -> bool:
    """Whether a call wrote ``value`` into the state: as a new value of a changed path, or anywhere in what it
    added -- not merely in the path of a record that already existed, nor in a record it removed.

    Why: an update addresses the record it changes by its key (``customers.C100000.zip_code``); the key was in
    the state before the call, so the call re-stated it and is not its source. A created record's key (a new file
    name) and a written value are the call's own. A removed record (a closed loan naming its book) left the
    state: the call took its values away and put none of them there, so crediting it would make a consumer of the
    book "depend" on the loan's closing. Diffs not in the runtime's ``changed``/``added``/``removed`` shape fall
    back to any occurrence.
    """
    if not isinstance(state_changes, dict):
        return occurs(value, state_changes)
    for part in state_changes.values():
        if not (
            isinstance(part, dict)
            and set(part) <= {"changed", "added", "removed"}
            and isinstance(part.get("changed", {}), dict)
        ):
            if occurs(value, part):
                return True
            continue
        changed = part.get("changed") or {}
        after = [d.get("after") if isinstance(d, dict) and "after" in d else d for d in changed.values()]
        if occurs(value, after) or occurs(value, part.get("added")):
            return True
    return False


def rewrote_in_place(value: Any, state_changes: Any) -> bool:
    """Whether ``value`` is the key of a record the call changed in place -- a segment of the path of one of its
    ``changed`` entries (``orders["12446"].price``) -- and no value it wrote there or added.

    Why: a call that reports such a key (an order id it was not given) overwrote a record that was already in
    the state. Origin credit rightly withholds the key from it (see :func:`written`), but a creating tool does
    this too when the key it mints coincides with a record the sandbox already holds (a counter that starts at
    an existing id, a default name a fixture already uses): then the key it *would* mint is never seen. Only a
    second call from the state it created tells the two apart
    (:meth:`~libra.induction.explore.planning.PlanningMixin._mint_again`).
    """
    if not isinstance(state_changes, dict) or written(value, state_changes):
        return False
    text = value if isinstance(value, str) else json.dumps(value) if is_number(value) else None
    if not text:
        return False
    for part in state_changes.values():
        changed = part.get("changed") if isinstance(part, dict) else None
        if isinstance(changed, dict) and any(text in path_keys(str(path)) for path in changed):
            return True
    return False


def filled(value: Any, state_changes: Any) -> bool:
    """Whether ``value`` names a record whose content the call wrote where there was none: it is in the path of a
    changed entry whose value before the call was empty (``root.contents["new.txt"].content``: ``""`` -> text).

    Why: a record is often created in two steps, first empty (a file touched, an account opened, a draft begun)
    and then filled. The call that gives the blank record its first content is, for a reader of that content,
    where the record comes from, as much as the call that added it; an update of content that was already there
    (an address overwritten: ``customers.C100000.address1``) only re-states whose record it changed (see
    :func:`written`).
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
                and occurs(value, {path: None})
            ):
                return True
    return False


def echoed_only(
    ex: Extracted,
    export: Export,
    value: Any,
    given: set[str],
    used: dict[str, int],
    changes: Any,
    changed: bool,
    origin: bool,
) -> bool:
    """Whether an exported value is not the call's own but an echo of what it was given or its suppliers showed
    (``given``, JSON), so that it enters no pool as this call's.

    A value picked out of text that was already inside a text the call was given or its suppliers showed (a path
    in an error message repeating its input) is an echo whatever the call did: it was there before the call
    printed it. Under origin credit, besides: a call that changed nothing echoes all it shows again; a
    state-changing call keeps an argument it neither wrote nor filled a blank record of (still the original's),
    and a value of its reply or diff it echoes without writing it (an update re-stating whose record it changed,
    a removal). An echo in either spelling is an echo (what the call or its suppliers showed is kept as printed).
    """
    vjson = json.dumps(value, sort_keys=True)
    echoed = vjson in given or (value is not ex.value and json.dumps(ex.value, sort_keys=True) in given)
    if (
        export.from_text is not None
        and isinstance(ex.value, str)
        and (inside(vjson, given) or (value is not ex.value and inside(json.dumps(ex.value), given)))
    ):
        return True
    if not origin:
        return False
    if not changed:
        return echoed
    if ex.source == "arguments":
        return arg_name(ex.path) in used and not (written(ex.value, changes) or filled(ex.value, changes))
    return echoed and not written(ex.value, changes)


class PoolMixin(EngineState):
    """What a success adds to the pool (Algorithm 1, line 24). Keeps ``_shown_cache`` (see :meth:`_shown`)."""

    _shown_cache: dict[int, frozenset[str]]

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
        lineage_known = [n.known for n in self._lineage(node.id)]
        # what the call was given: a read that hands one of its inputs back has produced nothing new
        given = {json.dumps(v, sort_keys=True) for v in scalars(args)}
        # ...nor what the calls that supplied its inputs already showed (their arguments and output)
        for vid in used.values():
            given |= self._shown(self.values[vid].call)
        if not changed:
            given |= self._path_inputs(node)
        origin = self.config.credit == "origin"
        changes = rec.get("state_changes")
        fresh: list[PoolValue] = []
        for ex, export, value, for_group in self._eligible(item, args, rec, target):
            if echoed_only(ex, export, value, given, used, changes, changed, origin):
                continue
            vjson = json.dumps(value, sort_keys=True)
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

    def _eligible(self, item: Item, args: dict[str, Any], rec: dict[str, Any], target: Node) -> list[Eligible]:
        """The values a success could contribute, per export in the order the reply lists them, a few
        representatives of each (:func:`representatives`): exports that propagate, values that identify
        something (an empty value, "" or "No matches found", identifies nothing: any success with it is a
        coincidence), each (tool, export, value) once per path."""
        contract = self.contracts[item.tool]
        target_lineage = self._lineage(target.id)
        eligible: dict[str, list[Eligible]] = {}
        listed: set[str] = set()
        for ex in extract(contract, args, rec):
            export = contract.export(ex.name)
            if export is None or not export.propagate:
                continue
            if ex.value is None or (isinstance(ex.value, str) and (not ex.value.strip() or is_empty_text(ex.value))):
                continue
            # a relative path enters the pool in its plain spelling ("./notes.txt" -> "notes.txt", see paths.py)
            value = canonical_path(ex.value)
            vkey = json.dumps([item.tool, ex.name, value], sort_keys=True)
            if vkey in listed or any(vkey in n.known for n in target_lineage):
                continue  # each (tool, export, value) enters a path's pool once
            listed.add(vkey)
            named = [g for g in ex.labels if g in self.inputs.groups]
            eligible.setdefault(ex.name, []).append((ex, export, value, named[0] if len(named) == 1 else ""))
        per_export = self.config.values_per_export
        return [e for entries in eligible.values() for e in representatives(entries, per_export)]

    def _path_inputs(self, node: Node) -> frozenset[str]:
        """JSON of every scalar the calls that created ``node``'s state (the state changes on its path) were given.

        Why: a value a state-changing call was given and kept (a user name signed in with, a fixture's account)
        was put into the state by that call; a later read that changed nothing and shows it back (a profile that
        repeats the signed-in user name) is an echo, not its source. Crediting the read would make it the
        "provider" of the very input that enabled it.
        """
        out: set[str] = set()
        for n in self._lineage(node.id):
            if n.creator >= 0:
                out |= {json.dumps(v, sort_keys=True, default=repr) for v in scalars(self.calls[n.creator].args)}
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
                for v in scalars([info.args, record.get("output"), record.get("state_changes")])
            }
            for s in info.suppliers:
                own |= self._shown_cache[s]
            self._shown_cache[c] = frozenset(own)
            stack.pop()
        return self._shown_cache[call_id]
