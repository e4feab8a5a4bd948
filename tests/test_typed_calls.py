"""Typed tools are called the way their signatures ask, through the isolated runtime a build uses.

JSON arguments are converted by pydantic from each tool's signature (dates, times, durations, UUIDs, decimals,
paths, enums, literals, optionals, dataclasses, TypedDicts, NamedTuples, pydantic models, lists and dicts of
them); results are recorded as JSON the way pydantic writes them; an async tool is awaited; a parameter no JSON
value can build is reported before the build as untestable, and the tool stays in the catalog.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from libra.catalog import Tool
from libra.contracts.offline.exports import response_exports
from libra.errors import ConfigError
from libra.runtime.python.introspect import response_schema
from libra.runtime.workers.isolation import IsolatedRuntime
from libra.schema import dereference
from libra.sources.python import PythonSource, parse_spec

SPEC = "tests.fixtures.typed_tools"
KEY = "12345678-1234-5678-1234-567812345678"


@pytest.fixture(scope="module")
def runtime():
    source = PythonSource([parse_spec(SPEC)])
    rt = source.runtime(isolated=True, n_workers=1)
    assert isinstance(rt, IsolatedRuntime)
    yield rt
    rt.close()


def _call(rt, tool, args):
    record, _ = rt.invoke(rt.fresh(), tool, args)
    return record


CALLS = [
    (
        "schedule",
        {"day": "2025-02-03", "at": "2025-02-03T10:30:00", "start": "09:15", "length": "PT1H30M"},
        {"weekday": 0, "hour": 10, "start": "09:15:00", "ends": "2025-02-03T12:00:00"},
    ),
    ("paint", {"color": "blue", "mode": "line", "accent": None}, "blue"),
    ("paint", {"color": "blue", "accent": "red"}, "red"),
    (
        "move",
        {"point": {"x": 1, "y": 2}, "path": [{"x": 0, "y": 0}, {"x": 5, "y": 5}], "folder": "/a/b"},
        {"x": 3, "y": 5},
    ),
    (
        "order_lines",
        {"lines": [{"sku": "A", "qty": 2}], "pair": [1, "x"], "key": KEY, "discount": "0.50"},
        {"order_id": KEY, "total": "2.50", "placed": "2025-01-02T03:04:05"},
    ),
    (
        "by_id",
        {"order": {"order_id": KEY, "total": "3", "placed": "2025-01-02T03:04:05"}, "tags": {"a": "red", "b": "blue"}},
        {"id": KEY, "total": 3.0, "tags": ["blue", "red"]},
    ),
    ("later", {"n": 21}, {"n": 42}),
]


@pytest.mark.parametrize(("tool", "args", "expected"), CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_json_arguments_arrive_as_the_declared_types_and_results_come_back_as_json(runtime, tool, args, expected):
    record = _call(runtime, tool, args)
    assert record.status == "success", record.error
    assert record.output == expected


def test_a_value_the_type_refuses_is_the_tools_refusal_with_pydantics_reason(runtime):
    record = _call(runtime, "paint", {"color": "green"})
    assert record.status == "error" and "ValidationError" in record.error and "'red' or 'blue'" in record.error
    record = _call(runtime, "schedule", {"day": "not a day", "at": "2025-02-03T10:30:00", "start": "9", "length": 1})
    assert record.status == "error" and "day" in record.error


def test_a_parameter_no_json_value_builds_is_reported_and_the_tool_stays():
    source = PythonSource([parse_spec(SPEC)])
    assert source.untestable() == {"apply": {"fn": "Callable"}}
    assert "apply" in source.catalog().names


def test_every_missing_type_hint_is_named_at_once(tmp_path):
    module = tmp_path / "loose_tools.py"
    module.write_text("def a(x):\n    return x\n\ndef b(y, z: int):\n    return y\n")
    with pytest.raises(ConfigError) as exc:
        PythonSource([parse_spec(str(module))])
    message = str(exc.value)
    assert "a(x)" in message and "b(y)" in message and "\n" not in message


class Exercise(NamedTuple):
    exercise_id: str
    name: str


def test_a_named_tuples_fields_name_what_its_positions_hold():
    """pydantic writes a NamedTuple as an array; the fields' names are kept as the items' titles, and the reply's
    exports are named after them (the id a listing returns is ``exercise_id``, not an anonymous position)."""
    schema = dereference(response_schema({"return": list[Exercise]}))
    assert [item.get("title") for item in schema["items"]["prefixItems"]] == ["Exercise Id", "Name"]
    tool = Tool("list_exercises", "List the exercises.", {"type": "object", "properties": {}}, response=schema)
    exports = {e.path: e.name for e in response_exports(tool, set())}
    assert exports["$[*][0]"] == "exercise_id"
