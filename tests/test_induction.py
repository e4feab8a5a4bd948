"""Relation induction end to end on real executions (a toy app and BFCL's MathAPI)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest

from libra.errors import LibraryFormatError
from libra.induction.build import BuildOptions, build_library
from libra.induction.config import BuildConfig
from libra.library.artifact import Candidate, Library

from .conftest import needs_bfcl
from .induction_toys import (
    ClassesBenchmark,
    Ledger,
    Mailbox,
    PortalBenchmark,
    Records,
    Shell,
    ShopBenchmark,
    SplitShopBenchmark,
    VaultsBenchmark,
    kill_after_checkpoint,
)

ROOT = Path(__file__).resolve().parent.parent


def _edges(lib: Library) -> set[tuple]:
    return {(r.provider, r.consumer, r.kind, r.provider_field, r.consumer_input) for r in lib.relations}


@pytest.fixture(scope="module")
def shop_lib() -> Library:
    return build_library(ShopBenchmark(), None, BuildOptions(workers=0, progress=False))


def test_multi_hop_prerequisites_are_found(shop_lib: Library) -> None:
    e = _edges(shop_lib)
    assert ("Shop.signup", "Shop.login", "provenance", "new_username", "username") in e
    assert ("Shop.signup", "Shop.login", "provenance", "new_password", "password") in e
    assert ("Shop.login", "Shop.add_item", "provenance", "access_token", "access_token") in e
    assert ("Shop.add_item", "Shop.get_item", "provenance", "item_id", "item_id") in e
    assert ("Shop.login", "Shop.add_item", None, None, None) not in e
    assert any(
        r.kind == "state" and (r.provider, r.consumer) == ("Shop.login", "Shop.add_item") for r in shop_lib.relations
    )


def test_schema_compatibility_alone_creates_no_edge(shop_lib: Library) -> None:
    # add() returns a number that square_root() accepts, and item ids are numbers too: compatible types, no relation
    assert any(c.provider == "Shop.add" and c.consumer == "Shop.square_root" for c in shop_lib.candidates)
    touching = {r.provider for r in shop_lib.relations} | {r.consumer for r in shop_lib.relations}
    assert "Shop.add" not in touching and "Shop.square_root" not in touching


def test_evidence_holds_the_counterfactual(shop_lib: Library) -> None:
    rel = next(r for r in shop_lib.relations if r.kind == "provenance" and r.consumer == "Shop.add_item")
    ev = rel.evidence
    assert ev["provider_call"]["tool"] == "Shop.login" and ev["provider_call"]["record"]["status"] == "success"
    assert ev["consumer_call"]["record"]["status"] == "success"
    assert ev["control_call"]["record"]["status"] == "rejected"
    token = ev["provider_call"]["record"]["output"]["access_token"]
    assert ev["consumer_call"]["arguments"]["access_token"] == token
    assert ev["control_call"]["arguments"]["access_token"] != token
    state = next(r for r in shop_lib.relations if r.kind == "state" and r.consumer == "Shop.add_item")
    assert state.evidence["before_call"]["record"]["status"] == "rejected"
    assert state.evidence["after_call"]["record"]["status"] == "success"
    assert state.evidence["before_call"]["arguments"] == state.evidence["after_call"]["arguments"]


def test_stats_and_determinism(shop_lib: Library) -> None:
    s = shop_lib.stats
    assert s["tools"] == 6 and s["candidate_compositions"] == len(shop_lib.candidates) > 0
    assert s["value_relations"] + s["state_relations"] == len(shop_lib.relations)
    assert s["seconds_per_1000_candidates"] >= 0
    again = build_library(ShopBenchmark(), None, BuildOptions(workers=0, progress=False))
    assert _edges(again) == _edges(shop_lib)


def test_isolated_workers_find_the_same_library(shop_lib: Library) -> None:
    iso = build_library(ShopBenchmark(), None, BuildOptions(workers=2, progress=False))
    assert _edges(iso) == _edges(shop_lib)
    # The workers' stream of calls (submitted while a wave is planned, results taken in the tests' order) changes
    # neither what the engine concludes nor what it counts: the in-process build runs its calls in plain batches.
    assert iso.stats["engine"] == shop_lib.stats["engine"]
    one = build_library(ShopBenchmark(), None, BuildOptions(workers=1, progress=False))
    assert _edges(one) == _edges(shop_lib) and one.stats["engine"] == shop_lib.stats["engine"]


def test_library_round_trip_and_refusals(shop_lib: Library, tmp_path: Path) -> None:
    path = tmp_path / "shop.json.gz"
    shop_lib.save(path)
    loaded = Library.load(path, catalog=ShopBenchmark().catalog())
    assert _edges(loaded) == _edges(shop_lib) and len(loaded.candidates) == len(shop_lib.candidates)
    rounded = [
        Candidate(
            c.provider,
            c.provider_field,
            c.consumer,
            c.consumer_input,
            None if c.similarity is None else round(c.similarity, 5),
        )
        for c in shop_lib.candidates
    ]
    assert (
        list(loaded.candidates) == rounded
        and loaded.candidates[-1] == rounded[-1]
        and loaded.candidates[1:3] == rounded[1:3]
    )
    # a library written by format version 1 (candidates as rows) still loads, to the same candidates
    v1 = shop_lib.to_dict()
    names = shop_lib.catalog.names
    v1["format_version"] = 1
    v1["candidates"] = [
        [names.index(c.provider), c.provider_field, names.index(c.consumer), c.consumer_input, c.similarity]
        for c in rounded
    ]
    (tmp_path / "v1.json").write_text(json.dumps(v1))
    assert list(Library.load(tmp_path / "v1.json").candidates) == rounded
    from libra.catalog import Catalog, Tool

    with pytest.raises(LibraryFormatError, match="another catalog"):
        Library.load(path, catalog=Catalog([Tool("Other.tool")]))
    raw = shop_lib.to_dict()
    raw["format_version"] = 999
    bad = tmp_path / "old.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(LibraryFormatError, match="format version 999"):
        Library.load(bad)
    (tmp_path / "junk.json").write_text("{}")
    with pytest.raises(LibraryFormatError, match="not a libra library"):
        Library.load(tmp_path / "junk.json")


def test_killed_build_resumes_to_the_same_library(tmp_path: Path) -> None:
    reference = tmp_path / "ref.json"
    subprocess.run(
        [sys.executable, "-m", "tests.induction_toys", str(reference), "0"], cwd=ROOT, check=True, timeout=300
    )
    out = tmp_path / "lib.json"
    ckpt = tmp_path / "lib.json.ckpt"
    kill_after_checkpoint(
        subprocess.Popen([sys.executable, "-m", "tests.induction_toys", str(out), "0.05"], cwd=ROOT), ckpt
    )
    assert not out.exists()
    with open(ckpt, "rb") as fh:
        assert fh.read(2) == b"\x1f\x8b"  # checkpoints are gzip streams
    subprocess.run([sys.executable, "-m", "tests.induction_toys", str(out), "0.05"], cwd=ROOT, check=True, timeout=300)
    assert not ckpt.exists()
    a, b = Library.load(out), Library.load(reference)
    assert a.stats["resumed"] is True
    assert _edges(a) == _edges(b)
    assert a.stats["engine"]["executed_calls"] == b.stats["engine"]["executed_calls"]


@needs_bfcl
def test_bfcl_math_numbers_feed_each_other_without_provenance() -> None:
    from libra.benchmarks.bfcl.adapter import BFCLBenchmark, load_catalog
    from libra.catalog import Catalog

    class MathOnly(BFCLBenchmark):
        def catalog(self) -> Catalog:
            return Catalog([t for t in load_catalog() if t.group == "MathAPI"], name="bfcl-math")

        def runtime(self, **kw):
            from libra.benchmarks.bfcl.runtime import make_bfcl_runtime

            return make_bfcl_runtime(catalog=self.catalog(), **kw)

    lib = build_library(MathOnly(), None, BuildOptions(workers=0, progress=False))
    assert lib.stats["candidate_compositions"] > 0
    assert [r for r in lib.relations if r.kind == "provenance"] == []


def test_same_group_offers_go_first_when_budgets_are_tight() -> None:
    # Each read_secret may run once with an offered token. Six services offer look-alike tokens; only the one from
    # its own service works, and that is the one the engine must try first.
    for seed in (0, 1, 2):
        cfg = BuildConfig(max_calls_per_tool=1, seed=seed)
        lib = build_library(VaultsBenchmark(), None, BuildOptions(workers=0, progress=False, config=cfg))
        found = {(r.provider, r.consumer) for r in lib.relations if r.kind == "provenance"}
        assert {(f"Vault{c}.open_session", f"Vault{c}.read_secret") for c in "ABCDEF"} <= found, (seed, sorted(found))


def test_listed_values_reach_the_group_their_record_names() -> None:
    # The keychain lists six tokens; without labels only the first few elements of a list enter the pool.
    lib = build_library(VaultsBenchmark(keychain=True), None, BuildOptions(workers=0, progress=False))
    found = {(r.provider, r.consumer) for r in lib.relations if r.kind == "provenance"}
    assert {("Keychain.list_sessions", f"Vault{c}.read_secret") for c in "ABCDEF"} <= found, sorted(found)


def test_later_state_changes_sweep_only_their_own_group() -> None:
    # Every state change of a provider once sweeps the whole catalog, later ones only the provider's group: the
    # sign-in that enables adding an item (another group) is still found, with fewer state tests than sweeping
    # every group every time.
    def build(cross: int) -> Library:
        cfg = BuildConfig(cross_group_sweeps_per_tool=cross)
        return build_library(SplitShopBenchmark(), None, BuildOptions(workers=0, progress=False, config=cfg))

    capped, full = build(1), build(BuildConfig().sweeps_per_tool)
    assert any(
        r.kind == "state" and (r.provider, r.consumer) == ("Shop.login", "Shop.add_item") for r in capped.relations
    )
    assert _edges(capped) == _edges(full)
    assert capped.stats["engine"]["state_tests"] < full.stats["engine"]["state_tests"]


def test_a_consumer_budget_goes_to_the_best_named_pairing_first() -> None:
    # show_item may run once with an offered id. A review id and an item id are both small integers; the item id
    # is the one whose name matches the input, so it is tried first whichever list was read first.
    for seed in (0, 1, 2, 3):
        cfg = BuildConfig(max_calls_per_tool=1, seed=seed)
        lib = build_library(ClassesBenchmark(Records), None, BuildOptions(workers=0, progress=False, config=cfg))
        found = {(r.provider, r.consumer) for r in lib.relations if r.kind == "provenance"}
        assert ("Records.list_items", "Records.show_item") in found, (seed, sorted(found))


def test_a_value_already_tested_still_tests_the_state_it_was_listed_in() -> None:
    # Listing the top folder already showed that listed names feed read_file (provenance). The name listed inside
    # "docs" is offered again there, as a state test: read_file of it works after changing directory and fails
    # before, which is the state dependency change_directory -> read_file.
    for seed in (0, 1, 2):
        cfg = BuildConfig(seed=seed)
        lib = build_library(ClassesBenchmark(Shell), None, BuildOptions(workers=0, progress=False, config=cfg))
        edges = _edges(lib)
        assert ("Shell.list_files", "Shell.read_file", "provenance", "names", "file_name") in edges, (
            seed,
            sorted(edges),
        )
        assert ("Shell.change_directory", "Shell.read_file", "state", None, None) in edges, (seed, sorted(edges))


def test_every_initial_call_runs_before_offers_use_up_the_budget() -> None:
    # Each ledger entry names the next one, so offers alone could spend any budget. Listing the items
    # is an initial call; it must still run, and early, or no item id ever reaches show_item.
    for seed in (0, 1, 2, 3):
        cfg = BuildConfig(seed=seed, batch_size=1, max_calls=24)
        lib = build_library(
            ClassesBenchmark(Ledger, Records), None, BuildOptions(workers=0, progress=False, config=cfg)
        )
        found = {(r.provider, r.consumer) for r in lib.relations if r.kind == "provenance"}
        assert ("Records.list_items", "Records.show_item") in found, (seed, sorted(found))


def test_values_that_break_a_declared_format_are_never_offered() -> None:
    # Three plain-text notes are named more like the input than the contact list is, so without a format check
    # their offers come first and use up invite's budget; the address in the list is then never tried.
    for seed in (0, 1, 2):
        cfg = BuildConfig(seed=seed, max_calls_per_tool=2)
        lib = build_library(ClassesBenchmark(Mailbox), None, BuildOptions(workers=0, progress=False, config=cfg))
        found = {(r.provider, r.consumer) for r in lib.relations if r.kind == "provenance"}
        assert ("Mailbox.list_contacts", "Mailbox.invite") in found, (seed, sorted(found))
        assert lib.stats["engine"]["skipped_unfit"] > 0


def test_a_tool_revealing_a_sandbox_fact_is_credited_before_the_fact() -> None:
    # The operator knows the e-mail, but so does show_profile, whose field the input's description names. A caller
    # learns it from show_profile, so that is the provider; the fact itself is only a fallback. With the fact
    # filling every sign-in, and the one offer in the budget going to the better-named hint, no relation is found.
    for seed in (0, 1, 2):
        cfg = BuildConfig(seed=seed, max_calls_per_tool=1)
        lib = build_library(PortalBenchmark(), None, BuildOptions(workers=0, progress=False, config=cfg))
        edges = _edges(lib)
        assert ("Portal.show_profile", "Portal.login", "provenance", "email", "username") in edges, (
            seed,
            sorted(edges),
        )


# ---------------------------------------------------------------------------------------------------------------
# Engine behaviours catalogs nobody tuned for need, each on a small catalog whose build fails on the old engine
# ---------------------------------------------------------------------------------------------------------------


def _build(*classes: type, fixtures: dict | None = None, **cfg) -> Library:
    class Bench(ClassesBenchmark):
        def fixtures(self) -> dict:
            return dict(fixtures or {})

    return build_library(Bench(*classes), None, BuildOptions(workers=0, progress=False, config=BuildConfig(**cfg)))


class Dialer:
    """Calls any well-formed number; the code refuses malformed ones, as a phone service does."""

    def list_contacts(self) -> dict:
        """List the saved contacts."""
        return {"contacts": [{"name": "Ana", "phone_number": "+15550100"}, {"name": "Bo", "phone_number": "+15550199"}]}

    def list_pagers(self) -> dict:
        """List the registered pagers."""
        return {"pagers": [{"pager_code": "P1234"}]}

    def dial(self, phone_number: Annotated[str, {"pattern": r"^\+[0-9]{6,15}$"}]) -> dict:
        """Dial a phone number.

        Args:
            phone_number: The phone number of an existing contact.
        """
        if not re.fullmatch(r"\+[0-9]{6,15}", phone_number):
            raise ValueError("malformed phone number")
        return {"dialed": phone_number}

    def page(self, pager_code: Annotated[str, {"pattern": r"^P[0-9]{4}$"}]) -> dict:
        """Page a registered pager.

        Args:
            pager_code: The code of an existing pager.
        """
        if not re.fullmatch(r"P[0-9]{4}", pager_code):
            raise ValueError("malformed pager code")
        return {"paged": pager_code}


def test_defect_1_controls_are_valid_values_of_the_input() -> None:
    # dial accepts any well-formed number, so the contact's number is not necessary: the old control
    # "+15550100_other" broke the declared pattern and "proved" provenance. The control is now the other listed
    # number. A pager code's control is built from the declared pattern (the value generator's schema layer), so
    # the test is judged on a well-formed code, which page accepts too: no provenance either.
    lib = _build(Dialer)
    e = _edges(lib)
    assert not any(r[:3] == ("Dialer.list_contacts", "Dialer.dial", "provenance") for r in e), sorted(e)
    assert not any(r[:3] == ("Dialer.list_pagers", "Dialer.page", "provenance") for r in e), sorted(e)


class Inbox:
    """Contacts exist, but nobody has written yet: every search finds nothing."""

    def list_contacts(self) -> dict:
        """List the saved contacts."""
        return {"contacts": [{"contact_name": "Ana"}]}

    def messages_with(self, contact_name: str) -> dict:
        """Messages exchanged with a contact.

        Args:
            contact_name: The name of an existing contact.
        """
        return {"messages": []}

    def search_messages(self, sender_name: str | None = None, subject: str | None = None) -> dict:
        """Search messages by the name of an existing contact who sent them, or by subject.

        Args:
            sender_name: The name of an existing contact who sent the message.
            subject: Words of the subject.
        """
        if sender_name is None and subject is None:
            raise ValueError("give at least one criterion")
        return {"results": []}


def test_defect_2_empty_successes_are_no_evidence() -> None:
    # messages_with returns [] for any name (compatibility with [] on both sides), search_messages returns [] for
    # any sender and refuses a search without criteria (provenance whose value run found nothing)
    e = _edges(_build(Inbox))
    assert not any(
        r[0] == "Inbox.list_contacts" and r[1] in ("Inbox.messages_with", "Inbox.search_messages") for r in e
    ), sorted(e)


class Snapshots:
    """Snapshots named by the time they were taken: a number one tool returns and another takes."""

    def __init__(self) -> None:
        self.taken: list[float] = []

    def take_snapshot(self) -> dict:
        """Take a snapshot of the disk."""
        t = 1_700_000_000.0 + 60 * len(self.taken)
        self.taken.append(t)
        return {"snapshot_time": t}

    def restore(self, snapshot_time: float) -> dict:
        """Restore the disk to a snapshot.

        Args:
            snapshot_time: When the snapshot was taken, in seconds since the epoch.
        """
        if snapshot_time not in self.taken:
            raise ValueError("no snapshot at that time")
        return {"restored": snapshot_time}


def test_defect_4_numeric_candidates_are_tested() -> None:
    # restore's number is a literal to the proposer; it is still a candidate (Table 5) and now receives the time
    # take_snapshot returned, against the template's own literal as control
    lib = _build(Snapshots)
    assert any((c.provider, c.consumer) == ("Snapshots.take_snapshot", "Snapshots.restore") for c in lib.candidates)
    assert ("Snapshots.take_snapshot", "Snapshots.restore", "provenance", "snapshot_time", "snapshot_time") in _edges(
        lib
    )


class Orders:
    """A read fed an order id hands back the ids of its sibling orders, which the listing already revealed."""

    IDS = ["ord-1", "ord-2", "ord-3"]

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    def list_orders(self) -> dict:
        """List the account's orders."""
        return {"orders": [{"order_id": i} for i in self.IDS]}

    def order_summary(self, order_id: str) -> dict:
        """Summarise an order and name the account's other orders.

        Args:
            order_id: The id of an existing order.
        """
        if order_id not in self.IDS:
            raise KeyError("no such order")
        return {"order_id": order_id, "other_order_ids": [i for i in self.IDS if i != order_id]}

    def cancel_order(self, order_id: str) -> dict:
        """Cancel an order.

        Args:
            order_id: The id of an existing order.
        """
        if order_id not in self.IDS or order_id in self.cancelled:
            raise KeyError("no such open order")
        self.cancelled.append(order_id)
        return {"cancelled": order_id}


def test_defect_13_a_call_that_changed_nothing_gets_no_echo_credit() -> None:
    for seed in (0, 1, 2):
        e = _edges(_build(Orders, seed=seed))
        assert ("Orders.list_orders", "Orders.cancel_order", "provenance", "order_id", "order_id") in e, (
            seed,
            sorted(e),
        )
        assert not any(r[0] == "Orders.order_summary" and r[1] == "Orders.cancel_order" for r in e), (seed, sorted(e))


class Helpdesk:
    """Customers are found by phone number; the sandbox's own customer number is a fixture."""

    def search_customers(self, phone_number: str) -> str:
        """Search customers; the id of the customer found, or an empty string.

        Args:
            phone_number: The phone number to search for.
        """
        return "cust-7" if phone_number == "+15550142" else ""

    def close_account(self, customer_id: str) -> dict:
        """Close a customer's account.

        Args:
            customer_id: The id of an existing customer.
        """
        if customer_id != "cust-7":
            raise KeyError("no such customer")
        return {"closed": customer_id}


def test_defect_11_fixtures_fill_literal_inputs_they_fit() -> None:
    # the proposer invents a phone number for the search criterion, which finds nobody; the sandbox's own number
    # fits the input by name and replaces it, so the customer id is found and its consumer tested
    e = _edges(_build(Helpdesk, fixtures={"phone_number": "+15550142"}))
    assert any(r[:3] == ("Helpdesk.search_customers", "Helpdesk.close_account", "provenance") for r in e), sorted(e)


class Broken:
    """A catalog where most tools never succeed."""

    def status(self) -> dict:
        """Report the service status."""
        return {"status": "up"}

    def first(self, ticket_id: str) -> dict:
        """Open a ticket.

        Args:
            ticket_id: The id of an existing ticket.
        """
        raise RuntimeError("backend unavailable")

    def second(self, ticket_id: str) -> dict:
        """Close a ticket.

        Args:
            ticket_id: The id of an existing ticket.
        """
        raise RuntimeError("backend unavailable")

    def third(self, note: str) -> dict:
        """Write a note.

        Args:
            note: The note.
        """
        raise RuntimeError("disk full")


def test_defect_17_every_build_ends_with_a_health_summary(capsys) -> None:
    lib = _build(Broken)
    h = lib.stats["health"]
    assert set(h) == {
        "tools",
        "tools_never_succeeded",
        "templates",
        "templates_matched",
        "inconclusive_tests",
        "top_rejections",
        "blocking",
        "warning",
        "no_relation",
        "literal_origins",
    }
    assert h["tools"] == 4 and h["tools_never_succeeded"] == ["Broken.first", "Broken.second", "Broken.third"]
    assert h["no_relation"]["causes"]["never_succeeded"] == ["Broken.first", "Broken.second", "Broken.third"]
    assert h["top_rejections"][0][0].endswith("backend unavailable") and h["top_rejections"][0][1] >= 2
    assert "3 of 4 tools never succeeded" in h["warning"] and "0 relations" in h["warning"]
    assert "3 of 4 tools never succeeded" in capsys.readouterr().err
    healthy = _build(Orders).stats["health"]
    assert healthy["warning"] is None and healthy["tools_never_succeeded"] == []


def test_health_summary_by_hand() -> None:
    from libra.induction.health import health_summary, top_messages

    h = health_summary(["a", "b", "c", "d"], ["a", "b"], 6, 4, 1, ["x"] * 3 + ["y" * 200] * 2 + [None, "z"], 5)
    assert h["tools_never_succeeded"] == ["c", "d"] and h["warning"] is None  # exactly half is not more than half
    assert h["top_rejections"] == [["x", 3], ["y" * 120, 2], ["z", 1]]
    h = health_summary(["a", "b", "c"], ["a"], 6, 1, 0, [], 5)
    assert h["warning"].startswith("2 of 3 tools never succeeded:")
    assert health_summary(["a"], ["a"], 1, 1, 0, [], 0)["warning"].startswith("the library has 0 relations")
    assert top_messages(["m"] * 9, n=1) == [["m", 9]]


def test_written_tells_an_addressed_record_from_a_written_value():
    """An update addresses its record by key; it wrote only the new values.

    Before, any occurrence in the diff counted, so an address change "provided" the customer id it was given.
    """
    from libra.induction.explore.values import written

    diff = {"Desk": {"changed": {"customers.C1.zip": {"before": "A1", "after": "B2"}}, "added": {}, "removed": {}}}
    assert not written("C1", diff)
    assert written("B2", diff)
    assert written("f.txt", {"Fs": {"changed": {}, "added": {"files.f.txt": {"size": 0}}, "removed": {}}})


def test_rewrote_in_place_names_a_record_changed_without_being_given_it():
    """A reply naming the key of a record the call changed in place (not one it added or wrote as a value) is what
    a creation whose new key coincides with an existing record looks like: the engine runs it once more."""
    from libra.induction.explore.values import rewrote_in_place

    diff = {
        "Desk": {
            "changed": {
                'orders["12446"].price': {"before": 9.5, "after": 2.0},
                "counter": {"before": 12446, "after": 12447},
            },
            "added": {},
            "removed": {},
        }
    }
    assert rewrote_in_place(12446, diff)
    assert rewrote_in_place("12446", diff)
    assert not rewrote_in_place(12447, diff)  # written: the counter's new value
    assert not rewrote_in_place(2.0, diff)  # a value written, not a key
    assert not rewrote_in_place("1244", diff)  # a key is matched whole
    assert rewrote_in_place(
        "C1", {"Desk": {"changed": {"customers.C1.zip": {"before": "A1", "after": "B2"}}, "added": {}, "removed": {}}}
    )
    assert not rewrote_in_place("f.txt", {"Fs": {"changed": {}, "added": {"files.f.txt": {"size": 0}}, "removed": {}}})


def test_filled_tells_a_blank_record_given_content_from_an_overwrite():
    """A call that gives a blank record its first content is a source of the record's key; an overwrite is not."""
    from libra.induction.explore.values import filled

    blank = {
        "Fs": {"changed": {'root.contents["a.txt"].content': {"before": "", "after": "hi"}}, "added": {}, "removed": {}}
    }
    assert filled("a.txt", blank)
    overwrite = {"Desk": {"changed": {"customers.C1.zip": {"before": "A1", "after": "B2"}}, "added": {}, "removed": {}}}
    assert not filled("C1", overwrite)
    assert not filled("a.txt", {"Fs": {"changed": {}, "added": {}, "removed": {'root.contents["a.txt"]': {}}}})


def test_record_of_names_the_innermost_list_element():
    from libra.induction.explore.values import record_of

    assert record_of("response", "$[1]['zip_code']") == "response:$[1]"
    assert record_of("response", "$['latitude']") == "response:$"
    assert record_of("response", "$['a'][0]['b']['c']") == "response:$['a'][0]"
    assert record_of("arguments", "$['customer_id']") == "arguments:$"


MEMBERS = {"M1": ("1111", False), "M2": ("2222", True), "M3": ("3333", True)}  # id -> (PIN, card open)


class Members:
    """A membership desk: a member is checked by id and PIN together; the first listed member's card is closed."""

    def list_members(self) -> list[dict]:
        """List the members with their id and PIN."""
        return [{"member_id": k, "pin_code": v[0]} for k, v in MEMBERS.items()]

    def check_in(self, member_id: str, pin_code: str) -> dict:
        """Check a member in.

        Args:
            member_id: The member's id.
            pin_code: The member's PIN code.
        """
        entry = MEMBERS.get(member_id)
        if entry is None or entry[0] != pin_code:
            raise PermissionError("member id and PIN do not match")
        if not entry[1]:
            raise PermissionError("this member's card is closed")
        return {"checked_in": member_id}


def test_an_offer_takes_the_other_fields_of_its_own_record():
    """The PIN beside an offered member id is that member's: filled independently it is the first
    member's, every check-in but the first member's fails for the mismatch, and the first one's card is closed."""
    e = _edges(_build(Members))
    assert any(r[:2] == ("Members.list_members", "Members.check_in") and r[4] == "member_id" for r in e), sorted(e)
    assert any(r[:2] == ("Members.list_members", "Members.check_in") and r[4] == "pin_code" for r in e), sorted(e)


def test_an_offer_is_not_bound_beside_the_same_string_in_another_role():
    """A call given one string as two inputs cannot tell the roles apart."""
    from libra.induction.explore.binding import offer_coincides

    args = {"customer_id": "C1", "zip_code": "C1"}
    assert offer_coincides(args, {"customer_id": 3, "zip_code": 7}, {"zip_code": 7})
    assert not offer_coincides(
        {"customer_id": "C1", "zip_code": "Z9"}, {"customer_id": 3, "zip_code": 7}, {"zip_code": 7}
    )


class Session:
    """A sign-in with the operator's known account; the profile repeats the signed-in user name."""

    def __init__(self) -> None:
        self.user: str | None = None

    def sign_in(self, username: str, password: str) -> dict:
        """Sign in.

        Args:
            username: The account's username.
            password: The account's password.
        """
        if (username, password) != ("ana", "s3cret-pass"):
            raise PermissionError("wrong username or password")
        self.user = username
        return {"signed_in": True}

    def get_profile(self) -> dict:
        """Show the signed-in user's profile."""
        if self.user is None:
            raise PermissionError("not signed in")
        return {"username": self.user, "plan": "basic"}


def test_defect_13_a_read_repeating_what_its_path_was_given_gets_no_credit() -> None:
    # get_profile only runs after sign_in, and shows back the fixture user name sign_in was given. Before, it was
    # credited with the name and "provided" sign_in's username: a read providing the input that enabled it.
    for seed in (0, 1):
        e = _edges(_build(Session, fixtures={"username": "ana", "password": "s3cret-pass"}, seed=seed))
        assert ("Session.sign_in", "Session.get_profile", "state", None, None) in e, (seed, sorted(e))
        assert not any(r[0] == "Session.get_profile" and r[1] == "Session.sign_in" for r in e), (seed, sorted(e))


class Profile:
    """One account holder's profile, and letters signed with whatever names the caller gives."""

    def show_profile(self) -> dict:
        """Show the account holder's profile."""
        return {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}

    def sign_letter(self, first_name: str, last_name: str) -> dict:
        """Sign a letter with the name of an existing account holder.

        Args:
            first_name: The first name of the account holder.
            last_name: The last name of the account holder.
        """
        if not first_name.strip() or not last_name.strip():
            raise ValueError("both names are required")
        return {"signed_by": f"{first_name} {last_name}"}


def test_an_offer_does_not_permute_its_records_fields():
    """A record's first name offered as the last name does not make the first-name input take the record's last name
    (fix A). The swapped call succeeds, and so does its control (any last name will do), so the test concluded a
    first_name -> last_name compatibility on name similarity alone (0.79 > tau), and last_name -> first_name the same
    way. The record's own field for the first-name input is its first name, and that one is already on offer."""
    e = _edges(_build(Profile))
    mine = {(r[2], r[3], r[4]) for r in e if r[:2] == ("Profile.show_profile", "Profile.sign_letter")}
    assert ("compatibility", "first_name", "first_name") in mine and (
        "compatibility",
        "last_name",
        "last_name",
    ) in mine, sorted(e)
    assert not {(f, i) for _k, f, i in mine} & {("first_name", "last_name"), ("last_name", "first_name")}, sorted(e)


class Mail:
    """A mailbox: the inbox has one message, and any subject and body can be sent."""

    def read_inbox(self) -> list[dict]:
        """Read the messages in the inbox."""
        return [{"sender": "bo@example.com", "subject": "Lunch on Friday?", "body": "Shall we meet at noon?"}]

    def send_email(self, recipient: str, subject: str, body: str) -> dict:
        """Send an email.

        Args:
            recipient: The recipient's email address.
            subject: The subject line.
            body: The text of the email.
        """
        if "@" not in recipient:
            raise ValueError("recipient must be an email address")
        return {"sent": {"to": recipient, "subject": subject, "body": body}}


def test_a_free_text_literal_shows_no_compatibility():
    """A subject and body the template fills with literals and the tool never checks are the caller's free choice,
    text as much as numbers (fix A): the inbox's subject sent as a subject succeeds, and so does the template's own
    subject, which shows only that any text will do. A known sandbox subject makes the call take the inbox's. The
    recipient is no provenance either: the control's address is a realistic one (the value generator draws an
    e-mail for an input documented as an address), and any address will do."""
    e = _edges(_build(Mail, fixtures={"subject": "Status", "body": "All fine."}))
    assert ("Mail.read_inbox", "Mail.send_email", "provenance", "sender", "recipient") not in e, sorted(e)
    assert not any(r[:2] == ("Mail.read_inbox", "Mail.send_email") and r[4] in ("subject", "body") for r in e), sorted(
        e
    )


def test_checkpoints_change_nothing_the_build_finds(tmp_path: Path) -> None:
    """A build's exploration must not depend on when it checkpoints (a wall-clock matter: the interval
    grows with the checkpoint's own duration, so a busy machine checkpoints at other waves than a quiet one).
    Checkpointing as often as the build allows (interval 0) and never give the same relations and the same engine
    counters; no worker was replaced (a timed-out call's record could depend on the machine's load)."""

    def build(name: str, every_s: float) -> Library:
        return build_library(
            ShopBenchmark(),
            tmp_path / name,
            BuildOptions(workers=2, config=BuildConfig(checkpoint_every_s=every_s), resume=False, progress=False),
        )

    every_wave, never = build("every.json.gz", 0.0), build("never.json.gz", 1e9)
    assert _edges(every_wave) == _edges(never) and every_wave.stats["engine"] == never.stats["engine"]
    assert every_wave.stats["engine"]["waves"] > 1  # (so a checkpoint fell between waves)
    assert every_wave.stats["worker_restarts"] == never.stats["worker_restarts"] == 0
