"""Relation induction end to end on real executions (a toy app and BFCL's MathAPI)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from libra.induction.build import BuildOptions, build_library
from libra.induction.engine import BuildConfig
from libra.library import Candidate, Library
from libra.errors import LibraryFormatError

from .conftest import needs_bfcl
from .induction_toys import ClassesBenchmark, Ledger, Mailbox, PortalBenchmark, Records, Shell, ShopBenchmark, SplitShopBenchmark, VaultsBenchmark

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
    assert any(r.kind == "state" and (r.provider, r.consumer) == ("Shop.login", "Shop.add_item") for r in shop_lib.relations)


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


def test_library_round_trip_and_refusals(shop_lib: Library, tmp_path: Path) -> None:
    path = tmp_path / "shop.json.gz"
    shop_lib.save(path)
    loaded = Library.load(path, catalog=ShopBenchmark().catalog())
    assert _edges(loaded) == _edges(shop_lib) and len(loaded.candidates) == len(shop_lib.candidates)
    rounded = [Candidate(c.provider, c.provider_field, c.consumer, c.consumer_input, None if c.similarity is None else round(c.similarity, 5)) for c in shop_lib.candidates]
    assert list(loaded.candidates) == rounded and loaded.candidates[-1] == rounded[-1] and loaded.candidates[1:3] == rounded[1:3]
    # a library written by format version 1 (candidates as rows) still loads, to the same candidates
    v1 = shop_lib.to_dict()
    names = shop_lib.catalog.names
    v1["format_version"] = 1
    v1["candidates"] = [[names.index(c.provider), c.provider_field, names.index(c.consumer), c.consumer_input, c.similarity] for c in rounded]
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
    subprocess.run([sys.executable, "-m", "tests.induction_toys", str(reference), "0"], cwd=ROOT, check=True, timeout=300)
    out = tmp_path / "lib.json"
    ckpt = tmp_path / "lib.json.ckpt"
    proc = subprocess.Popen([sys.executable, "-m", "tests.induction_toys", str(out), "0.05"], cwd=ROOT)
    deadline = time.monotonic() + 120
    while not ckpt.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert ckpt.exists(), "the build wrote no checkpoint before finishing"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
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
    from libra.benchmarks.bfcl import BFCLBenchmark, load_catalog
    from libra.catalog import Catalog

    class MathOnly(BFCLBenchmark):
        def catalog(self) -> Catalog:
            return Catalog([t for t in load_catalog() if t.group == "MathAPI"], name="bfcl-math")

        def runtime(self, **kw):
            from libra.benchmarks.bfcl_runtime import make_bfcl_runtime

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
    assert any(r.kind == "state" and (r.provider, r.consumer) == ("Shop.login", "Shop.add_item") for r in capped.relations)
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
        assert ("Shell.list_files", "Shell.read_file", "provenance", "names", "file_name") in edges, (seed, sorted(edges))
        assert ("Shell.change_directory", "Shell.read_file", "state", None, None) in edges, (seed, sorted(edges))


def test_every_initial_call_runs_before_offers_use_up_the_budget() -> None:
    # Each ledger entry names the next one, so offers alone could spend any budget. Listing the items
    # is an initial call; it must still run, and early, or no item id ever reaches show_item.
    for seed in (0, 1, 2, 3):
        cfg = BuildConfig(seed=seed, batch_size=1, max_calls=24)
        lib = build_library(ClassesBenchmark(Ledger, Records), None, BuildOptions(workers=0, progress=False, config=cfg))
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
        assert ("Portal.show_profile", "Portal.login", "provenance", "email", "username") in edges, (seed, sorted(edges))
