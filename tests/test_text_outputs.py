"""Values inside text replies (``Export.from_text``) and empty results told apart from answers.

The extractors are checked on constructed texts, the contract form round-trips and validates, and a real build of
``tests/fixtures/text_tools.py`` (a notes app that prints every id in prose) finds one relation per extractor, each
through an export that reads inside the text.
"""

from __future__ import annotations

import pytest

from libra.catalog import Tool
from libra.cli.main import main
from libra.contracts.model import Contract, Export, FromText
from libra.contracts.offline.proposer import propose
from libra.contracts.offline.revision import revise
from libra.contracts.outcome import extract
from libra.contracts.text_values import is_empty_text, text_findings, text_values
from libra.contracts.validate import validate_contract
from libra.induction.judges import Run, judge_compatibility, judge_provenance
from libra.library.artifact import Library

COMMIT = "Changes committed successfully with hash 78526d835a648060ec96f47fd1b1232bb35bcaa8"


@pytest.mark.parametrize(
    "kind,text,path,values",
    [
        ("hex_id", COMMIT, "$", ["78526d835a648060ec96f47fd1b1232bb35bcaa8"]),
        ("hex_id", "Created note 3f2a9c1e0b in /notes/a.txt.", "$", ["3f2a9c1e0b"]),
        ("hex_id", "a facade of c1ccccc1 and 20241201", "$", []),  # words, repetitive codes and dates are no ids
        ("path", "Created note 3f2a9c1e0b in /notes/a.txt.", "$", ["/notes/a.txt"]),
        ("path", "See https://x.org/a/b for more", "$", []),  # a URL's path is the URL's
        ("url", "Published at https://notes.invalid/p/1.", "$", ["https://notes.invalid/p/1"]),
        ("uuid", "Shared as 123e4567-e89b-12d3-a456-426614174000; done", "$", ["123e4567-e89b-12d3-a456-426614174000"]),
        ("quoted", "Created branch 'feat' from 'main'; it's ready", "$", ["feat", "main"]),
        ("lines", "[DIR] .git\n[FILE] README.md\n* main\n- k1\n", "$", [".git", "README.md", "main", "k1"]),
        ("lines", "- k1a2b3", "$", ["k1a2b3"]),
        ("lines", "one plain sentence", "$", []),
        ("json", 'Notes: [{"id": "a1", "title": "x"}, {"id": "b2", "title": "y"}] (2)', "$[*].id", ["a1", "b2"]),
        ("literal", "Folders: ['inbox', 'box-1']", "$[*]", ["inbox", "box-1"]),
        ("literal", "stats {'count': 2, 'ids': ('a', 'b')}", "$.ids[*]", ["a", "b"]),
    ],
)
def test_each_extractor_reads_its_form_and_nothing_else(kind, text, path, values):
    assert [v for _where, v, _m in text_values(kind, text, path)] == values


def test_findings_read_structure_first_then_lines_and_identifiers():
    assert text_findings('Notes: [{"id": "a1", "title": "x"}]') == [
        ("json", "$[*].id", ["id"], "string"),
        ("json", "$[*].title", ["title"], "string"),
    ]
    assert [k for k, *_ in text_findings(COMMIT)] == ["hex_id"]
    assert [k for k, *_ in text_findings("Commit: 78526d835a648060ec96f47fd1b1232bb35bcaa8\nAuthor: a")] == [
        "lines",
        "hex_id",
    ]
    assert text_findings("No matches found") == []


@pytest.mark.parametrize(
    "text,empty",
    [
        ("No matches found", True),
        ("No results for 'x'", True),
        ("[]", True),
        ("0 matches", True),
        ("Found 0 files", True),
        ("Notes: []", True),
        ("None", True),
        ("No such file or directory", False),
        ("No user is logged in", False),
        (COMMIT, False),
        ("0", False),
        ("Stats: {'count': 0}", False),
    ],
)
def test_empty_results_in_text(text, empty):
    assert is_empty_text(text) is empty


def test_an_empty_text_result_is_no_evidence_in_value_tests():
    empty = Run("success", {"status": "success", "output": "No results", "state_changes": {}})
    other = Run("success", {"status": "success", "output": "No results for 'y'", "state_changes": {}})
    refused = Run("failure", {"status": "rejected", "output": None, "state_changes": {}, "error": "query required"})
    assert not judge_compatibility(empty, other, similarity=1.0, tau=0.5).kept
    assert not judge_provenance(empty, refused, omitted=True).kept
    found = Run("success", {"status": "success", "output": "a1\nb2", "state_changes": {}})
    assert judge_provenance(found, refused, omitted=True).kept


def test_the_export_form_round_trips_validates_and_extracts():
    tool = Tool(
        "commit",
        "Commit staged changes.",
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
        {"type": "string"},
    )
    contract = propose(tool)
    texts = {e.from_text.kind: e for e in contract.exports if e.from_text is not None}
    assert set(texts) == {"hex_id", "uuid", "path", "url"}  # a reply declared as text: identifiers from the start
    d = contract.to_dict()
    assert d["exports"][-1]["from_text"] == {"kind": "url"} and validate_contract(d, tool) == []
    assert Contract.from_dict(d).to_dict() == d
    got = [
        (x.name, x.path, x.value)
        for x in extract(contract, {"message": "m"}, {"status": "success", "output": COMMIT, "state_changes": {}})
    ]
    assert ("hex_id", "$|hex_id[0]", "78526d835a648060ec96f47fd1b1232bb35bcaa8") in got
    # one token is a value already, not text holding one
    assert [
        x
        for x in extract(contract, {"message": "m"}, {"status": "success", "output": "78526d835a", "state_changes": {}})
        if x.name == "hex_id"
    ] == []
    bad = {
        **d,
        "exports": [*d["exports"], {**d["exports"][0], "name": "x", "from_text": {"kind": "json", "path": "$["}}],
    }
    assert any("from_text path" in e for e in validate_contract(bad, tool))
    with pytest.raises(Exception, match="from_text"):
        Export.from_dict({"name": "x", "source": "response", "path": "$", "from_text": {"kind": "regex"}})


def test_revision_learns_what_an_observed_text_holds():
    tool = Tool("list_notes", "List every note.", {"type": "object", "properties": {}}, None)
    contract = propose(tool)
    assert all(e.from_text is None for e in contract.exports)  # an undeclared reply may be anything
    record = {"status": "success", "output": 'Notes: [{"id": "a1", "title": "x"}]', "state_changes": {}, "error": None}
    new = revise(contract, tool, [{"template": contract.templates[0].name, "arguments": {}, "record": record}])
    assert new is not None
    added = {e.name: e.from_text for e in new.exports if e.from_text is not None}
    assert added == {"id": FromText("json", "$[*].id"), "title": FromText("json", "$[*].title")}
    assert [(x.name, x.value) for x in extract(new, {}, record) if x.name == "id"] == [("id", "a1")]


def test_a_build_reaches_ids_printed_in_text_with_every_extractor(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "notes.json"
    with pytest.raises(SystemExit) as info:
        main(["build", "--tools", "tests.fixtures.text_tools", "--workers", "1", "--out", str(out), "--quiet"])
    assert info.value.code in (0, None), capsys.readouterr().err
    lib = Library.load(out)
    edges = {
        (r.provider, r.consumer, r.provider_field, r.consumer_input) for r in lib.relations if r.kind == "provenance"
    }
    contracts = {name: Contract.from_dict(c) for name, c in lib.contracts.items()}
    kinds = {
        (name, e.name): e.from_text.kind for name, c in contracts.items() for e in c.exports if e.from_text is not None
    }
    found = {(p, c, kinds.get((p, f)), i) for p, c, f, i in edges}
    expected = {
        ("create_note", "read_note", "hex_id", "note_id"),
        ("create_note", "open_file", "path", "path"),
        ("list_notes", "note_title", "json", "note_ref"),
        ("list_folders", "move_to_folder", "literal", "folder"),
        ("note_keys", "pin_note", "lines", "pin_key"),
        ("share_note", "open_share", "uuid", "share_ref"),
        ("publish_note", "fetch_page", "url", "page_url"),
        ("new_folder", "move_to_folder", "quoted", "folder"),
    }
    assert expected <= found, expected - found


def test_the_llm_prompt_offers_the_text_form_only_where_a_reply_may_be_text():
    from libra.contracts.llm.proposer import build_messages, contract_from_reply

    structured = Tool(
        "get_user",
        "Get a user.",
        {"type": "object", "properties": {"user_id": {"type": "string"}}},
        {"type": "object", "properties": {"name": {"type": "string"}}},
    )
    text = Tool(
        "git.git_commit",
        "Commit.",
        {"type": "object", "properties": {"message": {"type": "string"}}},
        {"type": "string"},
    )
    assert "from_text" not in build_messages(structured)[1]["content"]
    assert "from_text" in build_messages(text)[1]["content"] and "No results" in build_messages(text)[1]["content"]
    reply = (
        '{"contract_version": "libra_contract_v1", "tool": "git.git_commit", "revision": 0, '
        '"templates": '
        '[{"name": "t", "expected": "success", "arguments": {"message": {"kind": "literal", "value": "m"}}}], '
        '"exports": '
        '[{"name": "commit_hash", "source": "response", "path": "$", "schema": {"type": "string"}, '
        '"propagate": true, "from_text": {"kind": "hex_id"}}], '
        '"success": {"type": "object", "properties": {"status": {"const": "success"}}, "required": ["status"]}, '
        '"failure": '
        '{"type": "object", "properties": {"status": {"enum": ["rejected", "error"]}}, "required": ["status"]}}'
    )
    contract = contract_from_reply(reply, text, profile="stateful")
    got = {
        (x.name, x.value)
        for x in extract(contract, {"message": "m"}, {"status": "success", "output": COMMIT, "state_changes": {}})
    }
    assert ("commit_hash", "78526d835a648060ec96f47fd1b1232bb35bcaa8") in got


def test_identifiers_in_error_lines_are_not_values():
    text = "/notes/a.txt:\nhello\n---\nb.txt  7 B: Error - ENOENT: no such file or directory, open '/sandbox/b.txt'"
    assert [v for _w, v, _m in text_values("path", text)] == ["/notes/a.txt"]
    assert "b.txt" not in " ".join(v for _w, v, _m in text_values("lines", text))
