"""libra's output for agent clients that run tool search themselves, checked against the vendor SDKs' own types.

Why the SDKs: a shape written from memory of the docs drifts from what the API takes (Anthropic's tool names must
match ``^[a-zA-Z0-9_-]{1,64}$``, so an MCP catalog's ``memory.read_graph`` was refused). The Anthropic and OpenAI
SDKs ship the request types as ``TypedDict`` s; :func:`conforms` walks a value against one strictly (required
keys present, no unknown key, every literal and union branch checked), which pydantic's lenient validation of
TypedDicts does not (it ignores unknown keys).
"""

from __future__ import annotations

import collections.abc
import json
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from anthropic.types import ToolParam, ToolResultBlockParam
from openai.types.responses import ResponseInputItemParam
from openai.types.responses import ToolParam as OpenAIToolParam
from openai.types.responses.response_tool_search_output_item_param_param import (
    ResponseToolSearchOutputItemParamParam,
)
from typing_extensions import is_typeddict

from libra.induction.build import BuildOptions, build_library
from libra.search.formats import CLIENT_NAME, ClientNames
from libra.serve.gateway import Gateway

from .cli_toys import run_cli
from .induction_toys import ShopBenchmark

QUERY = "put a new item titled lamp in the shop"
_WRAPPERS = {"Required", "NotRequired", "ReadOnly"}
_SEQUENCES = {list, collections.abc.Iterable, collections.abc.Sequence}
_SCALARS: dict[Any, tuple[type, ...]] = {str: (str,), bool: (bool,), int: (int, float), float: (int, float)}


def _unwrap(tp: Any) -> Any:
    while getattr(get_origin(tp), "_name", None) in _WRAPPERS or get_origin(tp) is typing.Annotated:
        tp = get_args(tp)[0]
    return tp


def _typeddict(value: Any, tp: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {type(value).__name__}, not {tp.__name__}"]
    hints = get_type_hints(tp, include_extras=True)
    problems = [f"{where}: unknown key {k!r} for {tp.__name__}" for k in value if k not in hints]
    problems += [f"{where}: {tp.__name__} needs {k!r}" for k in tp.__required_keys__ if k not in value]
    for key, item in value.items():
        if key in hints:
            problems += conforms(item, hints[key], f"{where}.{key}")
    return problems


def _container(value: Any, origin: Any, args: tuple[Any, ...], where: str) -> list[str] | None:
    """Lists and objects (None: ``origin`` is neither)."""
    if origin in _SEQUENCES or getattr(origin, "__name__", "") == "SequenceNotStr":
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__}, not a list"]
        return [p for i, item in enumerate(value) for p in conforms(item, args[0] if args else Any, f"{where}[{i}]")]
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            return [f"{where}: not an object"]
        return [p for k, v in value.items() for p in conforms(v, args[1] if args else Any, f"{where}.{k}")]
    return None


def conforms(value: Any, tp: Any, where: str = "$") -> list[str]:
    """Why ``value`` is not a ``tp`` (an SDK's TypedDict, or a type inside one); empty when it is one."""
    tp = _unwrap(tp)
    origin, args = get_origin(tp), get_args(tp)
    if tp in (Any, object):
        return []
    if origin in (typing.Union, types.UnionType):
        tries = [conforms(value, branch, where) for branch in args]
        return [] if any(not t for t in tries) else [f"{where}: fits no branch of {tp}: {min(tries, key=len)}"]
    if origin is typing.Literal:
        return [] if value in args else [f"{where}: {value!r} is not one of {args}"]
    if is_typeddict(tp):
        return _typeddict(value, tp, where)
    found = _container(value, origin, args, where)
    if found is not None:
        return found
    if tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if tp in _SCALARS:
        ok = isinstance(value, _SCALARS[tp]) and (tp is bool or not isinstance(value, bool))
        return [] if ok else [f"{where}: {value!r} is not a {tp.__name__}"]
    raise AssertionError(f"{where}: no rule for {tp!r}")


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("formats") / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    return path


def _json_lines(*args: str, cache: Path) -> list[Any]:
    out = run_cli(*args, cache=cache)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_anthropic_references_and_their_definitions_fit_the_sdk_and_each_other(library, tmp_path):
    [blocks] = _json_lines("retrieve", str(library), QUERY, "--k", "3", "--format", "anthropic", cache=tmp_path)
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": blocks}
    assert conforms(result, ToolResultBlockParam) == []
    assert all(b["type"] == "tool_reference" and CLIENT_NAME.match(b["tool_name"]) for b in blocks)
    assert "Shop__add_item" in [b["tool_name"] for b in blocks]  # Shop.add_item, as Anthropic allows it
    [definitions] = _json_lines("show", str(library), "--definitions", "anthropic", cache=tmp_path)
    assert [conforms(d, ToolParam) for d in definitions] == [[]] * len(definitions) == [[]] * 6
    assert all(d["defer_loading"] is True and CLIENT_NAME.match(d["name"]) for d in definitions)
    assert {b["tool_name"] for b in blocks} <= {d["name"] for d in definitions}  # every reference resolves


def test_openai_items_fit_the_sdk_and_answer_the_models_call(library, tmp_path):
    items = _json_lines(
        "retrieve", str(library), QUERY, "what is the square root of 2", "--k", "2", "--format", "openai",
        "--call-id", "ts_1", "--call-id", "ts_2", cache=tmp_path,
    )  # fmt: skip
    assert [i["call_id"] for i in items] == ["ts_1", "ts_2"]
    for item in items:
        assert conforms(item, ResponseToolSearchOutputItemParamParam) == []
        assert conforms(item, ResponseInputItemParam) == []  # an item the next request's input takes
    [definitions] = _json_lines("show", str(library), "--definitions", "openai", cache=tmp_path)
    assert [conforms(d, OpenAIToolParam) for d in definitions] == [[]]
    (shop,) = definitions
    assert shop["type"] == "namespace" and all(f["defer_loading"] is True for f in shop["tools"])
    refused = run_cli("retrieve", str(library), QUERY, "--call-id", "ts_1", cache=tmp_path)
    assert refused.returncode == 2 and "add --format openai" in refused.stderr


def test_client_names_fit_and_map_back():
    names = [
        "memory.read_graph",
        "memory__read_graph",  # already fits: kept, so the dotted one may not take its name
        "fs.list_directory_with_sizes",
        "plain_name",
        "app.tool with spaces",
        "svc." + "x" * 80,
        "ünïcode.tool",
    ]
    mapped = ClientNames(names)
    clients = [mapped.client(n) for n in names]
    assert all(CLIENT_NAME.match(c) for c in clients), clients
    assert len(set(clients)) == len(names)  # no two tools share a client name
    assert [mapped.original(c) for c in clients] == names
    assert clients[:4] == [
        "memory__read_graph_" + clients[0][-8:],
        "memory__read_graph",
        "fs__list_directory_with_sizes",
        "plain_name",
    ]
    assert mapped.original("nope") is None


def test_the_gateway_takes_a_client_name(tmp_path):
    schema = {"type": "object", "properties": {"username": {"type": "string"}}, "required": ["username"]}
    server = {"name": "notes", "command": sys.executable, "args": ["server.py"]}
    with Gateway([server], {"notes.sign_in": schema}, tmp_path) as gateway:
        target, args = gateway.prepare({"name": "notes__sign_in", "arguments": {"username": "alice"}})
        assert (target.server, target.tool, args) == ("notes", "sign_in", {"username": "alice"})


def test_the_name_rule_is_anthropics():
    assert CLIENT_NAME.pattern == r"^[a-zA-Z0-9_-]{1,64}$" and re.fullmatch(CLIENT_NAME, "a" * 64)
