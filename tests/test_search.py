"""The public search API (``libra.Searcher``), its cached index, ``retrieve --format`` and the langgraph-bigtool
adapter, on a library built here from the toy shop."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from libra import Searcher
from libra.errors import ConfigError
from libra.induction.build import BuildOptions, build_library
from libra.library.artifact import Library
from libra.search.searcher import SearchOptions

from .cli_toys import run_cli
from .induction_toys import ShopBenchmark

QUERY = "put a new item titled lamp in the shop"


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("search") / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    return path


def _rows(results) -> list[dict]:
    return [r.to_dict() for r in results]


def test_search_returns_tools_with_prerequisites_and_evidence(library, tmp_path, monkeypatch):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    results = Searcher.open(library).search(QUERY, k=3)
    assert [r.rank for r in results] == [1, 2, 3]
    add = next(r for r in results if r.tool == "Shop.add_item")
    assert add.description == "Add an item to the shop." and add.input_schema["required"] == ["access_token", "title"]
    (login,) = [p for p in add.prerequisites if p.tool == "Shop.login"]
    assert (
        login.evidence
        == "Shop.login's access_token worked as add_item.access_token where another value failed with 'not signed in'"
    )
    # login is among the results because propagation promoted it as add_item's prerequisite.
    promoted = next(r for r in results if r.tool == "Shop.login")
    assert promoted.via == "promoted" and "Shop.add_item" in promoted.promoted_by and promoted.base_rank > 3
    assert promoted.score > 0 and all(
        r.via == "retrieved" and not r.promoted_by for r in results if r.base_rank == r.rank == 1
    )


def test_the_cached_index_answers_like_the_full_library_and_skips_loading_it(library, tmp_path, monkeypatch):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    full = _rows(Searcher.from_library(Library.load(library)).search(QUERY, 4))
    first = Searcher.open(library)  # loads the library and writes the index
    assert sorted(p.suffix for p in (tmp_path / "cache" / "search").iterdir()) == [".json", ".npy"]

    def refuse(*args, **kwargs):
        raise AssertionError("the cached index must be enough")

    monkeypatch.setattr(Library, "load", refuse)
    again = Searcher.open(library)
    assert _rows(first.search(QUERY, 4)) == _rows(again.search(QUERY, 4)) == full
    # Other bytes (the same library, compressed) are another index: a stale one is never read.
    monkeypatch.undo()
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    packed = tmp_path / "shop.json.gz"
    packed.write_bytes(gzip.compress(library.read_bytes()))
    assert _rows(Searcher.open(packed).search(QUERY, 4)) == full
    assert len(list((tmp_path / "cache" / "search").glob("*.json"))) == 2


def test_a_repeated_query_skips_the_model_and_answers_the_same(library, tmp_path, monkeypatch):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    s = Searcher.open(library)
    base = s._base()
    embedded: list[list[str]] = []
    score = base.score
    monkeypatch.setattr(base, "score", lambda queries: embedded.append(list(queries)) or score(queries))
    first = _rows(s.search(QUERY, 4))
    assert _rows(s.search(QUERY, 4)) == first and embedded == [[QUERY]]
    # A batch embeds only what it has not seen, once, and answers each query as a search alone would.
    other = "sign up as a new shop user"
    batch = s.search_many([QUERY, other, other], 4)
    assert embedded == [[QUERY], [other]]
    assert _rows(batch[0]) == first and _rows(batch[1]) == _rows(batch[2]) == _rows(
        Searcher.open(library).search(other, 4)
    )


def test_bad_search_input_is_refused_with_what_to_change(library, tmp_path, monkeypatch):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    s = Searcher.open(library)
    for query, k, message in (
        ("", 3, "non-empty"),
        ("  ", 3, "non-empty"),
        (QUERY, 0, "positive"),
        (QUERY, True, "positive"),
    ):
        with pytest.raises(ConfigError, match=message):
            s.search(query, k)
    assert len(s.search(QUERY, 100)) == s.size == 6  # more than the library holds: all of it
    with pytest.raises(ConfigError, match="selection"):
        Searcher.open(library, selection="nope")
    hybrid = Searcher.open(library, SearchOptions(base="hybrid"))
    assert {r.tool for r in hybrid.search(QUERY, 3)} >= {"Shop.add_item"}


def _retrieve(library: Path, cache: Path, *args: str) -> str:
    out = run_cli("retrieve", str(library), QUERY, "--k", "3", *args, cache=cache)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_retrieve_formats_match_the_client_shapes(library, tmp_path):
    from openai.types.responses.response_tool_search_output_item_param_param import (
        ResponseToolSearchOutputItemParamParam,
    )
    from pydantic import TypeAdapter

    cache = tmp_path / "cache"
    records = json.loads(_retrieve(library, cache, "--format", "json"))
    assert records["query"] == QUERY and [t["rank"] for t in records["tools"]] == [1, 2, 3]
    names = [t["tool"] for t in records["tools"]]
    add = next(t for t in records["tools"] if t["tool"] == "Shop.add_item")
    assert any(p["tool"] == "Shop.login" and "'not signed in'" in p["evidence"] for p in add["prerequisites"])

    blocks = json.loads(_retrieve(library, cache, "--format", "anthropic"))  # names as Anthropic allows them
    assert blocks == [{"type": "tool_reference", "tool_name": n.replace(".", "__")} for n in names]

    item = json.loads(_retrieve(library, cache, "--format", "openai"))
    TypeAdapter(ResponseToolSearchOutputItemParamParam).validate_python(item)  # the SDK's own input type
    assert item["type"] == "tool_search_output" and item["execution"] == "client"
    (shop,) = item["tools"]
    assert shop["type"] == "namespace" and shop["name"] == "Shop"
    assert [f["name"] for f in shop["tools"]] == [n.split(".")[1] for n in names]
    assert all(f["type"] == "function" and f["parameters"]["type"] == "object" for f in shop["tools"])

    # Two requests: one JSON line each.
    out = run_cli(
        "retrieve",
        str(library),
        QUERY,
        "what is the square root of 2",
        "--k",
        "2",
        "--format",
        "anthropic",
        cache=cache,
    )
    assert [len(json.loads(line)) for line in out.stdout.splitlines()] == [2, 2]


def test_a_narrow_table_folds_the_promoted_by_column(library, tmp_path, monkeypatch):
    import subprocess
    import sys

    from .cli_toys import MAIN, ROOT, cli_env

    env = dict(cli_env(tmp_path / "cache"), COLUMNS="50")
    out = subprocess.run(
        [sys.executable, "-c", MAIN, "retrieve", str(library), QUERY, "--k", "3"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert all(len(line) <= 50 for line in lines)
    cells = "".join(line.split("│")[4].strip() for line in lines if line.startswith("│"))
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    promoters = {name for r in Searcher.open(library).search(QUERY, k=3) for name in r.promoted_by}
    assert promoters and all(name in cells for name in promoters), out.stdout  # whole names, folded, never cut


def test_langgraph_bigtool_agent_binds_the_tools_and_their_prerequisites(library, tmp_path, monkeypatch):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.tools import StructuredTool
    from langgraph.store.memory import InMemoryStore
    from langgraph_bigtool import create_agent

    from libra.integrations.bigtool import retrieve_tools_function

    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    searcher = Searcher.open(library)
    registry = {
        name: StructuredTool.from_function(
            func=lambda **kw: "ok",
            name=name.replace(".", "_"),
            description=name,
            args_schema={"type": "object", "properties": {}},
        )
        for name in searcher.index.names
    }
    del registry["Shop.signup"]  # a tool the agent cannot bind is left out, not a crash

    class ToolCallingFake(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self

    llm = ToolCallingFake(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[{"name": "retrieve_tools", "args": {"query": QUERY}, "id": "c1"}]),
                AIMessage(content="done"),
            ]
        )
    )
    retrieve = retrieve_tools_function(searcher, limit=1, registry=registry)
    agent = create_agent(llm, registry, retrieve_tools_function=retrieve).compile(store=InMemoryStore())
    state = agent.invoke({"messages": [HumanMessage(QUERY)]})
    top = searcher.search(QUERY, 1)[0]
    expected = [top.tool] + [p.tool for p in top.prerequisites if p.tool in registry]
    assert state["selected_tool_ids"] == expected and len(expected) >= 2
    with pytest.raises(ValueError, match="limit"):
        retrieve_tools_function(searcher, limit=0)


def test_structured_output_matches_the_advertised_schema(library, tmp_path, monkeypatch):
    import jsonschema

    from libra.serve.server import SearchResponse, check_arguments, output_schema, structured

    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    results = Searcher.open(library).search(QUERY, 6)
    schema = output_schema()
    assert "$ref" not in json.dumps(schema)  # inlined: clients validate every result against it
    jsonschema.validate(structured(SearchResponse(QUERY, 6, results)), schema)
    assert check_arguments({"query": QUERY, "k": 2.0}, 6) == (QUERY, 2)  # a JSON number that is whole is a count
