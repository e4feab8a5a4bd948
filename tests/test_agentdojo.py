"""The AgentDojo benchmarks: each suite's catalog, tasks and runtime, taken from the agentdojo package without hints.

Every test but the missing-package one needs ``agentdojo`` (``make setup`` installs it) and is skipped without it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import Any

import pytest

from libra.benchmarks.registry import available, get_benchmark

HAS_AGENTDOJO = importlib.util.find_spec("agentdojo") is not None
needs_agentdojo = pytest.mark.skipif(not HAS_AGENTDOJO, reason="agentdojo not installed (make setup installs it)")

#: suite -> (tools, user tasks) of AgentDojo v1.2.2
SIZES = {"workspace": (24, 40), "travel": (28, 20), "banking": (11, 16), "slack": (11, 21)}
IBAN = "US122000000121212121212"
SEND = {"recipient": IBAN, "amount": 10.0, "subject": "rent", "date": "2022-04-01"}


def _plain(record: Any) -> dict[str, Any]:
    return record.to_dict() | {"duration_ms": 0}


def _sample(schema: dict[str, Any]) -> Any:
    for alt in schema.get("anyOf", []):
        if alt.get("type") != "null":
            return _sample(alt)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "array":
        return [_sample(schema.get("items", {"type": "string"}))]
    return {"string": "a", "integer": 1, "number": 1.0, "boolean": True, "object": {}}.get(kind, "a")


@pytest.fixture(scope="module")
def banking():
    from libra.benchmarks.agentdojo.runtime import make_agentdojo_runtime

    runtime = make_agentdojo_runtime("banking")
    yield runtime
    runtime.close()


def test_registered_names() -> None:
    assert {f"agentdojo-{s}" for s in SIZES} <= set(available())


def test_missing_package_is_one_actionable_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from libra.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "agentdojo", None)  # find_spec reports it absent
    with pytest.raises(MissingDependencyError) as info:
        get_benchmark("agentdojo-banking")
    message = str(info.value)
    assert "\n" not in message and "agentdojo==0.1.35" in message and "pip install" in message


@needs_agentdojo
@pytest.mark.parametrize("suite", sorted(SIZES))
def test_catalog_is_the_suite_registry(suite: str) -> None:
    from libra.benchmarks.agentdojo.suites import get_suite

    bench = get_benchmark(f"agentdojo-{suite}")
    catalog = bench.catalog()
    assert len(catalog) == SIZES[suite][0] and bench.default_k == 10 and bench.paper == {}
    functions = get_suite(suite).tools
    assert catalog.names == [f.name for f in functions]
    for tool, function in zip(catalog, functions):
        # exactly what AgentDojo's function registry says, nothing added
        assert tool.document() == {
            "name": function.name,
            "description": function.description,
            "parameters": function.parameters.model_json_schema(),
        }
        assert tool.group == "" and tool.metadata == {}
    assert bench.fixtures() == {}


@needs_agentdojo
@pytest.mark.parametrize("suite", sorted(SIZES))
def test_tasks_are_the_user_tasks(suite: str) -> None:
    from libra.benchmarks.agentdojo.suites import default_environment, get_suite

    bench = get_benchmark(f"agentdojo-{suite}")
    tasks = bench.tasks()
    names = set(bench.catalog().names)
    user_tasks = get_suite(suite).user_tasks
    assert len(tasks) == SIZES[suite][1] == len(user_tasks)
    assert len({t.id for t in tasks}) == len(tasks)
    for task in tasks:
        source = user_tasks[task.id]
        assert task.query == source.PROMPT
        calls = source.ground_truth(source.init_environment(default_environment(suite)))
        assert task.gold == tuple(dict.fromkeys(c.function for c in calls))
        assert task.gold and set(task.gold) <= names


@needs_agentdojo
def test_fresh_state_is_the_default_environment(banking) -> None:
    from libra.benchmarks.agentdojo.suites import default_environment

    dump = default_environment("banking").model_dump(mode="json")
    assert banking.view(banking.fresh()) == dump
    assert banking.trusted is True and banking.catalog.names == get_benchmark("agentdojo-banking").catalog().names


@needs_agentdojo
def test_a_real_call_succeeds_and_changes_the_state(banking) -> None:
    s0 = banking.fresh()
    before = banking.view(s0)["bank_account"]["transactions"]
    rec, s1 = banking.invoke(s0, "send_money", SEND)
    assert rec.ok and rec.error is None and s1 != s0
    assert rec.output == {"message": f"Transaction to {IBAN} for 10.0 sent."}
    added = rec.state_changes["bank_account"]["added"]
    assert rec.state_changes["bank_account"]["changed"] == {} and list(rec.state_changes) == ["bank_account"]
    assert added == {f"transactions[{len(before)}]": banking.view(s1)["bank_account"]["transactions"][-1]}
    # the new state is a value: the old one is untouched, and the next call sees the payment
    assert banking.view(s0)["bank_account"]["transactions"] == before
    rec, _ = banking.invoke(s1, "get_most_recent_transactions", {"n": 100})
    assert rec.ok and rec.output[-1]["subject"] == "rent"
    json.dumps(rec.to_dict())


@needs_agentdojo
def test_a_read_call_leaves_the_state(banking) -> None:
    s0 = banking.fresh()
    rec, s1 = banking.invoke(s0, "get_balance", {})
    assert rec.ok and isinstance(rec.output, float) and rec.state_changes == {} and s1 is s0


@needs_agentdojo
def test_failing_calls_give_agentdojo_error_records(banking) -> None:
    s0 = banking.fresh()
    rec, s1 = banking.invoke(s0, "update_scheduled_transaction", {"id": 999})
    assert rec.status == "error" and rec.output is None and s1 == s0
    assert rec.error == "ValueError: Transaction with ID 999 not found."
    rec, _ = banking.invoke(s0, "send_money", {"recipient": IBAN})
    assert rec.status == "error" and rec.error.startswith("ValidationError: 3 validation errors")


@needs_agentdojo
def test_unknown_tool_and_foreign_state_are_refused(banking) -> None:
    from libra.benchmarks.agentdojo.runtime import make_agentdojo_runtime
    from libra.runtime.base import ToolRuntimeError, UnknownToolError

    with pytest.raises(UnknownToolError):
        banking.invoke(banking.fresh(), "send_email", {})
    slack = make_agentdojo_runtime("slack")
    with pytest.raises(ToolRuntimeError):
        banking.invoke(slack.fresh(), "get_balance", {})


@needs_agentdojo
def test_identical_calls_give_identical_records() -> None:
    from libra.benchmarks.agentdojo.runtime import make_agentdojo_runtime
    from libra.runtime.python.entropy import FIXED_NOW

    first, second = make_agentdojo_runtime("workspace"), make_agentdojo_runtime("workspace")
    args = {"recipients": ["a@example.com"], "subject": "hello", "body": "hi"}
    r1, s1 = first.invoke(first.fresh(), "send_email", args)
    r2, s2 = first.invoke(first.fresh(), "send_email", args)
    r3, s3 = second.invoke(second.fresh(), "send_email", args)
    assert r1.ok and _plain(r1) == _plain(r2) == _plain(r3) and s1 == s2 == s3 != first.fresh()
    # the clock the tool reads for the e-mail's timestamp is fixed
    assert r1.output["timestamp"] == FIXED_NOW.replace(tzinfo=None).isoformat()
    r4, _ = first.invoke(s1, "create_file", {"filename": "notes.txt", "content": "x"})
    r5, _ = second.invoke(s3, "create_file", {"filename": "notes.txt", "content": "x"})
    assert r4.ok and _plain(r4) == _plain(r5)


@needs_agentdojo
@pytest.mark.parametrize("suite", sorted(SIZES))
def test_isolated_runtime_matches_in_process(suite: str) -> None:
    from libra.benchmarks.agentdojo.runtime import make_agentdojo_runtime

    local = get_benchmark(f"agentdojo-{suite}").runtime(isolated=False)
    iso = make_agentdojo_runtime(suite, isolated=True, n_workers=1, timeout_s=30.0)
    try:
        assert iso.catalog.names == local.catalog.names and iso.fresh() == local.fresh()
        calls = [(t.name, {p: _sample(t.param_schema(p)) for p in t.required}) for t in local.catalog]
        remote = iso.invoke_many([(iso.fresh(), name, args) for name, args in calls])
        statuses = set()
        for (name, args), (r_iso, s_iso) in zip(calls, remote):
            r_loc, s_loc = local.invoke(local.fresh(), name, args)
            statuses.add(r_loc.status)
            assert not (r_iso.error or "").startswith(("worker crashed", "timeout")), name
            assert _plain(r_iso) == _plain(r_loc), name
            assert s_iso == s_loc, name
        assert "success" in statuses
    finally:
        iso.close()
        local.close()
