"""The per-call guard (runtime/guard.py): hostile return values and side effects end as clean or ``error`` records.

The hostile tools (tests/fixtures/hostile_tools.py) run as real Python tools in real isolated workers; after each
one, the normal pair (``create_item`` -> ``get_item``) must still work, with the right result.
"""

from __future__ import annotations

import enum
import json
import os
import sys
import tempfile
import textwrap

import pytest

from libra.runtime import IsolatedRuntime, ToolRuntimeError, WorkerPool
from libra.runtime.base import InvocationRecord
from libra.runtime.workers.guard import (
    DEFAULT_MAX_RECORD_BYTES,
    CallGuard,
    UnserializableOutput,
    bound_record,
    to_jsonable,
)
from libra.runtime.workers.remote import RemoteRuntime
from tests.toy_tools import make_hostile_runtime

T = "hostile_tools."


@pytest.fixture(scope="module")
def iso():
    # one worker, so a call that changed the process is followed by calls in that same process
    rt = IsolatedRuntime(make_hostile_runtime, n_workers=1, timeout_s=20.0, memory_mb=1024)
    yield rt
    rt.close()


def _clean(rec: InvocationRecord) -> None:
    """The record goes through every consumer a build has: strict JSON, UTF-8, back from a dict."""
    text = json.dumps(rec.to_dict(), ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    assert InvocationRecord.from_dict(json.loads(text)).to_dict() == json.loads(text)


def _normal_pair_works(rt, state=None) -> None:
    state = rt.fresh() if state is None else state
    rec, s1 = rt.invoke(state, T + "create_item", {"name": "widget"})
    assert rec.status == "success", rec.error
    item_id = rec.output["item_id"]
    rec, _ = rt.invoke(s1, T + "get_item", {"item_id": item_id})
    assert (rec.status, rec.output) == ("success", {"item_id": item_id, "name": "widget"})


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        (
            "huge_output",
            {"megabytes": 50},
            "record too large: about 52,428,802 bytes as JSON, over the cap of 1,048,576 bytes",
        ),
        ("huge_int", {"digits": 5000}, "output holds an integer of about 5,001 digits at $, more than the 4,300"),
        ("cyclic_dict", {}, "output is cyclic: $['self'] is a dict that contains itself"),
        ("cyclic_list", {}, "output is cyclic: $[2] is a list that contains itself"),
        ("shared_tree", {"depth": 60}, "record too large: more than"),
    ],
)
def test_unrepresentable_outputs_become_error_records(iso, tool, args, expected) -> None:
    state = iso.fresh()
    rec, new = iso.invoke(state, T + tool, args)
    assert rec.status == "error" and rec.output is None
    assert rec.error.startswith(expected), rec.error
    assert new == state
    _clean(rec)
    _normal_pair_works(iso)


def test_odd_values_become_plain_json(iso) -> None:
    rec, _ = iso.invoke(iso.fresh(), T + "surrogate_text", {})
    assert (rec.status, rec.output) == ("success", {"text": "bad \ufffd text", "label": "\ufffd"})
    _clean(rec)
    rec, _ = iso.invoke(iso.fresh(), T + "odd_objects", {})
    assert rec.status == "success"
    assert rec.output["set"] == [1, 2, 3] and rec.output["nan"] == "nan" and rec.output["(1, 2)"] == "tuple key"
    assert isinstance(rec.output["opaque"], str) and isinstance(rec.output["bytes"], str)
    _clean(rec)
    _normal_pair_works(iso)


def test_a_surrogate_argument_reaches_a_consumer_without_crashing_its_worker(iso) -> None:
    rec, state = iso.invoke(iso.fresh(), T + "create_item", {"name": "a\ud800b"})
    assert rec.status == "success", rec.error
    _clean(rec)
    rec, _ = iso.invoke(state, T + "get_item", {"item_id": 1})
    assert (rec.status, rec.output) == ("success", {"item_id": 1, "name": "a\ufffdb"})
    assert iso.pool.restarts == 0
    _normal_pair_works(iso, state)


def test_printed_text_is_captured_per_call_and_cut(iso) -> None:
    rec, _ = iso.invoke(iso.fresh(), T + "chatty", {"lines": 2})
    assert (rec.status, rec.output) == ("success", "done")
    assert rec.diagnostics["stdout"] == "chatty stdout line 0\nchatty stdout line 1\n"
    assert rec.diagnostics["stderr"] == "chatty stderr line 0\nchatty stderr line 1\n"
    assert "stdout" not in rec.to_dict()
    rec, _ = iso.invoke(iso.fresh(), T + "chatty", {"lines": 100_000})
    assert rec.status == "success"
    assert len(rec.diagnostics["stdout"]) < 9000 and "more characters cut" in rec.diagnostics["stdout"]
    rec, _ = iso.invoke(iso.fresh(), T + "raw_print", {})
    assert rec.status == "success", rec.error
    assert "raw fd 1 text" in rec.diagnostics["stdout"] and "child process text" in rec.diagnostics["stdout"]
    assert rec.diagnostics["stderr"] == "raw fd 2 text\n"
    rec, _ = iso.invoke(iso.fresh(), T + "where", {})
    assert rec.diagnostics == {}  # the next call starts with empty streams
    _normal_pair_works(iso)


def test_environment_changes_are_undone(iso) -> None:
    s = iso.fresh()
    path = iso.invoke(s, T + "read_env", {"name": "PATH"})[0].output
    assert path
    rec, _ = iso.invoke(s, T + "set_env", {"name": "LIBRA_HOSTILE_VAR", "value": "poisoned"})
    assert (rec.status, rec.diagnostics["restored"]) == ("success", ["os.environ[LIBRA_HOSTILE_VAR]"])
    assert iso.invoke(s, T + "read_env", {"name": "LIBRA_HOSTILE_VAR"})[0].output is None
    rec, _ = iso.invoke(s, T + "unset_env", {"name": "PATH"})
    assert rec.output is True and rec.diagnostics["restored"] == ["os.environ[PATH]"]
    assert iso.invoke(s, T + "read_env", {"name": "PATH"})[0].output == path
    _normal_pair_works(iso)


def test_calls_run_in_an_emptied_scratch_directory(iso) -> None:
    s = iso.fresh()
    home = iso.invoke(s, T + "where", {})[0].output
    assert home.startswith(tempfile.gettempdir()) and os.path.basename(home) == "cwd"
    rec, _ = iso.invoke(s, T + "change_dir", {"path": "/"})
    assert (rec.output, rec.diagnostics["restored"]) == ("/", ["working directory"])
    assert iso.invoke(s, T + "where", {})[0].output == home
    assert iso.invoke(s, T + "write_here", {"name": "left-behind.txt"})[0].output == ["left-behind.txt"]
    assert iso.invoke(s, T + "list_here", {})[0].output == []
    _normal_pair_works(iso)


def test_monkeypatching_another_module_is_undone(iso) -> None:
    s = iso.fresh()
    rec, _ = iso.invoke(s, T + "patch_json", {})
    assert (rec.status, rec.diagnostics["restored"]) == ("success", ["json.dumps"])
    rec, _ = iso.invoke(s, T + "dump_json", {})
    assert (rec.status, rec.output) == ("success", '{"a": 1}')
    _normal_pair_works(iso)


def test_the_record_cap_is_an_option() -> None:
    with IsolatedRuntime(make_hostile_runtime, n_workers=1, timeout_s=20.0, max_record_bytes=2000) as rt:
        assert rt.pool.max_record_bytes == 2000
        rec, _ = rt.invoke(rt.fresh(), T + "huge_output", {"megabytes": 1})
        assert rec.status == "error" and "over the cap of 2,000 bytes" in rec.error
        _normal_pair_works(rt)
    assert WorkerPool.__init__.__kwdefaults__["max_record_bytes"] == DEFAULT_MAX_RECORD_BYTES
    with pytest.raises(ToolRuntimeError, match="max_record_bytes must be >= 1"):
        IsolatedRuntime(make_hostile_runtime, n_workers=1, max_record_bytes=0)


# -- the normaliser itself ---------------------------------------------------------------------------------------
class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    def __str__(self) -> str:
        return "not the value"


def test_outputs_become_plain_builtin_types() -> None:
    out = to_jsonable({"c": Colour.RED, "n": Name("bob"), Name("k"): [True, None, 1.5], 3: {"x"}})
    assert out == {"c": 1, "n": "bob", "k": [True, None, 1.5], "3": ["x"]}
    assert type(out["c"]) is int and type(out["n"]) is str and all(type(k) is str for k in out)
    assert to_jsonable({"\udcff": "\ud800"}) == {"\ufffd": "\ufffd"}


def test_cycles_through_objects_and_deep_nesting() -> None:
    class Node:
        def __init__(self) -> None:
            self.child: object = None

    a, b = Node(), Node()
    a.child, b.child = b, a
    with pytest.raises(UnserializableOutput, match=r"cyclic: \$\['child'\]\['child'\] is a Node"):
        to_jsonable({"root": a}["root"])
    deep: list = []
    for _ in range(500):
        deep = [deep]
    out = to_jsonable(deep)
    assert len(json.dumps(out)) < 1000  # summarised below the depth limit, not expanded
    with pytest.raises(UnserializableOutput, match="record too large"):
        to_jsonable(["x" * 100] * 20, limit=1000)
    assert to_jsonable(["x" * 100] * 20) == ["x" * 100] * 20  # the default cap
    assert DEFAULT_MAX_RECORD_BYTES == 1 << 20


def test_bound_record_counts_the_whole_record() -> None:
    output, changes, error, problem = bound_record("a" * 600, {"P": {"added": {"$.x": "b" * 600}}}, None, 1000)
    assert (output, changes, error) == (None, {}, None) and problem.startswith("record too large")
    output, changes, error, problem = bound_record(1, {}, "e" * 20000, 10**6)
    assert problem is None and len(error) < 9000


def test_guard_restores_what_a_call_changed_in_process(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    guard = CallGuard(capture_fds=False)
    try:
        with guard.call() as report:
            json.loads = None  # type: ignore[assignment]
            sys.path.append("/nowhere")
            print("hello")
        assert json.loads("1") == 1 and "/nowhere" not in sys.path
        assert report == {"stdout": "hello\n", "restored": ["json.loads", "sys.path"]}
        with guard.call() as report:
            import xml.dom.minidom  # a submodule bound during a call stays bound
        assert report == {} and xml.dom.minidom.parseString("<a/>")  # type: ignore[name-defined]
    finally:
        guard.close()
        os.chdir(tmp_path)


# -- a remote server runs the same guard -------------------------------------------------------------------------
BACKEND = textwrap.dedent(
    """
    import os

    class Backend:
        def fresh(self):
            return [("p", "k0", b"0")]

        def invoke(self, parts, tool, args):
            if tool == "h.big":
                out = "x" * (3 * 2**20)
            elif tool == "h.int":
                out = 10 ** 6000
            elif tool == "h.loop":
                out = {}
                out["me"] = out
            elif tool == "h.env":
                os.environ["LIBRA_REMOTE_VAR"] = "set"
                print("remote text")
                out = "ok"
            else:
                out = os.environ.get("LIBRA_REMOTE_VAR", "unset")
            changes = {"p": "changed"}
            parts = [("p", "k1", b"1")]
            return {"status": "success", "output": out, "error": None, "state_changes": changes, "parts": parts}

    def make_backend(options):
        return Backend()
    """
)


def test_remote_servers_bound_records_and_undo_changes(tmp_path) -> None:
    from libra.catalog import Catalog, Tool

    path = tmp_path / "hostile_backend.py"
    path.write_text(BACKEND, encoding="utf-8")
    catalog = Catalog([Tool(n) for n in ("h.big", "h.int", "h.loop", "h.env", "h.read")], name="h")
    with RemoteRuntime(sys.executable, path, catalog=catalog, n_servers=1, timeout_s=20.0) as rt:
        s = rt.fresh()
        for tool, expected in (
            ("h.big", "record too large"),
            ("h.int", "output holds an integer"),
            ("h.loop", "output is cyclic"),
        ):
            rec, new = rt.invoke(s, tool, {})
            assert rec.status == "error" and rec.error.startswith(expected), rec.error
            assert new == s  # the state changes go with the output
            _clean(rec)
        rec, new = rt.invoke(s, "h.env", {})
        assert (rec.status, rec.output) == ("success", "ok") and new != s
        assert rt.invoke(s, "h.read", {})[0].output == "unset"


def test_a_build_over_hostile_tools_finds_the_normal_relation() -> None:
    """The normal build path, isolated workers: nothing the hostile tools return or do stops it."""
    from libra.induction.build import BuildOptions, build_library
    from tests.fixtures import hostile_tools
    from tests.generalization import CatalogBenchmark

    lib = build_library(CatalogBenchmark(hostile_tools), None, BuildOptions(workers=1, progress=False))
    pairs = {(r.provider, r.consumer) for r in lib.relations}
    assert (T + "create_item", T + "get_item") in pairs
    assert lib.stats["executable_tools"] == len(lib.catalog)
