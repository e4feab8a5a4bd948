"""The generic rules that let an offline build reach tools that refuse invented values (MCP servers among them):
a literal refused as naming nothing becomes a reference, a literal refused for its spaces is repaired, a path
offered as a folder or a value offered to a reference inside a structured literal is placed, not passed.
The ``notebook`` catalog of the generalization suite exercises them in a build; these tests pin each rule."""

from __future__ import annotations

from libra.catalog import Tool
from libra.contracts.model import Argument, Contract, Template
from libra.contracts.offline.feedback import missing_references
from libra.contracts.offline.proposer import propose
from libra.contracts.offline.revision import revise
from libra.induction.explore.inputs import path_inside, with_leaf
from libra.values.repair import message_parameter, repair_literal


def _tool(name: str, params: dict, required: list[str]) -> Tool:
    return Tool(name=name, description="", parameters={"type": "object", "properties": params, "required": required})


def _feedback(template: str, args: dict, error: str) -> list[dict]:
    return [{"template": template, "arguments": args, "record": {"status": "rejected", "error": error}}]


def test_a_literal_refused_as_naming_nothing_becomes_an_observation() -> None:
    tool = _tool("add_files", {"files": {"type": "array", "items": {"type": "string"}}}, ["files"])
    contract = propose(tool)
    t = next(t for t in contract.templates if t.expected == "success")
    value = t.arguments["files"].value
    assert t.arguments["files"].kind == "literal"
    new = revise(
        contract, tool, _feedback(t.name, {"files": value}, f"fatal: pathspec '{value[0]}' did not match any files")
    )
    assert (
        new is not None and next(x for x in new.templates if x.name == t.name).arguments["files"].kind == "observation"
    )


def test_a_refusal_about_something_else_turns_nothing() -> None:
    tool = _tool("add_files", {"files": {"type": "array", "items": {"type": "string"}}}, ["files"])
    contract = propose(tool)
    t = next(t for t in contract.templates if t.expected == "success")
    # not quoting the value, or quoting it without saying it is missing
    assert (
        missing_references(contract, _feedback(t.name, {"files": t.arguments["files"].value}, "repository not found"))
        == []
    )
    assert (
        missing_references(
            contract,
            _feedback(t.name, {"files": t.arguments["files"].value}, f"'{t.arguments['files'].value[0]}' is too long"),
        )
        == []
    )


def test_a_refused_leaf_of_a_structured_literal_is_marked_alone() -> None:
    contract = Contract(
        "t",
        [
            Template(
                "complete", {"items": Argument.literal([{"owner": "sample owner", "text": "sample text"}])}, "success"
            )
        ],
        [],
        {},
        {},
    )
    found = missing_references(contract, _feedback("complete", {}, "Owner sample owner not found"))
    assert found == [("items", "Owner sample owner not found", [0, "owner"])]
    assert with_leaf([{"owner": "sample owner", "text": "x"}], [0, "owner"], "alice") == [
        {"owner": "alice", "text": "x"}
    ]
    assert with_leaf([{"owner": 3}], [0, "owner"], "alice") is None and with_leaf([], [0, "owner"], "a") is None


def test_a_literal_refused_for_its_spaces_is_joined() -> None:
    message = "Invalid reference 'refs/heads/sample branch name': references cannot contain spaces"
    assert message_parameter(message, {"branch_name": "sample branch name", "base": "sample base"}) == "branch_name"
    assert repair_literal("branch_name", {"type": "string"}, "sample branch name", message) == "sample_branch_name"
    # a name that is taken already: a sibling of the same shape, which a creation accepts
    assert repair_literal("branch_name", {"type": "string"}, "sample branch name", "branch exists already") == (
        "sample branch name2"
    )


def test_a_folder_offer_places_the_templates_own_name() -> None:
    assert path_inside("/sandbox/docs", "sample path") == "/sandbox/docs/sample path"
    assert path_inside("docs/", "notes/a.txt") == "docs/notes/a.txt"
    assert path_inside("docs", "/etc/passwd") is None and path_inside("docs", "../x") is None
    assert path_inside("line one\nline two", "x") is None and path_inside(3, "x") is None


def test_an_action_that_says_it_did_nothing_is_a_refusal() -> None:
    from libra.contracts.outcome import classify

    tool = _tool("add_files", {"files": {"type": "array", "items": {"type": "string"}}}, ["files"])
    contract = propose(tool)
    nothing = {"status": "success", "output": "No changes were staged: the paths had nothing new.", "state_changes": {}}
    assert classify(contract, nothing) == "failure"
    assert classify(contract, {**nothing, "output": "Files staged successfully"}) == "success"
    # the same words on a call that changed the state, or from a read, are data
    assert classify(contract, {**nothing, "state_changes": {"index": {"added": {"a": 1}}}}) == "success"
    read = propose(_tool("get_changes", {"path": {"type": "string"}}, ["path"]))
    assert classify(read, {**nothing, "output": "No changes"}) == "success"


def test_a_refusal_quoting_several_inputs_blames_none_of_them() -> None:
    """'rename 'a' -> 'b': no such file' names both values: it cannot say which one is missing."""
    tool = _tool("move", {"source": {"type": "string"}, "destination": {"type": "string"}}, ["source", "destination"])
    contract = Contract(
        "move",
        [
            Template(
                "complete",
                {
                    "source": Argument.observation("an existing file", field="source"),
                    "destination": Argument.literal("sample destination"),
                },
                "success",
            )
        ],
        [],
        {},
        {},
    )
    both = _feedback(
        "complete",
        {"source": "sample source", "destination": "sample destination"},
        "ENOENT: no such file, rename 'sample source' -> 'sample destination'",
    )
    assert missing_references(contract, both) == []
    alone = _feedback(
        "complete", {"source": "notes.txt", "destination": "sample destination"}, "no such folder: 'sample destination'"
    )
    assert [p for p, _m, _x in missing_references(contract, alone)] == ["destination"]
    assert tool.name == "move"


def test_could_not_find_a_piece_of_text_marks_that_leaf() -> None:
    contract = Contract(
        "patch",
        [
            Template(
                "complete",
                {"edits": Argument.literal([{"old_text": "sample old text", "new_text": "sample new text"}])},
                "success",
            )
        ],
        [],
        {},
        {},
    )
    found = missing_references(
        contract, _feedback("complete", {}, "Could not find exact match for edit:\nsample old text")
    )
    assert found == [("edits", "Could not find exact match for edit:\nsample old text", [0, "old_text"])]
