"""The engine's memo on disk (libra.probing.memo): round trips, bounded caches, resume, bounded memory."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from libra.contracts.check import check_contracts
from libra.induction.build import BuildOptions, build_library, memo_path
from libra.induction.candidates import candidate_compositions
from libra.induction.config import BuildConfig
from libra.induction.explore.engine import Engine
from libra.induction.peak import PeakMemory, descendants
from libra.library.artifact import Library
from libra.probing.memo import MemoStore
from libra.runtime.base import State, StatePart

from .induction_toys import ClassesBenchmark, ShopBenchmark, kill_after_checkpoint

ROOT = Path(__file__).resolve().parent.parent


def _edges(relations) -> set[tuple]:
    return {(r.provider, r.consumer, r.kind, r.provider_field, r.consumer_input) for r in relations}


def _split(fp: str, *parts: tuple[str, bytes]) -> State:
    return State(fp, tuple(StatePart(name, f"k-{data[:8].hex()}-{len(data)}", data) for name, data in parts))


def test_round_trip_of_records_and_states(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "memo.sqlite")
    shared = b"s" * 1000
    a = _split("fa", ("Shop", shared), ("Bank", b"one"))
    b = _split("fb", ("Shop", shared), ("Bank", b"two"))
    opaque = State("fc", {"rows": [1, 2, (3, 4)]})
    rec = {
        "status": "success",
        "output": {"id": 7, "t": (1, 2)},
        "state_changes": {},
        "error": None,
        "duration_ms": 1.5,
    }
    lights = store.put_many(
        [
            (("f0", "Shop.add", "{}"), rec, a),
            (("f0", "Shop.add", '{"x": 1}'), rec, b),
            (("fa", "Bank.get", "{}"), rec, opaque),
        ]
    )
    assert [s.payload for s in lights] == [None, None, None]
    assert [s.fingerprint for s in lights] == ["fa", "fb", "fc"]
    assert len(store) == 3 and ("f0", "Shop.add", "{}") in store and ("f0", "Shop.rm", "{}") not in store
    got_rec, got_state = store[("f0", "Shop.add", '{"x": 1}')]
    assert got_rec == rec and got_state == b and got_state.payload is None
    # the shared part is stored once; full states come back with every part's bytes, from a reopened store too
    store.close()
    store = MemoStore(tmp_path / "memo.sqlite")
    assert store.db.execute("SELECT COUNT(*) FROM parts").fetchone()[0] == 4
    full = store.full(State("fb"))
    assert [(p.name, p.key, p.data) for p in full.payload] == [(p.name, p.key, p.data) for p in b.payload]
    assert store.full(State("fc")).payload == {"rows": [1, 2, (3, 4)]}
    assert store.get(("fa", "Bank.get", "{}"))[0] == rec
    assert [s.fingerprint for _r, s in store.values()] == ["fa", "fb", "fc"]
    # a checkpoint that saw two rows cuts the third; one that saw more than the store holds is refused
    assert store.sync() == 3
    assert store.truncate(2) and len(store) == 2 and ("fa", "Bank.get", "{}") not in store
    assert not store.truncate(5)
    store.clear()
    assert len(store) == 0 and store.full(State("fa")).payload is None
    store.close(remove=True)
    assert not any(p.exists() for p in store.files())


def test_caches_stay_within_their_bounds(tmp_path: Path) -> None:
    store = MemoStore(tmp_path / "memo.sqlite", record_cache=10, part_cache_bytes=50_000)
    # random bytes: they do not compress, so what is on disk is what the caches must not hold
    entries = [
        (
            (f"s{i}", "T.write", "{}"),
            {"status": "success", "output": i},
            _split(f"f{i}", ("Doc", random.Random(i).randbytes(20_000) + str(i).encode())),
        )
        for i in range(200)
    ]
    store.put_many(entries)
    for i in range(200):
        assert store[(f"s{i}", "T.write", "{}")][0]["output"] == i
        full = store.full(State(f"f{i}"))
        assert full.payload[0].data.endswith(str(i).encode())
        held = store.held()
        assert held["records_in_memory"] <= 10
        assert held["part_bytes_in_memory"] <= 50_000
    assert held["rows"] == 200 and held["disk_bytes"] > 200 * 20_000 // 10
    store.close()
    temp = MemoStore()  # no path: a private temporary directory, removed on close
    assert temp.path.exists()
    temp.close()
    assert not temp.path.parent.exists()


def _engine(bench: ClassesBenchmark, path: Path, **cfg) -> Engine:
    """An engine over a toy catalog as a build sets it up (contracts checked, candidates counted)."""
    catalog = bench.catalog()
    runtime = bench.runtime()
    contracts = check_contracts(catalog, runtime, None, proposer="offline").contracts

    def similarity(a: str, b: str) -> float:  # any fixed similarity keeps two runs comparable
        return 1.0 if a == b else 0.5

    return Engine(
        catalog,
        runtime,
        contracts,
        candidate_compositions(catalog, contracts),
        similarity,
        BuildConfig(**cfg),
        memo_path=path,
    )


def test_resume_from_a_store_ahead_of_its_checkpoint_finds_the_same_relations(tmp_path: Path) -> None:
    bench = ShopBenchmark()
    ref = _engine(bench, tmp_path / "ref.sqlite", batch_size=4)
    ref.start()
    while ref.step():
        pass
    reference = (_edges(ref.result()), dict(ref.counters), len(ref.memo))
    ref.close()

    first = _engine(bench, tmp_path / "run.sqlite", batch_size=4)
    first.start()
    for _ in range(3):
        assert first.step()
    first.checkpoint(tmp_path / "run.ckpt", "id", 1.0)
    rows_at_checkpoint = len(first.memo)
    for _ in range(3):  # the build goes on, memoising more calls, and dies before its next checkpoint
        assert first.step()
    assert len(first.memo) > rows_at_checkpoint
    first.memo.db.close()  # no clean shutdown: the file is left as the kill left it

    again = _engine(bench, tmp_path / "run.sqlite", batch_size=4)
    assert not again.restore(tmp_path / "run.ckpt", "another build")
    assert again.restore(tmp_path / "run.ckpt", "id")
    assert len(again.memo) == rows_at_checkpoint
    while again.step():
        pass
    assert (_edges(again.result()), dict(again.counters), len(again.memo)) == reference
    again.close(remove=True)


def test_killed_build_resumes_with_its_memo_store(tmp_path: Path) -> None:
    reference = build_library(
        ShopBenchmark(),
        None,
        BuildOptions(workers=0, embedder="minilm", config=BuildConfig(batch_size=4), progress=False),
    )
    out = tmp_path / "lib.json"
    ckpt = tmp_path / "lib.json.ckpt"
    store = memo_path(ckpt)
    proc = subprocess.Popen([sys.executable, "-m", "tests.induction_toys", str(out), "0.05"], cwd=ROOT)
    kill_after_checkpoint(proc, ckpt, wait_s=120)
    assert store.exists() and not out.exists()
    subprocess.run([sys.executable, "-m", "tests.induction_toys", str(out), "0.05"], cwd=ROOT, check=True, timeout=300)
    lib = Library.load(out)
    assert lib.stats["resumed"] is True
    assert _edges(lib.relations) == _edges(reference.relations)
    assert lib.stats["engine"]["executed_calls"] == reference.stats["engine"]["executed_calls"]
    # the store holds checking's calls and the exploration's own, each once; the resumed checking ran nothing anew
    engine = lib.stats["engine"]
    assert (
        lib.stats["memo_store"]["rows"]
        == engine["executed_calls"] - engine["calls_from_checking"] + reference.stats["contracts"]["calls"]
    )
    assert lib.stats["contracts"]["calls"] == 0 and lib.stats["contracts"]["memo_hits"] > 0
    assert not ckpt.exists() and not store.exists()  # a finished build leaves neither behind


class Journal:
    """A journal whose every page is long: each page written is a new state of tens of kilobytes."""

    def __init__(self) -> None:
        self.pages: dict[int, str] = {}

    def _new(self, text: str) -> dict:
        page_id = len(self.pages) + 1
        self.pages[page_id] = text
        return {"page_id": page_id}

    def write_page(self, title: str) -> dict:
        """Write a new page.

        Args:
            title: Title of the new page.
        """
        return self._new("".join(f"{title}:{len(self.pages)}:{i};" for i in range(2000)))

    def copy_page(self, page_id: int) -> dict:
        """Copy an existing page into a new page.

        Args:
            page_id: The id of the existing page to copy.
        """
        return self._new(self.pages[page_id][::-1]) if page_id in self.pages else {"error": "no such page"}

    def stamp_page(self, page_id: int) -> dict:
        """Stamp an existing page with its id, as a new page.

        Args:
            page_id: The id of the existing page to stamp.
        """
        return self._new(f"{page_id}|" + self.pages[page_id]) if page_id in self.pages else {"error": "no such page"}

    def read_page(self, page_id: int) -> dict:
        """Read an existing page.

        Args:
            page_id: The id of the existing page to read.
        """
        if page_id not in self.pages:
            return {"error": "no such page"}
        return {"length": len(self.pages[page_id]), "start": self.pages[page_id][:20]}


class Diary(Journal):
    """A second journal (its own state part and group)."""


class Logbook(Journal):
    """A third journal."""


def test_memory_stays_bounded_on_a_catalog_of_large_states(tmp_path: Path) -> None:
    engine = _engine(ClassesBenchmark(Journal, Diary, Logbook), tmp_path / "memo.sqlite", max_depth=6, batch_size=16)
    engine.memo.close()
    engine.memo = MemoStore(
        tmp_path / "memo.sqlite", record_cache=32, part_cache_bytes=400_000, record_cache_bytes=300_000
    )
    engine.start()
    peaks = {"records_in_memory": 0, "record_bytes_in_memory": 0, "part_bytes_in_memory": 0}
    while engine.step():
        held = engine.memo.held()
        peaks = {k: max(v, held[k]) for k, v in peaks.items()}
    stored = engine.memo.db.execute("SELECT COUNT(*), SUM(LENGTH(data)) FROM parts").fetchone()
    # what the build produced is far more than what it held: the caches kept their bounds throughout
    assert engine.counters["executed_calls"] == len(engine.memo) > 32
    assert peaks["records_in_memory"] <= 32
    assert peaks["record_bytes_in_memory"] <= 300_000
    assert peaks["part_bytes_in_memory"] <= 400_000
    assert stored[1] > 10 * 400_000
    # the engine's own states are light: a node holds a fingerprint, never a snapshot
    assert len(engine.nodes) > 10 and all(n.state.payload is None for n in engine.nodes)
    assert any(r.kind == "provenance" for r in engine.result())
    engine.close(remove=True)


def test_peak_memory_sees_the_callers_workers() -> None:
    child = subprocess.Popen([sys.executable, "-c", "x = bytearray(60 * 1024 * 1024); import time; time.sleep(30)"])
    try:
        peak = PeakMemory()
        deadline = time.monotonic() + 20
        while peak.workers_mb < 50 and time.monotonic() < deadline:
            time.sleep(0.1)
            peak.sample(force=True)
        assert child.pid in descendants(__import__("os").getpid())
        figures = peak.to_dict()
        assert figures["worker"] >= 50 and figures["caller"] > 0 and figures["total"] >= figures["worker"]
        assert figures["workers_seen"] >= 1
    finally:
        child.kill()
        child.wait()


def test_a_worker_started_late_is_not_charged_the_callers_memory() -> None:
    """A child forked from a large caller (a worker replaced mid-build) counts the caller's image in
    RUSAGE_CHILDREN until it execs; the workers' peak comes from what /proc saw of them, not from that."""
    ballast = b"\x01" * (200 * 1024 * 1024)
    forked = subprocess.Popen([sys.executable, "-c", "pass"], preexec_fn=lambda: None)  # fork, then exec
    forked.wait()
    import resource

    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 > 150  # the artefact this guards against
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        peak = PeakMemory()
        deadline = time.monotonic() + 20
        while not peak.workers_mb and time.monotonic() < deadline:
            time.sleep(0.1)
            peak.sample(force=True)
        figures = peak.to_dict()
        assert 0 < figures["worker"] < 100 and figures["caller"] > 200
    finally:
        child.kill()
        child.wait()
        del ballast


@pytest.mark.parametrize("rows", [-1, 10**9])
def test_a_checkpoint_that_does_not_match_the_store_is_refused(tmp_path: Path, rows: int) -> None:
    # -1: a checkpoint written before the memo moved to a store (it names no row count); 10**9: another store's
    store = MemoStore(tmp_path / "m.sqlite")
    store.put_many([(("f", "T.a", "{}"), {"status": "success"}, State("g", b"x"))])
    assert not store.truncate(rows)
    store.close()


def test_parts_are_stored_compressed_and_read_back_as_they_were(tmp_path: Path) -> None:
    # a serialized database is mostly empty pages: it is stored in a fraction of its size, and read back byte for
    # byte from a reopened store; a part that would not shrink, and a store written before compression, still work
    database = (b"SQLite format 3\0" + bytes(4080)) * 50 + b"rows"
    noise = random.Random(7).randbytes(5_000)
    store = MemoStore(tmp_path / "memo.sqlite")
    store.put_many(
        [(("f0", "Db.write", "{}"), {"status": "success"}, _split("fa", ("Db", database), ("Noise", noise)))]
    )
    store.close()
    store = MemoStore(tmp_path / "memo.sqlite")
    sizes = dict(store.db.execute("SELECT key, LENGTH(data) FROM parts").fetchall())
    keys = [p.key for p in _split("fa", ("Db", database), ("Noise", noise)).payload]
    assert sizes[keys[0]] < len(database) // 20
    assert sizes[keys[1]] == len(noise) + 1
    assert [p.data for p in store.full(State("fa")).payload] == [database, noise]
    store.db.execute("UPDATE parts SET data = ? WHERE key = ?", (b"B" + database, keys[0]))  # the older layout
    store.close()
    store = MemoStore(tmp_path / "memo.sqlite")
    assert store.full(State("fa")).payload[0].data == database
    store.close(remove=True)
