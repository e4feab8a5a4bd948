"""The engine's caches answer exactly what the uncached computation answers.

Why: build speed comes from not recomputing pure functions (schema verdicts, name tokens, table diffs); a cache
that answered differently would change what a build concludes, so each is checked against the plain computation.
"""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import jsonschema

from libra._util.text import words
from libra.catalog import Catalog, Tool
from libra.induction.explore.engine import Engine

ROOT = Path(__file__).resolve().parent.parent

PARAMS = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 1, "description": "How many items to list."},
        "limit": {"type": "integer", "minimum": 1, "description": "At most this many."},
        "email": {"type": "string", "format": "email", "description": "The recipient."},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."},
        "ratio": {"type": "number", "maximum": 1},
    },
    "required": ["count"],
}


def _engine() -> Engine:
    catalog = Catalog([Tool("T.list", "List things.", PARAMS), Tool("U.send", "Send.", PARAMS)], name="toy")
    return Engine(catalog, None, {}, [], lambda a, b: 1.0 if a == b else 0.0)  # type: ignore[arg-type]


def _plain(tool: Tool, param: str, value: object) -> object:
    """What the engine's fit check answers without any cache."""
    v = jsonschema.Draft202012Validator(
        tool.param_schema(param), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    if v.is_valid(value):
        return value
    if isinstance(value, (str, int, float, bool)) and v.is_valid([value]):
        return [value]
    return None


def test_fit_verdicts_match_plain_validation_when_asked_again() -> None:
    engine = _engine()
    values = [
        1,
        1.0,
        True,
        0,
        2,
        1.5,
        "1",
        "a@b.example",
        "not an address",
        "x" * 300,
        None,
        [1],
        {"k": 1},
        ["a"],
        0.5,
        False,
    ]
    for tool_name in ("T.list", "U.send"):
        tool = engine.catalog[tool_name]
        for param in PARAMS["properties"]:
            for _ in range(2):  # the second answer comes from the cache
                for value in values:
                    got, want = engine.fits.as_passed(tool, param, value), _plain(tool, param, value)
                    assert got == want and type(got) is type(want), (tool_name, param, value, got, want)
    # inputs whose schemas differ only in their descriptions share one validator (count, limit on both tools)
    assert len(engine.fits.validators) == 4


def test_a_listed_fit_is_a_new_list_each_time() -> None:
    engine = _engine()
    tool = engine.catalog["T.list"]
    first = engine.fits.as_passed(tool, "tags", "red")
    first.append("mutated")  # type: ignore[union-attr]
    assert engine.fits.as_passed(tool, "tags", "red") == ["red"]


def test_words_are_a_fresh_list_per_call() -> None:
    first = words("userName_id2")
    assert first == ["user", "name", "id"]
    first.append("changed")
    assert words("userName_id2") == ["user", "name", "id"]


def _server():
    spec = importlib.util.spec_from_file_location(
        "appworld_server_for_test", ROOT / "src/libra/benchmarks/appworld/server.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _db(rows: dict[str, list[tuple]]) -> bytes:
    conn = sqlite3.connect(":memory:")
    for table, content in rows.items():
        conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT, note BLOB)")
        conn.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", content)
    conn.commit()
    data = conn.serialize()
    conn.close()
    return data


def test_the_database_diff_reports_only_changed_tables() -> None:
    server = _server()
    same = [(1, "kept", b"\x00")]
    before = _db({"a_same": same, "b_changed": [(1, "old", None), (2, "gone", None)], "c_empty": []})
    after = _db({"a_same": same, "b_changed": [(1, "new", None), (3, "added", b"\x01")], "c_empty": []})
    assert server.diff_databases(before, after) == {
        "b_changed": {
            "added": [{"id": 3, "name": "added", "note": "01"}],
            "removed": [{"id": 2, "name": "gone", "note": None}],
            "changed": [{"id": 1, "before": {"name": "old"}, "after": {"name": "new"}}],
        }
    }
    assert server.diff_databases(before, before) == {}


def _notes_db(edit: str | None = None) -> bytes:
    """Two plain tables and a full-text table with its own content, optionally changed by ``edit`` (SQL)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("CREATE VIRTUAL TABLE notes_fts USING fts5(body)")
    conn.executemany("INSERT INTO people VALUES (?, ?)", [(i, f"person {i} " + "x" * 300) for i in range(40)])
    conn.executemany("INSERT INTO notes VALUES (?, ?)", [(i, f"note {i} " + "y" * 300) for i in range(40)])
    conn.executemany("INSERT INTO notes_fts (rowid, body) VALUES (?, ?)", [(i, f"note {i} words") for i in range(40)])
    conn.commit()
    if edit:
        conn.executescript(edit)
        conn.commit()
    data = conn.serialize()
    conn.close()
    return data


def test_untouched_tables_skip_only_what_cannot_differ(monkeypatch) -> None:
    server = _server()
    base = _notes_db()
    edits = [
        "UPDATE people SET name = 'renamed' WHERE id = 7",
        "INSERT INTO notes VALUES (99, 'new note')",
        "INSERT INTO notes_fts (rowid, body) VALUES (99, 'fresh words')",
        "DELETE FROM notes_fts WHERE rowid = 3",
        "DELETE FROM people WHERE id < 30",
        "CREATE TABLE extra (id INTEGER PRIMARY KEY); INSERT INTO extra VALUES (1)",
    ]
    for edit in edits:
        after = _notes_db(edit)
        conn = sqlite3.connect(":memory:")
        conn.deserialize(base)
        same = server.untouched_tables(base, after, conn)
        conn.close()
        fast = server.diff_databases(base, after)
        with monkeypatch.context() as m:
            m.setattr(server, "untouched_tables", lambda *_a: set())
            slow = server.diff_databases(base, after)
        # skipping the untouched tables changes nothing in the diff, and a changed table is never skipped
        assert fast == slow and slow, edit
        assert not (set(slow) & same), edit
    # a change to one table leaves the others (and the full-text table, whose pages are all the same) skipped
    conn = sqlite3.connect(":memory:")
    conn.deserialize(base)
    same = server.untouched_tables(base, _notes_db(edits[0]), conn)
    assert {"notes", "notes_fts"} <= same and "people" not in same
    # a changed full-text table is diffed: its shadow tables changed
    same = server.untouched_tables(base, _notes_db(edits[2]), conn)
    assert "notes_fts" not in same and {"people", "notes"} <= same
    conn.close()


def test_outcomes_classified_by_the_engine_match_classify_and_follow_a_replaced_contract() -> None:
    from libra.contracts.model import Contract
    from libra.contracts.outcome import classify, refusal_schema, with_refusals

    status = {"type": "object", "properties": {"status": {"const": "success"}}, "required": ["status"]}
    rejected = {"type": "object", "properties": {"status": {"enum": ["rejected", "error"]}}, "required": ["status"]}
    with_output = {**status, "properties": {**status["properties"], "output": {"type": "object", "required": ["id"]}}}
    refusing = with_refusals(status, rejected, refusal_schema(True))
    plain = Contract("T.list", [], [], status, rejected)
    engine = _engine()
    engine.contracts = {"T.list": plain, "U.send": Contract("U.send", [], [], *refusing)}

    def rec(status: str, output: object = None, error: str | None = None) -> dict:
        return {"status": status, "output": output, "state_changes": {}, "error": error, "duration_ms": 0.0}

    records = [
        rec("success", {"id": 1}),
        rec("success", {"error": "not signed in"}),
        rec("success", []),
        rec("rejected", None, "HTTP 401"),
        rec("error", None, "Boom"),
        rec("success", {"message": "Access denied: invalid token"}),
    ]
    for _ in range(2):  # the second time from the texts the engine took
        for tool in ("T.list", "U.send"):
            for r in records:
                assert engine._classify(tool, r) == classify(engine.contracts[tool], r), (tool, r)
    # a contract replaced by another object (a revision) is classified by its own schemas, not the texts taken before
    assert engine._classify("T.list", rec("success", [])) == "success"
    engine.contracts["T.list"] = Contract("T.list", [], [], with_output, rejected)
    assert engine._classify("T.list", rec("success", [])) == "unmatched"
    assert (
        engine._classify("T.list", rec("success", {"id": 2}))
        == classify(engine.contracts["T.list"], rec("success", {"id": 2}))
        == "success"
    )
