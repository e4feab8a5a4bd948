"""What a moot value test costs (``Engine._moot``): a test is moot when its consumer already succeeded with the
same value before the provider ran, and then it concludes nothing about the provider.

Pinned here, on a real exploration of a small help desk written below: the pair's budget is given back for its
first moot test only; a value found moot for a pair is neither offered to nor tested for that pair again; the
consumer's own budget is never given back (per-tool budgets only grow, as the worklist's left-out offers rely
on); and a pair whose every test was moot counts as untested in the no-relation causes.

The desk's ticket counter was restored from a backup, so the first ticket opened from any state re-uses the
number of the newest ticket (a key collision): the reader succeeds with that number before the ticket was opened,
and the test is moot. A second state change (the desk's greeting) makes the opener run from more than one state,
each time re-stating the same colliding number; the second ticket gets a number of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from libra.contracts.check import check_contracts
from libra.induction.candidates import candidate_compositions
from libra.induction.config import BuildConfig
from libra.induction.explore.engine import Engine
from libra.induction.explore.types import ValueTest
from libra.induction.providers import no_relation_causes
from libra.probing.memo import MemoStore
from libra.runtime.python.runtime import PythonRuntime

from .induction_toys import Counted

OPENER = ("Desk.open_ticket", "ticket_id", "Desk.get_ticket", "ticket_id")


class Desk:
    """A help desk whose next ticket number is one the newest ticket already has."""

    def __init__(self) -> None:
        self.tickets: dict[int, dict] = {
            n: {"ticket_id": n, "title": t} for n, t in ((101, "Printer jams"), (102, "VPN drops"), (103, "New laptop"))
        }
        self.next_number = 103
        self.greeting = "Hello"

    def list_tickets(self) -> list[int]:
        """The numbers of every ticket on the desk."""
        return sorted(self.tickets)

    def open_ticket(self, title: str) -> dict:
        """Open a new ticket.

        Args:
            title: What the ticket is about.
        """
        if not title.strip():
            raise ValueError("a ticket needs a title")
        number = self.next_number
        self.next_number += 1
        self.tickets[number] = {"ticket_id": number, "title": title.strip()}
        return {"ticket_id": number, "status": "open"}

    def get_ticket(self, ticket_id: int) -> dict:
        """Read a ticket.

        Args:
            ticket_id: Number of the ticket.
        """
        if ticket_id not in self.tickets:
            raise KeyError(f"no ticket {ticket_id}")
        return dict(self.tickets[ticket_id])

    def set_greeting(self, greeting: str) -> dict:
        """Change the greeting the desk answers with.

        Args:
            greeting: The new greeting.
        """
        if not greeting.strip():
            raise ValueError("a greeting cannot be empty")
        self.greeting = greeting.strip()
        return {"greeting": self.greeting}


def _similarity(a: str, b: str) -> float:  # fixed, so the exploration does not depend on an embedder
    return 1.0 if a == b else 0.5


class MonotoneBudgets(dict):
    """A per-tool budget that fails the exploration if a count ever goes down."""

    def __setitem__(self, key: str, value: int) -> None:
        assert value >= self.get(key, 0), f"the budget of {key} went down"
        super().__setitem__(key, value)


def _engine(tmp: Path) -> Engine:
    runtime = Counted(PythonRuntime(classes=[Desk], trusted=True, name="moot-desk"))
    catalog = runtime.runtime.catalog
    memo = MemoStore(tmp / "memo.sqlite")
    summary = check_contracts(catalog, runtime, None, memo=memo)
    # one work item per wave: each wave's success plans at most one test per pair, so no two moot tests of a
    # pair are ever in flight together and every moot test's outcome is known before the next test is planned
    config = BuildConfig(batch_size=1)
    engine = Engine(
        catalog,
        runtime,
        summary.contracts,
        candidate_compositions(catalog, summary.contracts),
        _similarity,
        config,
        memo=memo,
    )
    engine.per_tool, engine.per_tool_probes, engine.per_tool_numbers = (
        MonotoneBudgets(),
        MonotoneBudgets(),
        MonotoneBudgets(),
    )
    engine.start(reuse=summary.memo_keys)
    return engine


@pytest.fixture(scope="module")
def explored(tmp_path_factory) -> Engine:
    engine = _engine(tmp_path_factory.mktemp("moot"))
    while engine.step():
        pass
    return engine


def test_the_desk_collides_once_per_state():
    desk = Desk()
    assert desk.open_ticket("Chair") == {"ticket_id": 103, "status": "open"}
    assert desk.open_ticket("Lamp") == {"ticket_id": 104, "status": "open"}
    assert desk.get_ticket(103)["title"] == "Chair"


def test_the_colliding_key_is_moot_once_and_the_minted_one_is_tested(explored):
    engine = explored
    keys = {(r.provider, r.consumer, r.kind, r.provider_field, r.consumer_input) for r in engine.result()}
    assert ("Desk.open_ticket", "Desk.get_ticket", "provenance", "ticket_id", "ticket_id") in keys
    # the colliding number was tested once, found moot, and never offered or tested for the pair again, though
    # the opener re-stated it from more than one state
    assert engine.pair_moot[OPENER] == 1
    assert (OPENER, json.dumps(103)) in engine.moot_values
    assert engine.counters["skipped_moot"] >= 1
    assert engine.counters["moot_tests"] == sum(engine.pair_moot.values())
    # each pair's moot tests are tests of distinct values (a value moot for a pair is not tested for it again)
    for pair, n in engine.pair_moot.items():
        assert n == sum(1 for p, _v in engine.moot_values if p == pair)
    # the moot test gave its budget back: the pair's budget counts only the test that concluded
    assert engine.concluded_tests(OPENER) >= 1
    assert engine.pair_tests[OPENER] == engine.concluded_tests(OPENER)
    assert engine.pair_tests[OPENER] <= engine.config.tests_per_pair


def test_a_pair_gets_its_budget_back_for_its_first_moot_test_only(explored):
    engine = explored
    pair = ("Desk.set_greeting", "greeting", "Desk.open_ticket", "title")  # a pair no test touched
    assert pair not in engine.pair_tests and pair not in engine.pair_moot
    provider = next(pv for pv in engine.values if pv.tool == "Desk.open_ticket")
    use = engine.calls[provider.call]
    engine.pair_tests[pair] = 3  # three tests planned, as _plan_controls counts them
    for _ in range(3):
        engine._moot(ValueTest(pair, use, provider.id, {}, False))
    assert engine.pair_tests[pair] == 2  # given back once, not three times
    assert engine.pair_moot[pair] == 3
    assert engine.concluded_tests(pair) == 0  # none of them concluded
    assert engine._known_moot(pair, provider)
    # the no-relation causes read the same books: a pair whose every test was moot was not tested
    del engine.pair_tests[pair], engine.pair_moot[pair]
    engine.moot_values.discard((pair, json.dumps(provider.value, sort_keys=True)))


def test_a_provider_whose_only_tests_were_moot_counts_as_untested(explored):
    engine = explored
    books = dict(engine.pair_tests), dict(engine.pair_moot)
    try:
        # as if the greeting's values had reached the reader only in tests that were all moot
        pair = ("Desk.set_greeting", "greeting", "Desk.get_ticket", "ticket_id")
        engine.pair_tests[pair], engine.pair_moot[pair] = 1, 2
        assert engine.concluded_tests(pair) == 0
        assert no_relation_causes(engine)["causes"]["offers_refused"] == ["Desk.get_ticket", "Desk.set_greeting"]
        # ...and one that concluded makes it a tested provider of its own group's reader
        engine.pair_moot[pair] = 1
        assert "Desk.set_greeting" in no_relation_causes(engine)["causes"]["control_succeeds"]
    finally:
        engine.pair_tests, engine.pair_moot = books
