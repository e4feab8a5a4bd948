"""The LLM contract proposer over real HTTP, through the real openai SDK, against a scripted local endpoint (no
mocks)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")

from libra.catalog import Catalog, Tool
from libra.contracts import (
    CONTRACT_VERSION,
    LLMProposer,
    LLMProposerError,
    build_messages,
    check_contracts,
    contract_rules,
    get_proposer,
    make_llm_proposer,
    propose,
    validate_contract,
)
from libra.contracts.llm.proposer import CALL_BUDGET, FALLBACK_FLAG, ReplyError, parse_reply, prompt_templates
from libra.contracts.llm.stub_server import OpenAIStubServer, Reply, ScriptedResponder, contract_json
from libra.contracts.outcome import refusal_of, without_refusals
from libra.errors import ConfigError
from libra.runtime.python.runtime import PythonRuntime

from .conftest import needs_bfcl

ROOT = Path(__file__).resolve().parent.parent
FAST = {"retry_base_delay": 0.005, "retry_max_delay": 0.02, "timeout": 10.0}


def _tool(name: str, params: dict, required: list[str], description: str, response: dict | None = None) -> Tool:
    return Tool(name, description, {"type": "object", "properties": params, "required": required}, response=response)


def toy_catalog() -> Catalog:
    return Catalog(
        [
            _tool(
                "Shop.create_cart",
                {"owner": {"type": "string", "description": "Name of the new cart's owner."}},
                ["owner"],
                "Create a new shopping cart.",
                {"type": "object", "properties": {"cart_id": {"type": "string"}}},
            ),
            _tool(
                "Shop.add_item",
                {
                    "cart_id": {"type": "string", "description": "ID of an existing cart."},
                    "sku": {"type": "string", "description": "Product code to add."},
                    "quantity": {"type": "integer", "description": "How many units."},
                },
                ["cart_id", "sku"],
                "Add a product to an existing cart.",
                {"type": "object", "properties": {"line_id": {"type": "string"}, "total": {"type": "number"}}},
            ),
            _tool(
                "Shop.checkout",
                {"cart_id": {"type": "string", "description": "ID of an existing cart."}},
                ["cart_id"],
                "Pay for a cart.",
                {"type": "object", "properties": {"order_id": {"type": "string"}, "paid": {"type": "boolean"}}},
            ),
            _tool(
                "Weather.forecast",
                {"city": {"type": "string", "description": "City name."}},
                ["city"],
                "Tomorrow's forecast for a city.",
            ),
        ],
        name="toy",
    )


def proposer(server: OpenAIStubServer, **kw) -> LLMProposer:
    return make_llm_proposer(server.url, "stub-model", **{**FAST, **kw})


def valid_reply(tool: Tool) -> str:
    return contract_json(propose(tool))


# ---------------------------------------------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------------------------------------------


def test_prompt_fields_rules_and_conventions() -> None:
    tool = toy_catalog()["Shop.add_item"]
    system, user = build_messages(tool)
    assert system["role"] == "system" and "single tool" in system["content"]
    req = json.loads(user["content"])
    assert list(req) == [
        "contract_version",
        "revision",
        "feedback_policy",
        "public_tool_metadata",
        "invocation_record_schema",
        "required_output_schema",
        "rules",
    ]
    assert (
        req["contract_version"] == CONTRACT_VERSION
        and req["revision"] == 0
        and req["feedback_policy"] == "complete_same_tool"
    )
    assert req["public_tool_metadata"] == tool.document()
    assert req["required_output_schema"]["title"].startswith("LIBRA executable tool contract")
    assert req["invocation_record_schema"]["required"][0] == "status"

    shared = contract_rules("shared")
    assert [r.split(".", 1)[0] for r in shared] == [str(i) for i in range(1, 41)]
    assert len(prompt_templates()["rules"]["shared"]) == 40
    registry = contract_rules("registry")
    stateful = contract_rules("stateful")
    assert len(registry) == 40 + 7 + 2 and len(stateful) == 40 + 7 + 5
    assert any(r.startswith("1.2. ") and "declared signature" in r for r in registry)
    assert any("single JSON object" in r for r in contract_rules("registry", "json_object"))
    # stateful swaps rule 37 (business-level failure may be a success status) and rule 1.7 (effect-complete first)
    r37 = next(r for r in stateful if r.startswith("37. "))
    assert "business-level failure" in r37 and r37 != next(r for r in registry if r.startswith("37. "))
    assert "effect-complete" in next(r for r in stateful if r.startswith("1.7. "))

    # A tool-level setting picks the JSON-object calling convention and the shared profile.
    obj_tool = Tool(
        tool.name,
        tool.description,
        tool.parameters,
        metadata={"calling_convention": "json_object", "contract_rules": "shared"},
    )
    p = LLMProposer(base_url="http://127.0.0.1:9/v1", model="m")
    obj_req = json.loads(p.messages(obj_tool)[1]["content"])
    assert len(obj_req["rules"]) == 40 and "metadata" not in obj_req["public_tool_metadata"]
    reg = LLMProposer(base_url="http://127.0.0.1:9/v1", model="m", rules="registry")
    assert any(
        "single JSON object" in r
        for r in json.loads(
            reg.messages(
                Tool(tool.name, tool.description, tool.parameters, metadata={"calling_convention": "json_object"})
            )[1]["content"]
        )["rules"]
    )
    with pytest.raises(ConfigError):
        p.messages(Tool(tool.name, metadata={"calling_convention": "positional"}))

    # A revision adds the previous contract, the instruction, the same-tool feedback and its note.
    prev = propose(tool)
    record = {
        "status": "success",
        "output": {"line_id": "L-77"},
        "state_changes": {},
        "error": None,
        "duration_ms": 1.0,
    }
    fb = [
        {
            "template": "complete",
            "expected": "success",
            "observed": "unmatched",
            "arguments": {"cart_id": "c1", "sku": "A"},
            "record": record,
        }
    ]
    rev = json.loads(build_messages(tool, revision=1, previous=prev, feedback=fb)[1]["content"])
    assert list(rev)[7:] == ["previous_contract", "instruction", "same_tool_invocation_feedback", "feedback_note"]
    assert (
        rev["revision"] == 1
        and rev["previous_contract"]["tool"] == tool.name
        and "notes" not in rev["previous_contract"]
    )
    shown = rev["same_tool_invocation_feedback"]["triggering_call"]["invocation_result"]
    assert shown == {k: v for k, v in record.items() if k != "duration_ms"}  # timings would break the cache
    assert "never copy a concrete value" in rev["feedback_note"]


def _assert_isolated(text: str, tool: Tool, others: list[Tool], forbidden: list[str]) -> None:
    assert tool.name in text and tool.description[:60] in text
    for p in tool.param_names:
        assert f'"{p}"' in text
    for other in others:
        assert other.name not in text, f"prompt for {tool.name} leaks tool {other.name}"
    for needle in forbidden:
        assert needle not in text


def test_prompt_holds_only_its_own_tool_metadata() -> None:
    cat = toy_catalog()
    tool = cat["Shop.checkout"]
    tool.metadata["initial_config"] = {"SECRET_FIXTURE": 1}
    tool.group = "Shop"
    text = "\n".join(m["content"] for m in build_messages(tool))
    _assert_isolated(text, tool, [t for t in cat if t.name != tool.name], ["SECRET_FIXTURE", "Weather", "gold"])


@needs_bfcl
def test_bfcl_prompt_holds_only_its_own_tool_metadata() -> None:
    from libra.benchmarks.bfcl.adapter import load_catalog, load_tasks

    cat = load_catalog()
    tasks = load_tasks()
    tool = cat["TwitterAPI.post_tweet"]
    text = "\n".join(m["content"] for m in LLMProposer(base_url="http://127.0.0.1:9/v1", model="m").messages(tool))
    other_classes = sorted({t.group for t in cat} - {tool.group})
    queries = [t.query.strip()[:50] for t in tasks if len(t.query.strip()) >= 30]
    _assert_isolated(
        text, tool, [t for t in cat if t.name != tool.name], other_classes + queries + [t.id for t in tasks]
    )
    assert not any(json.dumps(list(t.gold)) in text for t in tasks)


def test_parse_reply_forms() -> None:
    body = {"tool": "x", "templates": []}
    assert parse_reply(json.dumps(body)) == body
    assert parse_reply("```json\n" + json.dumps(body) + "\n```") == body
    assert parse_reply(json.dumps({"contract": body})) == body
    assert parse_reply("<think>hmm {no}</think>Here it is: " + json.dumps(body) + " done") == body
    for bad in ("", "not json", "[1, 2]", "{broken"):
        with pytest.raises(ReplyError):
            parse_reply(bad)


# ---------------------------------------------------------------------------------------------------------------
# Proposal, retries, fallback, cache, concurrency
# ---------------------------------------------------------------------------------------------------------------


def test_valid_reply_is_accepted_and_completed() -> None:
    tool = toy_catalog()["Shop.add_item"]
    d = json.loads(valid_reply(tool))
    del d["tool"], d["contract_version"]
    d["exports"] = [e for e in d["exports"] if e["source"] != "arguments"]  # added mechanically (rule 20)
    with OpenAIStubServer(ScriptedResponder({tool.name: ["```json\n" + json.dumps({"contract": d}) + "\n```"]})) as srv:
        p = proposer(srv)
        c = p.propose(tool)
        assert srv.count == 1 and srv.received[0].body["temperature"] == 0
    assert c.proposer == "llm" and c.tool == tool.name and c.version == CONTRACT_VERSION and not c.flags
    assert validate_contract(c, tool) == []
    assert {e.name for e in c.exports if e.source == "arguments"} == {"cart_id", "sku", "quantity"}
    assert p.stats.calls == 1 and p.stats.failures == 0 and p.stats.total_tokens > 0
    assert p.remaining(tool.name) == CALL_BUDGET - 1


def test_invalid_json_then_valid_sends_the_errors_back() -> None:
    tool = toy_catalog()["Shop.checkout"]
    with OpenAIStubServer(ScriptedResponder({tool.name: ["Sure! {this is not json", valid_reply(tool)]})) as srv:
        p = proposer(srv)
        c = p.propose(tool)
        second = srv.received[1].payload
    assert c.proposer == "llm" and FALLBACK_FLAG not in c.flags
    assert p.stats.calls == 2 and p.stats.failures == 1
    assert "not valid JSON" in second["rejected_reply"]["problems"][0]
    assert second["rejected_reply"]["reply_excerpt"].startswith("Sure!")


def test_three_unusable_replies_fall_back_to_offline() -> None:
    tool = toy_catalog()["Shop.add_item"]
    wrong_literal = json.loads(valid_reply(tool))
    wrong_literal["templates"][0]["arguments"]["quantity"] = {"kind": "literal", "value": "three"}
    no_templates = json.loads(valid_reply(tool))
    no_templates["templates"] = []
    script = [
        "no contract today",
        json.dumps(wrong_literal),
        "```json\n" + json.dumps(no_templates) + "\n```",
        valid_reply(tool),
    ]
    with OpenAIStubServer(ScriptedResponder({tool.name: script})) as srv:
        p = proposer(srv)
        c = p.propose(tool)
        payloads = [r.payload for r in srv.received]
    assert len(payloads) == CALL_BUDGET == 3  # the fourth (valid) reply is never requested
    assert "literal for 'quantity'" in payloads[2]["rejected_reply"]["problems"][0]
    assert c.proposer == "offline" and FALLBACK_FLAG in c.flags and any("no usable contract" in n for n in c.notes)
    assert validate_contract(c, tool) == []
    assert (p.stats.calls, p.stats.failures, p.stats.fallbacks) == (3, 3, 1)
    # The budget is spent: a revision makes no call and repairs offline instead.
    record = {"status": "success", "output": [1], "state_changes": {}, "error": None, "duration_ms": 0.0}
    assert p.revise(c, tool, [{"arguments": {}, "record": record, "observed": "unmatched"}]) is not None
    assert p.stats.calls == 3 and p.stats.revision_fallbacks == 1


def test_rate_limits_and_server_errors_are_retried() -> None:
    tool = toy_catalog()["Weather.forecast"]
    with OpenAIStubServer(
        ScriptedResponder({tool.name: [Reply(status=429), Reply(status=500), Reply(status=503), valid_reply(tool)]})
    ) as srv:
        p = proposer(srv)
        c = p.propose(tool)
        assert srv.count == 4
    assert c.proposer == "llm"
    assert (p.stats.requests, p.stats.retries, p.stats.calls, p.stats.failures) == (4, 3, 1, 0)


def test_unreachable_endpoint_fails_fast_with_a_clear_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    p = make_llm_proposer(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, **FAST)
    with pytest.raises(LLMProposerError, match="kept failing"):
        p.propose(toy_catalog()["Weather.forecast"])


def test_cache_makes_a_rebuild_free_and_identical(tmp_path) -> None:
    cat = toy_catalog()
    cache = tmp_path / "llm-cache"
    first_script = {"Shop.checkout": ["garbage", valid_reply(cat["Shop.checkout"])]}
    with OpenAIStubServer(ScriptedResponder(first_script)) as srv:
        p1 = proposer(srv, cache_path=cache)
        first = p1.propose_all(cat)
        calls = srv.count
    assert calls == len(cat) + 1 and p1.stats.cache_hits == 0
    with OpenAIStubServer(ScriptedResponder({"Shop.checkout": ["would differ"]})) as srv:
        p2 = proposer(srv, cache_path=cache)
        second = p2.propose_all(cat)
        assert srv.count == 0
    assert p2.stats.calls == 0 and p2.stats.cache_hits == calls and p2.stats.failures == 1
    assert {k: c.to_dict() for k, c in first.items()} == {k: c.to_dict() for k, c in second.items()}


def test_propose_all_respects_the_concurrency_limit() -> None:
    tools = [
        _tool(f"Many.op{i}", {"value": {"type": "integer"}}, ["value"], f"Operation number {i}.") for i in range(8)
    ]
    with OpenAIStubServer(delay=0.15) as srv:
        p = proposer(srv, concurrency=3)
        out = p.propose_all(Catalog(tools))
        assert srv.count == 8
        assert 2 <= srv.max_in_flight <= 3  # concurrent, and never more than the limit
    assert list(out) == [t.name for t in tools] and all(c.proposer == "llm" for c in out.values())


def test_api_key_and_registry(monkeypatch) -> None:
    monkeypatch.setenv("LIBRA_LLM_API_KEY", "sk-libra-test")
    tool = toy_catalog()["Weather.forecast"]
    with OpenAIStubServer() as srv:
        monkeypatch.setenv("LIBRA_LLM_BASE_URL", srv.url)
        monkeypatch.setenv("LIBRA_LLM_MODEL", "env-model")
        p = get_proposer("llm")
        assert isinstance(p, LLMProposer) and p.name == "llm"
        p.propose(tool)
        assert srv.received[0].headers["authorization"] == "Bearer sk-libra-test"
        assert srv.received[0].body["model"] == "env-model"
    monkeypatch.delenv("LIBRA_LLM_BASE_URL")
    with pytest.raises(ConfigError, match="needs an endpoint"):
        get_proposer("llm")
    with pytest.raises(ConfigError):
        make_llm_proposer("http://x/v1", "m", bogus_setting=1)


# ---------------------------------------------------------------------------------------------------------------
# End to end: LLM contracts through check_contracts (validation, execution, feedback revision)
# ---------------------------------------------------------------------------------------------------------------


class Vault:
    """A tiny bank: accounts and deposits."""

    def __init__(self) -> None:
        self.accounts: dict[str, int] = {}

    def open_account(self, owner: str) -> dict:
        """Open a new account.

        Args:
            owner: Name of the new account's owner.
        """
        account_id = f"acct-{len(self.accounts) + 1}"
        self.accounts[account_id] = 0
        return {"account_id": account_id}

    def deposit(self, account_id: str, amount: int) -> dict:
        """Deposit money into an existing account.

        Args:
            account_id: ID of an existing account.
            amount: Amount of money to deposit.
        """
        if account_id not in self.accounts:
            return {"error": "no such account"}
        self.accounts[account_id] += amount
        return {"balance": self.accounts[account_id]}


def test_check_contracts_with_the_llm_proposer() -> None:
    rt = PythonRuntime.from_classes([Vault], trusted=True)
    try:
        cat = rt.catalog
        success = {
            "type": "object",
            "properties": {"status": {"const": "success"}, "output": {"type": "object"}},
            "required": ["status", "output"],
        }
        failure = {"type": "object", "properties": {"status": {"enum": ["rejected", "error"]}}, "required": ["status"]}
        open_c = {
            "templates": [
                {"name": "open", "expected": "success", "arguments": {"owner": {"kind": "literal", "value": "Ann"}}}
            ],
            "exports": [
                {
                    "name": "account_id",
                    "source": "response",
                    "path": "$.account_id",
                    "schema": {"type": "string"},
                    "propagate": True,
                }
            ],
            "success": success,
            "failure": failure,
        }
        deposit_args = {
            "account_id": {"kind": "observation", "refers_to": "ID of an existing account", "field": "account_id"},
            "amount": {"kind": "literal", "value": 5},
        }
        deposit_bad = {  # S+ expects an array output, so the observed success matches neither S+ nor S-
            "templates": [{"name": "deposit", "expected": "success", "arguments": deposit_args}],
            "exports": [
                {
                    "name": "balance",
                    "source": "response",
                    "path": "$.balance",
                    "schema": {"type": "integer"},
                    "propagate": True,
                }
            ],
            "success": {**success, "properties": {"status": {"const": "success"}, "output": {"type": "array"}}},
            "failure": failure,
        }
        deposit_schema_invalid = {
            **deposit_bad,
            "templates": [
                {"name": "deposit", "expected": "success", "arguments": {"amount": {"kind": "literal", "value": 5}}}
            ],
        }
        deposit_fixed = {**deposit_bad, "success": success}
        script = {
            "Vault.open_account": [json.dumps(open_c)],
            "Vault.deposit": [json.dumps(deposit_schema_invalid), json.dumps(deposit_bad), json.dumps(deposit_fixed)],
        }
        with OpenAIStubServer(ScriptedResponder(script)) as srv:
            p = proposer(srv)
            summary = check_contracts(cat, rt, proposer=p)
            dep_reqs = [r.payload for r in srv.requests_for("Vault.deposit")]
            open_reqs = srv.requests_for("Vault.open_account")
    finally:
        rt.close()
    dep = summary.contracts["Vault.deposit"]
    assert len(dep_reqs) == 3  # 1 schema-invalid + 1 initial + 1 revision for deposit: its budget of 3
    # open_account's state change (a new account) is reached by no export, so it gets one feedback revision too,
    # answered by the stub's offline-derived responder.
    assert [r.payload["revision"] for r in open_reqs] == [0, 1]
    assert open_reqs[1].payload["same_tool_invocation_feedback"]["triggering_call"]["invocation_result"][
        "state_changes"
    ]
    assert "required parameter 'account_id'" in dep_reqs[1]["rejected_reply"]["problems"][0]
    revision = dep_reqs[2]
    assert (
        revision["revision"] == 1
        and revision["previous_contract"]["success"]["properties"]["output"]["type"] == "array"
    )
    trigger = revision["same_tool_invocation_feedback"]["triggering_call"]
    assert trigger["observed"] == "unmatched" and trigger["invocation_result"]["status"] == "success"
    assert trigger["invocation_result"]["output"] == {"balance": 5} and "feedback_note" in revision
    # The LLM's revision fixed S+; the balance change in state_changes was still reached by no export, and with the
    # budget spent the offline reviser added those exports (revision 2, flagged).
    assert dep.proposer == "llm" and dep.revision == 2 and "revised" in dep.flags and FALLBACK_FLAG in dep.flags
    assert any("revision 1: llm" in n for n in dep.notes) and any(e.source == "state_changes" for e in dep.exports)
    # the model's S+ is kept as written; refusals reported as data are added around it (outcome.with_refusals)
    assert without_refusals(dep.success, dep.failure)[0] == success and refusal_of(dep.success) is not None
    tc = summary.per_tool["Vault.deposit"]
    assert tc.valid and tc.revision == 2 and all(t.matched for t in tc.templates)
    assert tc.templates[0].bindings["account_id"]["tool"] == "Vault.open_account"
    assert summary.invalid == 0 and summary.unmatched == 0 and summary.matched == summary.templates == 2
    assert (p.stats.calls, p.stats.failures, p.stats.fallbacks, p.stats.revision_fallbacks) == (5, 1, 0, 1)
    assert p.remaining("Vault.deposit") == 0


# ---------------------------------------------------------------------------------------------------------------
# The runnable fake endpoint
# ---------------------------------------------------------------------------------------------------------------


def test_fake_openai_server_script_serves_valid_contracts() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "fake_openai_server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        cat = toy_catalog()
        p = make_llm_proposer(url, "any-model", **FAST)
        out = p.propose_all(cat)
        for tool in cat:
            assert out[tool.name].proposer == "llm" and validate_contract(out[tool.name], tool) == []
        assert p.stats.failures == 0 and p.stats.calls == len(cat)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cache_replays_revisions_of_a_check_run(tmp_path) -> None:
    """Revision prompts carry no run-specific noise (timings), so a rebuild replays them from the cache too."""
    rt = PythonRuntime.from_classes([Vault], trusted=True)
    try:
        runs = []
        for _ in range(2):
            with OpenAIStubServer() as srv:
                p = proposer(srv, cache_path=tmp_path / "cache")
                summary = check_contracts(rt.catalog, rt, p.propose_all(rt.catalog), proposer=p)
                runs.append((srv.count, p.stats.cache_hits, {k: c.to_dict() for k, c in summary.contracts.items()}))
                revisions = [r.payload for r in srv.received if r.payload["revision"] > 0]
                for payload in revisions:
                    assert (
                        "duration_ms"
                        not in payload["same_tool_invocation_feedback"]["triggering_call"]["invocation_result"]
                    )
    finally:
        rt.close()
    (first_http, _, first), (second_http, second_hits, second) = runs
    assert first_http > len(rt.catalog)  # initial calls plus feedback revisions
    assert second_http == 0 and second_hits == first_http and first == second
