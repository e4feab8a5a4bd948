"""The paper's LLM retrieval methods over real HTTP, through the real openai SDK, against a scripted local endpoint.

The endpoint (:class:`~libra.eval.baselines.scripted.MethodResponder`) answers every prompt from the toy
catalog's metadata unless a test scripts broken replies, HTTP errors or slow ones for one subject.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from libra.catalog import Catalog, Tool
from libra.contracts.llm.stub_server import OpenAIStubServer, Reply
from libra.eval.baselines.common import LLMMethodError, LLMRun, tool_card
from libra.eval.baselines.egotrip import EgoTripRetriever
from libra.eval.baselines.scripted import MethodResponder, prompt_kind
from libra.eval.baselines.tgr import TGRRetriever, candidate_pairs, expected_pairs
from libra.eval.baselines.toolreagt import TOOL_NAME, ToolReAGtRetriever, merge, parse_step
from libra.eval.baselines.toolrex import ToolRexRetriever
from libra.llm.client import ChatConfig
from libra.retrieval.dense import DenseRetriever

ROOT = Path(__file__).resolve().parent.parent
FAST = {"retry_base_delay": 0.005, "retry_max_delay": 0.02, "timeout": 5.0, "max_retries": 1}


def _tool(name: str, params: dict, required: list[str], description: str, response: dict | None = None) -> Tool:
    return Tool(name, description, {"type": "object", "properties": params, "required": required}, response=response)


def toy() -> Catalog:
    s = {"type": "string"}
    return Catalog(
        [
            _tool(
                "Shop.create_cart",
                {"owner": s},
                ["owner"],
                "Create a new shopping cart.",
                {"type": "object", "properties": {"cart_id": s}},
            ),
            _tool(
                "Shop.add_item",
                {"cart_id": s, "sku": s},
                ["cart_id", "sku"],
                "Add a product to an existing cart.",
                {"type": "object", "properties": {"line_id": s}},
            ),
            _tool(
                "Shop.checkout",
                {"cart_id": s},
                ["cart_id"],
                "Pay for a cart.",
                {"type": "object", "properties": {"order_id": s}},
            ),
            _tool("Weather.forecast", {"city": s}, ["city"], "Tomorrow's weather forecast for a city."),
            _tool("Mail.send", {"to": s, "body": s}, ["to", "body"], "Send an email message."),
        ],
        name="toy",
    )


def run_for(srv: OpenAIStubServer, cache: Path, **kw) -> LLMRun:
    return LLMRun(ChatConfig(base_url=srv.url, model="stub", cache_path=str(cache), **{"concurrency": 2, **FAST, **kw}))


def test_toolrex_judge_rewrite_and_fallbacks_then_a_free_rerun(tmp_path) -> None:
    cat = toy()
    scripts = {
        ("judge", "Shop.add_item"): ["false"],  # rejected -> one rewrite
        ("profile", "Shop.checkout"): ["this is not json"],  # unreadable -> straight to the rewrite
        ("profile", "Mail.send"): ['{"purpose": ""}'],  # no purpose -> rewrite, which is also broken
        ("rewrite", "Mail.send"): ["[1, 2]"],
        ("judge", "Weather.forecast"): ["maybe"],  # neither true nor false -> rewrite
    }
    responder = MethodResponder(cat, scripts)
    with OpenAIStubServer(responder) as srv:
        r = ToolRexRetriever(run_for(srv, tmp_path), "minilm").fit(cat)
        first = srv.count
        # prompts hold the tool's own card and nothing of other tools
        gen = [
            x
            for x in srv.received
            if prompt_kind(x.body) == "profile" and "Tool: Shop.create_cart" in x.body["messages"][1]["content"]
        ]
        assert len(gen) == 1 and tool_card(cat["Shop.create_cart"]) in gen[0].body["messages"][1]["content"]
        assert "Weather" not in gen[0].body["messages"][1]["content"]
        assert gen[0].body["temperature"] == 0
    # create_cart 2, add_item 3, checkout 2 (gen + rewrite), forecast 3, mail 2 (gen + rewrite)
    assert first == 12 and r.run.stats.calls == 12
    assert r.profiles["Mail.send"] is None and r.profiles["Shop.add_item"] is not None
    stages = {(f.item, f.stage) for f in r.run.fallbacks}
    assert {
        ("Shop.checkout", "generate"),
        ("Mail.send", "generate"),
        ("Mail.send", "rewrite"),
        ("Weather.forecast", "judge"),
    } <= stages
    top = r.score(["pay for my cart"])[0]
    assert cat.names[int(top.argmax())] == "Shop.checkout"
    # second run: the artifact is read, no call at all; without the artifact the reply cache answers everything
    with OpenAIStubServer(MethodResponder(cat)) as srv2:
        again = ToolRexRetriever(
            LLMRun(ChatConfig(base_url=srv.url, model="stub", cache_path=str(tmp_path), **FAST)), "minilm"
        ).fit(cat)
        assert srv2.count == 0 and again.run.stats.calls == 0 and again.profiles == r.profiles
    for f in (tmp_path / "artifacts").glob("*.json"):
        f.unlink()
    with OpenAIStubServer(MethodResponder(cat), port=int(srv.url.rsplit(":", 1)[1].split("/")[0])) as srv3:
        replay = ToolRexRetriever(run_for(srv3, tmp_path), "minilm").fit(cat)
        assert srv3.count == 0 and replay.run.stats.cache_hits == 12 and replay.profiles == r.profiles


def test_tgr_pairs_labels_and_malformed_labels(tmp_path) -> None:
    cat = toy()
    scripts = {
        ("label", "Shop.add_item | Shop.checkout"): ['{"label": "depends"}'],
        ("label", "Shop.checkout | Weather.forecast"): ["no"],
    }
    with OpenAIStubServer(MethodResponder(cat, scripts)) as srv:
        r = TGRRetriever(run_for(srv, tmp_path), "minilm", neighbours=0).fit(cat)
        labelled = [x for x in srv.received if prompt_kind(x.body) == "label"]
        near = TGRRetriever(run_for(srv, tmp_path / "near"), "minilm", neighbours=2).fit(cat)
    assert r.pairs == len(labelled) == 10 and near.pairs <= expected_pairs(len(cat), 2) == 10 and near.pairs < 10
    assert "a_depends_on_b" in labelled[0].body["messages"][0]["content"]
    assert r.labels[json.dumps(["Shop.create_cart", "Shop.add_item"])] == "b_depends_on_a"
    bad = {f.item for f in r.run.fallbacks}
    assert bad == {"Shop.add_item | Shop.checkout", "Shop.checkout | Weather.forecast"} and r.run.stats.failures == 2
    assert (0, 1) in r.edges and (0, 2) in r.edges  # create_cart feeds add_item and checkout
    dense = DenseRetriever("minilm").fit(cat)
    assert len(candidate_pairs(dense.tool_vectors, 0)) == expected_pairs(len(cat), 0) == 10
    assert all(i < j for i, j in candidate_pairs(dense.tool_vectors, 1))


def test_ego_trip_graph_and_malformed_triples(tmp_path) -> None:
    cat = toy()
    scripts = {
        ("triples", "Mail.send"): ['{"relationships": [{"head": "Mail.send"}]}'],
        ("triples", "Weather.forecast"): ["```json\nnot json\n```"],
    }
    with OpenAIStubServer(MethodResponder(cat, scripts)) as srv:
        r = EgoTripRetriever(run_for(srv, tmp_path), "minilm", entries=3).fit(cat)
        assert srv.count == len(cat)
    assert r.triples["Mail.send"] == [] and {f.item for f in r.run.fallbacks} == {"Mail.send", "Weather.forecast"}
    assert ("Shop.add_item", "has_parameter", "cart_id") in r.triples["Shop.add_item"]
    scores = r.score(["add a product to my cart"])[0]
    ranked = [cat.names[i] for i in (-scores).argsort(kind="stable")]
    # the cart_id entity joins the shop tools in one ego graph: they lead the ranking
    assert set(ranked[:3]) == {"Shop.create_cart", "Shop.add_item", "Shop.checkout"}


def _agent(srv: OpenAIStubServer, cache: Path, cat: Catalog, iterations: int = 10, **kw) -> ToolReAGtRetriever:
    base = DenseRetriever("minilm").fit(cat)
    from libra.retrieval.base import retrieve_names

    return ToolReAGtRetriever(
        run_for(srv, cache, **kw), base, "dense", lambda qs, d: retrieve_names(base, cat, qs, d), iterations, depth=3
    ).fit(cat)


def test_toolreagt_iterations_stop_and_ranking(tmp_path) -> None:
    cat = toy()
    task = "Buy a red shirt.\nSend an email message to Bob."
    with OpenAIStubServer(MethodResponder(cat, searches=3)) as srv:
        agent = _agent(srv, tmp_path, cat, iterations=10)
        [final] = agent.retrieve([task], 3)
        turns = [x for x in srv.received if prompt_kind(x.body) == "agent"]
    # three searches (whole task, each line) then an Answer: four turns, and the loop stops there
    assert len(turns) == 4 and agent.iterations == [4] and agent.searches == [3]
    first = turns[0].body["messages"]
    assert TOOL_NAME in first[0]["content"] and "Buy a red shirt." in first[1]["content"]
    assert turns[1].body["messages"][2]["role"] == "assistant" and turns[1].body["messages"][3]["content"].startswith(
        "Observation: ["
    )
    sets = agent.by_iteration[0]
    assert len(sets) == 10 and sets[3:] == [sets[3]] * 7 and final == sets[-1]
    assert "Mail.send" in final and len(final) == 3
    assert merge([["a", "b", "c"], ["d", "a"]], 3) == ["a", "d", "b"]


def test_toolreagt_malformed_turns_are_reported_back_and_recorded(tmp_path) -> None:
    cat = toy()
    task = "Send an email to Bob."
    good = f'Thought: search.\nAction: {TOOL_NAME}\nAction Input: {{"input": "send email"}}'
    scripts = {
        ("agent", task): [
            "I think I should look for tools.",  # neither Action nor Answer
            'Thought: use it.\nAction: Mail.send\nAction Input: {"to": "bob"}',  # a catalog tool, not the retriever
            f"Thought: search.\nAction: {TOOL_NAME}\nAction Input: {{input: send}}",  # not JSON
            good,
        ]
    }
    with OpenAIStubServer(MethodResponder(cat, scripts, searches=0)) as srv:
        agent = _agent(srv, tmp_path, cat, iterations=5)
        [final] = agent.retrieve([task], 3)
        last = [x for x in srv.received if prompt_kind(x.body) == "agent"][-1].body["messages"]
    kinds = [f.reason.split(":")[0] for f in agent.run.fallbacks]
    assert kinds == ["format", "unknown_tool", "input"]
    assert any("there is no tool 'Mail.send'" in m["content"] for m in last if m["role"] == "user")
    assert agent.iterations == [5] and agent.searches == [1] and final[0] == "Mail.send"
    assert agent.by_iteration[0][:3] == [[], [], []]
    assert parse_step('Thought: x\nAction: tool_retriever\nAction Input: {"query": "q"}').query == "q"
    assert parse_step("<think>Action: nope</think>Thought: done\nAnswer: a").answer


def test_toolreagt_caps_iterations_and_falls_back_when_it_never_searches(tmp_path) -> None:
    cat = toy()
    loop = f'Thought: again.\nAction: {TOOL_NAME}\nAction Input: {{"input": "weather"}}'
    scripts = {("agent", "task one"): [loop] * 20, ("agent", "task two"): ["Thought: done\nAnswer: nothing"]}
    with OpenAIStubServer(MethodResponder(cat, scripts)) as srv:
        agent = _agent(srv, tmp_path, cat, iterations=4)
        out = agent.retrieve(["task one", "task two"], 3)
    assert agent.iterations == [4, 1] and agent.searches == [4, 0]
    assert out[0][0] == "Weather.forecast"
    assert [f.stage for f in agent.run.fallbacks] == ["episode"] and len(out[1]) == 3


def test_rate_limits_are_retried_and_timeouts_end_an_episode_uncached(tmp_path) -> None:
    cat = toy()
    scripts = {
        ("profile", "Shop.checkout"): [Reply(status=429)],
        ("agent", "slow task"): [Reply("Thought: x\nAnswer: y", delay=1.5)] * 2,
    }
    with OpenAIStubServer(MethodResponder(cat, scripts)) as srv:
        rex = ToolRexRetriever(run_for(srv, tmp_path / "a"), "minilm").fit(cat)
        assert rex.run.stats.retries == 1 and rex.run.stats.fallbacks == 0 and rex.profiles["Shop.checkout"]
        agent = _agent(srv, tmp_path / "b", cat, iterations=3, timeout=0.4)
        [out] = agent.retrieve(["slow task"], 3)
    assert agent.run.stats.requests == 2 and agent.run.stats.calls == 0  # a timeout, retried once, then given up
    assert [f.stage for f in agent.run.fallbacks] == ["iteration 1", "episode"] and len(out) == 3
    cached = [json.loads(p.read_text()) for p in (tmp_path / "b").glob("*/*.json")]
    assert cached == []  # neither the timeout nor the 429 is cached
    replies = [json.loads(p.read_text()) for p in (tmp_path / "a").glob("*/*.json") if p.parent.name != "artifacts"]
    assert len(replies) == 10 and all(r["content"] for r in replies)  # the 429 left no entry, its retry did


def test_a_dead_endpoint_raises_instead_of_filling_fallbacks(tmp_path) -> None:
    cat = toy()
    with OpenAIStubServer(MethodResponder(cat, {("triples", t.name): [Reply(status=503)] * 4 for t in cat})) as srv:
        with pytest.raises(LLMMethodError, match="kept failing"):
            EgoTripRetriever(run_for(srv, tmp_path, concurrency=1), "minilm").fit(cat)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "libra.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_cli_refuses_llm_methods_without_an_endpoint_and_lists_them() -> None:
    proc = _cli("eval", "bfcl", "--method", "toolreagt")
    assert proc.returncode == 2 and proc.stderr.startswith(
        "error: method toolreagt needs an OpenAI-compatible endpoint: add --llm-base-url"
    )
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    helptext = _cli("eval", "--help").stdout
    for m in ("toolrex", "tgr-adapt", "ego-trip", "toolreagt"):
        assert m in helptext
    proc = _cli("eval", "bfcl", "--method", "dense", "--base", "dense")
    assert proc.returncode == 2 and "--base only applies with --method toolreagt" in proc.stderr


def test_cli_runs_the_agent_with_iteration_scores_plot_and_a_free_rerun(tmp_path, monkeypatch, capsys) -> None:
    """``libra eval`` end to end in-process: the JSON holds the per-iteration scores and the LLM counters, the
    plot is written, and a rerun on the same cache sends no request. (The dense base keeps it fast; the default
    libra base runs in ``make bench-llm-methods``.)"""
    from libra.benchmarks.registry import get_benchmark
    from libra.cli.main import main

    from . import cli_toys  # noqa: F401 - registers shop-tasks

    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    cat = get_benchmark("shop-tasks").catalog()
    with OpenAIStubServer(MethodResponder(cat, searches=2)) as srv:
        argv = [
            "eval",
            "shop-tasks",
            "--method",
            "toolreagt",
            "--base",
            "dense",
            "--iterations",
            "4",
            "--llm-base-url",
            srv.url,
            "--llm-model",
            "stub",
            "--llm-cache",
            str(tmp_path / "llm"),
            "--json",
            str(tmp_path / "r.json"),
            "--plot",
            str(tmp_path / "it.png"),
        ]
        with pytest.raises(SystemExit) as first:
            main(argv)
        served = srv.count
        with pytest.raises(SystemExit) as second:
            main([*argv[:-4], "--json", str(tmp_path / "r2.json")])
        assert srv.count == served
    capsys.readouterr()
    assert first.value.code in (0, None) and second.value.code in (0, None)
    [row] = json.loads((tmp_path / "r.json").read_text())["results"]
    assert (
        row["base"] == "dense" and row["llm"]["calls"] == served == 2 * 2
    )  # one-line tasks: one search and an answer each
    assert [p["iteration"] for p in row["by_iteration"]] == [1, 2, 3, 4] and row["fallbacks"] == 0
    assert (tmp_path / "it.png").read_bytes()[:4] == b"\x89PNG"
    [again] = json.loads((tmp_path / "r2.json").read_text())["results"]
    assert again["llm"]["calls"] == 0 and again["llm"]["cache_hits"] == served and again["recall"] == row["recall"]
