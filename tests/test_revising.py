"""Template literals and exports revised from what the exploration meets first (libra.induction.explore.revising).

The rules are contract checking's own; these tests pin down when the exploration applies them: only to a refusal of
the template's own literal, never blaming a value that came from the pool, and reading a reply only for a contract
that exports nothing of its replies. End to end, ``tests/generalization/board.py`` builds on them.
"""

from __future__ import annotations

from libra.catalog import Tool
from libra.contracts.model import Argument, Contract, Export, Template
from libra.contracts.offline.feedback import missing_references
from libra.contracts.offline.proposer import OfflineProposer
from libra.induction.explore.revising import export_first_reply, named_elsewhere, other_than_own, revise_template


def _tool(name: str, *params: str) -> Tool:
    props = {p: {"type": "string"} for p in params}
    return Tool(name, f"The {name} tool.", {"type": "object", "properties": props, "required": list(params)})


def _contract(tool: Tool, **literals: str) -> Contract:
    """The offline proposer's contract with one success template: the given literals, the other inputs observed."""
    contract = OfflineProposer().propose(tool)
    args = {p: Argument.literal(literals[p]) if p in literals else Argument.observation(p) for p in tool.param_names}
    contract.templates = [Template("complete", args, "success")]
    contract.flags = [f for f in contract.flags if not f.startswith("checked_literal:")]
    return contract


def _refused(message: str) -> dict:
    return {"status": "rejected", "error": message}


def test_a_literal_of_the_wrong_form_is_repaired_from_the_message() -> None:
    tool = _tool("react", "post_id", "reaction")
    contract = _contract(tool, reaction="sample reaction")
    args = {"post_id": "p2", "reaction": "sample reaction"}
    message = "'sample reaction' is not a valid reaction, e.g. 'like' or 'laugh'."
    assert revise_template(contract, tool, 0, args, _refused(message), pooled={"post_id"}) == ["reaction"]
    arg = contract.templates[0].arguments["reaction"]
    assert (arg.kind, arg.value, arg.origin) == ("literal", "like", "repaired")
    assert "reaction" in contract.checked_literals()


def test_an_invented_name_quoted_beside_a_pooled_value_becomes_an_observation() -> None:
    tool = _tool("create_channel", "workspace_id", "creator")
    contract = _contract(tool, creator="sample creator")
    args = {"workspace_id": "TACME0001", "creator": "sample creator"}
    message = "'sample creator' is not a member of workspace 'TACME0001'."
    # the workspace id came from the pool: it names something that exists, so the message is about the creator
    assert revise_template(contract, tool, 0, args, _refused(message), pooled={"workspace_id"}) == ["creator"]
    assert contract.templates[0].arguments["creator"].kind == "observation"
    # the same refusal when the workspace id was the caller's own invention blames neither
    contract = _contract(tool, creator="sample creator", workspace_id="TACME0001")
    assert revise_template(contract, tool, 0, args, _refused(message)) == []


def test_a_refusal_that_names_another_tool_makes_the_named_input_observed() -> None:
    tool = _tool("create_project", "api_key", "name")
    contract = _contract(tool, api_key="sample_api_key", name="web")
    args = {"api_key": "sample_api_key", "name": "web"}
    message = "Invalid API key. Call `login` to obtain one."
    assert named_elsewhere(contract.templates[0], args, _refused(message), {"login", "list_projects"}) == "api_key"
    assert revise_template(contract, tool, 0, args, _refused(message), others={"login"}) == ["api_key"]
    assert contract.templates[0].arguments["api_key"].kind == "observation"
    # no other tool named, or no input named: nothing to go by
    assert named_elsewhere(contract.templates[0], args, _refused(message), {"list_projects"}) is None
    assert named_elsewhere(contract.templates[0], args, _refused("Call `login` first."), {"login"}) is None


def test_a_refusal_about_something_else_changes_nothing() -> None:
    tool = _tool("post", "channel_id", "text")
    contract = _contract(tool, text="hello")
    before = contract.to_dict()
    args = {"channel_id": "C1", "text": "hello"}
    assert revise_template(contract, tool, 0, args, _refused("Rate limited, try later."), pooled={"channel_id"}) == []
    assert contract.to_dict() == before


def test_the_first_reply_is_read_only_when_the_contract_exports_none() -> None:
    tool = _tool("write_post", "text")
    contract = _contract(tool, text="hi")
    reply = {"status": "success", "output": {"post_id": "p2", "text": "hi"}, "state_changes": {}, "error": None}
    assert export_first_reply(contract, tool, 0, {"text": "hi"}, reply) >= 1
    assert "post_id" in {e.name for e in contract.exports if e.source == "response"}
    # a contract that exports some of its reply keeps its exports as they are
    declared = _contract(tool, text="hi")
    declared.exports.append(Export("echo", "response", "$.text", {"type": "string"}, True))
    names = [e.name for e in declared.exports]
    assert export_first_reply(declared, tool, 0, {"text": "hi"}, reply) == 0
    assert [e.name for e in declared.exports] == names


def test_a_refusal_that_names_the_input_but_not_its_value_makes_it_observed() -> None:
    """ "Channel does not exist!" repeats no value, yet says which input named nothing: the input's own name."""
    tool = _tool("read_channel_messages", "channel")
    contract = _contract(tool, channel="sample channel")
    feedback = [{"template": "complete", "record": _refused("Channel does not exist!"), "arguments": {}}]
    assert [p for p, _m, _x in missing_references(contract, feedback)] == ["channel"]
    # a message naming two inputs does not say which one names nothing
    tool = _tool("add_user_to_channel", "channel", "user")
    contract = _contract(tool, channel="sample channel", user="sample user")
    feedback = [{"template": "complete", "record": _refused("User or channel does not exist."), "arguments": {}}]
    assert missing_references(contract, feedback) == []
    # nor does one that names the input without saying nothing has it
    feedback = [{"template": "complete", "record": _refused("Channel is archived."), "arguments": {}}]
    assert missing_references(contract, feedback) == []


def test_a_refusal_aimed_at_the_caller_makes_a_variant_with_a_value_of_its_own() -> None:
    """A refusal like "the organizer cannot invite themselves", where the e-mail the path set as organizer filled the
    invitee: the variant passes an address drawn for this tool instead, once, and keeps the other inputs as they
    were."""
    tool = _tool("invite", "event_id", "email")
    contract = _contract(tool)
    args = {"event_id": "evt_1", "email": "ada@example.org"}
    refusal = _refused("the organizer cannot invite themselves")
    index = other_than_own(contract, tool, 0, args, refusal, own={"ada@example.org"})
    assert index == 1
    variant = contract.templates[index].arguments
    assert variant["event_id"].kind == "observation"
    assert variant["email"].kind == "literal" and variant["email"].value != "ada@example.org"
    # asked again, the same variant; the variant itself is never varied again
    assert other_than_own(contract, tool, 0, args, refusal, own={"ada@example.org"}) == 1
    assert other_than_own(contract, tool, 1, args, refusal, own={"ada@example.org"}) is None
    # another refusal, or a value the path did not set, changes nothing
    assert other_than_own(contract, tool, 0, args, _refused("event is full"), own={"ada@example.org"}) is None
    assert other_than_own(contract, tool, 0, args, refusal, own={"bob@example.org"}) is None
    assert len(contract.templates) == 2
