"""The BFCL runtime: all 128 tools execute, states are values, and calls are deterministic across processes."""

from __future__ import annotations

import decimal
import json
from typing import Any

import pytest

from tests.conftest import needs_bfcl

pytestmark = needs_bfcl


def _sample(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "array":
        return [_sample(schema.get("items", {"type": "string"}))]
    return {"string": "a", "integer": 1, "number": 1.0, "boolean": True, "object": {}}.get(kind, "a")


def _args(tool: Any) -> dict[str, Any]:
    return {name: _sample(tool.param_schema(name)) for name in tool.required}


@pytest.fixture(scope="module")
def rt():
    from libra.benchmarks.bfcl.runtime import make_bfcl_runtime

    runtime = make_bfcl_runtime(isolated=False)
    yield runtime
    runtime.close()


@pytest.fixture(scope="module")
def iso():
    from libra.benchmarks.bfcl.runtime import make_bfcl_runtime

    runtime = make_bfcl_runtime(isolated=True, n_workers=2, timeout_s=10.0)
    yield runtime
    runtime.close()


def test_all_128_tools_invocable(rt, iso) -> None:
    from libra.benchmarks.bfcl.adapter import load_catalog

    assert rt.trusted is True and len(rt.catalog) == 128
    assert rt.catalog.names == load_catalog().names
    calls = [(rt.fresh(), tool.name, _args(tool)) for tool in rt.catalog]
    local = [rt.invoke(*c) for c in calls]
    remote = iso.invoke_many([(iso.fresh(), name, args) for _, name, args in calls])
    for (_, name, _), (r_loc, s_loc), (r_iso, s_iso) in zip(calls, local, remote):
        json.dumps(r_loc.to_dict())
        assert r_loc.status in ("success", "rejected", "error")
        assert not (r_loc.error or "").startswith(("worker crashed", "timeout")), name
        # determinism across processes: same record and same state in a worker as in-process
        assert r_iso.to_dict() | {"duration_ms": 0} == r_loc.to_dict() | {"duration_ms": 0}, name
        assert s_iso == s_loc, name
    statuses = {r.status for r, _ in local}
    assert "success" in statuses and "rejected" in statuses


def test_touch_then_tail(rt) -> None:
    s0 = rt.fresh()
    rec, _ = rt.invoke(s0, "GorillaFileSystem.tail", {"file_name": "notes.txt"})
    assert rec.status == "rejected" and "No such file" in rec.error
    rec, s1 = rt.invoke(s0, "GorillaFileSystem.touch", {"file_name": "notes.txt"})
    assert rec.ok and s1 != s0
    assert rec.state_changes == {
        "GorillaFileSystem": {
            "changed": {},
            "added": {'root.contents["notes.txt"]': {"name": "notes.txt", "content": ""}},
            "removed": {},
        }
    }
    rec, s2 = rt.invoke(s1, "GorillaFileSystem.echo", {"content": "hello", "file_name": "notes.txt"})
    assert rec.ok and rec.state_changes["GorillaFileSystem"]["changed"] == {
        'root.contents["notes.txt"].content': {"before": "", "after": "hello"}
    }
    rec, s3 = rt.invoke(s2, "GorillaFileSystem.tail", {"file_name": "notes.txt"})
    assert rec.output == {"last_lines": "hello"} and s3 == s2 and rec.state_changes == {}
    # s0 is untouched
    assert rt.invoke(s0, "GorillaFileSystem.ls", {})[0].output == {"current_directory_content": []}
    assert rt.invoke(s2, "GorillaFileSystem.ls", {})[0].output == {"current_directory_content": ["notes.txt"]}
    # touching an existing file only bumps its (ignored) timestamp: no state change
    rec, s4 = rt.invoke(s2, "GorillaFileSystem.touch", {"file_name": "notes.txt"})
    assert s4 == s2 and rec.state_changes == {}


def test_randomness_clock_and_precision_are_pinned(rt, iso) -> None:
    s0 = rt.fresh()
    args = {
        "client_id": "c",
        "client_secret": "s",
        "refresh_token": "r",
        "grant_type": "read_write",
        "user_first_name": "A",
        "user_last_name": "B",
    }
    r1, s1 = rt.invoke(s0, "TravelAPI.authenticate_travel", args)
    r2, s2 = rt.invoke(s0, "TravelAPI.authenticate_travel", args)
    r3, s3 = iso.invoke(iso.fresh(), "TravelAPI.authenticate_travel", args)
    assert r1.output == r2.output == r3.output and s1 == s2 == s3 != s0
    temps = {
        rt.invoke(s0, "VehicleControlAPI.get_outside_temperature_from_google", {})[0].output["outsideTemperature"]
        for _ in range(3)
    }
    assert len(temps) == 1
    assert rt.invoke(s0, "VehicleControlAPI.get_outside_temperature_from_google", {})[1] == s0  # a read, not a write
    # a call's precision does not leak into the caller nor into later calls
    prec = decimal.getcontext().prec
    rt.invoke(s0, "MathAPI.square_root", {"number": 2.0, "precision": 3})
    assert decimal.getcontext().prec == prec
    a = rt.invoke(s0, "MathAPI.logarithm", {"value": 10.0, "base": 2.0, "precision": 3})[0].output
    b = rt.invoke(s0, "MathAPI.logarithm", {"value": 10.0, "base": 2.0, "precision": 3})[0].output
    assert a == b


def test_initial_config_from_a_task(rt) -> None:
    from libra.benchmarks.bfcl.adapter import load_tasks
    from libra.benchmarks.bfcl.runtime import make_bfcl_runtime

    task = next(t for t in load_tasks() if "GorillaFileSystem" in t.metadata["initial_config"])
    config = task.metadata["initial_config"]
    snapshot = json.dumps(config, sort_keys=True)
    state = rt.load_state(config)
    assert state != rt.fresh()
    listing = rt.invoke(state, "GorillaFileSystem.ls", {})[0]
    assert listing.ok and listing.output["current_directory_content"]
    task_rt = make_bfcl_runtime(initial_config=config)
    assert task_rt.fresh() == state
    # the runtime never mutates the caller's config
    rt.invoke(state, "GorillaFileSystem.touch", {"file_name": "zz.txt"})
    assert json.dumps(config, sort_keys=True) == snapshot


def test_unknown_tool(rt) -> None:
    from libra.runtime import UnknownToolError

    with pytest.raises(UnknownToolError, match="GorillaFileSystem.lsx"):
        rt.invoke(rt.fresh(), "GorillaFileSystem.lsx", {})


def test_the_build_sandbox_holds_a_file_tree_and_a_post() -> None:
    # BFCL's default file system is a bare root and its posting back end has no post; the adapter's sandbox adds
    # both, so that entering a folder before reading its file is something a build can observe.
    from libra.benchmarks.bfcl.adapter import BFCLBenchmark

    runtime = BFCLBenchmark().runtime(isolated=False)
    try:
        s0 = runtime.fresh()
        listing, _ = runtime.invoke(s0, "GorillaFileSystem.ls", {})
        assert set(listing.output["current_directory_content"]) == {"readme.txt", "docs"}
        before, _ = runtime.invoke(s0, "GorillaFileSystem.cat", {"file_name": "summary.txt"})
        assert "error" in before.output
        _, s1 = runtime.invoke(s0, "GorillaFileSystem.cd", {"folder": "docs"})
        after, _ = runtime.invoke(s1, "GorillaFileSystem.cat", {"file_name": "summary.txt"})
        assert after.output["file_content"].startswith("First line")
        posts, _ = runtime.invoke(s0, "TwitterAPI.get_user_tweets", {"username": "john"})
        assert [p["id"] for p in posts.output] == [0]
        users, _ = runtime.invoke(s0, "MessageAPI.list_users", {})
        assert users.output["user_list"]  # the other classes keep their default scenario
    finally:
        runtime.close()
