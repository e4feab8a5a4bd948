"""The rebinding rule both walks of the sandbox share (:mod:`libra.probing.rebind`), by hand."""

from __future__ import annotations

from libra.probing.rebind import REBINDS, Rebound, signature, take_untried, varied_picks


def test_varied_picks_vary_one_input_at_a_time_in_order():
    picks = varied_picks({"path": ["notes", "notes/todo.txt", "a.txt"], "user": ["ann", "bob"]})
    assert picks == [
        {"path": "notes", "user": "ann"},
        {"path": "notes/todo.txt", "user": "ann"},
        {"path": "a.txt", "user": "ann"},
        {"path": "notes", "user": "bob"},
    ]
    assert varied_picks({"path": ["notes"]}) == [{"path": "notes"}]


def test_take_untried_skips_bindings_run_and_stops_at_the_bound():
    memory = Rebound()
    memory.tried.add(signature(["path"], {"path": "notes"}))
    options = [
        ((1, 0), {"path": "notes"}, "again"),
        ((0, 1), {"path": "b"}, "b"),
        ((0, 0), {"path": "a"}, "a"),
        ((2, 0), {"path": "c"}, "c"),
    ]
    # sorted by key; the binding already run is no option; at most REBINDS over the memory's life
    assert take_untried(memory, ["path"], options) == ["a", "b"][:REBINDS]
    assert signature(["path"], {"path": "a"}) in memory.tried
    memory.runs = REBINDS
    assert take_untried(memory, ["path"], [((0,), {"path": "d"}, "d")]) == []


def test_signature_looks_only_at_the_named_inputs():
    assert signature(["path"], {"path": "a", "edits": [1]}) == signature(["path"], {"path": "a", "edits": [2]})
    assert signature(["path", "edits"], {"path": "a", "edits": [1]}) != signature(
        ["path", "edits"], {"path": "a", "edits": [2]}
    )
